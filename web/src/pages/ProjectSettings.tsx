import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { formatBytes, formatCount, formatTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import type { CreatedDestination, Destination, Project } from '../lib/types.ts';
import { needsRole } from '../lib/roles.ts';
import { ConfirmActions, ConfirmDialog, CopyButton, Dialog, Empty, ErrorNote, Field, HeadWithActions, Link, PageHeader, RoleBadge, Spinner, useAction, useResource } from '../components/ui.tsx';
import { SendFirstLog } from '../components/SendFirstLog.tsx';
import { ProjectTabs } from '../components/ProjectTabs.tsx';
import { LeaveProject, MembersSection, NotificationsSection } from './Members.tsx';

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
  const rotateLock = needsRole(p.role, 'admin', 'Rotating the key');
  const deleteLock = needsRole(p.role, 'owner', 'Deleting the project');

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
      <PageHeader title={<>{p.name} <span className="muted small-title">settings</span></>}>
        {p.role && <RoleBadge role={p.role} prefix="Your role:" />}
      </PageHeader>
      <ProjectTabs projectId={p.id} current="settings" />
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
          <button type="button" className="danger-outline small" onClick={() => setRotateOpen(true)} disabled={!!rotateLock} title={rotateLock}>
            Rotate key…
          </button>
        </div>
      </section>

      <FirstLogWatch
        projectId={p.id}
        logCount={p.logCount}
        onArrived={(fresh) => project.setData((old) => (old ? { ...old, logCount: fresh.logCount, storedBytes: fresh.storedBytes } : old))}
      />

      <SendFirstLog apiKey={revealed ? p.apiKey : null} />

      <section className="card" aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        <dl className="details">
          <dt>Logs held</dt>
          <dd>{formatCount(p.logCount)}</dd>
          <dt>Stored on disk</dt>
          <dd data-testid="stored-bytes" title={`${formatCount(p.storedBytes)} bytes: the logs and their indexes, compressed once older than the server's COMPACT_AFTER (updated within a minute)`}>
            {formatBytes(p.storedBytes)}
          </dd>
          <dt>Created</dt>
          <dd>{formatTime(p.createdAt)}</dd>
          <dt>Project id</dt>
          <dd><code>{p.id}</code></dd>
        </dl>
        <RenameForm project={p} onRenamed={(name, updatedAt) => project.setData((old) => (old ? { ...old, name, updatedAt } : old))} />
      </section>

      <NotificationsSection projectId={p.id} />

      <MembersSection project={p} onProjectChange={(updated) => project.setData((old) => (old ? { ...old, ...updated } : old))} />

      <Destinations projectId={p.id} locked={needsRole(p.role, 'admin', 'Managing destinations')} />

      {p.role && p.role !== 'owner' && <LeaveProject project={p} />}

      <section className="card danger-zone" aria-labelledby="danger-heading">
        <h2 id="danger-heading">Delete this project</h2>
        <p>Deleting removes the project, all of its {formatCount(p.logCount)} logs, its alert rules and their history, for every member. It cannot be undone.</p>
        {deleteLock && <p className="muted small">Only the project's owner can delete it.</p>}
        <button type="button" className="danger" onClick={() => setDeleteOpen(true)} disabled={!!deleteLock} title={deleteLock}>
          Delete project…
        </button>
      </section>

      <Dialog open={rotateOpen} title="Rotate the API key?" onClose={() => setRotateOpen(false)}>
        <p>
          A new key is created and <strong>the current key stops working immediately</strong>. Every application and shipper that sends logs to{' '}
          <strong>{p.name}</strong> must be given the new key, or its logs will be refused.
        </p>
        <ConfirmActions label="Rotate key" busyLabel="Rotating…" busy={rotation.busy} error={rotation.error} onCancel={() => setRotateOpen(false)} onConfirm={() => void rotate()} />
      </Dialog>

      <Dialog open={deleteOpen} title={`Delete ${p.name}?`} onClose={() => setDeleteOpen(false)}>
        <DeleteForm project={p} onCancel={() => setDeleteOpen(false)} />
      </Dialog>
    </main>
  );
}

/** How often the settings page asks whether a project without logs has had its first one. */
const FIRST_LOG_POLL_MS = 3000;

/**
 * While the project has no logs, asks for its log count every few seconds (not while the tab is
 * hidden) and, once the first log has arrived, says so with a link to the logs. Shown only to a
 * project that had no logs when the page opened.
 */
