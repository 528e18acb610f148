/**
 * The explorer's pure logic beside query.ts: typed time ranges, the query bar's warnings for common
 * traps, autocomplete, columns (reading and sorting by them), the field sidebar's pins and hides,
 * query history, saved views and the links the explorer hands out. No DOM here: unit tested.
 */
import { formatDateTime, parseDateTime, startOfDay, type TimeZoneMode } from './format.ts';
import { DEFAULT_QUERY, fieldTerm, lastDurationMs, LEVELS, PRESETS, quotePhrase, quoteValue, resolveRange, toUrlParams, type LogQuery, type TimeRange } from './query.ts';
import type { View, ViewBody } from './explorer-api.ts';
import type { Log } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Time

const UNIT_WORDS: Record<string, string> = { s: 's', sec: 's', secs: 's', second: 's', seconds: 's', m: 'm', min: 'm', mins: 'm', minute: 'm', minutes: 'm', h: 'h', hr: 'h', hrs: 'h', hour: 'h', hours: 'h', d: 'd', day: 'd', days: 'd', w: 'w', week: 'w', weeks: 'w' };

/**
 * A range typed into the time picker: `2h`, `15m`, `last 3 days`, `today`, `yesterday`, one time
 * (from it until now) or two joined by `to` (`2026-11-28 10:00:00 to 2026-11-28 11:00:00`), times
 * read in the chosen zone (seconds optional; `now` allowed as the end).
 */
export function parseTypedRange(text: string, now: number, mode: TimeZoneMode): { range: TimeRange } | { error: string } {
  const t = text.trim().toLowerCase().replace(/\s+/g, ' ');
  if (!t) return { error: 'Type a range such as 2h, 15m, today, yesterday, or “2026-11-28 10:00:00 to 2026-11-28 11:00:00”.' };
  const rel = /^(?:last |past )?(\d{1,6}) ?([a-z]+)$/.exec(t);
  if (rel && UNIT_WORDS[rel[2]!]) {
    const preset = `${Number(rel[1])}${UNIT_WORDS[rel[2]!]}`;
    if (lastDurationMs(preset) === undefined) return { error: 'A range is from 1 second to 400 days.' };
    return { range: { kind: 'preset', preset } };
  }
  if (t === 'today') return { range: { kind: 'custom', from: startOfDay(now, mode), to: now } };
  if (t === 'yesterday') {
    const today = startOfDay(now, mode);
    return { range: { kind: 'custom', from: startOfDay(today - 1, mode), to: today } };
  }
  const parts = text.trim().split(/\s+(?:to|→|until)\s+/i);
  if (parts.length > 2) return { error: 'Write one start and one end, joined by “to”.' };
  const from = parseDateTime(parts[0]!, mode);
  const to = parts.length === 2 ? (parts[1]!.trim().toLowerCase() === 'now' ? now : parseDateTime(parts[1]!, mode)) : now;
  if (from === undefined) return { error: `“${parts[0]}” is not a time: write it as 2026-11-28 10:00:00.` };
  if (to === undefined) return { error: `“${parts[1]}” is not a time: write it as 2026-11-28 11:00:00.` };
  if (from >= to) return { error: 'The start must be before the end.' };
  return { range: { kind: 'custom', from, to } };
}

/** How a range reads in the picker: `Last hour`, `Last 2h`, or `2026-11-28 10:00:00 to 2026-11-28 11:00:00`. */
export function rangeLabel(range: TimeRange, mode: TimeZoneMode): string {
  if (range.kind === 'preset') return PRESETS.find((p) => p.id === range.preset)?.label ?? `Last ${range.preset}`;
  return `${formatDateTime(range.from, mode)} to ${formatDateTime(range.to, mode)}`;
}

/** The range as text to type over: `2h`, or the two times joined by `to`. */
export function rangeText(range: TimeRange, mode: TimeZoneMode): string {
  return range.kind === 'preset' ? range.preset : `${formatDateTime(range.from, mode)} to ${formatDateTime(range.to, mode)}`;
}

/** The range twice as long around the same middle (zoom out), never past `now`. */
export function zoomOut(range: TimeRange, now: number): TimeRange {
  const { from, to } = resolveRange(range, now);
  const span = to - from;
  const end = Math.min(now, to + span / 2);
  return { kind: 'custom', from: Math.round(end - span * 2), to: Math.round(end) };
}

