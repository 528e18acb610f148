/**
 * A log's context: the logs nearest to it by timestamp (then seq) on each side, optionally only
 * those a query selects (the same source, the same request id). Before it is a search from the log's
 * own place, newest first. After it needs the oldest logs past it, which no newest-first read gives
 * directly: an upper bound is moved (by doubling, then bisection) until the logs between the log and
 * the bound are at least the number asked for but fit one search page, so the work stays a few
 * pages whatever the density of logs around it: milliseconds first, then seqs within one
 * millisecond.
 */
import { notFound } from '../../../errors.js';
import type { ProjectsService } from '../../projects/service.js';
import type { LogFilter } from '../filter.js';
import type { LogRowStored, Position } from '../store/repository.js';
import type { LogStore } from '../store/index.js';
import { outOfTime, shedIfLate, stopIfGone, waited, type LogReader, type ReadCaller, type ReadRun } from './reader.js';
import { AppError } from '../../../errors.js';
import { formatDuration } from '../../../duration.js';
import { encodeCursor, type createSearch } from './search.js';
import type { PageEntry } from './page-stream.js';
import { nextTurn } from '../turns.js';

/** Logs a side may ask for. */
export const MAX_CONTEXT = 200;
/** Logs one probe of the after side may read: past this, the bound moves closer. */
const PROBE_PAGE = 1000;
/** The first probe's width past the log, in milliseconds. */
const FIRST_SPAN_MS = 1000;
/** Past this span the bound is open (no upper time): about 35 years. */
const OPEN_SPAN_MS = 2 ** 40;
const LAST_SEQ = Number.MAX_SAFE_INTEGER;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The seq a log id names (present.ts logId), or undefined when it is not a log id. */
export function seqOfLogId(id: string): number | undefined {
  const m = /^log_([0-9a-hjkmnp-tv-z]{13})$/.exec(id);
  if (!m) return undefined;
  let n = 0;
  for (const c of m[1]!) n = n * 32 + ALPHABET.indexOf(c);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}


export interface ContextResult {
  before: LogRowStored[];
  log: LogRowStored;
  after: LogRowStored[];
}

export function createContext(deps: { search: Pick<ReturnType<typeof createSearch>, 'find' | 'rowsOf'>; store: Pick<LogStore, 'inSeqRange'>; reader: LogReader; projects: Pick<ProjectsService, 'assertRole'> }) {
  const { search, store, reader, projects } = deps;
  type Key = PageEntry;
  const after = (key: Key, p: Position) => key.ts > p.ts || (key.ts === p.ts && key.seq > p.seq);

  /**
   * The logs strictly between `p` and the bound (ts, seq) (exclusive), oldest first, when they fit
   * one probe; `overflow` when there are more.
   */
  async function between(userId: string, projectId: string, filter: LogFilter, p: Position, bound: Position | undefined, run: ReadRun): Promise<{ rows: Key[]; overflow: boolean }> {
    // Every probe spends the one budget of the context read: past it, the read ends (it used to
    // take a fresh budget per probe, and a few dozen probes kept a core busy for minutes). A turn of
    // the event loop first, so that a client's leaving is heard between probes.
    await nextTurn();
    stopIfGone(run);
    if (Date.now() > run.deadline) throw outOfTime(run, () => contextOutOfBudget(run));
    const windowed: LogFilter = { ...filter, from: Math.max(filter.from ?? p.ts, p.ts) };
    if (bound && bound.ts < (windowed.to ?? Number.POSITIVE_INFINITY)) windowed.to = bound.ts;
    const page = await search.find(userId, projectId, windowed, PROBE_PAGE, bound ? encodeCursor(bound) : undefined, run);
    const past = page.data.filter((row) => after(row, p));
    // A page that reached the log itself (or its start) holds everything between; a full one may not.
    const reachedLog = page.data.length > past.length || page.nextCursor === null;
    return { rows: past.reverse(), overflow: !reachedLog };
  }

  /** The `n` logs nearest after `p`, oldest first. */
  async function nearestAfter(userId: string, projectId: string, filter: LogFilter, p: Position, n: number, run: ReadRun): Promise<Key[]> {
    if (n === 0) return [];
    // Milliseconds: grow the span until it holds n logs (or is open), then bisect while it overflows.
    // A span of s takes the logs up to p.ts + s; a span of -1 takes none past the log.
    let low = -1;
    let high: number | undefined;
    let span = FIRST_SPAN_MS;
    for (;;) {
      const open = span >= OPEN_SPAN_MS;
      const probe = await between(userId, projectId, filter, p, open ? undefined : { ts: p.ts + span, seq: LAST_SEQ }, run);
      if (!probe.overflow && (probe.rows.length >= n || open)) return probe.rows.slice(0, n);
      if (probe.overflow) high = span;
      else low = span;
      if (high === undefined) span *= 8;
      else if (high - low > 1) span = Math.floor((low + high) / 2);
      else break;
    }
    // The logs up to p.ts + low are too few and those up to p.ts + high too many: the millisecond
    // p.ts + high holds more than a page. Bisect the seqs within it.
    const ts = p.ts + high!;
    let lowSeq = ts === p.ts ? p.seq : 0;
    let highSeq = LAST_SEQ;
    for (;;) {
      const seq = lowSeq + Math.floor((highSeq - lowSeq) / 2);
      const probe = await between(userId, projectId, filter, p, { ts, seq }, run);
      if (!probe.overflow && probe.rows.length >= n) return probe.rows.slice(0, n);
      if (probe.overflow) highSeq = seq;
      else lowSeq = seq;
      // One more seq adds at most one log, so the bisection ends on a bound that holds enough.
      if (highSeq - lowSeq <= 1) return (await between(userId, projectId, filter, p, { ts, seq: highSeq }, run)).rows.slice(0, n);
    }
  }

  /** A context whose probes did not fit the query budget (their own work, not the database's wait). */
  function contextOutOfBudget(run: ReadRun): AppError {
    return new AppError('VALIDATION_ERROR', `The logs around this log could not be found within the ${formatDuration(run.budgetMs)} query budget; narrow the query or the time range.`, {
      details: [{ path: 'querystring:/query', message: 'did not finish within the query budget' }],
    });
  }

  /**
   * The logs around a log. The whole read (the access check, the log, the side before and every
   * probe of the side after) runs within one query budget, and stops at its next read once the
   * caller's signal says the client has gone.
   */
  async function context(userId: string, projectId: string, logIdText: string, beforeCount: number, afterCount: number, filter: LogFilter, caller?: ReadCaller): Promise<ContextResult> {
    const run = reader.startRun(caller);
    await waited(run, projects.assertRole(userId, projectId));
    shedIfLate(run);
    const seq = seqOfLogId(logIdText);
    const [log] = seq === undefined ? [] : await reader.withBudget(() => store.inSeqRange(projectId, {}, undefined, seq, seq, 1), run);
    if (!log) throw notFound('log');
    const p = { ts: Number(log.ts), seq: Number(log.seq) };
    const [before, later] = await Promise.all([
      beforeCount === 0 ? Promise.resolve({ data: [] as Key[] }) : search.find(userId, projectId, filter, beforeCount, encodeCursor(p), run),
      nearestAfter(userId, projectId, filter, p, afterCount, run),
    ]);
    // Only the logs answered are read whole: the probes hold keys.
    return { before: await search.rowsOf(projectId, before.data, run), log, after: await search.rowsOf(projectId, later, run) };
  }

  return context;
}