function FirstLogWatch({ projectId, logCount, onArrived }: { projectId: string; logCount: number; onArrived: (p: Project) => void }) {
  const api = useApi();
  const [watching] = useState(logCount === 0);
  const waiting = watching && logCount === 0;
  const arrived = useRef(onArrived);
  arrived.current = onArrived;
  useEffect(() => {
    if (!waiting) return;
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const look = async () => {
      if (document.visibilityState !== 'hidden') {
        try {
          const fresh = await api.get<Project>(`/v1/projects/${encodeURIComponent(projectId)}`, ctrl.signal);
          if (fresh.logCount > 0) {
            arrived.current(fresh);
            return;
          }
        } catch {
          if (ctrl.signal.aborted) return;
          // A failed look is retried at the next tick.
        }
      }
      if (!ctrl.signal.aborted) timer = setTimeout(() => void look(), FIRST_LOG_POLL_MS);
    };
    timer = setTimeout(() => void look(), FIRST_LOG_POLL_MS);
    return () => {
      ctrl.abort();
      clearTimeout(timer);
    };
  }, [api, projectId, waiting]);

  if (!watching) return null;
  // One live region whose words change, so a screen reader hears the arrival.
  return (
    <section className="card first-log-watch" aria-label="First log" data-testid="first-log">
      <p className={waiting ? 'loading' : 'first-log-arrived'} role="status">
        {waiting ? (
          <>
            <span className="spinner" aria-hidden="true" /> Waiting for the first log: this page notices it within a few seconds.
          </>
        ) : (
          <>
            <strong>The first log has arrived.</strong>&nbsp;The project holds {formatCount(logCount)} {logCount === 1 ? 'log' : 'logs'} now.
          </>
        )}
      </p>
      {!waiting && (
        <Link to={`/projects/${encodeURIComponent(projectId)}/logs`} className="button primary">
          Open logs
        </Link>
      )}
    </section>
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
  const locked = needsRole(project.role, 'admin', 'Renaming');
  return (
    <form className="inline-form" onSubmit={submit}>
      <Field label="Name" error={fieldError}>
        {(id, describedBy) => <input id={id} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} readOnly={!!locked} title={locked} />}
      </Field>
      <button type="submit" className="secondary" disabled={!!locked || busy || name.trim() === '' || name.trim() === project.name} title={locked}>
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
      <ConfirmActions label="Delete project" busyLabel="Deleting…" busy={busy} disabled={typed !== project.name} error={error} onCancel={onCancel} />
    </form>
  );
}

const DESTINATION_TYPES = [
  { id: 'webhook', label: 'Webhook', placeholder: 'https://hooks.example.com/loglane' },
  { id: 'slack', label: 'Slack', placeholder: 'https://hooks.slack.com/services/…' },
] as const;

function typeLabel(type: string): string {
  return DESTINATION_TYPES.find((t) => t.id === type)?.label ?? type;
}

/**
 * Where rules with the webhook and slack channels send: every destination of that type in the
 * project. A webhook's signing secret is in the answer to its creation only, so it is shown once.
 */
