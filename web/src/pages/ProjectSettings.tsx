import { useState, type FormEvent } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { formatCount, formatTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import type { Project } from '../lib/types.ts';
import { CopyButton, Dialog, ErrorNote, Field, PageHeader, Spinner, useAction, useResource } from '../components/ui.tsx';
import { SendFirstLog } from '../components/SendFirstLog.tsx';

export function ProjectSettingsPage({ projectId, justCreated }: { projectId: string; justCreated: boolean }) {
  const api = useApi();
  const toast = useToast();
  // GET by id returns the full key; it is shown only after "Reveal".
  const project = useResource<Project>(`/v1/projects/${encodeURIComponent(projectId)}`);
  const [revealed, setRevealed] = useState(justCreated);
  const [rotateOpen, setRotateOpen] = useState(false);
  const [deleteOpen, setDeleteOpen] = useState(false);
  const rotation = useAction();

  if (project.error !== undefined && !project.data) return <main className="page"><ErrorNote error={project.error} onRetry={project.reload} /></main>;
  const p = project.data;
  if (!p) return <main className="page"><Spinner label="Loading project…" /></main>;
  const masked = `${p.apiKey.slice(0, 8)}…${p.apiKey.slice(-4)}`;

  const rotate = () =>
    rotation.run(async () => {
      const { apiKey } = await api.call<{ apiKey: string }>('POST', `/v1/projects/${encodeURIComponent(projectId)}/rotate-key`);
      project.setData((old) => (old ? { ...old, apiKey } : old));
      setRevealed(true);
      setRotateOpen(false);
      toast('The API key was rotated. The old key no longer works.');
    });

  return (
    <main className="page">
      <PageHeader title={<>{p.name} <span className="muted small-title">settings</span></>} />
      {justCreated && (
        <p className="notice" role="status">
          Your project is ready. Send it a first log with the key below.
        </p>
      )}
      <section className="card" aria-labelledby="key-heading">
        <h2 id="key-heading">API key</h2>
        <p className="muted">Applications send logs with this key in the <code>X-API-Key</code> header. Treat it like a password.</p>
        <div className="key-row">
          <code className="key" data-testid="api-key" aria-label={revealed ? 'API key' : 'API key (hidden)'}>
            {revealed ? p.apiKey : masked}
          </code>
          <button type="button" className="secondary small" onClick={() => setRevealed((r) => !r)} aria-pressed={revealed}>
            {revealed ? 'Hide' : 'Reveal'}
          </button>
          <CopyButton text={p.apiKey} label="Copy key" onCopied={() => toast('API key copied to the clipboard.')} />
          <button type="button" className="danger-outline small" onClick={() => setRotateOpen(true)}>
            Rotate key…
          </button>
        </div>
      </section>

      <SendFirstLog apiKey={revealed ? p.apiKey : null} />

      <section className="card" aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        <dl className="details">
          <dt>Logs held</dt>
          <dd>{formatCount(p.logCount)}</dd>
          <dt>Created</dt>
          <dd>{formatTime(p.createdAt)}</dd>
          <dt>Project id</dt>
          <dd><code>{p.id}</code></dd>
        </dl>
        <RenameForm project={p} onRenamed={(name, updatedAt) => project.setData((old) => (old ? { ...old, name, updatedAt } : old))} />
      </section>

      <section className="card danger-zone" aria-labelledby="danger-heading">
        <h2 id="danger-heading">Delete this project</h2>
        <p>Deleting removes the project, all of its {formatCount(p.logCount)} logs, its alert rules and their history. It cannot be undone.</p>
        <button type="button" className="danger" onClick={() => setDeleteOpen(true)}>
          Delete project…
        </button>
      </section>

      <Dialog open={rotateOpen} title="Rotate the API key?" onClose={() => setRotateOpen(false)}>
        <p>
          A new key is created and <strong>the current key stops working immediately</strong>. Every application and shipper that sends logs to{' '}
          <strong>{p.name}</strong> must be given the new key, or its logs will be refused.
        </p>
        {rotation.error !== undefined && <ErrorNote error={rotation.error} />}
        <div className="form-actions">
          <button type="button" className="secondary" onClick={() => setRotateOpen(false)}>
            Cancel
          </button>
          <button type="button" className="danger" disabled={rotation.busy} onClick={() => void rotate()}>
            {rotation.busy ? 'Rotating…' : 'Rotate key'}
          </button>
        </div>
      </Dialog>

      <Dialog open={deleteOpen} title={`Delete ${p.name}?`} onClose={() => setDeleteOpen(false)}>
        <DeleteForm project={p} onCancel={() => setDeleteOpen(false)} />
      </Dialog>
    </main>
  );
}

function RenameForm({ project, onRenamed }: { project: Project; onRenamed: (name: string, updatedAt: string) => void }) {
  const api = useApi();
  const toast = useToast();
  const [name, setName] = useState(project.name);
  const { busy, error, run } = useAction();
  function submit(e: FormEvent) {
    e.preventDefault();
    void run(async () => {
      const updated = await api.call<Project>('PUT', `/v1/projects/${encodeURIComponent(project.id)}`, { name: name.trim() });
      onRenamed(updated.name, updated.updatedAt);
      toast(`Renamed to ${updated.name}.`);
    });
  }
  const fieldError = error instanceof ApiError ? error.fieldErrors().name : undefined;
  return (
    <form className="inline-form" onSubmit={submit}>
      <Field label="Name" error={fieldError}>
        {(id, describedBy) => <input id={id} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} />}
      </Field>
      <button type="submit" className="secondary" disabled={busy || name.trim() === '' || name.trim() === project.name}>
        {busy ? 'Saving…' : 'Rename'}
      </button>
      {error !== undefined && !fieldError && <ErrorNote error={error} />}
    </form>
  );
}

function DeleteForm({ project, onCancel }: { project: Project; onCancel: () => void }) {
  const api = useApi();
  const toast = useToast();
  const [typed, setTyped] = useState('');
  const { busy, error, run } = useAction();
  function submit(e: FormEvent) {
    e.preventDefault();
    if (typed !== project.name) return;
    void run(async () => {
      await api.call('DELETE', `/v1/projects/${encodeURIComponent(project.id)}`);
      toast(`Project ${project.name} was deleted.`);
      navigate('/projects', { replace: true });
    });
  }
  return (
    <form onSubmit={submit}>
      <p>
        This permanently deletes <strong>{project.name}</strong>, its logs, alert rules and alert history. Type the project name to confirm.
      </p>
      <Field label="Project name">
        {(id) => <input id={id} autoFocus autoComplete="off" value={typed} onChange={(e) => setTyped(e.target.value)} />}
      </Field>
      {error !== undefined && <ErrorNote error={error} />}
      <div className="form-actions">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="danger" disabled={busy || typed !== project.name}>
          {busy ? 'Deleting…' : 'Delete project'}
        </button>
      </div>
    </form>
  );
}
