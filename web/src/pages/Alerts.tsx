import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../lib/api.ts';
import { CHANNELS, describeCondition, describeTest, formatUntil, fromLocalInput, matchingLogsPath, mutedUntil, prefillFromSearch, ruleBadge, sampleLogPath, toLocalInput, type AlertPrefill } from '../lib/alerts.ts';
import { useApi, useToast } from '../lib/context.ts';
import { navigate } from '../lib/router.ts';
import { describeDuration, formatCount, formatTime } from '../lib/format.ts';
import { LEVELS, type Level } from '../lib/query.ts';
import type { AlertRule, Channel, Comparison, Condition, Destination, HistoryEntry, Page, Project, TestResult } from '../lib/types.ts';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Field, HeadWithActions, Link, PageHeader, Spinner, useAction, useResource } from '../components/ui.tsx';
import { PlanLimitNote } from './Account.tsx';
import { AlertQueryField, ruleQueryError } from '../components/AlertQueryField.tsx';
import { ProjectTabs } from '../components/ProjectTabs.tsx';

/** How often an open page asks for its rules again, so a rule that starts firing shows without a reload. */
const POLL_MS = 20_000;

/** Calls `fn` every `ms` while the page is visible (and re-renders relative times with it). */
function usePolling(fn: () => void, ms = POLL_MS): void {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') latest.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms]);
}

/** The rule's state from the server (Firing / OK / Disabled), since when, and whether it is muted. */
export function RuleState({ rule }: { rule: AlertRule }) {
  const now = Date.now();
  const badge = ruleBadge(rule, now);
  const until = rule.enabled ? mutedUntil(rule, now) : undefined;
  return (
    <span className="rule-state">
      <span className={`state state-${badge.kind}`}>{badge.label}</span>
      {badge.since && badge.sinceIso && (
        <time className="muted small" dateTime={badge.sinceIso} title={formatTime(badge.sinceIso)}>
          {badge.since}
        </time>
      )}
      {until !== undefined && (
        <span className="state state-muted" title={`Notifications are skipped until ${formatTime(until)}`}>
          Muted until {formatUntil(until, now)}
        </span>
      )}
    </span>
  );
}

