import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useApi } from '../lib/context.ts';
import { formatCount } from '../lib/format.ts';
import {
  addTerm,
  fieldName,
  flattenMetadata,
  querySyntaxError,
  fieldTerm,
  summariseFields,
  fromLocalInput,
  fromUrlParams,
  LEVELS,
  PRESETS,
  resolveRange,
  searchPath,
  statsPath,
  tailAccepts,
  tailPath,
  toLocalInput,
  toUrlParams,
  type Level,
  type LogQuery,
  type PresetId,
} from '../lib/query.ts';
import { navigate } from '../lib/router.ts';
import { ApiError } from '../lib/api.ts';
import { TailClient, type TailStatus } from '../lib/tail.ts';
import type { Log, Page, Project, Stats } from '../lib/types.ts';
import { Histogram } from '../components/Histogram.tsx';
import { LogList } from '../components/LogList.tsx';
import { SendFirstLog } from '../components/SendFirstLog.tsx';
import { ErrorNote, Link, PageHeader, Spinner, useResource } from '../components/ui.tsx';

/** The most lines the explorer keeps in memory; beyond it, the oldest go. */
const MAX_ROWS = 50_000;
const PAGE_SIZE = 500;

interface Results {
  logs: Log[];
  cursor: string | null;
  loading: boolean;
  error: unknown;
}

