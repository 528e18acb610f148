/**
 * Log search: newest first, keyset-paginated; through the skip index where it helps, else a scan
 * in which SQL narrows and the one predicate (filter.ts matchAll) decides, within the time budget.
 * A page is planned from its logs' keys and sizes and read a chunk at a time (page-stream.ts), so
 * a page of large logs is never held whole.
 */
import type { Config } from '../../../config.js';
import { AppError, validationError } from '../../../errors.js';
import { formatDuration } from '../../../duration.js';
import type { ProjectsService } from '../../projects/service.js';
import { searchIndexed } from './block-search.js';
import { decidedInApp, matchAll, type LogFilter } from '../filter.js';
import { chunksOf, createPageReads, PAGE_CHUNK_BYTES, rowTextBytes, type Page, type PageEntry } from './page-stream.js';
import { outOfTime, shedIfLate, stopIfGone, waited, type LogReader, type ReadCaller, type ReadRun } from './reader.js';
import { nextTurn } from '../turns.js';
import type * as repo from '../store/repository.js';
import type { LogStore } from '../store/index.js';

/** Cursors are opaque to clients: `c1.<ts>.<seq>` in base64url. */
export function encodeCursor(p: repo.Position): string {
  return Buffer.from(`c1.${p.ts}.${p.seq}`).toString('base64url');
}

