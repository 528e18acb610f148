/**
 * The log explorer's state and how it becomes API requests and a shareable URL. Pure functions:
 * the explorer, the live tail and the histogram all read the same filters from here.
 */

export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Level = (typeof LEVELS)[number];

export const PRESETS = [
  { id: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { id: '1h', label: 'Last hour', ms: 3_600_000 },
  { id: '6h', label: 'Last 6 hours', ms: 6 * 3_600_000 },
  { id: '24h', label: 'Last 24 hours', ms: 24 * 3_600_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
] as const;
/** A "Last …" range: one of the presets or any typed duration (`2h`, `90m`, `3d`, `1w`). */
export type PresetId = string;

export type TimeRange = { kind: 'preset'; preset: PresetId } | { kind: 'custom'; from: number; to: number };

const DURATION = /^(\d{1,6})(s|m|h|d|w)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/** A "last" duration (`15m`, `2h`, `7d`, `1w`) in milliseconds; undefined when it is not one (or is zero). */
export function lastDurationMs(value: string): number | undefined {
  const m = DURATION.exec(value.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms > 0 && ms <= 400 * 86_400_000 ? ms : undefined;
}

export interface LogQuery {
  range: TimeRange;
  /** Empty means every level. */
  levels: Level[];
  /** The search in the query language (docs/search.md), sent as `query`. */
  query: string;
  /** What the histogram splits by: '' (level, the default) or a field sent as `groupBy`. */
  groupBy: string;
  /** Extra columns of the list (`source`, `@res.statusCode` …), in order; the message is always shown. */
  columns: string[];
}

export const DEFAULT_QUERY: LogQuery = { range: { kind: 'preset', preset: '1h' }, levels: [], query: '', groupBy: '', columns: [] };

/** The absolute bounds of a range at `now`. */
export function resolveRange(range: TimeRange, now: number): { from: number; to: number } {
  if (range.kind === 'custom') return { from: Math.min(range.from, range.to), to: Math.max(range.from, range.to) };
  return { from: now - (lastDurationMs(range.preset) ?? 3_600_000), to: now };
}

/** Filters shared by search, stats and tail (no time bounds). */
function filterParams(query: LogQuery): URLSearchParams {
  const p = new URLSearchParams();
  // All six levels selected is the same as none: leave it out.
  if (query.levels.length > 0 && query.levels.length < LEVELS.length) p.set('level', LEVELS.filter((l) => query.levels.includes(l)).join(','));
  if (query.query.trim() !== '') p.set('query', query.query);
  return p;
}

export function searchPath(projectId: string, query: LogQuery, now: number, options: { cursor?: string | null; limit?: number } = {}): string {
  const p = filterParams(query);
  const { from, to } = resolveRange(query.range, now);
  p.set('from', new Date(from).toISOString());
  p.set('to', new Date(to).toISOString());
  p.set('limit', String(options.limit ?? 200));
  if (options.cursor) p.set('cursor', options.cursor);
  return `/v1/projects/${encodeURIComponent(projectId)}/logs?${p}`;
}

/** Bucket sizes the histogram may use, smallest first. */
export const INTERVALS = [
  { id: '1s', ms: 1000 },
  { id: '10s', ms: 10_000 },
  { id: '30s', ms: 30_000 },
  { id: '1m', ms: 60_000 },
  { id: '5m', ms: 300_000 },
  { id: '15m', ms: 900_000 },
  { id: '30m', ms: 1_800_000 },
  { id: '1h', ms: 3_600_000 },
  { id: '3h', ms: 10_800_000 },
  { id: '6h', ms: 21_600_000 },
  { id: '12h', ms: 43_200_000 },
  { id: '1d', ms: 86_400_000 },
] as const;

/** The smallest interval that draws the range in at most `maxBars` bars. */
export function chooseInterval(spanMs: number, maxBars = 90): { id: string; ms: number } {
  for (const i of INTERVALS) if (spanMs / i.ms <= maxBars) return i;
  return INTERVALS[INTERVALS.length - 1]!;
}

export function statsPath(projectId: string, query: LogQuery, now: number, maxBars = 90): string {
  const p = filterParams(query);
  const { from, to } = resolveRange(query.range, now);
  const interval = chooseInterval(to - from, maxBars);
  // Buckets line up with the interval, so the first and last bars are whole.
  p.set('from', new Date(Math.floor(from / interval.ms) * interval.ms).toISOString());
  p.set('to', new Date(to).toISOString());
  p.set('interval', interval.id);
  const groupBy = query.groupBy.trim();
  if (groupBy && groupBy !== 'level') p.set('groupBy', groupBy);
  return `/v1/projects/${encodeURIComponent(projectId)}/logs/stats?${p}`;
}

export function tailPath(projectId: string, query: LogQuery): string {
  const p = filterParams(query).toString();
  return `/v1/projects/${encodeURIComponent(projectId)}/logs/tail${p ? `?${p}` : ''}`;
}

/** Whether a log received by the live tail belongs in the list (the server filters; the time range is ours). */
export function tailAccepts(query: LogQuery): boolean {
  // A custom range that ended in the past shows history; new logs do not belong in it.
  return query.range.kind === 'preset';
}

/** The explorer state as page URL parameters, so a view can be bookmarked and shared. */
export function toUrlParams(query: LogQuery): URLSearchParams {
  const p = new URLSearchParams();
  if (query.range.kind === 'preset') {
    p.set('range', query.range.preset);
  } else {
    p.set('from', new Date(query.range.from).toISOString());
    p.set('to', new Date(query.range.to).toISOString());
  }
  if (query.levels.length) p.set('level', query.levels.join(','));
  if (query.query) p.set('query', query.query);
  if (query.groupBy.trim()) p.set('groupBy', query.groupBy.trim());
  if (query.columns.length) p.set('columns', query.columns.join(','));
  return p;
}

/** Reads a `columns` list: fields and `@paths`, comma-separated (commas inside quotes kept), at most 20, no repeats. */
export function parseColumns(value: string | null | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && quoted && i + 1 < value.length) {
      cur += c + value[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return [...new Set(out.filter((c) => isColumn(c)))].slice(0, 20);
}

/** Whether `name` can be a column: a log field (level, source, timestamp, message) or an `@path`. */
export function isColumn(name: string): boolean {
  return ['level', 'source', 'message', 'timestamp'].includes(name) || (/^@./.test(name) && name.length <= 200);
}

function parseTime(value: string | null): number | undefined {
  if (!value) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isFinite(n) ? n : undefined;
}

export function fromUrlParams(p: URLSearchParams): LogQuery {
  const from = parseTime(p.get('from'));
  const to = parseTime(p.get('to'));
  const last = p.get('range') ?? '';
  const range: TimeRange =
    from !== undefined && to !== undefined ? { kind: 'custom', from, to } : lastDurationMs(last) !== undefined ? { kind: 'preset', preset: last } : DEFAULT_QUERY.range;
  const levels = (p.get('level') ?? '')
    .split(',')
    .map((l) => l.trim().toLowerCase())
    .filter((l): l is Level => (LEVELS as readonly string[]).includes(l));
  return { range, levels: [...new Set(levels)], query: p.get('query') ?? legacyQuery(p), groupBy: p.get('groupBy') ?? '', columns: parseColumns(p.get('columns')) };
}

/** Links saved before the query language (`source`, `q`, `pattern`) become the same query. */
function legacyQuery(p: URLSearchParams): string {
  const parts: string[] = [];
  const source = p.get('source')?.trim();
  if (source) parts.push(`source:${quoteValue(source)}`);
  const q = p.get('q');
  if (q) parts.push(quotePhrase(q));
  const pattern = p.get('pattern');
  if (pattern && !pattern.includes('/')) parts.push(`/${pattern}/`);
  return parts.join(' ');
}

/** A phrase in double quotes, with `\` and `"` escaped. */
export function quotePhrase(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

const BARE_VALUE = /^[\p{L}\p{N}_.][\p{L}\p{N}_.\-]*$/u;
const RESERVED = new Set(['AND', 'OR', 'NOT', 'TO']);

/** A field value as the query language reads it literally: bare when it is plain, else quoted. */
export function quoteValue(value: string): string {
  return BARE_VALUE.test(value) && !RESERVED.has(value) ? value : quotePhrase(value);
}

const BARE_SEGMENT = /^[\p{L}\p{N}_\-]+$/u;

/** A metadata path (its keys from the top) as a field: `@res.statusCode`, `@"weird key".x`. */
export function fieldName(path: readonly string[]): string {
  return '@' + path.map((seg) => (BARE_SEGMENT.test(seg) ? seg : quotePhrase(seg))).join('.');
}

/** `field:value` (or `-field:value`) for a value seen in a log. */
export function fieldTerm(field: string, value: unknown, exclude = false): string {
  const text = value === null ? 'null' : typeof value === 'string' ? quoteValue(value) : typeof value === 'number' || typeof value === 'boolean' ? String(value) : quotePhrase(JSON.stringify(value));
  return `${exclude ? '-' : ''}${field}:${text}`;
}

/** The query with one more term ANDed to it (an OR in the query is kept in parentheses). */
export function addTerm(query: string, term: string): string {
  const q = query.trim();
  if (!q) return term;
  return /(^|[\s)])OR([\s(]|$)/.test(q) ? `(${q}) ${term}` : `${q} ${term}`;
}

/** The column (1-based, in code points) and the text of a query syntax error, from the API's 400. */
export function querySyntaxError(details: unknown): { column: number; message: string } | undefined {
  if (!Array.isArray(details)) return undefined;
  const d = details.find((x: { path?: string }) => x && x.path === 'querystring:/query') as { message?: string } | undefined;
  if (!d || typeof d.message !== 'string') return undefined;
  const m = /^at column (\d+):\s*(.*)$/s.exec(d.message);
  return m ? { column: Number(m[1]), message: d.message } : { column: 0, message: d.message };
}

/**
 * A log's metadata flattened to leaves: `[path, value]` for every string, number, boolean and null
 * (arrays as one value), in key order.
 */
export function flattenMetadata(meta: unknown, prefix: string[] = [], out: Array<[string[], unknown]> = []): Array<[string[], unknown]> {
  if (meta !== null && typeof meta === 'object' && !Array.isArray(meta)) {
    for (const [k, v] of Object.entries(meta as Record<string, unknown>)) flattenMetadata(v, [...prefix, k], out);
  } else if (prefix.length) {
    out.push([prefix, meta]);
  }
  return out;
}

/** Key names that usually say the most about a line, best first (see docs/console.md). */
const USEFUL_KEYS = [/status/i, /(^|[._-])code$/i, /method/i, /(path|url|route|uri)$/i, /(^|[a-z])(id|Id|ID)$/, /(duration|elapsed|latency|time_?ms|ms)$/i, /(user|tenant|customer|order)/i, /(error|err|exception)/i];

/**
 * The few metadata fields shown inline after a row's message: scalar leaves with short values,
 * ranked by the first key pattern their last key matches (status, code, method, path/url, ids,
 * durations, who, errors), then by key order; at most `max`.
 */
export function inlineFields(meta: unknown, max = 4): Array<{ path: string[]; value: unknown }> {
  const ranked: Array<{ path: string[]; value: unknown; rank: number; order: number }> = [];
  flattenMetadata(meta).forEach(([path, value], order) => {
    if (value === null || typeof value === 'object') return;
    if (String(value).length > 60) return;
    const key = path.join('.');
    const rank = USEFUL_KEYS.findIndex((re) => re.test(path[path.length - 1]!) || re.test(key));
    if (rank >= 0) ranked.push({ path, value, rank, order });
  });
  ranked.sort((a, b) => a.rank - b.rank || a.order - b.order);
  return ranked.slice(0, max).map(({ path, value }) => ({ path, value }));
}

/** `datetime-local` input value (local time, minutes) for an epoch time, and back. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

export interface FieldSummary {
  field: string;
  /** How many of the logs have the field (not null). */
  count: number;
  /** The most frequent values, most first (ties by text); `value` is as in the log, for `fieldTerm`. */
  top: Array<{ text: string; value: unknown; count: number }>;
}

/**
 * The fields of the logs on screen (source and every metadata leaf; level has its chips), most
 * common first, each with its top values. Values are counted as text, numbers and booleans as
 * written in JSON, so `500` and `"500"` count together, as in `groupBy`.
 */
export function summariseFields(logs: ReadonlyArray<{ source: string | null; metadata: unknown }>, options: { maxLogs?: number; maxFields?: number; top?: number } = {}): FieldSummary[] {
  const fields = new Map<string, { count: number; values: Map<string, { value: unknown; count: number }> }>();
  const add = (field: string, value: unknown) => {
    if (value === null || value === undefined) return;
    let f = fields.get(field);
    if (!f) fields.set(field, (f = { count: 0, values: new Map() }));
    f.count++;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const v = f.values.get(text);
    if (v) v.count++;
    else f.values.set(text, { value, count: 1 });
  };
  for (const log of logs.slice(0, options.maxLogs ?? 1000)) {
    add('source', log.source);
    for (const [path, value] of flattenMetadata(log.metadata)) add(fieldName(path), value);
  }
  return [...fields.entries()]
    .sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))
    .slice(0, options.maxFields ?? 40)
    .map(([field, f]) => ({
      field,
      count: f.count,
      top: [...f.values.entries()]
        .sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))
        .slice(0, options.top ?? 5)
        .map(([text, v]) => ({ text, value: v.value, count: v.count })),
    }));
}

/** The search's filters and its absolute bounds, as the search, export, facets and fields endpoints take them. */
export function rangeFilterParams(query: LogQuery, now: number): URLSearchParams {
  const p = filterParams(query);
  const { from, to } = resolveRange(query.range, now);
  p.set('from', new Date(from).toISOString());
  p.set('to', new Date(to).toISOString());
  return p;
}