function Destinations({ projectId, locked }: { projectId: string; locked?: string }) {
  const api = useApi();
  const toast = useToast();
  const base = `/v1/projects/${encodeURIComponent(projectId)}/destinations`;
  // Listing destinations needs the admin role too: a member is told so instead of being refused.
  const list = useResource<{ data: Destination[] }>(locked ? null : base);
  const [created, setCreated] = useState<CreatedDestination | null>(null);
  const [deleting, setDeleting] = useState<Destination | null>(null);
  const removal = useAction();
  const section = useRef<HTMLElement>(null);

  // Linked to from the alert form as settings#destinations.
  const loaded = list.data !== undefined;
  useEffect(() => {
    if (loaded && location.hash === '#destinations') section.current?.scrollIntoView({ block: 'start' });
  }, [loaded]);

  const remove = (d: Destination) =>
    removal.run(async () => {
      await api.call('DELETE', `${base}/${encodeURIComponent(d.id)}`);
      list.setData((old) => old && { data: old.data.filter((x) => x.id !== d.id) });
      setDeleting(null);
      toast(`Destination ${d.name} deleted.`);
    });

  const items = list.data?.data;
  return (
    <section className="card destinations" id="destinations" ref={section} aria-labelledby="destinations-heading">
      <h2 id="destinations-heading">Destinations</h2>
      <p className="muted">
        Alert rules with the Webhook or Slack channel notify every destination of that type here. A webhook receives a signed JSON <code>POST</code>; Slack, a
        message to an incoming-webhook URL. Send a test from a rule on the Alerts page.
      </p>
      {locked && (
        <p className="notice" role="note">
          {locked} Admins and the owner see and change this project's destinations.
        </p>
      )}
      {list.error !== undefined && <ErrorNote error={list.error} onRetry={list.reload} />}
      {list.loading && !items && <Spinner label="Loading destinations…" />}
      {items && items.length === 0 && (
        <Empty title="No destinations yet">
          <p>Add a webhook or a Slack incoming webhook below.</p>
        </Empty>
      )}
      {items && items.length > 0 && (
        <table className="table destinations-table">
          <caption className="visually-hidden">Destinations of this project</caption>
          <HeadWithActions columns={['Type', 'Name', 'URL', 'Added']} />
          <tbody>
            {items.map((d) => (
              <tr key={d.id}>
                <td data-label="Type">
                  <span className={`dest-type dest-${d.type}`}>{typeLabel(d.type)}</span>
                </td>
                <td data-label="Name">{d.name}</td>
                <td data-label="URL" className="dest-url">
                  <code>{d.url}</code>
                </td>
                <td data-label="Added">
                  <time dateTime={d.createdAt}>{formatTime(d.createdAt)}</time>
                </td>
                <td className="row-actions">
                  <button type="button" className="danger-outline small" onClick={() => setDeleting(d)} aria-label={`Delete destination ${d.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <DestinationForm
        base={base}
        locked={locked}
        onCreated={(d) => {
          const { secret: _secret, ...shown } = d;
          list.setData((old) => ({ data: [...(old?.data ?? []), shown] }));
          if (d.secret) setCreated(d);
          else toast(`${typeLabel(d.type)} destination ${d.name} added.`);
        }}
      />

      <Dialog open={created !== null} title="Webhook signing secret" onClose={() => setCreated(null)}>
        {created?.secret && (
          <>
            <p>
              <strong>{created.name}</strong> was added. Its requests carry a <code>Loglane-Signature</code> header signed with this secret: keep it in the receiver to
              check that a request came from this server.
            </p>
            <div className="key-row secret-row">
              <code className="key" data-testid="webhook-secret" aria-label="Signing secret">
                {created.secret}
              </code>
              <CopyButton text={created.secret} label="Copy secret" onCopied={() => toast('Secret copied to the clipboard.')} />
            </div>
            <p className="notice" role="note">
              Copy it now: <strong>it will not be shown again.</strong> If it is lost, delete the destination and add it again.
            </p>
            <div className="form-actions">
              <button type="button" className="primary" onClick={() => setCreated(null)}>
                I have copied it
              </button>
            </div>
          </>
        )}
      </Dialog>

      <ConfirmDialog
        target={deleting}
        title="Delete this destination?"
        onClose={() => setDeleting(null)}
        onConfirm={(d) => void remove(d)}
        label="Delete destination"
        busyLabel="Deleting…"
        busy={removal.busy}
        error={removal.error}
      >
        {(d) => (
          <p>
            <strong>{d.name}</strong> ({typeLabel(d.type)}, <code className="dest-url">{d.url}</code>) will no longer be notified by this project's alert rules.
          </p>
        )}
      </ConfirmDialog>
    </section>
  );
}

function DestinationForm({ base, locked, onCreated }: { base: string; locked?: string; onCreated: (d: CreatedDestination) => void }) {
  const api = useApi();
  const [type, setType] = useState<'webhook' | 'slack'>('webhook');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const { busy, error, run } = useAction();
  function submit(e: FormEvent) {
    e.preventDefault();
    void run(async () => {
      const body: { type: string; url: string; name?: string } = { type, url: url.trim() };
      if (name.trim()) body.name = name.trim();
      onCreated(await api.call<CreatedDestination>('POST', base, body));
      setName('');
      setUrl('');
    });
  }
  const fe = error instanceof ApiError ? error.fieldErrors() : {};
  const general = error !== undefined && !fe.url && !fe.name && !fe.type;
  if (locked) {
    return (
      <div className="inline-form">
        <button type="button" className="primary" disabled title={locked}>
          Add destination
        </button>
      </div>
    );
  }
  return (
    <form className="inline-form destination-form" onSubmit={submit} noValidate aria-label="Add a destination">
      <Field label="Type" error={fe.type}>
        {(id, d) => (
          <select id={id} value={type} onChange={(e) => setType(e.target.value as 'webhook' | 'slack')} aria-describedby={d}>
            {DESTINATION_TYPES.map((t) => (
              <option key={t.id} value={t.id}>
                {t.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Name (optional)" error={fe.name}>
        {(id, d) => <input id={id} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} aria-describedby={d} placeholder="on-call" />}
      </Field>
      <Field label="URL" error={fe.url} hint="https, on a public host.">
        {(id, d) => (
          <input
            id={id}
            type="url"
            inputMode="url"
            required
            spellCheck={false}
            autoComplete="off"
            maxLength={2000}
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            aria-describedby={d}
            aria-invalid={fe.url ? true : undefined}
            placeholder={DESTINATION_TYPES.find((t) => t.id === type)!.placeholder}
          />
        )}
      </Field>
      <button type="submit" className="primary" disabled={busy || url.trim() === ''}>
        {busy ? 'Adding…' : 'Add destination'}
      </button>
      {general && <ErrorNote error={error} />}
    </form>
  );
}
