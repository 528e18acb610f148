/**
 * The CLI's commands that talk to a running Loglane server over its API (login, search, tail,
 * send), through @loglane/client. Credentials are kept in $XDG_CONFIG_HOME/loglane/credentials.json
 * (mode 0600), like other CLIs keep theirs.
 */
import { createReadStream, statSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { LoglaneClient, LoglaneError, type Log } from '@loglane/client';
import { alignRows, jsonLine, LogTable, outputFormat, parseColumns, useColour, type Column } from './cli-output.js';

interface Credentials {
  server: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

export function credentialsPath(): string {
  const base = process.env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'loglane', 'credentials.json');
}

async function readCredentials(): Promise<Credentials | undefined> {
  try {
    return JSON.parse(await readFile(credentialsPath(), 'utf8')) as Credentials;
  } catch {
    return undefined;
  }
}

async function writeCredentials(c: Credentials): Promise<void> {
  const file = credentialsPath();
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

const DEFAULT_SERVER = 'http://localhost:8080';

/** A client signed in with the stored credentials, refreshing (and saving) tokens as needed. */
export async function signedIn(serverOption?: string): Promise<{ client: LoglaneClient; creds: Credentials }> {
  const creds = await readCredentials();
  if (!creds) throw new Error('Not signed in: run `loglane login` first.');
  if (serverOption && normaliseServer(serverOption) !== creds.server) throw new Error(`You are signed in to ${creds.server}, not ${serverOption}: run \`loglane login --server ${serverOption}\`.`);
  const client = new LoglaneClient({
    baseUrl: creds.server,
    accessToken: creds.accessToken,
    refreshToken: creds.refreshToken,
    userAgent: 'loglane-cli',
    onTokens: (t) => void writeCredentials({ ...creds, ...t }).catch(() => undefined),
  });
  return { client, creds };
}

function normaliseServer(server: string): string {
  const url = new URL(/^https?:\/\//.test(server) ? server : `http://${server}`);
  return url.origin;
}

/** A project by id or by name. */
export async function resolveProject(client: LoglaneClient, ref: string): Promise<{ id: string; name: string }> {
  if (/^proj_/.test(ref)) {
    const p = await client.getProject(ref);
    return { id: p.id, name: p.name };
  }
  const { data } = await client.listProjects();
  const hits = data.filter((p) => p.name === ref || p.name.toLowerCase() === ref.toLowerCase());
  if (hits.length === 1) return { id: hits[0]!.id, name: hits[0]!.name };
  if (hits.length > 1) throw new Error(`Several projects are named "${ref}"; use the id (${hits.map((h) => h.id).join(', ')}).`);
  throw new Error(`No project "${ref}". Yours: ${data.map((p) => `${p.name} (${p.id})`).join(', ') || 'none'}.`);
}

async function readSecret(prompt: string, fromStdin: boolean): Promise<string> {
  if (fromStdin || !process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    const stdin = process.stdin;
    stdin.setRawMode(true);
    stdin.resume();
    let value = '';
    const onData = (b: Buffer) => {
      for (const ch of b.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          process.stderr.write('\n');
          return resolve(value);
        }
        if (ch === '\u0003') process.exit(130);
        if (ch === '\u007f') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export async function login(options: { server?: string; email?: string; passwordStdin?: boolean }): Promise<void> {
  const server = normaliseServer(options.server ?? process.env.LOGLANE_SERVER ?? DEFAULT_SERVER);
  let email = options.email;
  if (!email) {
    if (!process.stdin.isTTY) throw new Error('Give --email when not on a terminal.');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    email = await new Promise<string>((r) => rl.question('Email: ', r));
    rl.close();
  }
  const password = await readSecret('Password: ', options.passwordStdin === true);
  const client = new LoglaneClient({ baseUrl: server, userAgent: 'loglane-cli' });
  const session = await client.login({ email, password });
  await writeCredentials({ server, email: session.user.email, accessToken: session.accessToken, refreshToken: session.refreshToken! });
  console.error(`Signed in to ${server} as ${session.user.email}. Credentials saved in ${credentialsPath()}.`);
}

export async function logout(): Promise<void> {
  const creds = await readCredentials();
  if (creds) {
    const client = new LoglaneClient({ baseUrl: creds.server, accessToken: creds.accessToken, refreshToken: creds.refreshToken });
    await client.logout().catch(() => undefined);
    await rm(credentialsPath(), { force: true });
  }
  console.error('Signed out.');
}

export interface FilterOptions {
  level?: string;
  source?: string;
  /** The search query language (docs/search.md). */
  query?: string;
  /** A case-insensitive substring of the message (the API's `q`). */
  contains?: string;
  pattern?: string;
}

export function filterQuery(o: FilterOptions): Record<string, string | undefined> {
  return { level: o.level, source: o.source, q: o.contains, pattern: o.pattern, query: o.query };
}

const DURATION_UNITS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/** `--since 15m` → an ISO time that long ago. */
export function since(value: string | undefined, now = Date.now()): string | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,9})(s|m|h|d|w)$/.exec(value.trim());
  if (!m) throw new Error(`--since takes a duration such as 30s, 15m, 6h, 7d or 2w (got "${value}").`);
  return new Date(now - Number(m[1]) * DURATION_UNITS[m[2] as keyof typeof DURATION_UNITS]).toISOString();
}

/** The start of the range: --from, or --since ago; both at once is a mistake. */
export function rangeStart(o: { since?: string; from?: string }): string | undefined {
  if (o.since !== undefined && o.from !== undefined) throw new Error('--since and --from both set the start of the range: give one of them.');
  return o.from ?? since(o.since);
}

/** Bytes as people read them (powers of 1,000, as disks are sold). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
  let value = n / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** Writes to standard output, waiting when the reader is slower than we are (a pager, a pipe). */
export async function out(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
}

/** Waits until standard output has taken what was written to it. */
async function drained(): Promise<void> {
  if (process.stdout.writableNeedDrain) await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
}

export interface OutputOptions {
  output?: string;
  json?: boolean;
  fields?: string;
  /** false with --no-header. */
  header?: boolean;
}

/** The signed-in account's projects: a table, or one JSON object per line. */
export async function projects(o: { server?: string; json?: boolean; output?: string }): Promise<void> {
  const format = outputFormat(o);
  const { client } = await signedIn(o.server);
  const { data } = await client.listProjects();
  if (format === 'json') {
    for (const p of data) await out(`${JSON.stringify({ id: p.id, name: p.name, role: p.role, logCount: p.logCount, storedBytes: p.storedBytes, createdAt: p.createdAt })}\n`);
    return;
  }
  if (data.length === 0) {
    console.error('No projects yet: create one in the console, or accept an invitation.');
    return;
  }
  const rows = [['NAME', 'ID', 'ROLE', 'LOGS', 'STORED'], ...data.map((p) => [p.name, p.id, p.role, p.logCount.toLocaleString('en'), formatBytes(p.storedBytes)])];
  // Numbers right-aligned, text left-aligned.
  for (const line of alignRows(rows, (i) => i >= 3)) await out(`${line}\n`);
}

/** What -o and --fields ask for: a table of columns, or JSON lines (whole logs, or just the fields). */
function logPrinter(o: OutputOptions): { columns: Column[] | undefined; table: LogTable | undefined; json: boolean } {
  const format = outputFormat(o);
  const columns = format === 'table' || o.fields !== undefined ? parseColumns(o.fields) : undefined;
  const table = format === 'table' ? new LogTable(columns!, (line) => void process.stdout.write(`${line}\n`), useColour(process.stdout), o.header !== false) : undefined;
  return { columns, table, json: format === 'json' };
}

export async function search(projectRef: string, o: FilterOptions & OutputOptions & { server?: string; from?: string; to?: string; since?: string; limit?: string }): Promise<void> {
  const printer = logPrinter(o);
  const limit = o.limit === undefined ? 100 : Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`-n/--limit takes a whole number from 1 (got "${o.limit}").`);
  const from = rangeStart(o);
  const { client } = await signedIn(o.server);
  const project = await resolveProject(client, projectRef);
  let shown = 0;
  let cursor: string | null | undefined;
  do {
    const page = await client.searchLogs(project.id, { ...filterQuery(o), from, to: o.to, limit: Math.min(1000, limit - shown), cursor: cursor ?? undefined } as never);
    const logs = page.data as Log[];
    if (printer.table) {
      // The page is in hand: its widest values set the columns before its first row is written.
      printer.table.fit(logs);
      for (const log of logs) printer.table.row(log);
      await drained();
    } else {
      for (const log of logs) await out(`${jsonLine(log, o.fields !== undefined ? printer.columns : undefined)}\n`);
    }
    shown += logs.length;
    cursor = page.nextCursor;
  } while (cursor && shown < limit);
  if (!printer.json) {
    if (shown === 0) console.error('No logs match.');
    else console.error(`${shown.toLocaleString('en')} ${shown === 1 ? 'log' : 'logs'}, newest first.${cursor ? ' More match: raise -n/--limit, or narrow the range.' : ''}`);
  }
}

export async function tail(projectRef: string, o: FilterOptions & OutputOptions & { server?: string }): Promise<void> {
  const printer = logPrinter(o);
  const { client } = await signedIn(o.server);
  const project = await resolveProject(client, projectRef);
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  const stream = client.tailLogs(project.id, filterQuery(o) as never, {
    signal: controller.signal,
    onConnected: () => console.error(`Tailing ${project.name}${o.level || o.source || o.query || o.contains || o.pattern ? ' (filtered)' : ''}. Ctrl-C to stop.`),
  });
  for await (const log of stream) {
    if (printer.table) {
      printer.table.row(log);
      await drained();
    } else await out(`${jsonLine(log, o.fields !== undefined ? printer.columns : undefined)}\n`);
  }
}

/** A line of input as a log: a JSON object as it is, anything else as the message. */
export function lineToLog(line: string, defaults: { level?: string; source?: string }): Record<string, unknown> | undefined {
  const text = line.replace(/\r$/, '');
  if (text.trim() === '') return undefined;
  if (text.trimStart().startsWith('{')) {
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        const log = value as Record<string, unknown>;
        if (defaults.source && log.source === undefined) log.source = defaults.source;
        if (defaults.level && log.level === undefined) log.level = defaults.level;
        return log;
      }
    } catch {
      /* not JSON: a plain line */
    }
  }
  return { message: text, ...(defaults.level ? { level: defaults.level } : {}), ...(defaults.source ? { source: defaults.source } : {}) };
}

