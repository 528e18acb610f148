import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { addColumn, addToHistory, alertFromSearchUrl, explorerUrl, readHistory, removeColumn, sortLogs, viewToQuery, writeHistory, zoomOut, type SortDir } from '../lib/explorer.ts';
import { contextPath, facetsPath, fieldsPath, type ContextAnswer, type FacetsAnswer, type FieldsAnswer, type View } from '../lib/explorer-api.ts';
import { formatCount, zoneLabel } from '../lib/format.ts';
import { addTerm, fieldName, flattenMetadata, fromUrlParams, querySyntaxError, rangeFilterParams, searchPath, statsPath, tailAccepts, tailPath, type LogQuery, type TimeRange } from '../lib/query.ts';
import { navigate } from '../lib/router.ts';
import { TailClient, type TailStatus } from '../lib/tail.ts';
import type { Log, Page, Project, Stats } from '../lib/types.ts';
import { AggregateTable } from '../components/AggregateTable.tsx';
import { ContextPanel } from '../components/ContextPanel.tsx';
import { ExportMenu } from '../components/ExportMenu.tsx';
import { FieldSidebar } from '../components/FieldSidebar.tsx';
import { Histogram } from '../components/Histogram.tsx';
import { LogDetails } from '../components/LogDetails.tsx';
import { LogList } from '../components/LogList.tsx';
import { ProjectTabs } from '../components/ProjectTabs.tsx';
import { QueryBar, type SyntaxError } from '../components/QueryBar.tsx';
import { SendFirstLog } from '../components/SendFirstLog.tsx';
import { AUTO_REFRESH, TimeControls, useTimeZone, type AutoRefresh } from '../components/TimeControls.tsx';
import { ShareMenu, ViewsMenu } from '../components/ViewsMenu.tsx';
import { ErrorNote, Link, PageHeader, Spinner, useResource } from '../components/ui.tsx';

/** The most lines the explorer keeps in memory; beyond it, the oldest go. */
const MAX_ROWS = 50_000;
const PAGE_SIZE = 500;
const WRAP_KEY = 'loglane.wrapLines';

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

function readFlag(key: string): boolean {
  try {
    return localStorage.getItem(key) === '1';
  } catch {
    return false;
  }
}

function storage(): Storage | undefined {
  try {
    return localStorage;
  } catch {
    return undefined;
  }
}