// ---------------------------------------------------------------------------------------------
// Query bar warnings

export interface QueryWarning {
  kind: 'regex-path' | 'spaced-comparison' | 'status-level';
  message: string;
  /** The fixed piece (`@req.url:"/api/orders"`), and the whole query with it in place. */
  replacement: string;
  fixed: string;
}

/** The query with the inside of every quoted phrase blanked (same length), so patterns skip them. */
function maskQuotes(q: string): string {
  let out = '';
  let inQuote = false;
  for (let i = 0; i < q.length; i++) {
    const c = q[i]!;
    if (inQuote) {
      if (c === '\\' && i + 1 < q.length) {
        out += '  ';
        i++;
      } else if (c === '"') {
        inQuote = false;
        out += c;
      } else out += ' ';
    } else {
      if (c === '\\' && i + 1 < q.length) {
        out += '  ';
        i++;
        continue;
      }
      if (c === '"') inQuote = true;
      out += c;
    }
  }
  return out;
}

const LEVEL_WORDS: Record<string, string> = { trace: 'trace', debug: 'debug', info: 'info', information: 'info', notice: 'info', warn: 'warn', warning: 'warn', error: 'error', err: 'error', fatal: 'fatal', critical: 'fatal', crit: 'fatal', emergency: 'fatal', emerg: 'fatal', alert: 'fatal' };
const FIELD = String.raw`-?@?(?:[\p{L}\p{N}_\-]+|"[^"]*")(?:\.(?:[\p{L}\p{N}_\-]+|"[^"]*"))*`;

/**
 * Queries that parse but rarely mean what was typed, each with its fix:
 * - `@req.url:/api/orders`: an unquoted value starting with `/` is a regular expression (`/api/`)
 *   and what follows it another word; the path quoted is meant;
 * - `@res.statusCode >= 500` (KQL's spacing) is three words; `@res.statusCode:>=500` is meant;
 * - `status:error` (Datadog's status) reads the metadata field `status`; `level:error` is meant.
 */