function decodeCursor(cursor: string): repo.Position {
  const m = /^c1\.(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError('querystring:/cursor', 'is not a cursor this server issued');
  return { ts: Number(m[1]), seq: Number(m[2]) };
}

/** A row the search read whole, as a page entry that keeps it while the page holds less than `held.bytes` of rows. */
function entryOf(row: repo.LogRowStored, held: { bytes: number }): PageEntry {
  const bytes = rowTextBytes(row);
  const entry: PageEntry = { ts: Number(row.ts), seq: Number(row.seq), bytes };
  if (held.bytes + bytes <= PAGE_CHUNK_BYTES) {
    entry.row = row;
    held.bytes += bytes;
  }
  return entry;
}

export function createSearch(deps: { store: Pick<LogStore, 'pageKeys' | 'rowsAt'>; reader: LogReader; config: Pick<Config, 'queryBudgetMs' | 'pageStallMs'>; projects: Pick<ProjectsService, 'assertRole'> }) {
  const { store, reader, config, projects } = deps;
  const reads = createPageReads((projectId, keys) => reader.withBudget(() => store.rowsAt(projectId, keys)), config.pageStallMs);

  /**
   * Newest first, keyset-paginated: the page's keys, with the rows of its first chunk read. A
   * pattern or query is decided in the app, a chunk of rows at a time, within the time budget.
   */
  async function page(userId: string, projectId: string, filter: LogFilter, limit: number, cursor: string | undefined, caller?: ReadCaller): Promise<Page> {
    const found = await find(userId, projectId, filter, limit, cursor, reader.startRun(caller));
    const out: Page = { projectId, entries: found.data, nextCursor: found.nextCursor };
    await reads.fill(out);
    return out;
  }

  /** A page with every row read: for small pages the server uses itself (an alert test's sample). */
  async function search(userId: string, projectId: string, filter: LogFilter, limit: number, cursor: string | undefined): Promise<{ data: repo.LogRowStored[]; nextCursor: string | null }> {
    const found = await find(userId, projectId, filter, limit, cursor);
    return { data: await rowsOf(projectId, found.data), nextCursor: found.nextCursor };
  }

  /** The rows of page entries, in their order: those the search kept, and the others read a chunk at a time. */
  async function rowsOf(projectId: string, entries: readonly PageEntry[], run?: ReadRun): Promise<repo.LogRowStored[]> {
    const data: repo.LogRowStored[] = [];
    for (const chunk of chunksOf(entries)) {
      const missing = chunk.filter((e) => e.row === undefined);
      const read = missing.length > 0 ? new Map((await reader.withBudget(() => store.rowsAt(projectId, missing), run)).map((r) => [Number(r.seq), r])) : undefined;
      for (const e of chunk) {
        const row = e.row ?? read?.get(e.seq);
        if (row) data.push(row);
      }
    }
    return data;
  }

  /**
   * The keys of a page (with the rows of its first chunk). `run` is the caller's read: its budget
   * (from its start, a fresh one by default), its wait for the database and its client's signal;
   * a context's probes share one.
   */
  async function find(userId: string, projectId: string, filter: LogFilter, limit: number, cursor: string | undefined, run: ReadRun = reader.startRun()): Promise<{ data: PageEntry[]; nextCursor: string | null }> {
    let position = cursor ? decodeCursor(cursor) : undefined;
    /** A page SQL decides alone: one more key than the page says whether a cursor is due. */
    const sqlPage = (keys: repo.PageKey[]) => {
      const page = keys.slice(0, limit);
      const last = page[page.length - 1];
      return { data: page, nextCursor: keys.length > limit && last ? encodeCursor({ ts: last.ts, seq: last.seq }) : null };
    };
    shedIfLate(run);
    if (!decidedInApp(filter)) {
      // Nothing for the index to probe. The ownership check and the page are read together; a
      // stranger's page is never answered.
      // The packed logs of its first chunk come with their rows (fill then reads only the others).
      const [, keys] = await Promise.all([waited(run, projects.assertRole(userId, projectId)), reader.withBudget(() => store.pageKeys(projectId, filter, position, limit + 1, PAGE_CHUNK_BYTES), run)]);
      return sqlPage(keys);
    }
    await waited(run, projects.assertRole(userId, projectId));
    stopIfGone(run);
    shedIfLate(run);
    // The budget runs from the read's start: time the access check waited for the database counts.
    const { deadline } = run;
    // A query, a pattern, or a legacy substring (the words wholly inside it) may rule blocks out.
    const indexed = await searchThroughIndex(projectId, filter, position, limit, run);
    if (indexed) return indexed;
    const found: PageEntry[] = [];
    const held = { bytes: 0 };
    let decided = 0;
    // SQL narrows (the pattern's required literal, the query's levels and times); the app reads
    // and decides the logs a chunk of bounded bytes at a time, so a page that fills early reads no more.
    for await (const { rows, through } of reader.scan(projectId, filter, position, undefined, run)) {
      // Out of time with logs left: answer what was found, and a cursor from where the scan stopped.
      if (decided > 0 && Date.now() > deadline) return { data: found, nextCursor: encodeCursor(position!) };
      const verdicts = await matchAll(filter, rows, projectId, deadline, { sqlDecided: true });
      for (let i = 0; i < rows.length; i++) {
        const verdict = verdicts[i];
        if (verdict === undefined) {
          // Out of time: answer what was found, and a cursor from the last log decided.
          if (decided === 0) throw outOfBudget(filter, run);
          return { data: found, nextCursor: encodeCursor(position!) };
        }
        decided++;
        const row = rows[i]!;
        position = { ts: Number(row.ts), seq: Number(row.seq) };
        if (!verdict) continue;
        found.push(entryOf(row, held));
        if (found.length === limit) return { data: found, nextCursor: encodeCursor(position) };
      }
      // Past the logs deleted since their keys were read, the scan goes on from the chunk's last key.
      position = through;
    }
    return { data: found, nextCursor: null };
  }

  /** A page through the skip index, or undefined when the index would not help (then the caller scans). */
  async function searchThroughIndex(projectId: string, filter: LogFilter, position: repo.Position | undefined, limit: number, run: ReadRun): Promise<{ data: PageEntry[]; nextCursor: string | null } | undefined> {
    if (!reader.index.enabled) return undefined;
    // Each of the index's reads is counted, and none is made once the client has gone.
    const page = await reader.withBudget(() => searchIndexed(reader.measured(run), projectId, filter, reader.narrowed(filter), position, limit, run.deadline, reader.index));
    if (!page) return undefined;
    if ('outOfBudget' in page) throw outOfBudget(filter, run);
    reader.reported(page.report);
    // The first chunk's rows are kept; the others are read again as the page is written.
    const held = { bytes: 0 };
    return { data: page.data.map((row) => entryOf(row, held)), nextCursor: page.nextCursor && encodeCursor(page.nextCursor) };
  }
  /**
   * A search that could not decide a single log within its budget: the time budget of a pattern's
   * tests, or the work one log's decision may cost (docs/search.md, "What deciding one log may
   * cost"). The detail points at the pattern when there is one, else at the query. A read that
   * spent most of its budget waiting for the database is told to retry instead (503 OVERLOADED).
   */
  function outOfBudget(filter: LogFilter, run: ReadRun): AppError {
    const what = filter.pattern ? 'pattern' : 'query';
    return outOfTime(run, () => new AppError('VALIDATION_ERROR', `The ${what} could not be decided within its budget on these logs (${formatDuration(config.queryBudgetMs)}, and a bounded amount of work per log); simplify it, narrow the time range or add filters.`, {
      details: [{ path: `querystring:/${what}`, message: 'did not finish within the query budget' }],
    }));
  }

  /**
   * Every log the filter selects, newest first, a chunk of bounded bytes at a time (an export):
   * pages of EXPORT_PAGE_KEYS keys are found as a search finds them (each within the query budget;
   * a page cut short by it is continued from its cursor), and their rows are read a chunk at a time,
   * only when the consumer asks for the next one. The first page is found before the generator is
   * handed back, so its errors (a stranger's project, a query that cannot be decided) come before
   * anything is written. Work ends when its authority does: `stillAllowed` (the caller's membership,
   * the project, the login and the token) is checked before every chunk is read, and throws when
   * any has ended; nothing is read once `signal` (the client gone) has aborted.
   */
  async function exportRows(userId: string, projectId: string, filter: LogFilter, options: { caller?: ReadCaller; stillAllowed?: () => Promise<void> } = {}): Promise<AsyncGenerator<repo.LogRowStored[]>> {
    const { caller, stillAllowed } = options;
    const signal = caller?.signal;
    const first = await find(userId, projectId, filter, EXPORT_PAGE_KEYS, undefined, reader.startRun(caller));
    async function* rows(): AsyncGenerator<repo.LogRowStored[]> {
      let found = first;
      for (;;) {
        for (const chunk of chunksOf(found.data, EXPORT_CHUNK_BYTES, EXPORT_CHUNK_LOGS)) {
          signal?.throwIfAborted();
          await stillAllowed?.();
          const missing = chunk.filter((e) => e.row === undefined);
          const read = missing.length > 0 ? new Map((await reader.withBudget(() => store.rowsAt(projectId, missing))).map((r) => [Number(r.seq), r])) : undefined;
          const out: repo.LogRowStored[] = [];
          for (const e of chunk) {
            const row = e.row ?? read?.get(e.seq);
            // Rows are dropped from the page as they go, so a page holds keys, not text.
            e.row = undefined;
            if (row) out.push(row);
          }
          if (out.length > 0) yield out;
          // A turn of the event loop between chunks: a reader as fast as the server (a local
          // client) would otherwise keep it in one chain of promises, and others' requests wait.
          await nextTurn();
        }
        if (found.nextCursor === null) return;
        found = await find(userId, projectId, filter, EXPORT_PAGE_KEYS, found.nextCursor, reader.startRun({ signal }));
      }
    }
    return rows();
  }

  return { search, page, reads, exportRows, find, rowsOf };
}

/** Keys an export finds at a time: one short query of the logs' index (a few milliseconds of the event loop on SQLite), as a search round reads. */
export const EXPORT_PAGE_KEYS = 1000;
/** Log text an export reads, encodes and writes at a time (at least one log): fewer, larger reads than a search page's. */
export const EXPORT_CHUNK_BYTES = 1024 * 1024;
/** Logs an export reads at a time, whatever their size. */
export const EXPORT_CHUNK_LOGS = 1000;
