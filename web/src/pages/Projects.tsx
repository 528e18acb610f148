import { useState, type FormEvent } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { formatCount, formatTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import type { Page, Project } from '../lib/types.ts';
import { Dialog, Empty, ErrorNote, Field, Link, PageHeader, RoleBadge, Spinner, useAction, useResource } from '../components/ui.tsx';
import { PlanLimitNote } from './Account.tsx';

export function ProjectsPage() {
  const projects = useResource<Page<Project>>('/v1/projects');
  const [creating, setCreating] = useState(false);
  const list = projects.data?.data;

  return (
    <main className="page">
      <PageHeader title="Projects">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New project
        </button>
      </PageHeader>
      {projects.error !== undefined && <ErrorNote error={projects.error} onRetry={projects.reload} />}
      {projects.loading && !list && <Spinner label="Loading projects…" />}
      {list && list.length === 0 && (
        <Empty title="No projects yet">
          <p>A project collects the logs of one application or environment and has its own API key.</p>
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Create your first project
          </button>
        </Empty>
      )}
      {list && list.length > 0 && (
        <ul className="project-list" aria-label="Your projects">
          {list.map((p) => (
            <li key={p.id} className="card project-card">
              <div className="project-card-main">
                <div className="project-card-title">
                  <h2>
                    <Link to={`/projects/${p.id}/logs`}>{p.name}</Link>
                  </h2>
                  {p.role && <RoleBadge role={p.role} prefix="Your role:" />}
                </div>
                <div className="muted">
                  <span data-testid="log-count">{formatCount(p.logCount)}</span> {p.logCount === 1 ? 'log' : 'logs'} · created {formatTime(p.createdAt)}
                </div>
              </div>
              <nav className="project-card-links" aria-label={`${p.name} sections`}>
                <Link to={`/projects/${p.id}/logs`}>Logs</Link>
                <Link to={`/projects/${p.id}/alerts`}>Alerts</Link>
                <Link to={`/projects/${p.id}/settings`}>Settings &amp; API key</Link>
                <Link to={`/projects/${p.id}/settings#members`}>Members</Link>
              </nav>
            </li>
          ))}
        </ul>
      )}
      <Dialog open={creating} title="New project" onClose={() => setCreating(false)}>
        <CreateProjectForm
          onCancel={() => setCreating(false)}
          onCreated={(p) => {
            setCreating(false);
            projects.reload();
            navigate(`/projects/${p.id}/settings?created=1`);
          }}
        />
      </Dialog>
    </main>
  );
}

function CreateProjectForm({ onCancel, onCreated }: { onCancel: () => void; onCreated: (p: Project) => void }) {
  const api = useApi();
  const toast = useToast();
  const [name, setName] = useState('');
  const { busy, error, run } = useAction();

  function submit(e: FormEvent) {
    e.preventDefault();
    void run(async () => {
      const project = await api.call<Project>('POST', '/v1/projects', { name: name.trim() });
      toast(`Project ${project.name} created.`);
      onCreated(project);
    });
  }

  const fieldError = error instanceof ApiError ? error.fieldErrors().name : undefined;
  return (
    <form onSubmit={submit}>
      <Field label="Project name" error={fieldError} hint="1 to 100 characters, e.g. “checkout-api production”.">
        {(id, describedBy) => (
          <input id={id} autoFocus required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} />
        )}
      </Field>
      {error !== undefined && !fieldError && (error instanceof ApiError && error.code === 'PLAN_LIMIT_EXCEEDED' ? <PlanLimitNote error={error} /> : <ErrorNote error={error} />)}
      <div className="form-actions">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={busy || name.trim() === ''}>
          {busy ? 'Creating…' : 'Create project'}
        </button>
      </div>
    </form>
  );
}