export function queryWarnings(query: string): QueryWarning[] {
  const masked = maskQuotes(query);
  const found: Array<{ start: number; end: number; kind: QueryWarning['kind']; replacement: string; message: string }> = [];

  // 1. field:/path… where the regex closes before the value ends (or never closes).
  const valueStart = new RegExp(String.raw`(^|[\s(])(${FIELD}):(?=/)`, 'gu');
  for (const m of masked.matchAll(valueStart)) {
    const start = m.index! + m[1]!.length;
    const v = start + m[2]!.length + 1;
    let i = v + 1;
    while (i < masked.length && masked[i] !== '/') i += masked[i] === '\\' ? 2 : 1;
    const closes = i < masked.length;
    let end = v;
    while (end < masked.length && !/[\s)]/.test(masked[end]!)) end++;
    const regexEnd = closes ? i + 1 : -1;
    if (closes && (regexEnd >= masked.length || /[\s)]/.test(masked[regexEnd]!))) continue; // a whole regex: meant
    const value = query.slice(v, end);
    const field = m[2]!;
    found.push({
      start,
      end,
      kind: 'regex-path',
      replacement: `${field}:${quotePhrase(value)}`,
      message: `${field}:${value} is read as a regular expression${closes ? ` (${query.slice(v, regexEnd)}) followed by the word ${query.slice(regexEnd, end)}` : ''}. To match the path, quote it.`,
    });
  }

  // 2. field >= 500, field: >= 500, field >=500, field:>= 500, @field = 500.
  const spaced = new RegExp(String.raw`(^|[\s(])(${FIELD})(\s*:\s*|\s*)(>=|<=|==|=|>|<)(\s*)([^\s()]+)`, 'gu');
  for (const m of masked.matchAll(spaced)) {
    const [, lead, field, colon, op, gap, value] = m as unknown as string[];
    const spacedOut = /\s/.test(colon!) || gap!.length > 0;
    const noColon = !colon!.includes(':');
    if (!spacedOut && !noColon) continue; // field:>=500 is right
    if ((op === '=' || op === '==') && !field!.replace(/^-/, '').startsWith('@') && !/\s/.test(colon! + gap!)) continue; // key=value in text
    if (/^(AND|OR|NOT)$/.test(field!)) continue;
    const start = m.index! + lead!.length;
    const end = start + field!.length + colon!.length + op!.length + gap!.length + value!.length;
    const realValue = query.slice(end - value!.length, end);
    const replacement = op === '=' || op === '==' ? `${field}:${realValue}` : `${field}:${op}${realValue}`;
    found.push({ start, end, kind: 'spaced-comparison', replacement, message: `“${query.slice(start, end)}” is not a comparison here: write the operator right after the colon, with no spaces.` });
  }

  // 3. status:error (Datadog) → level:error.
  const status = /(^|[\s(])(-?)(status|severity|loglevel|lvl):([A-Za-z]+)(?=$|[\s)])/g;
  for (const m of masked.matchAll(status)) {
    const level = LEVEL_WORDS[m[4]!.toLowerCase()];
    if (!level) continue;
    const start = m.index! + m[1]!.length;
    const end = start + m[0].length - m[1]!.length;
    found.push({ start, end, kind: 'status-level', replacement: `${m[2]}level:${level}`, message: `${m[3]}:${m[4]} reads a metadata field named “${m[3]}”; a log's level is level:${level}.` });
  }

  found.sort((a, b) => a.start - b.start);
  const out: QueryWarning[] = [];
  let lastEnd = -1;
  for (const f of found) {
    if (f.start < lastEnd) continue;
    lastEnd = f.end;
    out.push({ kind: f.kind, message: f.message, replacement: f.replacement, fixed: query.slice(0, f.start) + f.replacement + query.slice(f.end) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Autocomplete

export interface CompletionContext {
  kind: 'field' | 'value';
  /** Where the replaced text starts and ends (the caret). */
  start: number;
  end: number;
  prefix: string;
  field?: string;
}

/** What is being typed at `caret`: a field name (or word), or the value after `field:`. */
export function completionAt(text: string, caret: number): CompletionContext | undefined {
  const masked = maskQuotes(text.slice(0, caret));
  let start = caret;
  while (start > 0 && !/[\s()]/.test(masked[start - 1]!)) start--;
  const token = text.slice(start, caret);
  const neg = /^-|^NOT$/.test(token) ? (token.startsWith('-') ? 1 : 0) : 0;
  const body = token.slice(neg);
  const colon = maskQuotes(body).indexOf(':');
  if (colon >= 0) {
    const field = body.slice(0, colon);
    let prefix = body.slice(colon + 1);
    if (/^[<>]=?/.test(prefix)) return undefined;
    prefix = prefix.replace(/^"/, '');
    return { kind: 'value', start: start + neg + colon + 1, end: caret, prefix, field };
  }
  if (!body) return undefined;
  return { kind: 'field', start: start + neg, end: caret, prefix: body };
}

export interface Suggestion {
  label: string;
  insert: string;
  detail?: string;
}

/** Field names (and AND/OR/NOT) or values that fit the context, best first (at most `max`). */
export function suggest(ctx: CompletionContext, source: { fields: string[]; values?: Array<{ value: string; count: number }> }, max = 8): Suggestion[] {
  const p = ctx.prefix.toLowerCase();
  if (ctx.kind === 'field') {
    const bare = p.replace(/^@/, '');
    const names = [...new Set(['level', 'source', 'message', ...source.fields])];
    const starts: Suggestion[] = [];
    const contains: Suggestion[] = [];
    for (const f of names) {
      const lf = f.toLowerCase();
      const lb = lf.replace(/^@/, '');
      if (lf === p) continue;
      if (lf.startsWith(p) || lb.startsWith(bare)) starts.push({ label: f, insert: `${f}:`, detail: 'field' });
      else if (bare.length >= 2 && lb.includes(bare)) contains.push({ label: f, insert: `${f}:`, detail: 'field' });
    }
    const ops = ['AND', 'OR', 'NOT'].filter((o) => p.length >= 1 && o.toLowerCase().startsWith(p) && o !== ctx.prefix).map((o) => ({ label: o, insert: `${o} `, detail: 'operator' }));
    return [...starts, ...ops, ...contains].slice(0, max);
  }
  const values = ctx.field === 'level' ? LEVELS.map((l) => ({ value: l, count: 0 })) : (source.values ?? []);
  return values
    .filter((v) => v.value.toLowerCase().startsWith(p) && v.value !== '(other)' && v.value !== '(none)')
    .slice(0, max)
    .map((v) => ({ label: v.value, insert: `${quoteValue(v.value)} `, detail: v.count ? String(v.count) : undefined }));
}

/** The text with the suggestion put in place of what was being typed, and where the caret goes. */
export function applySuggestion(text: string, ctx: CompletionContext, s: Suggestion): { text: string; caret: number } {
  let after = text.slice(ctx.end);
  const start = ctx.start;
  if (ctx.kind === 'value' && s.insert.endsWith(' ') && after.startsWith(' ')) after = after.slice(1);
  const next = text.slice(0, start) + s.insert + after;
  return { text: next, caret: start + s.insert.length };
}

// ---------------------------------------------------------------------------------------------
// Columns

/** The keys of a field (`@res.statusCode` → res, statusCode; `@"a.b".c` → a.b, c). */
export function fieldPath(field: string): string[] {
  const body = field.startsWith('@') ? field.slice(1) : field;
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted && c === '\\' && i + 1 < body.length) cur += body[++i];
    else if (c === '"') quoted = !quoted;
    else if (c === '.' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/** The value at `path` in metadata, where a dotted key (`"http.status"`) and nesting are alike, as in search. */
export function valueAt(meta: unknown, path: string[]): unknown {
  if (path.length === 0) return meta;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const obj = meta as Record<string, unknown>;
  for (let i = path.length; i >= 1; i--) {
    const key = path.slice(0, i).join('.');
    if (Object.prototype.hasOwnProperty.call(obj, key)) {
      const v = valueAt(obj[key], path.slice(i));
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

/** A column's value in a log: level, source, message, timestamp, or an `@path` of its metadata. */
export function columnValue(log: Pick<Log, 'level' | 'source' | 'message' | 'timestamp' | 'metadata'>, column: string): unknown {
  if (column === 'level' || column === 'source' || column === 'message' || column === 'timestamp') return log[column];
  return valueAt(log.metadata, fieldPath(column));
}

/** A value as a cell shows it: strings as they are, objects as JSON, nothing for a missing one. */
export function cellText(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return 'null';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export type SortDir = 'asc' | 'desc';

/** The loaded logs ordered by a column: numbers as numbers, text as text, missing values last; ties keep their order. */
export function sortLogs<T extends Pick<Log, 'level' | 'source' | 'message' | 'timestamp' | 'metadata'>>(logs: T[], column: string, dir: SortDir): T[] {
  const sign = dir === 'asc' ? 1 : -1;
  const levelRank = (v: unknown) => (LEVELS as readonly string[]).indexOf(String(v));
  const keyed = logs.map((log, i) => ({ log, i, v: columnValue(log, column) }));
  keyed.sort((a, b) => {
    const am = a.v === undefined || a.v === null;
    const bm = b.v === undefined || b.v === null;
    if (am || bm) return am === bm ? a.i - b.i : am ? 1 : -1;
    let c: number;
    if (column === 'level') c = levelRank(a.v) - levelRank(b.v);
    else if (column === 'timestamp') c = Date.parse(String(a.v)) - Date.parse(String(b.v));
    else {
      const an = typeof a.v === 'number' ? a.v : Number.NaN;
      const bn = typeof b.v === 'number' ? b.v : Number.NaN;
      c = !Number.isNaN(an) && !Number.isNaN(bn) ? an - bn : cellText(a.v).localeCompare(cellText(b.v));
    }
    return c * sign || a.i - b.i;
  });
  return keyed.map((k) => k.log);
}

/** The columns with `field` added at the end (once; at most 20). */
export function addColumn(columns: string[], field: string): string[] {
  if (columns.includes(field) || columns.length >= 20) return columns;
  return [...columns, field];
}

export function removeColumn(columns: string[], field: string): string[] {
  return columns.filter((c) => c !== field);
}

/** Columns as `@paths`, plus level/source/timestamp/message, for the CSV export: the list's, or the default. */
export function exportColumns(columns: string[]): string[] {
  const out = ['timestamp', 'level', 'source'];
  for (const c of columns) if (!out.includes(c) && c !== 'message') out.push(c);
  out.push('message');
  return out;
}

// ---------------------------------------------------------------------------------------------
// The sidebar's pins and hides, and the query history (localStorage)

export interface FieldPrefs {
  pinned: string[];
  hidden: string[];
}

type Store = Pick<Storage, 'getItem' | 'setItem'>;
const prefsKey = (projectId: string) => `loglane.fields.${projectId}`;

export function readFieldPrefs(store: Store | undefined, projectId: string): FieldPrefs {
  try {
    const raw = JSON.parse(store?.getItem(prefsKey(projectId)) ?? 'null') as Partial<FieldPrefs> | null;
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, 200) : []);
    return { pinned: strings(raw?.pinned), hidden: strings(raw?.hidden) };
  } catch {
    return { pinned: [], hidden: [] };
  }
}

export function writeFieldPrefs(store: Store | undefined, projectId: string, prefs: FieldPrefs): void {
  try {
    store?.setItem(prefsKey(projectId), JSON.stringify(prefs));
  } catch {
    /* full or private: the choice lasts for this page */
  }
}

/** Pins a field (unhiding it) or unpins it. */
export function togglePin(prefs: FieldPrefs, field: string): FieldPrefs {
  return prefs.pinned.includes(field) ? { ...prefs, pinned: prefs.pinned.filter((f) => f !== field) } : { pinned: [...prefs.pinned, field], hidden: prefs.hidden.filter((f) => f !== field) };
}

/** Hides a field (unpinning it) or shows it again. */
export function toggleHide(prefs: FieldPrefs, field: string): FieldPrefs {
  return prefs.hidden.includes(field) ? { ...prefs, hidden: prefs.hidden.filter((f) => f !== field) } : { hidden: [...prefs.hidden, field], pinned: prefs.pinned.filter((f) => f !== field) };
}

/**
 * The sidebar's fields in order: pinned ones first (in pin order), then the rest as the server
 * ranks them, without hidden ones, filtered by `search` (any part of the name, any case).
 */
export function arrangeFields(fields: Array<{ field: string; count: number }>, prefs: FieldPrefs, search = ''): Array<{ field: string; count: number; pinned: boolean }> {
  const s = search.trim().toLowerCase();
  const byName = new Map(fields.map((f) => [f.field, f.count]));
  const pinned = prefs.pinned.map((f) => ({ field: f, count: byName.get(f) ?? 0, pinned: true }));
  const rest = fields.filter((f) => !prefs.pinned.includes(f.field) && !prefs.hidden.includes(f.field)).map((f) => ({ ...f, pinned: false }));
  return [...pinned, ...rest].filter((f) => !s || f.field.toLowerCase().includes(s));
}

const HISTORY_KEY = 'loglane.queryHistory';

/** The history with `query` put first (once), at most `max` long; blank queries are not kept. */
export function addToHistory(history: string[], query: string, max = 20): string[] {
  const q = query.trim();
  if (!q) return history;
  return [q, ...history.filter((h) => h !== q)].slice(0, max);
}

export function readHistory(store: Store | undefined): string[] {
  try {
    const v = JSON.parse(store?.getItem(HISTORY_KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, 20) : [];
  } catch {
    return [];
  }
}

export function writeHistory(store: Store | undefined, history: string[]): void {
  try {
    store?.setItem(HISTORY_KEY, JSON.stringify(history));
  } catch {
    /* ignore */
  }
}

// ---------------------------------------------------------------------------------------------
// Views and links

/** The explorer's state a saved view opens (levels are not part of a view: none chosen). */
export function viewToQuery(view: Pick<View, 'query' | 'range' | 'columns' | 'groupBy'>): LogQuery {
  const r = view.range;
  const range: TimeRange =
    'last' in r && lastDurationMs(r.last) !== undefined
      ? { kind: 'preset', preset: r.last }
      : 'from' in r && Number.isFinite(Date.parse(r.from)) && Number.isFinite(Date.parse(r.to))
        ? { kind: 'custom', from: Date.parse(r.from), to: Date.parse(r.to) }
        : DEFAULT_QUERY.range;
  return { ...DEFAULT_QUERY, range, query: view.query, columns: [...view.columns], groupBy: view.groupBy ?? '' };
}

/**
 * What saving the explorer's state as a view sends. Chosen levels are folded into the query
 * (`level:(error OR fatal)`), since a view has no levels of its own.
 */
export function viewBody(name: string, query: LogQuery): ViewBody {
  const levels = query.levels.length > 0 && query.levels.length < LEVELS.length ? LEVELS.filter((l) => query.levels.includes(l)) : [];
  const levelTerm = levels.length === 1 ? `level:${levels[0]}` : levels.length ? `level:(${levels.join(' OR ')})` : '';
  const q = query.query.trim();
  const text = levelTerm ? (q ? (/(^|[\s)])OR([\s(]|$)/.test(q) ? `(${q}) ${levelTerm}` : `${q} ${levelTerm}`) : levelTerm) : q;
  const range = query.range.kind === 'preset' ? { last: query.range.preset } : { from: new Date(query.range.from).toISOString(), to: new Date(query.range.to).toISOString() };
  return { name: name.trim(), query: text, range, columns: query.columns.slice(0, 20), groupBy: query.groupBy.trim() || null };
}

/** The explorer's address for a state; `pinRange` writes a "Last …" range as the absolute bounds it has now. */
export function explorerUrl(projectId: string, query: LogQuery, options: { now?: number; pinRange?: boolean; extra?: Record<string, string> } = {}): string {
  const q = options.pinRange && query.range.kind === 'preset' ? { ...query, range: { kind: 'custom' as const, ...resolveRange(query.range, options.now ?? Date.now()) } } : query;
  const p = toUrlParams(q);
  for (const [k, v] of Object.entries(options.extra ?? {})) p.set(k, v);
  return `/projects/${encodeURIComponent(projectId)}/logs?${p}`;
}

/** A link that opens the explorer on one log: ten minutes around it, the log shown open. */
export function logPermalink(projectId: string, log: Pick<Log, 'id' | 'timestamp'>): string {
  const t = Date.parse(log.timestamp);
  return explorerUrl(projectId, { ...DEFAULT_QUERY, range: { kind: 'custom', from: t - 5 * 60_000, to: t + 5 * 60_000 } }, { extra: { log: log.id } });
}

/** The alerts page's create form, filled with the explorer's query and levels. */
export function alertFromSearchUrl(projectId: string, query: LogQuery): string {
  const p = new URLSearchParams({ create: '1' });
  if (query.query.trim()) p.set('query', query.query.trim());
  if (query.levels.length > 0 && query.levels.length < LEVELS.length) p.set('level', LEVELS.filter((l) => query.levels.includes(l)).join(','));
  return `/projects/${encodeURIComponent(projectId)}/alerts?${p}`;
}

/** `@f:[a TO b]` for a numeric range chosen in the sidebar (either end may be open: `*`). */
export function numericRangeTerm(field: string, min: string, max: string): string | undefined {
  const a = min.trim() === '' ? '*' : min.trim();
  const b = max.trim() === '' ? '*' : max.trim();
  const num = (s: string) => s === '*' || /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(s);
  if (!num(a) || !num(b) || (a === '*' && b === '*')) return undefined;
  if (a !== '*' && b !== '*' && Number(a) > Number(b)) return undefined;
  return `${field}:[${a} TO ${b}]`;
}

/** The context's `query` for "same source" or "same value of a field" (none for every log). */
export function contextQuery(log: Pick<Log, 'source' | 'metadata' | 'level' | 'message' | 'timestamp'>, scope: string): string | undefined {
  if (scope === '' || scope === 'all') return undefined;
  if (scope === 'source') return log.source === null ? '-source:*' : fieldTerm('source', log.source);
  const value = columnValue(log, scope);
  if (value === undefined || value === null || typeof value === 'object') return `${scope}:*`;
  return fieldTerm(scope, value);
}

/** Whether a value reads better as preformatted text (a stack trace, any string with a line break). */
export function isMultiline(value: unknown): value is string {
  return typeof value === 'string' && value.includes('\n');
}

/** A facet's value (always text) as the query language takes it: numbers and booleans as in JSON, the rest as text. */
export function facetRaw(value: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(value) && String(Number(value)) === value) return Number(value);
  if (value === 'true' || value === 'false') return value === 'true';
  return value;
}
