/**
 * How the CLI prints logs and counts: `-o table` (aligned columns chosen with --fields, coloured
 * by level on a terminal) or `-o json` (one JSON object per line). Metadata paths in --fields are
 * read exactly as the search language and the server's groupBy read them (`@res.statusCode`,
 * `@"odd key".x`, keys with dots in them).
 */
import type { Log } from '@loglane/client';
import { parseField, splitFieldList } from './features/logs/query/parse.js';
import { resolvePath } from './features/logs/query/view.js';

export type OutputFormat = 'table' | 'json';

/** `-o json|table`; the older `--json` is `-o json`. */
export function outputFormat(o: { output?: string; json?: boolean }): OutputFormat {
  if (o.output === undefined) return o.json ? 'json' : 'table';
  const value = o.output.toLowerCase();
  if (value !== 'json' && value !== 'table') throw new Error(`-o/--output takes json or table (got "${o.output}").`);
  if (o.json && value !== 'json') throw new Error('--json and -o table contradict each other: give one.');
  return value;
}

// Output: colour by level on terminals (NO_COLOR and FORCE_COLOR respected).
export const useColour = (stream: NodeJS.WriteStream) => !process.env.NO_COLOR && (process.env.FORCE_COLOR ? process.env.FORCE_COLOR !== '0' : stream.isTTY === true);
const LEVEL_COLOUR: Record<string, string> = { trace: '90', debug: '35', info: '36', warn: '33', error: '31', fatal: '41;97' };
const paint = (colour: boolean, code: string, s: string) => (colour && s !== '' ? `\u001b[${code}m${s}\u001b[0m` : s);

/** The fields a log has by name; anything else is a metadata path written with `@`. */
export const LOG_FIELDS = ['id', 'timestamp', 'receivedAt', 'level', 'source', 'message', 'metadata'] as const;
type LogField = (typeof LOG_FIELDS)[number];
export const DEFAULT_FIELDS = 'timestamp,level,source,message';

export interface Column {
  /** As the user wrote it (the header and the JSON key). */
  name: string;
  /** The value for JSON: null when the log has none. */
  value(log: Log): unknown;
}

/** The columns of `--fields` (default timestamp, level, source, message). */
export function parseColumns(text: string | undefined, option = '--fields'): Column[] {
  const names = splitFieldList(text ?? DEFAULT_FIELDS);
  if (names.length === 0) throw new Error(`${option} needs at least one field, e.g. ${option} ${DEFAULT_FIELDS},@req.id`);
  return names.map((name) => {
    const known = LOG_FIELDS.find((f) => f.toLowerCase() === name.toLowerCase());
    if (known) return { name, value: (log: Log) => (log as unknown as Record<LogField, unknown>)[known] ?? null };
    if (!name.startsWith('@')) {
      throw new Error(`${option}: "${name}" is not a field. Fields: ${LOG_FIELDS.join(', ')}, or a metadata path written with @ (did you mean @${name}?).`);
    }
    let path: readonly string[];
    try {
      const field = parseField(name, 'fields');
      if (field.kind !== 'meta') throw new Error('not a metadata path');
      path = field.path;
    } catch (err) {
      throw new Error(`${option}: "${name}" is not a metadata path: ${err instanceof Error ? err.message : String(err)}`);
    }
    return {
      name,
      value: (log: Log) => {
        const found = resolvePath(log.metadata, path);
        return found.length === 0 ? null : found.length === 1 ? found[0] : found;
      },
    };
  });
}

/** A value as table text: strings as they are, other values as JSON, nothing as empty. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * Control characters shown, never sent to the terminal: a log's text must not move the cursor,
 * recolour or retitle the window. Newlines are kept only where `keepNewlines` says.
 */
export function visible(text: string, keepNewlines = false): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    if (c === '\n' && keepNewlines) return c;
    if (c === '\n') return '\\n';
    if (c === '\r') return keepNewlines ? '' : '\\r';
    if (c === '\t') return keepNewlines ? '    ' : '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Columns other than the last are padded up to this many characters; longer values push the row on rather than being cut. */
const MAX_PAD = 40;
/** The deepest a multi-line last cell's following lines are indented (to sit under its first). */
const MAX_HANG = 48;

/**
 * Rows of logs as aligned text. Widths start at the headers' and grow with the rows seen: `fit`
 * takes a page before it is written (search), a tail widens as logs come.
 */
export class LogTable {
  private readonly widths: number[];
  private headerDue: boolean;

  constructor(
    private readonly columns: Column[],
    private readonly write: (line: string) => void,
    private readonly colour: boolean,
    header: boolean,
  ) {
    this.widths = columns.map((c) => Math.min(MAX_PAD, c.name.length));
    this.headerDue = header;
  }

  private cells(log: Log): string[] {
    const last = this.columns.length - 1;
    return this.columns.map((c, i) => {
      const text = cellText(c.value(log));
      if (c.name.toLowerCase() === 'level') return text.toUpperCase();
      return visible(text, i === last);
    });
  }

  fit(logs: Iterable<Log>): void {
    const last = this.columns.length - 1;
    for (const log of logs) {
      const cells = this.cells(log);
      for (let i = 0; i < last; i++) this.widths[i] = Math.min(MAX_PAD, Math.max(this.widths[i]!, cells[i]!.length));
    }
  }

  private line(cells: string[], paintCell: (i: number, text: string) => string): string {
    const last = cells.length - 1;
    let out = '';
    for (let i = 0; i < cells.length; i++) {
      let text = cells[i]!;
      if (i === last) {
        const lines = text.split('\n');
        const hang = ' '.repeat(Math.min(MAX_HANG, out.length));
        text = lines.map((l, k) => (k === 0 ? paintCell(i, l) : hang + paintCell(i, l))).join('\n');
        out += text;
      } else {
        out += paintCell(i, text) + ' '.repeat(Math.max(0, this.widths[i]! - text.length)) + '  ';
      }
    }
    return out.trimEnd();
  }

  row(log: Log): void {
    const cells = this.cells(log);
    const last = cells.length - 1;
    for (let i = 0; i < last; i++) this.widths[i] = Math.min(MAX_PAD, Math.max(this.widths[i]!, cells[i]!.length));
    if (this.headerDue) {
      this.headerDue = false;
      this.write(this.line(this.columns.map((c) => c.name.toUpperCase()), (_i, t) => paint(this.colour, '1', t)));
    }
    this.write(
      this.line(cells, (i, t) => {
        const name = this.columns[i]!.name.toLowerCase();
        if (name === 'level') return paint(this.colour, LEVEL_COLOUR[log.level] ?? '0', t);
        if (name === 'timestamp' || name === 'receivedat' || name === 'id') return paint(this.colour, '90', t);
        if (name === 'source') return paint(this.colour, '34', t);
        return t;
      }),
    );
  }
}

/** JSON lines: the whole Log, or with --fields an object of just those fields (missing ones null). */
export function jsonLine(log: Log, columns: Column[] | undefined): string {
  if (!columns) return JSON.stringify(log);
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c.name] = c.value(log);
  return JSON.stringify(out);
}

/** Plain rows as aligned text: `right` lists the columns aligned right (numbers). */
export function alignRows(rows: string[][], right: (i: number) => boolean): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (right(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}
