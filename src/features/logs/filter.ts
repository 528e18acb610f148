import type { Needle } from './query/prefilter.js';
import { validationError } from '../../errors.js';
import { levelIndex, LEVELS } from './levels.js';
import { checkPattern, RE2_UNSUPPORTED, type Pattern } from './pattern.js';
import { EVERY_LOG, matchLogs, parseQuery, withFilter, type Query, type QueryLog } from './query/index.js';
import { parseTime } from './query/text.js';

/** What a search, a stats query or a tail selects. Pure data plus a compiled pattern. */
export interface LogFilter {
  from?: number;
  to?: number;
  levels?: number[];
  source?: string;
  /**
   * Case-insensitive substring of the message: the query's message:"…", decided in the app (its
   * folded message holds the folded q, query/text.ts fold) wherever logs are selected, so a search
   * and a tail answer the same; SQL only narrows to a superset.
   */
  q?: string;
  /** RE2, matched against the message anywhere (like grep). */
  pattern?: Pattern;
  /** A query in the search language (docs/search.md), decided in the app; SQL only narrows by its levels and times. */
  query?: Query;
  /** Internal: a case-sensitive substring the message must hold (a pattern's required literal, checked in SQL). */
  contains?: string;
  /** Internal: texts the raw message or metadata must hold, ASCII-case-insensitively (the query's needles, query/prefilter.ts), checked in SQL. */
  needles?: Needle[];
}

export const MAX_PATTERN_LENGTH = 1000;

/** Compiles a user's regular expression with RE2 semantics (linear time, no backreferences or lookaround). */
export function compilePattern(source: string, path = '/pattern'): Pattern {
  if (source.length > MAX_PATTERN_LENGTH) throw validationError(path, `must be at most ${MAX_PATTERN_LENGTH} characters`);
  const checked = checkPattern(source);
  if (checked.ok) return checked.pattern;
  if (checked.costly) throw validationError(path, `is too costly to run: ${checked.why}`);
  throw validationError(path, `is not a valid RE2 regular expression (${checked.why}); ${RE2_UNSUPPORTED}`);
}

/** `from` or `to`: as `timestamp:` in a query (query/text.ts parseTime; a time without an offset is UTC). */
function timeParam(value: string, path: string): number {
  const ms = parseTime(value.trim());
  if (ms === undefined) throw validationError(path, 'must be an ISO 8601 time or epoch milliseconds');
  return ms;
}

export function parseLevels(value: string, path = '/level'): number[] {
  const indexes = value.split(',').map((s) => s.trim()).filter(Boolean).map(levelIndex);
  if (indexes.length === 0 || indexes.includes(undefined)) throw validationError(path, `must be one or more of ${LEVELS.join(', ')}, separated by commas`);
  return [...new Set(indexes as number[])].sort();
}

export interface FilterQuery {
  from?: string;
  to?: string;
  level?: string;
  source?: string;
  q?: string;
  pattern?: string;
  query?: string;
}

export function parseFilter(query: FilterQuery): LogFilter {
  const filter: LogFilter = {};
  if (query.from !== undefined) filter.from = timeParam(query.from, 'querystring:/from');
  if (query.to !== undefined) filter.to = timeParam(query.to, 'querystring:/to');
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) throw validationError('querystring:/from', 'must not be after `to`');
  if (query.level !== undefined) filter.levels = parseLevels(query.level, 'querystring:/level');
  if (query.source !== undefined && query.source !== '') filter.source = query.source;
  if (query.q !== undefined && query.q !== '') filter.q = query.q;
  if (query.pattern !== undefined && query.pattern !== '') filter.pattern = compilePattern(query.pattern, 'querystring:/pattern');
  if (query.query !== undefined && query.query.trim() !== '') filter.query = parseQuery(query.query, 'querystring:/query');
  return filter;
}

/**
 * The whole selection applied to logs in memory (live tail, and what search and stats decide in
 * the app), in order. The legacy parameters (from, to, level, source, q, pattern) become nodes of
 * the query's own tree, so one predicate decides with one meaning everywhere; regexes run through
 * the regex runner, so a costly one never holds the event loop, and a log not decided by
 * `deadline` is `undefined` in the answer.
 */
export function matchAll(filter: LogFilter, rows: readonly QueryLog[], owner: string, deadline: number, options: { sqlDecided?: boolean } = {}): Promise<(boolean | undefined)[]> {
  // Rows read through SQL (search, stats) already passed from/to/level/source there: the pattern,
  // `q` (SQL narrowed to a superset of it) and the query remain to decide. A tail's rows passed nothing yet.
  const legacy = options.sqlDecided ? { pattern: filter.pattern, q: filter.q } : filter;
  return matchLogs(withFilter(filter.query ?? EVERY_LOG, legacy), rows, owner, deadline);
}

/** Whether the selection needs the app to decide (a pattern, a query or `q`), rather than SQL alone. */
export function decidedInApp(filter: LogFilter): boolean {
  return filter.pattern !== undefined || filter.query !== undefined || filter.q !== undefined;
}
