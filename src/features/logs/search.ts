/**
 * Log search: newest first, keyset-paginated; through the skip index where it helps, else a scan
 * in which SQL narrows and the one predicate (filter.ts matchAll) decides, within the time budget.
 */
import type { Config } from '../../config.js';
import { AppError, validationError } from '../../errors.js';
import { formatDuration } from '../../duration.js';
import type { ProjectsService } from '../projects/service.js';
import { searchIndexed } from './blocks/search.js';
import { decidedInApp, matchAll, type LogFilter } from './filter.js';
import { PATTERN_CHUNK, type LogReader } from './reader.js';
import type * as repo from './repository.js';
import type { LogStore } from './store/index.js';

/** Rows tested at a time within a round: a page that fills early stops testing. */
const PATTERN_STEP = 250;

/** Cursors are opaque to clients: `c1.<ts>.<seq>` in base64url. */
function encodeCursor(p: repo.Position): string {
  return Buffer.from(`c1.${p.ts}.${p.seq}`).toString('base64url');
}

function decodeCursor(cursor: string): repo.Position {
  const m = /^c1\.(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError('querystring:/cursor', 'is not a cursor this server issued');
  return { ts: Number(m[1]), seq: Number(m[2]) };
}

export function createSearch(deps: { store: Pick<LogStore, 'page'>; reader: LogReader; config: Pick<Config, 'queryBudgetMs'>; projects: Pick<ProjectsService, 'assertRole'> }) {
  const { store, reader, config, projects } = deps;

  /** Newest first, keyset-paginated. A pattern is matched in the app, in rounds, within the time budget. */
  async function search(userId: string, projectId: string, filter: LogFilter, limit: number, cursor: string | undefined): Promise<{ data: repo.LogRowStored[]; nextCursor: string | null }> {
    let position = cursor ? decodeCursor(cursor) : undefined;
    const sqlOnly = !decidedInApp(filter);
    /** A page SQL decides alone: one more row than the page says whether a cursor is due. */
    const sqlPage = (rows: repo.LogRowStored[]) => {
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return { data: page, nextCursor: rows.length > limit && last ? encodeCursor({ ts: last.ts, seq: last.seq }) : null };
    };
    if (sqlOnly && filter.q === undefined) {
      // Nothing for the index to probe. The ownership check and the page are read together; a
      // stranger's page is never answered.
      const [, rows] = await Promise.all([projects.assertRole(userId, projectId), reader.withBudget(() => store.page(projectId, filter, position, limit + 1))]);
      return sqlPage(rows);
    }
    await projects.assertRole(userId, projectId);
    const deadline = Date.now() + config.queryBudgetMs;
    // A query, a pattern, or a legacy substring (the words wholly inside it) may rule blocks out.
    const indexed = await searchThroughIndex(projectId, filter, position, limit, deadline, sqlOnly);
    if (indexed) return indexed;
    if (sqlOnly) return sqlPage(await reader.withBudget(() => store.page(projectId, filter, position, limit + 1)));
    const found: repo.LogRowStored[] = [];
    let decided = 0;
    for (;;) {
      // SQL narrows (the pattern's required literal, the query's levels and times); the app decides.
      const rows = await reader.withBudget(() => store.page(projectId, reader.narrowed(filter), position, PATTERN_CHUNK));
      // In steps, so a page that fills early does not test the rest of the chunk.
      for (let start = 0; start < rows.length; start += PATTERN_STEP) {
        const step = rows.slice(start, start + PATTERN_STEP);
        const verdicts = await matchAll(filter, step, projectId, deadline, { sqlDecided: true });
        for (let i = 0; i < step.length; i++) {
          const verdict = verdicts[i];
          if (verdict === undefined) {
            // Out of time: answer what was found, and a cursor from the last log decided.
            if (decided === 0) throw patternOutOfBudget();
            return { data: found, nextCursor: encodeCursor(position!) };
          }
          decided++;
          const row = step[i]!;
          position = { ts: row.ts, seq: row.seq };
          if (!verdict) continue;
          found.push(row);
          if (found.length === limit) return { data: found, nextCursor: encodeCursor(position) };
        }
      }
      if (rows.length < PATTERN_CHUNK) return { data: found, nextCursor: null };
      // Out of time: answer what was found, and a cursor from where the scan stopped.
      if (Date.now() > deadline) return { data: found, nextCursor: encodeCursor(position!) };
    }
  }

  /** A page through the skip index, or undefined when the index would not help (then the caller scans). */
  async function searchThroughIndex(projectId: string, filter: LogFilter, position: repo.Position | undefined, limit: number, deadline: number, sqlOnly: boolean): Promise<{ data: repo.LogRowStored[]; nextCursor: string | null } | undefined> {
    if (!reader.index.enabled) return undefined;
    const page = await reader.withBudget((ex) => searchIndexed(ex, projectId, filter, sqlOnly ? filter : reader.narrowed(filter), position, limit, deadline, sqlOnly, reader.index));
    if (!page) return undefined;
    if ('outOfBudget' in page) throw patternOutOfBudget();
    reader.reported(page.report);
    return { data: page.data, nextCursor: page.nextCursor && encodeCursor(page.nextCursor) };
  }

  /** A pattern search that could not decide a single log within the budget. */
  function patternOutOfBudget(): AppError {
    return new AppError('VALIDATION_ERROR', `The pattern could not be tested within the ${formatDuration(config.queryBudgetMs)} budget on these logs; simplify the pattern, narrow the time range or add filters.`, {
      details: [{ path: 'querystring:/pattern', message: 'did not finish within the query time budget' }],
    });
  }

  return search;
}