const MAX_BATCH_BYTES = 4 * 1024 * 1024;

export async function send(file: string | undefined, o: { server?: string; apiKey?: string; project?: string; batch?: string; level?: string; source?: string; progress?: boolean }): Promise<void> {
  const batchSize = o.batch === undefined ? 1000 : Number(o.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new Error('--batch must be from 1 to 10000.');
  let client: LoglaneClient;
  let apiKey = o.apiKey ?? process.env.LOGLANE_API_KEY;
  if (apiKey) {
    const creds = await readCredentials();
    client = new LoglaneClient({ baseUrl: normaliseServer(o.server ?? creds?.server ?? process.env.LOGLANE_SERVER ?? DEFAULT_SERVER), apiKey, userAgent: 'loglane-cli' });
  } else if (o.project) {
    const signed = await signedIn(o.server);
    client = signed.client;
    const project = await resolveProject(client, o.project);
    apiKey = (await client.getProject(project.id)).apiKey;
    client.apiKey = apiKey;
  } else {
    throw new Error('Give --api-key (or LOGLANE_API_KEY), or --project when signed in.');
  }

  const total = file && file !== '-' ? statSync(file).size : undefined;
  if (total === undefined && process.stdin.isTTY) console.error('Reading lines from standard input; end with Ctrl-D.');
  const input = file && file !== '-' ? createReadStream(file) : process.stdin;
  const showProgress = o.progress ?? process.stderr.isTTY === true;
  const started = Date.now();
  let bytesRead = 0;
  let lines = 0;
  let accepted = 0;
  let rejected = 0;
  let retries = 0;
  const problems: string[] = [];
  input.on('data', (c: string | Buffer) => (bytesRead += c.length));

  let lastDraw = 0;
  const draw = (final = false) => {
    if (!showProgress) return;
    const now = Date.now();
    if (!final && now - lastDraw < 100) return;
    lastDraw = now;
    const secs = Math.max(0.001, (now - started) / 1000);
    const rate = Math.round(accepted / secs);
    const width = 30;
    const fraction = total ? Math.min(1, bytesRead / Math.max(1, total)) : undefined;
    const bar = fraction === undefined ? '' : `[${'#'.repeat(Math.round(fraction * width)).padEnd(width, '.')}] ${(fraction * 100).toFixed(0).padStart(3)}% `;
    process.stderr.write(`\r${bar}${accepted.toLocaleString('en')} sent, ${rate.toLocaleString('en')} logs/s${rejected ? `, ${rejected.toLocaleString('en')} rejected` : ''}\u001b[K${final ? '\n' : ''}`);
  };

  const flush = async (batch: Record<string, unknown>[]) => {
    if (!batch.length) return;
    const idempotencyKey = randomUUID();
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await client.ingestLogs(batch as never, { idempotencyKey });
        accepted += res.accepted;
        rejected += res.rejected.length;
        for (const r of res.rejected) if (problems.length < 5) problems.push(`line ${lines - batch.length + r.index + 1}: ${r.message}`);
        break;
      } catch (err) {
        const retryable = err instanceof LoglaneError ? err.status === 429 || err.status >= 500 || err.status === 0 : true;
        if (err instanceof LoglaneError && err.code === 'VALIDATION_ERROR') {
          rejected += batch.length;
          if (problems.length < 5) problems.push(err.message);
          break;
        }
        if (!retryable || attempt >= 8) throw err;
        retries++;
        const wait = err instanceof LoglaneError && err.retryAfter ? err.retryAfter * 1000 : Math.min(30_000, 250 * 2 ** attempt);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
    draw();
  };

  const rl = createInterface({ input, crlfDelay: Infinity });
  let batch: Record<string, unknown>[] = [];
  let batchBytes = 0;
  for await (const line of rl) {
    lines++;
    const log = lineToLog(line, { level: o.level, source: o.source });
    if (!log) continue;
    const size = Buffer.byteLength(line) + 2;
    if (batch.length >= batchSize || batchBytes + size > MAX_BATCH_BYTES) {
      await flush(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(log);
    batchBytes += size;
  }
  await flush(batch);
  draw(true);
  const secs = (Date.now() - started) / 1000;
  console.error(
    `Sent ${lines.toLocaleString('en')} ${lines === 1 ? 'line' : 'lines'} in ${secs.toFixed(1)} s: ${accepted.toLocaleString('en')} accepted, ${rejected.toLocaleString('en')} rejected${retries ? `, ${retries} retried` : ''} (${Math.round(accepted / Math.max(secs, 0.001)).toLocaleString('en')} logs/s).`,
  );
  for (const p of problems) console.error(`  ${p}`);
  if (rejected > 0) process.exitCode = 1;
}

/** An error as one line for a person: what went wrong and, where we know, what to do. */
export function describeError(err: unknown): string {
  if (err instanceof LoglaneError) {
    if (err.status === 401 && (err.code === 'INVALID_REFRESH_TOKEN' || err.code === 'UNAUTHORIZED' || err.code === 'TOKEN_EXPIRED')) return `${err.message} Your session has ended: run \`loglane login\` again.`;
    if (err.status === 0 || err.status >= 500) return `${err.message}${err.requestId ? ` (request id ${err.requestId})` : ''}`;
    return err.message;
  }
  if (err instanceof Error) {
    // fetch's "fetch failed" hides the reason in its cause.
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    if (err.message === 'fetch failed' && cause) return `cannot reach the server (${cause.code ?? cause.message}): is it running, and is the address from \`loglane login\` right?`;
    const code = (err as NodeJS.ErrnoException).code;
    if (code && ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code)) return `cannot reach the server (${code}): is it running, and is the address from \`loglane login\` right?`;
    return err.message;
  }
  return String(err);
}
