import { useState, type FormEvent } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { describeDuration, durationMs, formatCount, formatTime, relativeTime } from '../lib/format.ts';
import { LEVELS, type Level } from '../lib/query.ts';
import type { AlertRule, Condition, HistoryEntry, Page, Project } from '../lib/types.ts';
import { Dialog, Empty, ErrorNote, Field, Link, PageHeader, Spinner, useAction, useResource } from '../components/ui.tsx';
import { PlanLimitNote } from './Account.tsx';

export function describeCondition(c: Condition): string {
  let s = `${formatCount(c.threshold)} ${c.level} ${c.threshold === 1 ? 'log' : 'logs'}`;
  if (c.source) s += ` from ${c.source}`;
  if (c.pattern) s += ` matching /${c.pattern}/`;
  return `${s} within ${describeDuration(c.window)}`;
}

/** Firing now means: fired, and still inside its cooldown (it cannot fire again yet). */
export function ruleState(rule: AlertRule, now = Date.now()): { label: string; kind: 'off' | 'firing' | 'ok' } {
  if (!rule.enabled) return { label: 'Disabled', kind: 'off' };
  if (rule.lastTriggeredAt) {
    const until = new Date(rule.lastTriggeredAt).getTime() + (durationMs(rule.cooldown) ?? 0);
    if (until > now) return { label: `Fired ${relativeTime(rule.lastTriggeredAt, now)} · cooling down`, kind: 'firing' };
  }
  return { label: 'Watching', kind: 'ok' };
}