/** What a test notification did on each channel, until dismissed. */
function TestOutcome({ name, result, onDismiss }: { name: string; result: TestResult; onDismiss: () => void }) {
  const { ok, lines } = describeTest(result);
  return (
    <div className={`test-outcome ${ok ? 'notice' : 'error-note'}`} role="status">
      <div>
        <strong>Test of {name}:</strong>
        {lines.length === 0 ? (
          ' no channels.'
        ) : (
          <ul className="deliveries">
            {result.deliveries.map((d, i) => (
              <li key={d.channel} className={`delivery delivery-${d.status}`}>
                {lines[i]}
              </li>
            ))}
          </ul>
        )}
      </div>
      <button type="button" className="link-button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** Sends a test notification on each of the rule's channels now (no history entry, mute ignored). */
function SendTestButton({ rule, onResult, onError, small = true }: { rule: AlertRule; onResult: (r: TestResult) => void; onError: (e: unknown) => void; small?: boolean }) {
  const api = useApi();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className={small ? 'secondary small' : 'secondary'}
      disabled={busy}
      aria-label={`Send test for ${rule.name}`}
      onClick={async () => {
        setBusy(true);
        try {
          onResult(await api.call<TestResult>('POST', `/v1/alerts/${encodeURIComponent(rule.id)}/test`));
        } catch (err) {
          onError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      {busy ? 'Sending…' : 'Send test'}
    </button>
  );
}

const MUTE_FOR = [
  { label: '1 hour', ms: 3_600_000 },
  { label: '8 hours', ms: 8 * 3_600_000 },
  { label: '24 hours', ms: 24 * 3_600_000 },
];

/**
 * Mute: a disclosure with 1 h, 8 h, 24 h, a chosen time, and Unmute while muted. A muted rule
 * keeps evaluating and writing entries; its deliveries are skipped.
 */
function MuteMenu({ rule, onSaved, small = true }: { rule: AlertRule; onSaved: (r: AlertRule) => void; small?: boolean }) {
  const api = useApi();
  const toast = useToast();
  const [open, setOpen] = useState(false);
  const [custom, setCustom] = useState<string | null>(null);
  const [customError, setCustomError] = useState<string>();
  const { busy, error, run, setError } = useAction();
  const box = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const panelId = useId();
  const until = mutedUntil(rule);

  const close = (focusButton: boolean) => {
    setOpen(false);
    setCustom(null);
    setCustomError(undefined);
    setError(undefined);
    if (focusButton) button.current?.focus();
  };

  useEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) close(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close(true);
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  const save = (value: number | null) =>
    run(async () => {
      const updated = await api.call<AlertRule>('PUT', `/v1/alerts/${encodeURIComponent(rule.id)}`, { mutedUntil: value === null ? null : new Date(value).toISOString() });
      onSaved(updated);
      close(true);
      toast(value === null ? `${rule.name} is no longer muted.` : `${rule.name} is muted until ${formatUntil(value)}.`);
    });

  function submitCustom(e: FormEvent) {
    e.preventDefault();
    const t = fromLocalInput(custom ?? '');
    if (t === undefined) return setCustomError('Choose a date and time.');
    if (t <= Date.now()) return setCustomError('Choose a time in the future.');
    setCustomError(undefined);
    void save(t);
  }

  return (
    <div className={`menu${open ? ' open' : ''}`} ref={box}>
      <button ref={button} type="button" className={small ? 'secondary small' : 'secondary'} aria-expanded={open} aria-controls={panelId} aria-label={`Mute ${rule.name}`} onClick={() => (open ? close(false) : setOpen(true))}>
        Mute <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div className="menu-panel" id={panelId} role="group" aria-label={`Mute ${rule.name}`}>
          <p className="muted small">
            {until !== undefined ? `Muted until ${formatTime(until)}. ` : ''}While muted, the rule still records entries but sends nothing.
          </p>
          {MUTE_FOR.map((m) => (
            <button key={m.label} type="button" className="menu-item" disabled={busy} onClick={() => void save(Date.now() + m.ms)}>
              For {m.label}
            </button>
          ))}
          {custom === null ? (
            <button type="button" className="menu-item" onClick={() => setCustom(toLocalInput(Math.max(until ?? 0, Date.now()) + 3_600_000))}>
              Until a time…
            </button>
          ) : (
            <form className="menu-custom" onSubmit={submitCustom} noValidate>
              <Field label="Mute until" error={customError}>
                {(id, d) => <input id={id} type="datetime-local" autoFocus value={custom} min={toLocalInput(Date.now())} onChange={(e) => setCustom(e.target.value)} aria-describedby={d} aria-invalid={customError ? true : undefined} />}
              </Field>
              <button type="submit" className="primary small" disabled={busy}>
                Mute
              </button>
            </form>
          )}
          {until !== undefined && (
            <button type="button" className="menu-item" disabled={busy} onClick={() => void save(null)}>
              Unmute
            </button>
          )}
          {error !== undefined && <ErrorNote error={error} />}
        </div>
      )}
    </div>
  );
}

export function AlertsPage({ projectId, search }: { projectId: string; search?: URLSearchParams }) {
  const api = useApi();
  const toast = useToast();
  const project = useResource<Project>(`/v1/projects/${encodeURIComponent(projectId)}`);
  const rules = useResource<{ data: AlertRule[] }>(`/v1/alerts?projectId=${encodeURIComponent(projectId)}`);
  // "Create alert from this search": `?create=1&query=…&level=…` opens the create form prefilled.
  const searchText = search?.toString() ?? '';
  const prefill = useMemo(() => prefillFromSearch(new URLSearchParams(searchText)), [searchText]);
  const [editing, setEditing] = useState<AlertRule | 'new' | null>(prefill ? 'new' : null);
  useEffect(() => {
    if (prefill) setEditing('new');
  }, [prefill]);
  /** Closes the form; a prefilled one also leaves the URL, so a reload does not open it again. */
  const closeForm = () => {
    setEditing(null);
    if (prefill) navigate(`/projects/${projectId}/alerts`, { replace: true });
  };
  const [deleting, setDeleting] = useState<AlertRule | null>(null);
  const [tested, setTested] = useState<{ name: string; result: TestResult } | null>(null);
  const [error, setError] = useState<unknown>();
  usePolling(rules.reload);

  const replace = (updated: AlertRule) => rules.setData((d) => d && { data: d.data.map((r) => (r.id === updated.id ? updated : r)) });

  async function setEnabled(rule: AlertRule, enabled: boolean) {
    setError(undefined);
    try {
      replace(await api.call<AlertRule>('PUT', `/v1/alerts/${rule.id}`, { enabled }));
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
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          New alert
        </button>
      </PageHeader>
      <ProjectTabs projectId={projectId} current="alerts" />
      {error !== undefined && <ErrorNote error={error} />}
      {tested && <TestOutcome name={tested.name} result={tested.result} onDismiss={() => setTested(null)} />}
      {rules.error !== undefined && <ErrorNote error={rules.error} onRetry={rules.reload} />}
      {rules.loading && !list && <Spinner label="Loading alert rules…" />}
      {list && list.length === 0 && (
        <Empty title="No alert rules">
          <p>An alert rule watches this project's logs, e.g. “10 error logs from api within 5 minutes”, or “no logs from nightly-backup within 25 hours”, and notifies you by email, push, webhook or Slack.</p>
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Create an alert
          </button>
        </Empty>
      )}
      {list && list.length > 0 && (
        <table className="table alerts-table">
          <caption className="visually-hidden">Alert rules of this project</caption>
          <HeadWithActions columns={['Name', 'Condition', 'State', 'Last fired', 'Enabled']} />
          <tbody>
            {list.map((rule) => (
              <tr key={rule.id} data-rule={rule.id}>
                <td data-label="Name">
                  <Link to={`/alerts/${rule.id}`}>{rule.name}</Link>
                  <div className="muted small">
                    {rule.channels.join(' + ')} · cooldown {rule.cooldown}
                  </div>
                </td>
                <td data-label="Condition">
                  {describeCondition(rule.condition)}
                  {rule.condition.query && <RuleQuery query={rule.condition.query} />}
                </td>
                <td data-label="State">
                  <RuleState rule={rule} />
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
                  <SendTestButton
                    rule={rule}
                    onResult={(result) => {
                      setError(undefined);
                      setTested({ name: rule.name, result });
                    }}
                    onError={setError}
                  />
                  <MuteMenu rule={rule} onSaved={replace} />
                  <button type="button" className="secondary small" onClick={() => setEditing(rule)} aria-label={`Edit ${rule.name}`}>
                    Edit
                  </button>
                  <button type="button" className="danger-outline small" onClick={() => setDeleting(rule)} aria-label={`Delete ${rule.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Dialog open={editing !== null} title={editing === 'new' ? 'New alert rule' : 'Edit alert rule'} onClose={closeForm}>
        {editing !== null && (
          <AlertForm
            projectId={projectId}
            rule={editing === 'new' ? undefined : editing}
            prefill={editing === 'new' ? prefill : undefined}
            onCancel={closeForm}
            onSaved={(saved) => {
              closeForm();
              rules.setData((d) => {
                const others = (d?.data ?? []).filter((r) => r.id !== saved.id);
                return { data: editing === 'new' ? [...others, saved] : (d?.data ?? []).map((r) => (r.id === saved.id ? saved : r)) };
              });
              toast(`Alert ${saved.name} saved.`);
            }}
          />
        )}
      </Dialog>
      <ConfirmDialog target={deleting} title="Delete this alert rule?" onClose={() => setDeleting(null)} onConfirm={(rule) => void remove(rule)} label="Delete rule">
        {(rule) => (
          <p>
            <strong>{rule.name}</strong> and its history will be deleted.
          </p>
        )}
      </ConfirmDialog>
    </main>
  );
}

/** A rule's query, as written, under its condition. */
function RuleQuery({ query }: { query: string }) {
  return (
    <div className="rule-query small">
      <span className="muted">query </span>
      <code>{query}</code>
    </div>
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

/** Whether two conditions select the same logs the same way (an unchanged condition is not sent, so the rule keeps its state). */
function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.level === b.level &&
    a.threshold === b.threshold &&
    a.window === b.window &&
    (a.source ?? '') === (b.source ?? '') &&
    (a.pattern ?? '') === (b.pattern ?? '') &&
    (a.query ?? '') === (b.query ?? '') &&
    (a.comparison ?? 'above') === (b.comparison ?? 'above')
  );
}

export function AlertForm({ projectId, rule, prefill, onSaved, onCancel }: { projectId: string; rule?: AlertRule; prefill?: AlertPrefill; onSaved: (r: AlertRule) => void; onCancel: () => void }) {
  const api = useApi();
  const [name, setName] = useState(rule?.name ?? '');
  const [level, setLevel] = useState<Level>(rule?.condition.level ?? prefill?.level ?? 'error');
  const [query, setQuery] = useState(rule?.condition.query ?? prefill?.query ?? '');
  /** The query as last submitted: the server's complaint about it is shown until it changes. */
  const [submittedQuery, setSubmittedQuery] = useState<string>();
  const [comparison, setComparison] = useState<Comparison>(rule?.condition.comparison ?? 'above');
  const [threshold, setThreshold] = useState(String(rule?.condition.threshold ?? 10));
  const [window, setWindow] = useState(splitDuration(rule?.condition.window, '5m'));
  const [source, setSource] = useState(rule?.condition.source ?? '');
  const [pattern, setPattern] = useState(rule?.condition.pattern ?? '');
  const [channels, setChannels] = useState<Channel[]>(rule?.channels ?? ['email']);
  const [cooldown, setCooldown] = useState(splitDuration(rule?.cooldown, '15m'));
  const { busy, error, run } = useAction();
  // Only to say when a chosen webhook or Slack channel has nowhere to go yet.
  const destinations = useResource<{ data: Destination[] }>(`/v1/projects/${encodeURIComponent(projectId)}/destinations`);
  const comparisonName = useId();

  function submit(e: FormEvent) {
    e.preventDefault();
    const condition: Condition = { level, threshold: Number(threshold), window: `${window.n}${window.unit}`, comparison };
    if (source.trim()) condition.source = source.trim();
    if (pattern) condition.pattern = pattern;
    if (query.trim()) condition.query = query.trim();
    setSubmittedQuery(query);
    const body: Record<string, unknown> = { name: name.trim(), channels, cooldown: `${cooldown.n}${cooldown.unit}` };
    // A new condition puts a firing rule back to ok: send it only when it changed.
    if (!rule || !sameCondition(condition, rule.condition)) body.condition = condition;
    void run(async () => {
      const saved = rule ? await api.call<AlertRule>('PUT', `/v1/alerts/${rule.id}`, body) : await api.call<AlertRule>('POST', '/v1/alerts', { projectId, ...body });
      onSaved(saved);
    });
  }

  const fe = error instanceof ApiError ? error.fieldErrors() : {};
  const shown = new Set(['name', 'level', 'threshold', 'window', 'source', 'pattern', 'query', 'channels', 'cooldown', 'comparison']);
  const queryError = submittedQuery === query ? (ruleQueryError(error) ?? (fe.query ? { column: 0, message: fe.query } : undefined)) : undefined;
  const general = error !== undefined && !Object.keys(fe).some((k) => shown.has(k));
  const toggleChannel = (c: Channel) => setChannels((cs) => (cs.includes(c) ? cs.filter((x) => x !== c) : [...cs, c]));
  const n = threshold.trim() === '' ? 'N' : threshold.trim();
  const logs = n === '1' ? 'log' : 'logs';
  const missing = destinations.data ? (['webhook', 'slack'] as const).filter((t) => channels.includes(t) && !destinations.data!.data.some((d) => d.type === t)) : [];

  return (
    <form onSubmit={submit} className="alert-form" noValidate>
      <Field label="Name" error={fe.name}>
        {(id, d) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} aria-describedby={d} placeholder="Errors from the API" />}
      </Field>
      <div className="form-grid">
        <Field label="Level" error={fe.level} hint={!rule && prefill?.levelNote && level === prefill.level ? prefill.levelNote : undefined}>
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
        <Field label="Threshold" error={fe.threshold} hint={comparison === 'below' ? 'Fewer matching logs than this fire the rule.' : 'How many matching logs fire the rule.'}>
          {(id, d) => <input id={id} type="number" min={1} inputMode="numeric" value={threshold} onChange={(e) => setThreshold(e.target.value)} aria-describedby={d} />}
        </Field>
        <Field label="Within" error={fe.window}>
          {(id, d) => <DurationInput id={id} describedBy={d} label="Window" value={window} onChange={setWindow} />}
        </Field>
      </div>
      <fieldset className={`comparison${fe.comparison ? ' has-error' : ''}`}>
        <legend>Fires on</legend>
        <label className="check">
          <input type="radio" name={comparisonName} value="above" checked={comparison === 'above'} onChange={() => setComparison('above')} /> At least {n} {logs}
        </label>
        <label className="check">
          <input type="radio" name={comparisonName} value="below" checked={comparison === 'below'} onChange={() => setComparison('below')} /> Fewer than {n} {logs} — fires when logs stop
        </label>
        {comparison === 'below' && <div className="hint">A silence alert. It never fires during its first window, so a new rule has a whole window to see logs.</div>}
        {fe.comparison && <div className="field-error">{fe.comparison}</div>}
      </fieldset>
      <div className="form-grid">
        <Field label="Source (optional)" error={fe.source} hint="Only logs from this source count.">
          {(id, d) => <input id={id} value={source} maxLength={200} onChange={(e) => setSource(e.target.value)} aria-describedby={d} placeholder="any source" />}
        </Field>
        <Field label="Message pattern (optional)" error={fe.pattern} hint="An RE2 regular expression the message must match.">
          {(id, d) => <input id={id} value={pattern} onChange={(e) => setPattern(e.target.value)} aria-describedby={d} spellCheck={false} placeholder="e.g. timeout|refused" />}
        </Field>
      </div>
      <AlertQueryField projectId={projectId} value={query} onChange={setQuery} serverError={queryError} />
      <fieldset className={`channels${fe.channels ? ' has-error' : ''}`}>
        <legend>Notify by</legend>
        {CHANNELS.map((c) => (
          <label key={c.id} className="check">
            <input type="checkbox" checked={channels.includes(c.id)} onChange={() => toggleChannel(c.id)} /> {c.label}
          </label>
        ))}
        <div className="hint">
          Webhook and Slack notify every destination of that type in the project's <Link to={`/projects/${projectId}/settings#destinations`}>settings</Link>.
          {missing.length > 0 && <strong> This project has no {missing.join(' or ')} destination yet.</strong>}
        </div>
        {fe.channels && <div className="field-error">{fe.channels}</div>}
      </fieldset>
      <Field label="Cooldown" error={fe.cooldown} hint="While the rule keeps firing, it reminds you at most this often.">
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
  const [tested, setTested] = useState<TestResult | null>(null);
  const [error, setError] = useState<unknown>();
  const refresh = () => {
    rule.reload();
    history.reload();
  };
  usePolling(refresh);

  if (rule.error !== undefined && !rule.data) return <main className="page"><ErrorNote error={rule.error} onRetry={rule.reload} /></main>;
  const r = rule.data;
  if (!r) return <main className="page"><Spinner label="Loading alert…" /></main>;
  const entries = history.data?.data;
  const nowPath = matchingLogsPath(r.projectId, r.condition, new Date().toISOString(), r.condition.window);

  return (
    <main className="page">
      <PageHeader title={r.name}>
        <Link to={`/projects/${r.projectId}/alerts`} className="button secondary">
          All alerts
        </Link>
        <button type="button" className="secondary" onClick={refresh}>
          Refresh
        </button>
        <SendTestButton
          rule={r}
          onResult={(result) => {
            setError(undefined);
            setTested(result);
          }}
          onError={setError}
          small={false}
        />
        <MuteMenu rule={r} onSaved={(saved) => rule.setData(() => saved)} small={false} />
        <button type="button" className="primary" onClick={() => setEditing(true)}>
          Edit
        </button>
      </PageHeader>
      <ProjectTabs projectId={r.projectId} current="alerts" />
      {error !== undefined && <ErrorNote error={error} />}
      {tested && <TestOutcome name={r.name} result={tested} onDismiss={() => setTested(null)} />}
      <section className="card">
        <p className="condition">{describeCondition(r.condition)}</p>
        <dl className="details">
          {r.condition.query && (
            <>
              <dt>Query</dt>
              <dd>
                <code className="rule-query">{r.condition.query}</code>
              </dd>
            </>
          )}
          <dt>State</dt>
          <dd>
            <RuleState rule={r} />
          </dd>
          <dt>Channels</dt>
          <dd>{r.channels.join(', ')}</dd>
          <dt>Cooldown</dt>
          <dd>{describeDuration(r.cooldown)}</dd>
          <dt>Last fired</dt>
          <dd>{r.lastTriggeredAt ? formatTime(r.lastTriggeredAt) : 'never'}</dd>
        </dl>
        {nowPath && (
          <p>
            <Link to={nowPath}>View the logs it counts now</Link> <span className="muted small">(its last {describeDuration(r.condition.window)})</span>
          </p>
        )}
      </section>
      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        {history.error !== undefined && <ErrorNote error={history.error} onRetry={history.reload} />}
        {history.loading && !entries && <Spinner label="Loading history…" />}
        {entries && entries.length === 0 && (
          <Empty title="It has not fired yet">
            <p>Each firing and each recovery is listed here with how many logs matched, the delivery on each channel and, for a firing, a few sample lines.</p>
          </Empty>
        )}
        {entries && entries.length > 0 && (
          <ol className="history" aria-label="Entries, newest first">
            {entries.map((h) => {
              const logsPath = matchingLogsPath(r.projectId, r.condition, h.triggeredAt, h.window);
              return (
                <li key={h.id} className={`card history-entry history-${h.kind}`}>
                  <div className="history-head">
                    <span className={`state ${h.kind === 'resolved' ? 'state-ok' : 'state-firing'}`}>{h.kind === 'resolved' ? 'Resolved' : 'Triggered'}</span>
                    <time dateTime={h.triggeredAt}>{formatTime(h.triggeredAt)}</time>
                    <span>
                      <strong>{formatCount(h.matchedCount)}</strong> matching {h.matchedCount === 1 ? 'log' : 'logs'} within {describeDuration(h.window)} (threshold {formatCount(h.threshold)})
                    </span>
                    {logsPath && (
                      <Link to={logsPath} className="history-logs">
                        View matching logs<span className="visually-hidden"> of {formatTime(h.triggeredAt)}</span>
                      </Link>
                    )}
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
                        {h.sample.map((l) => {
                          const line = (
                            <>
                              <span className="log-time">{formatTime(l.timestamp)}</span> <span className={`level-badge lvl-${l.level}`}>{l.level}</span> {l.source && <span className="log-source">{l.source}</span>} {l.message}
                            </>
                          );
                          const path = sampleLogPath(r.projectId, l.id, r.condition, h.triggeredAt, h.window);
                          return <li key={l.id}>{path ? <Link to={path}>{line}</Link> : line}</li>;
                        })}
                      </ul>
                    </details>
                  )}
                </li>
              );
            })}
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
