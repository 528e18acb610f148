/**
 * Exports: every log a search selects, as NDJSON (one Log per line, as search pages write them) or
 * CSV (RFC 4180: a header row of the columns as asked, CRLF line ends, fields quoted when they hold
 * a quote, a comma or a line break). A CSV cell that a spreadsheet would take for a formula (one
 * beginning with =, +, -, @, a tab or a carriage return) gets a leading ' unless the export asks for
 * raw cells; the header row is written as asked. The rows come a chunk of bounded bytes at a time
 * (search.ts exportRows) and are encoded a chunk at a time, so memory does not grow with the count.
 */
import { validationError } from '../../../errors.js';
import { levelName } from '../levels.js';
import { logId, logJson } from '../present.js';
import { parseGroupBy } from '../query/index.js';
import { resolvePath } from '../query/view.js';
import type { LogRowStored } from '../store/repository.js';
import { lazyMetadata } from './facets.js';
import { splitFieldList } from '../query/parse.js';

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The CSV columns when none are asked for. */
export const DEFAULT_CSV_COLUMNS = 'timestamp,level,source,message';
/** Columns one CSV export may have. */
export const MAX_EXPORT_COLUMNS = 50;

/** A column of a CSV export: its header as asked, and how a log's value is read. */
export interface ExportColumn {
  header: string;
  read: (row: LogRowStored, metadata: () => unknown) => string;
}

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

const LOG_COLUMNS: Record<string, ExportColumn['read']> = {
  id: (row) => logId(Number(row.seq)),
  timestamp: (row) => iso(row.ts),
  receivedAt: (row) => iso(row.received_at),
  level: (row) => levelName(Number(row.level)),
  source: (row) => row.source ?? '',
  message: (row) => row.message,
  metadata: (row) => row.metadata ?? '{}',
};

/** A value as a CSV field's text: strings as they are, numbers and booleans as JSON writes them, objects and arrays as JSON. */
function valueText(values: unknown[]): string {
  const present = values.filter((v) => v !== undefined && v !== null);
  if (present.length === 0) return '';
  if (present.length > 1) return JSON.stringify(present);
  const v = present[0];
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The columns of `text` (a comma list of log fields and @paths; DEFAULT_CSV_COLUMNS when empty); a 400 at `columns` for one that is not a field. */
export function exportColumns(text: string | undefined): ExportColumn[] {
  const names = splitFieldList(text === undefined || text.trim() === '' ? DEFAULT_CSV_COLUMNS : text);
  if (names.length === 0) throw validationError('querystring:/columns', 'must name at least one column');
  if (names.length > MAX_EXPORT_COLUMNS) throw validationError('querystring:/columns', `must name at most ${MAX_EXPORT_COLUMNS} columns`);
  return names.map((header) => {
    const own = Object.hasOwn(LOG_COLUMNS, header) ? LOG_COLUMNS[header] : undefined;
    if (own) return { header, read: own };
    let field;
    try {
      field = parseGroupBy(header).field;
    } catch {
      throw validationError('querystring:/columns', `holds "${header.slice(0, 100)}", which is not a column: name a log field (${Object.keys(LOG_COLUMNS).join(', ')}) or a metadata path such as @req.url`);
    }
    if (field.kind === 'source') return { header, read: LOG_COLUMNS.source! };
    if (field.kind === 'level') return { header, read: LOG_COLUMNS.level! };
    const path = field.kind === 'meta' ? field.path : [];
    return { header, read: (_row, metadata) => valueText(resolvePath(metadata(), path)) };
  });
}

/** What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A cell's text made inert for a spreadsheet: a leading ' before a formula's first character, else as it is. */
export function neutralised(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * One CSV field: quoted (with quotes doubled) when it holds a quote, a comma, CR or LF. With
 * `neutralise` (the default for a log's values), a cell a spreadsheet would take for a formula is
 * given a leading ' first.
 */
export function csvField(text: string, neutralise = false): string {
  const cell = neutralise ? neutralised(text) : text;
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** The header row of a CSV export: the columns as asked (a path's leading @ is kept). */
export function csvHeader(columns: readonly ExportColumn[]): string {
  return columns.map((c) => csvField(c.header)).join(',') + '\r\n';
}

/**
 * A chunk of rows as export text. CSV cells are neutralised (see neutralised) unless `raw`, for a
 * consumer that reads the file as data rather than opening it in a spreadsheet.
 */
export function encodeRows(rows: readonly LogRowStored[], format: ExportFormat, columns: readonly ExportColumn[], raw = false): string {
  let out = '';
  if (format === 'ndjson') {
    for (const row of rows) out += logJson(row) + '\n';
    return out;
  }
  for (const row of rows) {
    const metadata = lazyMetadata(row);
    let line = '';
    for (let i = 0; i < columns.length; i++) line += (i === 0 ? '' : ',') + csvField(columns[i]!.read(row, metadata), !raw);
    out += line + '\r\n';
  }
  return out;
}

/** The download's file name: `<project>-<from>-<to>.<ext>`, times as compact UTC (20261128T150000Z). */
export function exportFileName(project: string, from: number | undefined, to: number, format: ExportFormat): string {
  const compact = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
  const safe = project.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'logs';
  return `${safe}-${from === undefined ? 'start' : compact(from)}-${compact(to)}.${format}`;
}

/** Exports one user may have running at once. */
export const EXPORTS_PER_USER = 2;
/**
 * Exports this node runs at once, whoever's they are: each one reads and encodes a chunk of up to
 * EXPORT_CHUNK_BYTES per turn of the event loop, so twenty at once (ten users) held every other
 * request for their twenty chunks a turn. Past it, 429 RATE_LIMITED with Retry-After.
 */
export const EXPORTS_PER_NODE = 4;
/** Seconds an export refused for want of a slot asks its client to wait. */
export const EXPORT_RETRY_AFTER_S = 5;
/** An export whose client has read nothing for this long is ended. */
export const EXPORT_STALL_MS = 120_000;

/**
 * The lines for exports: at most EXPORTS_PER_USER of one user and `perNode` in all at once; more
 * are refused at once (429 with Retry-After), saying which share is full.
 */
export function createExportSlots(perNode = EXPORTS_PER_NODE) {
  const running = new Map<string, number>();
  let total = 0;
  let peak = 0;
  return {
    /** A release function, or the share that is full: the user's own, or the node's. */
    take(userId: string): (() => void) | 'user' | 'node' {
      const n = running.get(userId) ?? 0;
      if (n >= EXPORTS_PER_USER) return 'user';
      if (total >= perNode) return 'node';
      running.set(userId, n + 1);
      total++;
      if (total > peak) peak = total;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (running.get(userId) ?? 1) - 1;
        if (left <= 0) running.delete(userId);
        else running.set(userId, left);
      };
    },
    /** Exports running on this node, and the most that ever ran at once (tests check the share). */
    stats(): { running: number; peak: number } {
      return { running: total, peak };
    },
  };
}
