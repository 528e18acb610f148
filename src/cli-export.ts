/**
 * `loglane export`: streams GET /v1/projects/:id/logs/export (every matching log, newest first,
 * NDJSON or CSV) to standard output or a file, a chunk at a time: nothing is held but the chunk
 * being written. Progress (logs, bytes, rate) goes to standard error.
 */
import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Transform, type TransformCallback, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LoglaneError } from '@loglane/client';
import { parseColumns } from './cli-output.js';
import { splitFieldList } from './features/logs/query/parse.js';
import { filterQuery, formatBytes, rangeStart, resolveProject, signedIn, type FilterOptions } from './remote.js';

export interface ExportOptions extends FilterOptions {
  server?: string;
  from?: string;
  to?: string;
  since?: string;
  format?: string;
  columns?: string;
  /** CSV: cells as they are (--raw), without the leading ' the server puts before a formula's first character. */
  raw?: boolean;
  /** -O: a file name, or true for the name the server suggests. */
  outputFile?: string | boolean;
  progress?: boolean;
}

/**
 * Counts the logs going by without parsing them: NDJSON has one per line; CSV has a header row,
 * then one record per line ending outside double quotes (a quoted value may hold line breaks;
 * RFC 4180 doubles a quote inside one, which toggles twice and so changes nothing).
 */
export class LogCounter extends Transform {
  records = 0;
  bytes = 0;
  private quoted = false;
  private lastByte = 0x0a;

  constructor(
    private readonly csv: boolean,
    private readonly onChunk: () => void = () => undefined,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.csv) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        if (b === 0x22) this.quoted = !this.quoted;
        else if (b === 0x0a && !this.quoted) this.records++;
      }
    } else {
      for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) this.records++;
    }
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1]!;
    done(null, chunk);
    this.onChunk();
  }

  /** Logs written so far (the CSV header row is not one; a last line without its newline is). */
  get logs(): number {
    const lines = this.records + (this.lastByte !== 0x0a && this.bytes > 0 ? 1 : 0);
    return this.csv ? Math.max(0, lines - 1) : lines;
  }
}

/** The file name of a Content-Disposition header, as a plain name in the current directory (never a path). */
export function attachmentName(header: string | null): string | undefined {
  if (!header) return undefined;
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header);
  if (!m) return undefined;
  let name = m[1]!;
  try {
    name = decodeURIComponent(name);
  } catch {
    /* as it is */
  }
  name = path.basename(name.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '');
  return name === '' || name.startsWith('.') ? undefined : name;
}

/**
 * The export request, by node:http rather than fetch: fetch gives up on an answer whose headers or
 * next bytes take more than 5 minutes, and an export of a rare match over a long range may be
 * quiet that long between its chunks.
 */
async function requestExport(baseUrl: string, projectId: string, query: Record<string, string | undefined>, signal: AbortSignal, token: () => string | undefined, refresh: () => Promise<void>): Promise<IncomingMessage> {
  const url = new URL(`${baseUrl}/v1/projects/${encodeURIComponent(projectId)}/logs/export`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  for (let attempt = 0; ; attempt++) {
    const headers: Record<string, string> = { 'user-agent': 'loglane-cli' };
    const t = token();
    if (t) headers.authorization = `Bearer ${t}`;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).get(url, { headers, signal }, resolve);
      req.on('error', reject);
    });
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return res;
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    let body: { error?: { code?: string; message?: string; details?: unknown; requestId?: string } } | undefined;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      body = undefined;
    }
    const e = body?.error;
    if (status === 401 && e?.code === 'TOKEN_EXPIRED' && attempt === 0) {
      await refresh();
      continue;
    }
    const retryAfter = Number(res.headers['retry-after']) || undefined;
    throw new LoglaneError(status, e?.code ?? `HTTP_${status}`, e?.message ?? `The server answered ${status}.`, e?.details, e?.requestId, retryAfter);
  }
}