export function ExplorerPage({ projectId, search }: { projectId: string; search: URLSearchParams }) {
  const api = useApi();
  const zone = useTimeZone();
  const project = useResource<Project>(`/v1/projects/${encodeURIComponent(projectId)}`);
  const query = useMemo(() => fromUrlParams(search), [search.toString()]); // eslint-disable-line react-hooks/exhaustive-deps
  const viewId = search.get('view');
  const linkedLogId = search.get('log');
  // A view's own link (`?view=<id>` alone) opens with the view's search.
  const viewOnly = viewId !== null && [...search.keys()].every((k) => k === 'view');
  const [now, setNow] = useState(() => Date.now());
  const [results, setResults] = useState<Results>({ logs: [], cursor: null, loading: true, error: undefined });
  const [stats, setStats] = useState<Stats | undefined>();
  const [statsError, setStatsError] = useState<unknown>();
  const generation = useRef(0);
  const seen = useRef(new Set<string>());
  const [chartRef, chartWidth] = useWidth<HTMLDivElement>();
  const [wrap, setWrap] = useState(() => readFlag(WRAP_KEY));
  const [sort, setSort] = useState<{ column: string; dir: SortDir } | null>(null);
  const [autoRefresh, setAutoRefresh] = useState<AutoRefresh>('off');
  const [zoomStack, setZoomStack] = useState<TimeRange[]>([]);
  const [history, setHistory] = useState(() => readHistory(storage()));
  const [contextLog, setContextLog] = useState<Log | null>(null);
  const [viewError, setViewError] = useState<unknown>();
  const queryInput = useRef<HTMLInputElement>(null);

  const setQuery = useCallback(
    (next: LogQuery, options: { keepView?: boolean; view?: string | null } = {}) => {
      setNow(Date.now());
      const view = options.view !== undefined ? options.view : viewId;
      navigate(explorerUrl(projectId, next, { extra: view ? { view } : {} }), { replace: true });
    },
    [projectId, viewId],
  );

  // Open a view from its link.
  useEffect(() => {
    if (!viewOnly || !viewId) return;
    const ctrl = new AbortController();
    setViewError(undefined);
    api.get<View>(`/v1/projects/${encodeURIComponent(projectId)}/views/${encodeURIComponent(viewId)}`, ctrl.signal).then(
      (v) => setQuery(viewToQuery(v), { view: v.id }),
      (e: unknown) => !ctrl.signal.aborted && setViewError(e),
    );
    return () => ctrl.abort();
  }, [api, projectId, viewId, viewOnly]); // eslint-disable-line react-hooks/exhaustive-deps

  // Search and histogram, whenever the query (or "Refresh") changes. The rows on screen stay until
  // the new answer arrives, so a refused query does not blank the list.
  useEffect(() => {
    if (viewOnly) return;
    const gen = ++generation.current;
    const ctrl = new AbortController();
    setResults((r) => ({ ...r, loading: true, error: undefined }));
    api.get<Page<Log>>(searchPath(projectId, query, now, { limit: PAGE_SIZE }), ctrl.signal).then(
      (page) => {
        if (gen !== generation.current) return;
        seen.current = new Set(page.data.map((l) => l.id));
        setResults({ logs: page.data, cursor: page.nextCursor, loading: false, error: undefined });
      },
      (error: unknown) => {
        if (gen === generation.current && !ctrl.signal.aborted) setResults((r) => ({ ...r, cursor: null, loading: false, error }));
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
  }, [api, projectId, query, now, viewOnly]); // eslint-disable-line react-hooks/exhaustive-deps

  const loadMore = useCallback(() => {
    setResults((r) => {
      if (r.loading || !r.cursor || r.logs.length >= MAX_ROWS || r.error !== undefined) return r;
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

  // Auto-refresh ("Last …" ranges only, and not while the live tail runs).
  const refreshMs = AUTO_REFRESH.find((a) => a.id === autoRefresh)?.ms ?? 0;
  useEffect(() => {
    if (!refreshMs || tailOn || query.range.kind !== 'preset') return;
    const t = setInterval(() => setNow(Date.now()), refreshMs);
    return () => clearInterval(t);
  }, [refreshMs, tailOn, query.range.kind]);

  // "/" goes to the search box (unless typing somewhere already).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.closest('input, textarea, select, [contenteditable="true"]') || t.closest('dialog'))) return;
      e.preventDefault();
      queryInput.current?.focus();
      queryInput.current?.select();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

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

  // The fields of the range for autocomplete (the sidebar asks with the query too).
  const rangeOnly = useMemo(() => rangeFilterParams({ ...query, query: '', levels: [] }, now).toString(), [query, now]);
  const [rangeFields, setRangeFields] = useState<string[]>([]);
  useEffect(() => {
    const ctrl = new AbortController();
    api.get<FieldsAnswer>(fieldsPath(projectId, new URLSearchParams(rangeOnly)), ctrl.signal).then(
      (f) => setRangeFields(f.fields.map((x) => x.field)),
      () => undefined,
    );
    return () => ctrl.abort();
  }, [api, projectId, rangeOnly]);
  const autocompleteFields = useMemo(() => {
    if (rangeFields.length) return rangeFields;
    const set = new Set<string>();
    for (const log of results.logs.slice(0, 200)) for (const [p] of flattenMetadata(log.metadata)) set.add(fieldName(p));
    return [...set];
  }, [rangeFields, results.logs]);

  const loadValues = useCallback(
    async (field: string) => {
      const a = await api.get<FacetsAnswer>(facetsPath(projectId, new URLSearchParams(rangeOnly), [field], { limit: 20 }));
      return (a.facets[0]?.values ?? []).map((v) => ({ value: v.value, count: v.count }));
    },
    [api, projectId, rangeOnly],
  );
  const check = useCallback(
    async (text: string, signal: AbortSignal): Promise<SyntaxError | undefined> => {
      // Over an empty range: the server parses the query and finds nothing, quickly.
      const t = Date.now();
      const p = new URLSearchParams({ query: text, from: new Date(t).toISOString(), to: new Date(t).toISOString(), limit: '1' });
      try {
        await api.get(`/v1/projects/${encodeURIComponent(projectId)}/logs?${p}`, signal);
        return undefined;
      } catch (e) {
        return e instanceof ApiError && e.status === 400 ? querySyntaxError(e.details) : undefined;
      }
    },
    [api, projectId],
  );

  // A permalink's log, shown open above the list.
  const [linked, setLinked] = useState<{ log?: Log; error?: unknown } | null>(null);
  useEffect(() => {
    if (!linkedLogId) return setLinked(null);
    const ctrl = new AbortController();
    setLinked({});
    api.get<ContextAnswer>(contextPath(projectId, linkedLogId, { before: 0, after: 0 }), ctrl.signal).then(
      (a) => setLinked({ log: a.log }),
      (error: unknown) => !ctrl.signal.aborted && setLinked({ error }),
    );
    return () => ctrl.abort();
  }, [api, projectId, linkedLogId]);
  const linkedLog = linked?.log ?? (linkedLogId ? results.logs.find((l) => l.id === linkedLogId) : undefined);

  const paused = tailStatus.status === 'paused';
  const filters = useMemo(() => rangeFilterParams(query, now).toString(), [query, now]);
  const projectName = project.data?.name ?? 'Project';
  const syntaxError = results.error instanceof ApiError && results.error.status === 400 ? querySyntaxError(results.error.details) : undefined;
  const empty = !results.loading && results.error === undefined && results.logs.length === 0;
  const filtered = query.levels.length > 0 || query.query.trim() !== '';
  const addFilter = useCallback((term: string) => setQuery({ ...query, query: addTerm(query.query, term) }), [query, setQuery]);
  const onAddColumn = useCallback((field: string) => setQuery({ ...query, columns: addColumn(query.columns, field) }), [query, setQuery]);
  const shown = useMemo(() => (sort && query.columns.includes(sort.column) ? sortLogs(results.logs, sort.column, sort.dir) : results.logs), [results.logs, sort, query.columns]);
  const run = (text: string) => {
    const next = addToHistory(history, text);
    setHistory(next);
    writeHistory(storage(), next);
    setQuery({ ...query, query: text });
  };
  const onRange = (r: TimeRange) => {
    setZoomStack([]);
    setQuery({ ...query, range: r });
  };

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

  if (viewOnly) {
    return (
      <main className="page explorer">
        <PageHeader title={<>{projectName} <span className="muted small-title">logs</span></>} />
        <ProjectTabs projectId={projectId} current="logs" />
        {viewError !== undefined ? (
          <>
            <ErrorNote error={viewError} />
            <p>
              <Link to={`/projects/${projectId}/logs`}>Open the logs without the view</Link>
            </p>
          </>
        ) : (
          <Spinner label="Opening the saved view…" />
        )}
      </main>
    );
  }

  return (
    <main className="page explorer">
      <PageHeader title={<>{projectName} <span className="muted small-title">logs</span></>}>
        <ViewsMenu
          projectId={projectId}
          role={project.data?.role}
          query={query}
          currentViewId={viewId}
          onOpen={(v) => setQuery(viewToQuery(v), { view: v.id })}
          onSaved={(v) => setQuery(query, { view: v.id })}
          onDeleted={(id) => id === viewId && setQuery(query, { view: null })}
        />
        <ShareMenu projectId={projectId} query={query} viewId={viewId} now={now} />
        <ExportMenu projectId={projectId} filters={filters} columns={query.columns} />
        <Link to={alertFromSearchUrl(projectId, query)} className="button secondary">
          Create alert from this search
        </Link>
      </PageHeader>
      <ProjectTabs projectId={projectId} current="logs" />
      <QueryBar
        query={query.query}
        levels={query.levels}
        onRun={run}
        onLevels={(levels) => setQuery({ ...query, levels })}
        error={syntaxError}
        check={check}
        fields={autocompleteFields}
        loadValues={loadValues}
        history={history}
        inputRef={queryInput}
      />

      <div className="explorer-toolbar">
        <TimeControls
          range={query.range}
          now={now}
          onRange={onRange}
          onRefresh={() => setNow(Date.now())}
          autoRefresh={autoRefresh}
          onAutoRefresh={setAutoRefresh}
          onZoomOut={
            zoomStack.length > 0 || query.range.kind === 'custom'
              ? () => {
                  if (zoomStack.length) {
                    const prev = zoomStack[zoomStack.length - 1]!;
                    setZoomStack((s) => s.slice(0, -1));
                    setQuery({ ...query, range: prev });
                  } else setQuery({ ...query, range: zoomOut(query.range, Date.now()) });
                }
              : undefined
          }
        />
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
      </div>

      <div className="chart-row">
        <div ref={chartRef} className="chart-box card">
          <GroupByControl value={query.groupBy} fields={autocompleteFields} onChange={(groupBy) => setQuery({ ...query, groupBy })} />
          {statsError !== undefined ? (
            syntaxError ? <p className="muted">Fix the query to count logs.</p> : <ErrorNote error={statsError} />
          ) : stats ? (
            <Histogram
              stats={stats}
              width={chartWidth}
              zone={zone}
              onSelect={(from, to) => {
                setZoomStack((s) => [...s, query.range]);
                setQuery({ ...query, range: { kind: 'custom', from, to } });
              }}
            />
          ) : (
            <Spinner label="Counting logs…" />
          )}
        </div>
        {!syntaxError && <AggregateTable projectId={projectId} filters={filters} field={query.groupBy.trim()} onFilter={addFilter} />}
      </div>

      {linkedLogId && (
        <section className="linked-log card" aria-label="Linked log">
          <h2>Linked log</h2>
          {linkedLog ? (
            <LogDetails log={linkedLog} zone={zone} actions={{ onFilter: addFilter, onAddColumn, onContext: setContextLog, projectId }} />
          ) : linked?.error !== undefined ? (
            <ErrorNote error={linked.error} />
          ) : (
            <Spinner label="Loading the log…" />
          )}
        </section>
      )}

      {results.error !== undefined && !syntaxError && <ErrorNote error={results.error} onRetry={() => setNow(Date.now())} />}
      {empty && !filtered && project.data && project.data.logCount === 0 ? (
        <>
          <div className="empty">
            <h3>No logs yet</h3>
            <p>This project has not received a log. Send one with its API key; it appears here within a second with live tail on.</p>
          </div>
          <SendFirstLog apiKey={null} />
        </>
      ) : (
        <div className="results-layout">
          <FieldSidebar projectId={projectId} filters={filters} logs={results.logs} columns={query.columns} onFilter={addFilter} onAddColumn={onAddColumn} />
          <div className={`results-main${syntaxError ? ' stale' : ''}`}>
            <div className="results-head">
              <div className="result-count muted" aria-live="polite">
                {results.loading && results.logs.length === 0
                  ? 'Searching logs…'
                  : `Showing ${formatCount(results.logs.length)} ${results.logs.length === 1 ? 'log' : 'logs'}, ${sort ? `sorted by ${sort.column} (loaded logs only)` : 'newest first'}${results.cursor ? ' — scroll for more' : ''} · times in ${zoneLabel(zone, now)}`}
              </div>
              <label className="toggle">
                <input
                  type="checkbox"
                  checked={wrap}
                  onChange={(e) => {
                    setWrap(e.target.checked);
                    try {
                      localStorage.setItem(WRAP_KEY, e.target.checked ? '1' : '0');
                    } catch {
                      /* private mode */
                    }
                  }}
                />
                Wrap lines
              </label>
            </div>
            {empty && (
              <div className="empty">
                <h3>No logs match</h3>
                <p>Nothing in this time range matches the filters. Widen the range or clear a filter.</p>
              </div>
            )}
            {results.loading && results.logs.length === 0 && <Spinner label="Searching logs…" />}
            {results.logs.length > 0 && (
              <LogList
                logs={shown}
                columns={query.columns}
                wrap={wrap}
                zone={zone}
                projectId={projectId}
                sort={sort}
                onSort={(c) => setSort((s) => (!s || s.column !== c ? { column: c, dir: 'asc' } : s.dir === 'asc' ? { column: c, dir: 'desc' } : null))}
                onRemoveColumn={(c) => setQuery({ ...query, columns: removeColumn(query.columns, c) })}
                onFilter={addFilter}
                onAddColumn={onAddColumn}
                onContext={setContextLog}
                onEndReached={loadMore}
                openId={linkedLogId}
                footer={results.loading ? 'Loading more…' : results.cursor ? undefined : results.logs.length >= MAX_ROWS ? `Showing the newest ${formatCount(MAX_ROWS)}; narrow the range to see older logs.` : 'End of results.'}
              />
            )}
          </div>
        </div>
      )}
      <ContextPanel projectId={projectId} log={contextLog} zone={zone} onClose={() => setContextLog(null)} onFilter={addFilter} />
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
            if (e.key === 'Enter') {
              e.preventDefault();
              apply();
            }
          }}
        />
      </label>
      <datalist id="group-by-fields">
        <option value="level" />
        <option value="source" />
        {fields.slice(0, 100).map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
    </div>
  );
}