function useWidth<T extends HTMLElement>(): [React.RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

export function ExplorerPage({ projectId, search }: { projectId: string; search: URLSearchParams }) {
  const api = useApi();
  const project = useResource<Project>(`/v1/projects/${encodeURIComponent(projectId)}`);
  const query = useMemo(() => fromUrlParams(search), [search.toString()]); // eslint-disable-line react-hooks/exhaustive-deps
  const [now, setNow] = useState(() => Date.now());
  const [results, setResults] = useState<Results>({ logs: [], cursor: null, loading: true, error: undefined });
  const [stats, setStats] = useState<Stats | undefined>();
  const [statsError, setStatsError] = useState<unknown>();
  const generation = useRef(0);
  const seen = useRef(new Set<string>());
  const [chartRef, chartWidth] = useWidth<HTMLDivElement>();

  const setQuery = useCallback(
    (next: LogQuery) => {
      setNow(Date.now());
      navigate(`/projects/${encodeURIComponent(projectId)}/logs?${toUrlParams(next)}`, { replace: true });
    },
    [projectId],
  );

  // Search and histogram, whenever the query (or "Refresh") changes.
  useEffect(() => {
    const gen = ++generation.current;
    const ctrl = new AbortController();
    setResults({ logs: [], cursor: null, loading: true, error: undefined });
    seen.current = new Set();
    api.get<Page<Log>>(searchPath(projectId, query, now, { limit: PAGE_SIZE }), ctrl.signal).then(
      (page) => {
        if (gen !== generation.current) return;
        for (const l of page.data) seen.current.add(l.id);
        setResults({ logs: page.data, cursor: page.nextCursor, loading: false, error: undefined });
      },
      (error: unknown) => {
        if (gen === generation.current && !ctrl.signal.aborted) setResults({ logs: [], cursor: null, loading: false, error });
      },
    );
    setStatsError(undefined);
    const bars = Math.max(20, Math.min(90, Math.floor(chartWidth / 12)));
    api.get<Stats>(statsPath(projectId, query, now, bars), ctrl.signal).then(
      (s) => gen === generation.current && setStats(s),
      (error: unknown) => gen === generation.current && !ctrl.signal.aborted && setStatsError(error),
    );
    return () => ctrl.abort();
    // The chart width decides the bar count only when the query is (re)run.
  }, [api, projectId, query, now]); // eslint-disable-line react-hooks/exhaustive-deps

  const loadMore = useCallback(() => {
    setResults((r) => {
      if (r.loading || !r.cursor || r.logs.length >= MAX_ROWS) return r;
      const gen = generation.current;
      api.get<Page<Log>>(searchPath(projectId, query, now, { cursor: r.cursor, limit: PAGE_SIZE })).then(
        (page) => {
          if (gen !== generation.current) return;
          const fresh = page.data.filter((l) => !seen.current.has(l.id));
          for (const l of fresh) seen.current.add(l.id);
          setResults((cur) => ({ logs: cur.logs.concat(fresh), cursor: page.nextCursor, loading: false, error: undefined }));
        },
        (error: unknown) => gen === generation.current && setResults((cur) => ({ ...cur, loading: false, error })),
      );
      return { ...r, loading: true };
    });
  }, [api, projectId, query, now]);

  // Live tail.
  const [tailOn, setTailOn] = useState(false);
  const [tailStatus, setTailStatus] = useState<{ status: TailStatus; detail?: string }>({ status: 'stopped' });
  const [liveCount, setLiveCount] = useState(0);
  const tailRef = useRef<TailClient<Log> | null>(null);
  useEffect(() => {
    if (!tailOn) return;
    const client = new TailClient<Log>({
      open: (lastEventId, signal) => api.raw('GET', tailPath(projectId, query), { signal, headers: lastEventId ? { 'last-event-id': lastEventId } : {} }),
      onStatus: (status, detail) => setTailStatus({ status, detail }),
      onEvents: (items) => {
        if (!tailAccepts(query)) return;
        const fresh = items.filter((l) => !seen.current.has(l.id));
        if (!fresh.length) return;
        for (const l of fresh) seen.current.add(l.id);
        setLiveCount((n) => n + fresh.length);
        // Newest first: the stream is in commit order, so the last item is the newest.
        fresh.reverse();
        setResults((r) => {
          let logs = fresh.concat(r.logs);
          if (logs.length > MAX_ROWS) logs = logs.slice(0, MAX_ROWS);
          return { ...r, logs };
        });
        setStats((s) => (s ? addToStats(s, fresh) : s));
      },
    });
    tailRef.current = client;
    client.start();
    return () => {
      tailRef.current = null;
      void client.stop();
    };
  }, [api, projectId, query, tailOn]);

  // A tail the server refused or ended for good may mean the caller was removed from the project:
  // ask for the project again, and a 404 takes the page down to a plain "no access".
  const failed = tailOn && tailStatus.status === 'failed';
  const reloadProject = project.reload;
  useEffect(() => {
    if (failed) reloadProject();
  }, [failed, reloadProject]);
  const lostAccess = project.error instanceof ApiError && project.error.status === 404;
  useEffect(() => {
    if (lostAccess) setTailOn(false);
  }, [lostAccess]);

  const paused = tailStatus.status === 'paused';
  const range = resolveRange(query.range, now);
  const projectName = project.data?.name ?? 'Project';
  const empty = !results.loading && results.error === undefined && results.logs.length === 0;
  const filtered = query.levels.length > 0 || query.query.trim() !== '';
  const syntaxError = results.error instanceof ApiError && results.error.status === 400 ? querySyntaxError(results.error.details) : undefined;
  const addFilter = (term: string) => setQuery({ ...query, query: addTerm(query.query, term) });

  if (lostAccess) {
    return (
      <main className="page">
        <PageHeader title={project.data?.name ?? 'Project'} />
        <div className="error-note no-access" role="alert">
          <span>
            You no longer have access to this project: it was deleted, or you are not one of its members (anymore). Ask its owner or an admin to invite you.
          </span>
        </div>
        <p>
          <Link to="/projects">Go to your projects</Link>
        </p>
      </main>
    );
  }

  return (
    <main className="page explorer">
      <PageHeader title={<>{projectName} <span className="muted small-title">logs</span></>}>
        <Link to={`/projects/${projectId}/alerts`} className="button secondary">
          Alerts
        </Link>
        <Link to={`/projects/${projectId}/settings`} className="button secondary">
          Settings
        </Link>
      </PageHeader>
      <QueryBar query={query} onChange={setQuery} onRefresh={() => setNow(Date.now())} from={range.from} to={range.to} syntaxError={syntaxError} />

      <div className="tail-bar" role="group" aria-label="Live tail">
        {!tailOn ? (
          <button type="button" className="primary" onClick={() => { setLiveCount(0); setTailOn(true); }} disabled={!tailAccepts(query)} title={tailAccepts(query) ? undefined : 'Live tail follows the “Last …” ranges, not a custom range in the past.'}>
            ▶ Live tail
          </button>
        ) : (
          <>
            {paused ? (
              <button type="button" className="primary" onClick={() => tailRef.current?.resume()}>
                Resume
              </button>
            ) : (
              <button type="button" className="secondary" onClick={() => void tailRef.current?.pause()}>
                Pause
              </button>
            )}
            <button type="button" className="secondary" onClick={() => setTailOn(false)}>
              Stop
            </button>
          </>
        )}
        <span className={`tail-status status-${tailOn ? tailStatus.status : 'stopped'}`} role="status" aria-live="polite">
          {tailOn ? tailLabel(tailStatus.status, liveCount) : 'Live tail is off'}
          {tailOn && tailStatus.detail && tailStatus.status !== 'live' ? ` — ${tailStatus.detail}` : ''}
        </span>
      </div>

      <div ref={chartRef} className="chart-box card">
        <GroupByControl value={query.groupBy} fields={fieldsOnScreen(results.logs)} onChange={(groupBy) => setQuery({ ...query, groupBy })} />
        {statsError !== undefined ? (
          syntaxError ? <p className="muted">Fix the query to count logs.</p> : <ErrorNote error={statsError} />
        ) : stats ? (
          <Histogram stats={stats} width={chartWidth} onSelect={(from, to) => setQuery({ ...query, range: { kind: 'custom', from, to } })} />
        ) : (
          <Spinner label="Counting logs…" />
        )}
      </div>

      {results.error !== undefined && !syntaxError && <ErrorNote error={results.error} onRetry={() => setNow(Date.now())} />}
      {results.loading && results.logs.length === 0 && <Spinner label="Searching logs…" />}
      {empty && !filtered && project.data && project.data.logCount === 0 ? (
        <>
          <div className="empty">
            <h3>No logs yet</h3>
            <p>This project has not received a log. Send one with its API key; it appears here within a second with live tail on.</p>
          </div>
          <SendFirstLog apiKey={null} />
        </>
      ) : empty ? (
        <div className="empty">
          <h3>No logs match</h3>
          <p>Nothing in this time range matches the filters. Widen the range or clear a filter.</p>
        </div>
      ) : null}
      {results.logs.length > 0 && (
        <div className="results-layout">
          <FieldSidebar logs={results.logs} onFilter={addFilter} />
          <div className="results-main">
          <div className="result-count muted" aria-live="polite">
            Showing {formatCount(results.logs.length)} {results.logs.length === 1 ? 'log' : 'logs'}, newest first
            {results.cursor ? ' — scroll for more' : ''}
          </div>
          <LogList
            logs={results.logs}
            onFilter={addFilter}
            onEndReached={loadMore}
            footer={results.loading ? 'Loading more…' : results.cursor ? undefined : results.logs.length >= MAX_ROWS ? `Showing the newest ${formatCount(MAX_ROWS)}; narrow the range to see older logs.` : 'End of results.'}
          />
          </div>
        </div>
      )}
    </main>
  );
}

function tailLabel(status: TailStatus, count: number): string {
  switch (status) {
    case 'connecting':
      return 'Connecting…';
    case 'live':
      return `Live — ${formatCount(count)} new ${count === 1 ? 'log' : 'logs'}`;
    case 'paused':
      return 'Paused — new logs are held by the server and arrive when you resume';
    case 'reconnecting':
      return 'Reconnecting…';
    case 'failed':
      return 'Live tail stopped';
    default:
      return 'Live tail is off';
  }
}

/** Counts live logs into the histogram's buckets. */
function addToStats(stats: Stats, logs: Log[]): Stats {
  if (stats.buckets.length === 0) return stats;
  const starts = stats.buckets.map((b) => Date.parse(b.start));
  const width = starts.length > 1 ? starts[1]! - starts[0]! : 60_000;
  const buckets = stats.buckets.slice();
  for (const log of logs) {
    const t = Date.parse(log.timestamp);
    const i = Math.floor((t - starts[0]!) / width);
    if (i < 0 || i >= buckets.length) continue;
    const b = buckets[i]!;
    buckets[i] = { ...b, total: b.total + 1, levels: { ...b.levels, [log.level]: (b.levels[log.level] ?? 0) + 1 } };
  }
  return { ...stats, buckets };
}

function QueryBar({ query, onChange, onRefresh, from, to, syntaxError }: { query: LogQuery; onChange: (q: LogQuery) => void; onRefresh: () => void; from: number; to: number; syntaxError?: { column: number; message: string } }) {
  const [search, setSearch] = useState(query.query);
  const [help, setHelp] = useState(false);
  const [customFrom, setCustomFrom] = useState(toLocalInput(from));
  const [customTo, setCustomTo] = useState(toLocalInput(to));
  const [rangeError, setRangeError] = useState<string | null>(null);
  const custom = query.range.kind === 'custom';

  // Typing settles for a moment before the query runs.
  useEffect(() => {
    if (search === query.query) return;
    const t = setTimeout(() => onChange({ ...query, query: search }), 400);
    return () => clearTimeout(t);
  }, [search]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => setSearch(query.query), [query.query]);
  useEffect(() => {
    setCustomFrom(toLocalInput(from));
    setCustomTo(toLocalInput(to));
  }, [from, to]);

  function toggleLevel(level: Level) {
    const levels = query.levels.includes(level) ? query.levels.filter((l) => l !== level) : [...query.levels, level];
    onChange({ ...query, levels });
  }

  function applyCustom() {
    const f = fromLocalInput(customFrom);
    const t = fromLocalInput(customTo);
    if (f === undefined || t === undefined) return setRangeError('Enter both a start and an end.');
    if (f >= t) return setRangeError('The start must be before the end.');
    setRangeError(null);
    onChange({ ...query, range: { kind: 'custom', from: f, to: t } });
  }

  return (
    <form className="query-bar card" role="search" aria-label="Filter logs" onSubmit={(e) => { e.preventDefault(); onChange({ ...query, query: search }); }}>
      <div className="query-row">
        <label className="inline-label">
          <span>Time range</span>
          <select
            value={custom ? 'custom' : query.range.kind === 'preset' ? query.range.preset : '1h'}
            onChange={(e) => {
              const v = e.target.value;
              if (v === 'custom') onChange({ ...query, range: { kind: 'custom', from, to } });
              else onChange({ ...query, range: { kind: 'preset', preset: v as PresetId } });
            }}
          >
            {PRESETS.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
            <option value="custom">Custom range…</option>
          </select>
        </label>
        {custom && (
          <div className="custom-range">
            <label className="inline-label">
              <span>From</span>
              <input type="datetime-local" value={customFrom} onChange={(e) => setCustomFrom(e.target.value)} />
            </label>
            <label className="inline-label">
              <span>To</span>
              <input type="datetime-local" value={customTo} onChange={(e) => setCustomTo(e.target.value)} />
            </label>
            <button type="button" className="secondary" onClick={applyCustom}>
              Apply
            </button>
            {rangeError && <span className="field-error" role="alert">{rangeError}</span>}
          </div>
        )}
        <button type="button" className="secondary" onClick={onRefresh} title="Run the query again up to now">
          Refresh
        </button>
      </div>
      <div className="query-row">
        <div className="search-box">
          <label className="inline-label grow">
            <span>Search</span>
            <input
              type="search"
              className="query-input"
              value={search}
              placeholder='e.g. timeout @res.statusCode:>=500 -source:worker'
              onChange={(e) => setSearch(e.target.value)}
              spellCheck={false}
              aria-invalid={syntaxError ? true : undefined}
              aria-describedby={syntaxError ? 'query-error' : undefined}
            />
          </label>
          <button type="button" className="secondary" aria-expanded={help} aria-controls="query-help" onClick={() => setHelp((h) => !h)}>
            Syntax
          </button>
        </div>
      </div>
      {syntaxError && <QueryError id="query-error" query={query.query} error={syntaxError} />}
      {help && <CheatSheet onClose={() => setHelp(false)} />}
      <fieldset className="level-chips">
        <legend>Levels</legend>
        {LEVELS.map((level) => (
          <button key={level} type="button" className={`chip lvl-chip-${level}`} aria-pressed={query.levels.includes(level)} onClick={() => toggleLevel(level)}>
            {level}
          </button>
        ))}
        {query.levels.length > 0 && (
          <button type="button" className="link-button" onClick={() => onChange({ ...query, levels: [] })}>
            All levels
          </button>
        )}
      </fieldset>
    </form>
  );
}


/** The query with the character at the error's column marked, and the server's message. */
function QueryError({ id, query, error }: { id: string; query: string; error: { column: number; message: string } }) {
  const chars = Array.from(query);
  const i = Math.max(0, error.column - 1);
  return (
    <div className="query-error" id={id} role="alert">
      <pre className="query-echo" aria-hidden="true">
        {chars.slice(0, i).join('')}
        <mark>{chars[i] ?? ' '}</mark>
        {chars.slice(i + 1).join('')}
        {'\n'}
        {' '.repeat(i)}^
      </pre>
      <span className="field-error">{error.message}</span>
    </div>
  );
}

const CHEATS: Array<[string, string]> = [
  ['timeout', 'a word in the message or any field value'],
  ['"connection reset"', 'a phrase (substring, any case)'],
  ['time*  req-10?7', 'wildcards in a word'],
  ['/took \\d+ms/', 'RE2 regular expression on the message'],
  ['level:>=warn  source:api-*', 'the log\u2019s own fields'],
  ['@res.statusCode:503', 'a metadata field (nested or dotted keys)'],
  ['@res.statusCode:>=500  @ms:[100 TO 500]', 'comparisons and ranges'],
  ['@user.id:*  -@user.id:*', 'the field exists / does not'],
  ['@method:(GET OR POST)', 'any of several values'],
  ['a b OR c  -d  NOT (e OR f)', 'AND is implied; NOT/- before OR; parentheses group'],
  ['@path:"/v1/orders"  \\:', 'quote values with / * ? or spaces; \\ escapes one character'],
];

function CheatSheet({ onClose }: { onClose: () => void }) {
  // The whole reference (docs/search.md) comes with the console, loaded on first use.
  const [reference, setReference] = useState<string | null>(null);
  const [showReference, setShowReference] = useState(false);
  useEffect(() => {
    if (!showReference || reference !== null) return;
    void import('../../../docs/search.md?raw').then((m: { default: string }) => setReference(m.default), () => setReference('The reference could not be loaded.'));
  }, [showReference, reference]);
  return (
    <section className="cheat-sheet" id="query-help" aria-label="Search syntax">
      <table>
        <tbody>
          {CHEATS.map(([q, what]) => (
            <tr key={q}>
              <td>
                <code>{q}</code>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="small">
        <button type="button" className="link-button" aria-expanded={showReference} onClick={() => setShowReference((v) => !v)}>
          {showReference ? 'Hide the full reference' : 'Full reference (docs/search.md)'}
        </button>
        {' · '}
        <button type="button" className="link-button" onClick={onClose}>
          Close
        </button>
      </p>
      {showReference && (reference === null ? <Spinner label="Loading the reference…" /> : <pre className="search-reference" tabIndex={0} aria-label="Search language reference">{reference}</pre>)}
    </section>
  );
}

/** Metadata fields of the logs on screen, as `@path`, most common first (at most 200 logs looked at). */
function fieldsOnScreen(logs: Log[]): string[] {
  const counts = new Map<string, number>();
  for (const log of logs.slice(0, 200)) for (const [path] of flattenMetadata(log.metadata)) { const f = fieldName(path); counts.set(f, (counts.get(f) ?? 0) + 1); }
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([f]) => f).slice(0, 50);
}

/** Chooses what the histogram splits by: level (the default), source, or any field. */
function GroupByControl({ value, fields, onChange }: { value: string; fields: string[]; onChange: (v: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const apply = () => text.trim() !== value && onChange(text.trim());
  return (
    <div className="group-by">
      <label className="inline-label">
        <span>Split by</span>
        <input
          type="text"
          list="group-by-fields"
          value={text}
          placeholder="level"
          spellCheck={false}
          onChange={(e) => setText(e.target.value)}
          onBlur={apply}
          onKeyDown={(e) => {
            if (e.key === 'Enter') { e.preventDefault(); apply(); }
          }}
        />
      </label>
      <datalist id="group-by-fields">
        <option value="level" />
        <option value="source" />
        {fields.map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
    </div>
  );
}

/** The fields of the logs on screen with their top values and counts; click a value to filter. */
function FieldSidebar({ logs, onFilter }: { logs: Log[]; onFilter: (term: string) => void }) {
  const fields = useMemo(() => summariseFields(logs), [logs]);
  const [narrow] = useState(() => typeof window !== 'undefined' && window.matchMedia('(max-width: 800px)').matches);
  return (
    <aside className="field-sidebar" aria-label="Fields on screen">
      <details open={!narrow}>
        <summary>
          Fields <span className="muted">in {logs.length > 1000 ? 'the newest 1,000' : formatCount(logs.length)} {logs.length === 1 ? 'log' : 'logs'} shown</span>
        </summary>
        {fields.length === 0 && <p className="muted small">No fields.</p>}
        {fields.map((f) => (
          <details key={f.field} className="field-summary">
            <summary>
              <span className="field-summary-name">{f.field}</span> <span className="muted">{formatCount(f.count)}</span>
            </summary>
            <ul>
              {f.top.map((v) => (
                <li key={v.text}>
                  <button type="button" className="link-button field-value" title={`Filter: ${fieldTerm(f.field, v.value)}`} onClick={() => onFilter(fieldTerm(f.field, v.value))}>
                    {v.text}
                  </button>
                  <span className="muted">{formatCount(v.count)}</span>
                  <button type="button" className="chip" aria-label={`Exclude ${fieldTerm(f.field, v.value)}`} onClick={() => onFilter(fieldTerm(f.field, v.value, true))}>
                    −
                  </button>
                </li>
              ))}
            </ul>
          </details>
        ))}
      </details>
    </aside>
  );
}
