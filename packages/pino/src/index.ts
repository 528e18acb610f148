/**
 * @loglane/pino: a pino transport that ships logs to Loglane.
 *
 *   pino(pino.transport({ target: '@loglane/pino', options: { url: 'http://localhost:8080', apiKey } }))
 *
 * pino runs it in a worker thread. Lines are queued in memory as they come, so the application is
 * never held up by the network; the queue is bounded, and past `maxBufferedLogs` the oldest lines
 * are dropped and counted. Batches go to POST /v1/logs (gzipped over 1 KiB), one request at a time
 * and in order, each with its own Idempotency-Key so that a retry never stores a batch twice.
 * Network errors, 408, 409, 429 and 5xx are retried with exponential backoff and jitter, waiting
 * `Retry-After` when the server gives it. When pino closes the transport (the process exits), what
 * is queued is sent within `closeTimeoutMs` before the worker ends.
 */
import { randomUUID } from 'node:crypto';
import { writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import build from 'pino-abstract-transport';

export interface LoglaneTransportOptions {
  /** The Loglane server, e.g. `http://localhost:8080` (required). */
  url: string;
  /** The project API key; `LOGLANE_API_KEY` from the environment when omitted. */
  apiKey?: string;
  /** Set as `source` on lines that have none (at most 200 characters). */
  source?: string;
  /** Logs per request (default 500, at most 10,000). */
  batchSize?: number;
  /** A partial batch is sent after at most this long (default 1,000 ms). */
  flushIntervalMs?: number;
  /** Lines held in memory while the server is slow or away (default 10,000); past it the oldest are dropped. */
  maxBufferedLogs?: number;
  /** Retries of a batch after its first try, before it is dropped (default 8). */
  maxRetries?: number;
  /** Time limit of one request (default 10,000 ms). */
  timeoutMs?: number;
  /** How long closing may take to send what is queued (default 8,000 ms, at most 9,000: pino's thread-stream gives up on a worker after 10 s). */
  closeTimeoutMs?: number;
}

export interface ResolvedOptions {
  url: string;
  apiKey: string;
  source: string | undefined;
  batchSize: number;
  flushIntervalMs: number;
  maxBufferedLogs: number;
  maxRetries: number;
  timeoutMs: number;
  closeTimeoutMs: number;
}

type Line = Record<string, unknown>;

const NAME = '@loglane/pino';
/** The server takes at most 5 MiB per request after decompression; a little is kept in hand. */
const MAX_BODY_BYTES = 5 * 1024 * 1024 - 4096;
const GZIP_ABOVE_BYTES = 1024;
const BACKOFF_START_MS = 250;
const BACKOFF_CAP_MS = 30_000;
/** A Retry-After beyond this is taken as this (a broken proxy should not park the sender for hours). */
const RETRY_AFTER_CAP_MS = 300_000;
/** Repeated problems (rejected logs, a full buffer) are reported at most this often. */
const REPORT_EVERY_MS = 10_000;
const PINO_LEVELS = new Set([10, 20, 30, 40, 50, 60]);
const RETRYABLE = new Set([408, 409, 425, 429]);

const KNOWN_OPTIONS = new Set(['url', 'apiKey', 'source', 'batchSize', 'flushIntervalMs', 'maxBufferedLogs', 'maxRetries', 'timeoutMs', 'closeTimeoutMs']);

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${NAME}: option ${name} must be a whole number from ${min} to ${max.toLocaleString('en')} (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** pino adds these to a transport's options itself. */
const FROM_PINO = new Set(['levels', 'dedupe', 'pinoWillSendConfig']);

/** Option names that are neither ours nor pino's: most likely misspelt. */
export function unknownOptions(options: object): string[] {
  return Object.keys(options).filter((key) => !KNOWN_OPTIONS.has(key) && !FROM_PINO.has(key) && !key.startsWith('$'));
}

/** Checks the options and fills in the defaults; throws an Error naming the bad option. */
export function resolveOptions(options: LoglaneTransportOptions | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new Error(`${NAME}: options are required: { url, apiKey }`);
  const { url } = options;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new Error(`${NAME}: option url must be the http(s) address of the Loglane server, e.g. http://localhost:8080 (got ${JSON.stringify(url)})`);
  }
  const apiKey = options.apiKey ?? env.LOGLANE_API_KEY;
  if (typeof apiKey !== 'string' || apiKey.trim() === '') throw new Error(`${NAME}: option apiKey is required (or set LOGLANE_API_KEY in the environment)`);
  const { source } = options;
  if (source !== undefined && (typeof source !== 'string' || source === '' || [...source].length > 200)) {
    throw new Error(`${NAME}: option source must be a non-empty string of at most 200 characters`);
  }
  return {
    url: url.replace(/\/+$/, ''),
    apiKey: apiKey.trim(),
    source,
    batchSize: integer('batchSize', options.batchSize, 500, 1, 10_000),
    flushIntervalMs: integer('flushIntervalMs', options.flushIntervalMs, 1000, 10, 3_600_000),
    maxBufferedLogs: integer('maxBufferedLogs', options.maxBufferedLogs, 10_000, 1, 10_000_000),
    maxRetries: integer('maxRetries', options.maxRetries, 8, 0, 1000),
    timeoutMs: integer('timeoutMs', options.timeoutMs, 10_000, 100, 600_000),
    closeTimeoutMs: integer('closeTimeoutMs', options.closeTimeoutMs, 8000, 0, 9000),
  };
}

/** A first-in first-out queue with O(1) removal at the head (Array#shift is O(n)). */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Removes the oldest item. */
  dropOldest(): void {
    this.items[this.head++] = undefined;
    this.compact();
  }

  /** Removes and returns the oldest `n` items. */
  take(n: number): T[] {
    const out = this.items.slice(this.head, this.head + n) as T[];
    this.head += out.length;
    this.compact();
    return out;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }

  private compact(): void {
    if (this.head === this.items.length) this.clear();
    else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, RETRY_AFTER_CAP_MS);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The queue and the sender. The default export wires it to pino's worker; it is exported for
 * tests and for use without pino.
 */
export class Shipper {
  readonly options: ResolvedOptions;
  /** Logs the server accepted. */
  sent = 0;
  /** Logs given up on: oldest dropped from a full buffer, refused or out of retries, or left at the close deadline. */
  dropped = 0;

  private readonly queue = new Fifo<Line>();
  private sending: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  /** Aborts sleeps and requests when the close deadline passes. */
  private readonly stop = new AbortController();
  private deadline = Infinity;
  private closing: Promise<void> | undefined;
  private warnedKey = false;
  private overflowed = 0;
  private rejected = 0;
  private rejectedSample = '';
  private lastReport = { overflow: 0, rejected: 0 };

  /**
   * `report` writes one line to standard error. The default writes synchronously: in pino's worker
   * thread process.stderr is forwarded to the main thread asynchronously, and a report made while
   * the process exits would be lost.
   */
  constructor(
    options: LoglaneTransportOptions,
    private readonly report: (line: string) => void = (line) => writeSync(2, `${line}\n`),
  ) {
    this.options = resolveOptions(options);
    const unknown = unknownOptions(options);
    if (unknown.length > 0) this.report(`${NAME}: ignored unknown ${unknown.length === 1 ? 'option' : 'options'} ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${[...KNOWN_OPTIONS].join(', ')})`);
    this.timer = setInterval(() => this.tick(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues one log as pino wrote it; never waits. */
  push(line: Line): void {
    if (this.options.source !== undefined && (line.source === undefined || line.source === null)) line.source = this.options.source;
    // The server needs a message: pino writes none for logger.info({ some: 'object' }).
    if ((line.msg === undefined || line.msg === null) && (line.message === undefined || line.message === null) && typeof line.log !== 'string') line.msg = '';
    // pino's `timestamp: false` writes no time: the moment the worker saw it beats the moment of receipt.
    if ((line.time === undefined || line.time === null) && (line.timestamp === undefined || line.timestamp === null)) line.time = Date.now();
    // A custom pino level (e.g. 35) is stored as the standard level at or below it, and kept in metadata.
    if (typeof line.level === 'number' && !PINO_LEVELS.has(line.level) && Number.isFinite(line.level)) {
      line.pinoLevel = line.level;
      line.level = Math.min(60, Math.max(10, Math.floor(line.level / 10) * 10));
    }
    if (this.queue.length >= this.options.maxBufferedLogs) {
      this.queue.dropOldest();
      this.dropped++;
      this.overflowed++;
    }
    this.queue.push(line);
    if (this.queue.length >= this.options.batchSize) this.kick(false);
  }

  private tick(): void {
    this.kick(true);
    this.reportRepeated(false);
  }

  /** Starts the sender if it is idle; `partial` sends a batch smaller than batchSize too. */
  private kick(partial: boolean): void {
    if (this.sending || this.stop.signal.aborted) return;
    if (this.queue.length === 0 || (!partial && this.queue.length < this.options.batchSize)) return;
    this.sending = this.drain(partial).finally(() => {
      this.sending = undefined;
      if (!this.closing && this.queue.length >= this.options.batchSize) this.kick(false);
    });
  }

  private async drain(partial: boolean): Promise<void> {
    while (!this.stop.signal.aborted && (this.queue.length >= this.options.batchSize || (partial && this.queue.length > 0))) {
      const batch = this.queue.take(this.options.batchSize);
      try {
        await this.sendBatch(batch, true);
      } catch (err) {
        // Not expected; but an unhandled rejection would end pino's worker, and with it all logging.
        this.dropped += batch.length;
        this.report(`${NAME}: dropped a batch of ${plural(batch.length, 'log')}: ${this.redact(err instanceof Error ? err.message : String(err))}`);
      }
    }
  }

  /** Sends one batch with retries; whatever happens, the batch is either delivered or counted as dropped. */
  private async sendBatch(batch: Line[], mayHalve: boolean): Promise<void> {
    const json = JSON.stringify(batch);
    const bytes = Buffer.byteLength(json);
    if (bytes > MAX_BODY_BYTES && batch.length > 1) {
      // Over the server's 5 MiB: send it in halves, which is what a 413 would ask for anyway.
      const half = Math.ceil(batch.length / 2);
      await this.sendBatch(batch.slice(0, half), mayHalve);
      await this.sendBatch(batch.slice(half), mayHalve);
      return;
    }
    const body = bytes > GZIP_ABOVE_BYTES ? gzipSync(json) : Buffer.from(json);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-key': this.options.apiKey,
      // The same key on every try of this batch: a retry after a lost 202 is answered from the first.
      'idempotency-key': randomUUID(),
      'user-agent': NAME,
    };
    if (bytes > GZIP_ABOVE_BYTES) headers['content-encoding'] = 'gzip';

    let problem = '';
    let tries = 0;
    for (let attempt = 0; ; attempt++) {
      tries++;
      let wait: number | undefined;
      // One controller per request, for timeoutMs and the close deadline. (AbortSignal.any with the
      // long-lived close signal would keep every request's signal alive: nodejs/node#55351.)
      const request = new AbortController();
      const abort = () => request.abort();
      const timeout = setTimeout(abort, this.options.timeoutMs);
      this.stop.signal.addEventListener('abort', abort);
      try {
        const res = await fetch(`${this.options.url}/v1/logs`, { method: 'POST', headers, body, signal: request.signal });
        if (res.ok) {
          const answer = (await res.json().catch(() => ({}))) as { accepted?: unknown; rejected?: unknown };
          const rejected = Array.isArray(answer.rejected) ? answer.rejected : [];
          this.sent += typeof answer.accepted === 'number' ? answer.accepted : batch.length - rejected.length;
          if (rejected.length > 0) {
            this.dropped += rejected.length;
            this.rejected += rejected.length;
            if (!this.rejectedSample) this.rejectedSample = this.redact(JSON.stringify(rejected.slice(0, 3))).slice(0, 500);
            this.reportRepeated(false);
          }
          return;
        }
        const text = this.redact(await res.text().catch(() => '')).slice(0, 300);
        if (res.status === 413 && mayHalve && batch.length > 1) {
          const half = Math.ceil(batch.length / 2);
          await this.sendBatch(batch.slice(0, half), false);
          await this.sendBatch(batch.slice(half), false);
          return;
        }
        if (res.status === 401) {
          if (!this.warnedKey) this.report(`${NAME}: the server refused the API key (401 INVALID_API_KEY); logs are dropped until the key is fixed.`);
          this.warnedKey = true;
          this.dropped += batch.length;
          return;
        }
        if (res.status < 500 && !RETRYABLE.has(res.status)) {
          this.report(`${NAME}: the server refused a batch of ${plural(batch.length, 'log')} (${res.status}); dropped it: ${text}`);
          this.dropped += batch.length;
          return;
        }
        problem = `HTTP ${res.status}`;
        wait = retryAfterMs(res.headers.get('retry-after'));
      } catch (err) {
        if (this.stop.signal.aborted) {
          problem = 'the close deadline passed';
          break;
        }
        const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
        const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
        problem = err instanceof Error ? `${err.message}${detail ? ` (${detail})` : ''}` : String(err);
        if (request.signal.aborted) problem = `no answer within timeoutMs ${this.options.timeoutMs}`;
        problem = this.redact(problem);
      } finally {
        clearTimeout(timeout);
        this.stop.signal.removeEventListener('abort', abort);
      }
      if (attempt >= this.options.maxRetries) break;
      if (wait === undefined) {
        const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** attempt);
        wait = backoff / 2 + (Math.random() * backoff) / 2;
      } else {
        // Never sooner than Retry-After; a little later, so that many senders do not come back together.
        wait += Math.random() * BACKOFF_START_MS;
      }
      if (Date.now() + wait > this.deadline) {
        problem += '; the close deadline would pass before the next try';
        break;
      }
      await sleep(wait, this.stop.signal);
      if (this.stop.signal.aborted) {
        problem += '; the close deadline passed';
        break;
      }
    }
    this.dropped += batch.length;
    this.report(`${NAME}: dropped a batch of ${plural(batch.length, 'log')} after ${plural(tries, 'try').replace(/trys$/, 'tries')} (${problem}).`);
  }

  /** Reports the problems that can repeat on every line (a full buffer, rejected logs), at most every 10 s unless `now`. */
  private reportRepeated(now: boolean): void {
    const t = Date.now();
    if (this.overflowed > 0 && (now || t - this.lastReport.overflow >= REPORT_EVERY_MS)) {
      this.report(`${NAME}: the buffer was full (maxBufferedLogs ${this.options.maxBufferedLogs}): dropped the ${plural(this.overflowed, 'oldest log')}.`);
      this.overflowed = 0;
      this.lastReport.overflow = t;
    }
    if (this.rejected > 0 && (now || t - this.lastReport.rejected >= REPORT_EVERY_MS)) {
      this.report(`${NAME}: the server refused ${plural(this.rejected, 'log')}, e.g. ${this.rejectedSample}`);
      this.rejected = 0;
      this.rejectedSample = '';
      this.lastReport.rejected = t;
    }
  }

  private redact(text: string): string {
    return text.split(this.options.apiKey).join('[api key]');
  }

  /** Sends everything queued within closeTimeoutMs, then reports what was lost, if anything. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    clearInterval(this.timer);
    this.deadline = Date.now() + this.options.closeTimeoutMs;
    const timer = setTimeout(() => this.stop.abort(), this.options.closeTimeoutMs);
    try {
      while (!this.stop.signal.aborted && (this.sending || this.queue.length > 0)) {
        if (this.sending) await this.sending;
        else this.kick(true);
      }
      // On abort, the batch in flight ends (and is counted) promptly.
      if (this.sending) await this.sending;
    } finally {
      clearTimeout(timer);
    }
    const left = this.queue.length;
    if (left > 0) {
      this.dropped += left;
      this.queue.clear();
      this.report(`${NAME}: ${plural(left, 'log')} still queued when the close deadline (closeTimeoutMs ${this.options.closeTimeoutMs}) passed were dropped.`);
    }
    this.reportRepeated(true);
    if (this.dropped > 0) this.report(`${NAME}: ${plural(this.dropped, 'log')} could not be delivered (${this.sent} delivered).`);
  }
}

/** The transport pino loads in its worker thread: `pino.transport({ target: '@loglane/pino', options })`. */
export default async function loglaneTransport(options: LoglaneTransportOptions) {
  const shipper = new Shipper(options);
  return build(
    async (source: AsyncIterable<Line>) => {
      for await (const line of source) shipper.push(line);
    },
    { close: async () => shipper.close() },
  );
}