/** A refusal as a sentence that says what to do. */
function explain(err: LoglaneError): string {
  if (err.status === 429) return `${err.message}${err.retryAfter ? ` Try again in ${err.retryAfter} s.` : ''} (At most two exports of one user run at once.)`;
  if (err.status === 404 && /^No route/.test(err.message)) return 'This server has no export endpoint: it is older than this CLI.';
  return err.message;
}

export async function exportLogs(projectRef: string, o: ExportOptions): Promise<void> {
  const format = (o.format ?? 'ndjson').toLowerCase();
  if (format !== 'ndjson' && format !== 'csv') throw new Error(`--format takes ndjson or csv (got "${o.format}").`);
  if (o.columns !== undefined && format !== 'csv') throw new Error('--columns chooses the columns of a CSV export: add --format csv (NDJSON lines are whole logs).');
  // The same columns the server takes, checked before asking it (a typo fails at once).
  if (o.columns !== undefined) parseColumns(o.columns, '--columns');
  if (o.raw && format !== 'csv') throw new Error('--raw writes CSV cells as they are: add --format csv (NDJSON lines are never changed).');
  const from = rangeStart(o);
  const { client } = await signedIn(o.server);
  const project = await resolveProject(client, projectRef);

  const controller = new AbortController();
  let interrupted = false;
  const stop = () => {
    interrupted = true;
    controller.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  let res: IncomingMessage;
  try {
    res = await requestExport(
      client.baseUrl,
      project.id,
      { format, ...filterQuery(o), from, to: o.to, columns: o.columns === undefined ? undefined : splitFieldList(o.columns).join(','), raw: o.raw ? 'true' : undefined },
      controller.signal,
      () => client.accessToken,
      () => client.refresh(),
    );
  } catch (err) {
    if (err instanceof LoglaneError) throw new Error(explain(err));
    throw err;
  }

  let file: string | undefined;
  if (o.outputFile !== undefined && o.outputFile !== false) {
    file = typeof o.outputFile === 'string' ? o.outputFile : (attachmentName(res.headers['content-disposition'] ?? null) ?? `${project.name.replace(/[^\w.-]+/g, '_')}.${format}`);
  }
  const showProgress = o.progress ?? process.stderr.isTTY === true;
  const started = Date.now();
  let lastDraw = 0;
  const draw = (final = false) => {
    if (!showProgress) return;
    const now = Date.now();
    if (!final && now - lastDraw < 200) return;
    lastDraw = now;
    const secs = Math.max(0.001, (now - started) / 1000);
    process.stderr.write(`\r${counter.logs.toLocaleString('en')} logs, ${formatBytes(counter.bytes)}, ${Math.round(counter.logs / secs).toLocaleString('en')} logs/s\u001b[K${final ? '\n' : ''}`);
  };
  const counter = new LogCounter(format === 'csv', () => draw());

  let target: Writable;
  let createdFile = false;
  if (file) {
    const existing = await stat(file).catch(() => undefined);
    if (existing?.isDirectory()) throw new Error(`-O ${file}: that is a directory; give a file name.`);
    target = createWriteStream(file);
    createdFile = existing === undefined || existing.isFile();
  } else {
    target = process.stdout;
  }

  try {
    await pipeline(res, counter, target, { end: file !== undefined });
  } catch (err) {
    const pipeClosed = (err as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
    if (pipeClosed && !file) return; // `loglane export … | head`: the reader has what it wanted
    draw(true);
    if (file && createdFile) await unlink(file).catch(() => undefined);
    const where = file && createdFile ? `; ${file} was removed` : '';
    if (interrupted) {
      console.error(`Export stopped after ${counter.logs.toLocaleString('en')} logs${where}.`);
      process.exitCode = 130;
      return;
    }
    throw new Error(`The export broke off after ${counter.logs.toLocaleString('en')} logs (${err instanceof Error ? err.message : String(err)})${where}.`);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  draw(true);
  const secs = (Date.now() - started) / 1000;
  console.error(
    `Exported ${counter.logs.toLocaleString('en')} ${counter.logs === 1 ? 'log' : 'logs'} (${formatBytes(counter.bytes)}, ${format.toUpperCase()}) in ${secs.toFixed(1)} s${file ? ` to ${file}` : ''}.`,
  );
}