export function AlertsPage({ projectId }: { projectId: string }) {
  const api = useApi();
  const toast = useToast();
  const project = useResource<Project>(`/v1/projects/${encodeURIComponent(projectId)}`);
  const rules = useResource<{ data: AlertRule[] }>(`/v1/alerts?projectId=${encodeURIComponent(projectId)}`);
  const [editing, setEditing] = useState<AlertRule | 'new' | null>(null);
  const [deleting, setDeleting] = useState<AlertRule | null>(null);
  const [error, setError] = useState<unknown>();

  async function setEnabled(rule: AlertRule, enabled: boolean) {
    setError(undefined);
    try {
      const updated = await api.call<AlertRule>('PUT', `/v1/alerts/${rule.id}`, { enabled });
      rules.setData((d) => d && { data: d.data.map((r) => (r.id === rule.id ? updated : r)) });
      toast(`${rule.name} ${enabled ? 'enabled' : 'disabled'}.`);
    } catch (err) {
      setError(err);
    }
  }

  async function remove(rule: AlertRule) {
    try {
      await api.call('DELETE', `/v1/alerts/${rule.id}`);
      rules.setData((d) => d && { data: d.data.filter((r) => r.id !== rule.id) });
      toast(`${rule.name} deleted.`);
      setDeleting(null);
    } catch (err) {
      setError(err);
      setDeleting(null);
    }
  }

  const list = rules.data?.data;
  return (
    <main className="page">
      <PageHeader title={<>{project.data?.name ?? 'Project'} <span className="muted small-title">alerts</span></>}>
        <Link to={`/projects/${projectId}/logs`} className="button secondary">
          Logs
        </Link>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          New alert
        </button>
      </PageHeader>
      {error !== undefined && <ErrorNote error={error} />}
      {rules.error !== undefined && <ErrorNote error={rules.error} onRetry={rules.reload} />}
      {rules.loading && !list && <Spinner label="Loading alert rules…" />}
      {list && list.length === 0 && (
        <Empty title="No alert rules">
          <p>An alert rule watches this project's logs, e.g. “10 error logs from api within 5 minutes”, and notifies you by email or push.</p>
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Create an alert
          </button>
        </Empty>
      )}
      {list && list.length > 0 && (
        <table className="table alerts-table">
          <caption className="visually-hidden">Alert rules of this project</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Condition</th>
              <th scope="col">State</th>
              <th scope="col">Last fired</th>
              <th scope="col">Enabled</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((rule) => {
              const state = ruleState(rule);
              return (
                <tr key={rule.id}>
                  <td data-label="Name">
                    <Link to={`/alerts/${rule.id}`}>{rule.name}</Link>
                    <div className="muted small">{rule.channels.join(' + ')} · cooldown {rule.cooldown}</div>
                  </td>
                  <td data-label="Condition">{describeCondition(rule.condition)}</td>
                  <td data-label="State">
                    <span className={`state state-${state.kind}`}>{state.label}</span>
                  </td>
                  <td data-label="Last fired">{rule.lastTriggeredAt ? <time dateTime={rule.lastTriggeredAt}>{formatTime(rule.lastTriggeredAt)}</time> : 'never'}</td>
                  <td data-label="Enabled">
                    <label className="switch">
                      <input type="checkbox" role="switch" checked={rule.enabled} onChange={(e) => void setEnabled(rule, e.target.checked)} aria-label={`${rule.name} enabled`} />
                      <span aria-hidden="true" />
                    </label>
                  </td>
                  <td className="row-actions">
                    <Link to={`/alerts/${rule.id}`} className="button secondary small">
                      History
                    </Link>
                    <button type="button" className="secondary small" onClick={() => setEditing(rule)} aria-label={`Edit ${rule.name}`}>
                      Edit
                    </button>
                    <button type="button" className="danger-outline small" onClick={() => setDeleting(rule)} aria-label={`Delete ${rule.name}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Dialog open={editing !== null} title={editing === 'new' ? 'New alert rule' : 'Edit alert rule'} onClose={() => setEditing(null)}>
        {editing !== null && (
          <AlertForm
            projectId={projectId}
            rule={editing === 'new' ? undefined : editing}
            onCancel={() => setEditing(null)}
            onSaved={(saved) => {
              setEditing(null);
              rules.setData((d) => {
                const others = (d?.data ?? []).filter((r) => r.id !== saved.id);
                return { data: editing === 'new' ? [...others, saved] : (d?.data ?? []).map((r) => (r.id === saved.id ? saved : r)) };
              });
              toast(`Alert ${saved.name} saved.`);
            }}
          />
        )}
      </Dialog>
      <Dialog open={deleting !== null} title="Delete this alert rule?" onClose={() => setDeleting(null)}>
        {deleting && (
          <>
            <p>
              <strong>{deleting.name}</strong> and its history will be deleted.
            </p>
            <div className="form-actions">
              <button type="button" className="secondary" onClick={() => setDeleting(null)}>
                Cancel
              </button>
              <button type="button" className="danger" onClick={() => void remove(deleting)}>
                Delete rule
              </button>
            </div>
          </>
        )}
      </Dialog>
    </main>
  );
}

function splitDuration(value: string | undefined, fallback: string): { n: string; unit: string } {
  const m = /^(\d+)(s|m|h|d)$/.exec(value ?? fallback) ?? /^(\d+)(s|m|h|d)$/.exec(fallback)!;
  return { n: m[1]!, unit: m[2]! };
}

const UNITS = [
  { id: 's', label: 'seconds' },
  { id: 'm', label: 'minutes' },
  { id: 'h', label: 'hours' },
  { id: 'd', label: 'days' },
];

function DurationInput(props: { id: string; describedBy?: string; value: { n: string; unit: string }; onChange: (v: { n: string; unit: string }) => void; label: string }) {
  return (
    <div className="duration-input">
      <input id={props.id} type="number" min={0} inputMode="numeric" value={props.value.n} aria-describedby={props.describedBy} onChange={(e) => props.onChange({ ...props.value, n: e.target.value })} />
      <select aria-label={`${props.label} unit`} value={props.value.unit} onChange={(e) => props.onChange({ ...props.value, unit: e.target.value })}>
        {UNITS.map((u) => (
          <option key={u.id} value={u.id}>
            {u.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function AlertForm({ projectId, rule, onSaved, onCancel }: { projectId: string; rule?: AlertRule; onSaved: (r: AlertRule) => void; onCancel: () => void }) {
  const api = useApi();
  const [name, setName] = useState(rule?.name ?? '');
  const [level, setLevel] = useState<Level>(rule?.condition.level ?? 'error');
  const [threshold, setThreshold] = useState(String(rule?.condition.threshold ?? 10));
  const [window, setWindow] = useState(splitDuration(rule?.condition.window, '5m'));
  const [source, setSource] = useState(rule?.condition.source ?? '');
  const [pattern, setPattern] = useState(rule?.condition.pattern ?? '');
  const [channels, setChannels] = useState<Array<'email' | 'push'>>(rule?.channels ?? ['email']);
  const [cooldown, setCooldown] = useState(splitDuration(rule?.cooldown, '15m'));
  const { busy, error, run } = useAction();

  function submit(e: FormEvent) {
    e.preventDefault();
    const condition: Condition = { level, threshold: Number(threshold), window: `${window.n}${window.unit}` };
    if (source.trim()) condition.source = source.trim();
    if (pattern) condition.pattern = pattern;
    const body = { name: name.trim(), condition, channels, cooldown: `${cooldown.n}${cooldown.unit}` };
    void run(async () => {
      const saved = rule ? await api.call<AlertRule>('PUT', `/v1/alerts/${rule.id}`, body) : await api.call<AlertRule>('POST', '/v1/alerts', { projectId, ...body });
      onSaved(saved);
    });
  }

  const fe = error instanceof ApiError ? error.fieldErrors() : {};
  const shown = new Set(['name', 'level', 'threshold', 'window', 'source', 'pattern', 'channels', 'cooldown']);
  const general = error !== undefined && !Object.keys(fe).some((k) => shown.has(k));
  const toggleChannel = (c: 'email' | 'push') => setChannels((cs) => (cs.includes(c) ? cs.filter((x) => x !== c) : [...cs, c]));

  return (
    <form onSubmit={submit} className="alert-form" noValidate>
      <Field label="Name" error={fe.name}>
        {(id, d) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} aria-describedby={d} placeholder="Errors from the API" />}
      </Field>
      <div className="form-grid">
        <Field label="Level" error={fe.level}>
          {(id, d) => (
            <select id={id} value={level} onChange={(e) => setLevel(e.target.value as Level)} aria-describedby={d}>
              {LEVELS.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Threshold" error={fe.threshold} hint="How many matching logs fire the rule.">
          {(id, d) => <input id={id} type="number" min={1} inputMode="numeric" value={threshold} onChange={(e) => setThreshold(e.target.value)} aria-describedby={d} />}
        </Field>
        <Field label="Within" error={fe.window}>
          {(id, d) => <DurationInput id={id} describedBy={d} label="Window" value={window} onChange={setWindow} />}
        </Field>
      </div>
      <div className="form-grid">
        <Field label="Source (optional)" error={fe.source} hint="Only logs from this source count.">
          {(id, d) => <input id={id} value={source} maxLength={200} onChange={(e) => setSource(e.target.value)} aria-describedby={d} placeholder="any source" />}
        </Field>
        <Field label="Message pattern (optional)" error={fe.pattern} hint="An RE2 regular expression the message must match.">
          {(id, d) => <input id={id} value={pattern} onChange={(e) => setPattern(e.target.value)} aria-describedby={d} spellCheck={false} placeholder="e.g. timeout|refused" />}
        </Field>
      </div>
      <fieldset className={`channels${fe.channels ? ' has-error' : ''}`}>
        <legend>Notify by</legend>
        <label className="check">
          <input type="checkbox" checked={channels.includes('email')} onChange={() => toggleChannel('email')} /> Email
        </label>
        <label className="check">
          <input type="checkbox" checked={channels.includes('push')} onChange={() => toggleChannel('push')} /> Push notification
        </label>
        {fe.channels && <div className="field-error">{fe.channels}</div>}
      </fieldset>
      <Field label="Cooldown" error={fe.cooldown} hint="After firing, the rule stays quiet this long.">
        {(id, d) => <DurationInput id={id} describedBy={d} label="Cooldown" value={cooldown} onChange={setCooldown} />}
      </Field>
      {general && (error instanceof ApiError && error.code === 'PLAN_LIMIT_EXCEEDED' ? <PlanLimitNote error={error} /> : <ErrorNote error={error} />)}
      <div className="form-actions">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : rule ? 'Save changes' : 'Create alert'}
        </button>
      </div>
    </form>
  );
}

export function AlertDetailPage({ alertId }: { alertId: string }) {
  const rule = useResource<AlertRule>(`/v1/alerts/${encodeURIComponent(alertId)}`);
  const [cursor, setCursor] = useState<string | null>(null);
  const history = useResource<Page<HistoryEntry>>(`/v1/alerts/${encodeURIComponent(alertId)}/history?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const [editing, setEditing] = useState(false);
  const [cursors, setCursors] = useState<string[]>([]);

  if (rule.error !== undefined && !rule.data) return <main className="page"><ErrorNote error={rule.error} onRetry={rule.reload} /></main>;
  const r = rule.data;
  if (!r) return <main className="page"><Spinner label="Loading alert…" /></main>;
  const state = ruleState(r);
  const entries = history.data?.data;

  return (
    <main className="page">
      <PageHeader title={r.name}>
        <Link to={`/projects/${r.projectId}/alerts`} className="button secondary">
          All alerts
        </Link>
        <button type="button" className="secondary" onClick={history.reload}>
          Refresh
        </button>
        <button type="button" className="primary" onClick={() => setEditing(true)}>
          Edit
        </button>
      </PageHeader>
      <section className="card">
        <p className="condition">{describeCondition(r.condition)}</p>
        <dl className="details">
          <dt>State</dt>
          <dd>
            <span className={`state state-${state.kind}`}>{state.label}</span>
          </dd>
          <dt>Channels</dt>
          <dd>{r.channels.join(', ')}</dd>
          <dt>Cooldown</dt>
          <dd>{describeDuration(r.cooldown)}</dd>
          <dt>Last fired</dt>
          <dd>{r.lastTriggeredAt ? formatTime(r.lastTriggeredAt) : 'never'}</dd>
        </dl>
      </section>
      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        {history.error !== undefined && <ErrorNote error={history.error} onRetry={history.reload} />}
        {history.loading && !entries && <Spinner label="Loading history…" />}
        {entries && entries.length === 0 && (
          <Empty title="It has not fired yet">
            <p>Each firing is listed here with how many logs matched, the delivery on each channel and a few sample lines.</p>
          </Empty>
        )}
        {entries && entries.length > 0 && (
          <ol className="history" aria-label="Firings, newest first">
            {entries.map((h) => (
              <li key={h.id} className="card history-entry">
                <div className="history-head">
                  <time dateTime={h.triggeredAt}>{formatTime(h.triggeredAt)}</time>
                  <span>
                    <strong>{formatCount(h.matchedCount)}</strong> matching logs within {describeDuration(h.window)} (threshold {formatCount(h.threshold)})
                  </span>
                </div>
                <ul className="deliveries" aria-label="Deliveries">
                  {h.deliveries.map((d) => (
                    <li key={d.channel} className={`delivery delivery-${d.status}`}>
                      {d.channel}: <strong>{d.status}</strong>
                      {d.error ? <span className="muted"> — {d.error}</span> : null}
                    </li>
                  ))}
                </ul>
                {h.sample.length > 0 && (
                  <details>
                    <summary>{h.sample.length} sample {h.sample.length === 1 ? 'line' : 'lines'}</summary>
                    <ul className="sample">
                      {h.sample.map((l) => (
                        <li key={l.id}>
                          <span className="log-time">{formatTime(l.timestamp)}</span> <span className={`level-badge lvl-${l.level}`}>{l.level}</span> {l.source && <span className="log-source">{l.source}</span>} {l.message}
                        </li>
                      ))}
                    </ul>
                  </details>
                )}
              </li>
            ))}
          </ol>
        )}
        <div className="pager">
          {cursors.length > 0 && (
            <button
              type="button"
              className="secondary"
              onClick={() => {
                const prev = cursors.slice(0, -1);
                setCursors(prev);
                setCursor(prev[prev.length - 1] ?? null);
              }}
            >
              Newer
            </button>
          )}
          {history.data?.nextCursor && (
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setCursors((c) => [...c, history.data!.nextCursor!]);
                setCursor(history.data!.nextCursor);
              }}
            >
              Older
            </button>
          )}
        </div>
      </section>
      <Dialog open={editing} title="Edit alert rule" onClose={() => setEditing(false)}>
        <AlertForm
          projectId={r.projectId}
          rule={r}
          onCancel={() => setEditing(false)}
          onSaved={(saved) => {
            rule.setData(() => saved);
            setEditing(false);
          }}
        />
      </Dialog>
    </main>
  );
}

