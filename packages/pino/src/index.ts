/**
 * @loglane/pino: a pino transport that ships logs to Loglane.
 *
 *   pino(pino.transport({ target: '@loglane/pino', options: { url: 'http://localhost:8080', apiKey } }))
 *
 * pino runs it in a worker thread. Lines are queued in memory as they come, so the application is
 * never held up by the network; the queue is bounded, and past `maxBufferedLogs` the oldest lines
 * are dropped and counted. Batches go to POST /v1/logs, gzipped, one request at a time in order,
 * each with its own Idempotency-Key so a retry never stores a batch twice. Network errors, 429 and
 * 5xx are retried with exponential backoff and jitter, waiting `Retry-After` when the server gives
 * it. When pino closes the transport (the process exits, or `logger.flush()` then exit), what is
 * queued is sent before the worker ends.
 */
import { randomUUID } from 'node:crypto';
import { writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import build from 'pino-abstract-transport';

export interface LoglaneTransportOptions {
  /** The Loglane server, e.g. `http://localhost:8080`. */
  url: string;
  /** The project API key; LOGLANE_API_KEY when omitted. */
  apiKey?: string;
  /** Set as `source` on lines that have none. */
  source?: string;
  /** Logs per request (default 500, at most 10,000). */
  batchSize?: number;
  /** A partial batch is sent after this long (default 1,000 ms). */
  flushIntervalMs?: number;
  /** Lines kept in memory while the server is slow or away (default 10,000); the oldest go first. */
  maxBufferedLogs?: number;
  /** Tries per batch before it is dropped (default 8). */
  maxRetries?: number;
  /** Per request (default 10,000 ms). */
  timeoutMs?: number;
  /** How long closing may take to send what is queued (default 10,000 ms). */
  closeTimeoutMs?: number;
}

type Resolved = Required<Omit<LoglaneTransportOptions, 'source'>> & { source: string | undefined };

function positiveInt(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) throw new Error(`@loglane/pino: ${name} must be an integer from 1 to ${max} (got ${String(value)})`);
  return value;
}

export function resolveOptions(o: LoglaneTransportOptions): Resolved {
  if (!o || typeof o.url !== 'string' || !/^https?:\/\//.test(o.url)) throw new Error('@loglane/pino: url must be the http(s) address of the Loglane server, e.g. http://localhost:8080');
  const apiKey = o.apiKey ?? process.env.LOGLANE_API_KEY;
  if (!apiKey) throw new Error('@loglane/pino: apiKey is required (or set LOGLANE_API_KEY)');
  return {
    url: o.url.replace(/\/+$/, ''),
    apiKey,
    source: o.source,
    batchSize: positiveInt('batchSize', o.batchSize, 500, 10_000),
    flushIntervalMs: positiveInt('flushIntervalMs', o.flushIntervalMs, 1000, 3_600_000),
    maxBufferedLogs: positiveInt('maxBufferedLogs', o.maxBufferedLogs, 10_000, 10_000_000),
    maxRetries: positiveInt('maxRetries', o.maxRetries, 8, 1000),
    timeoutMs: positiveInt('timeoutMs', o.timeoutMs, 10_000, 600_000),
    closeTimeoutMs: positiveInt('closeTimeoutMs', o.closeTimeoutMs, 10_000, 600_000),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The queue and the sender; exported for tests and for use without pino's worker. */
export class Shipper {
  readonly options: Resolved;
  private queue: Record<string, unknown>[] = [];
  private sending: Promise<void> | undefined;
  private timer: NodeJS.Timeout;
  private deadline = Infinity;
  private warnedKey = false;
  dropped = 0;
  sent = 0;

  // Written synchronously: in pino's worker thread, process.stderr is forwarded to the main thread
  // asynchronously, and a report made while the process exits would be lost.
  constructor(options: LoglaneTransportOptions, private readonly report: (line: string) => void = (l) => writeSync(2, `${l}\n`)) {
    this.options = resolveOptions(options);
    this.timer = setInterval(() => this.kick(true), this.options.flushIntervalMs);
    this.timer.unref();
  }

  push(line: Record<string, unknown>): void {
    if (this.options.source !== undefined && line.source === undefined) line.source = this.options.source;
    if (this.queue.length >= this.options.maxBufferedLogs) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push(line);
    if (this.queue.length >= this.options.batchSize) this.kick(false);
  }

  /** Starts the sender if idle; `all` sends a partial batch too. */
  private kick(all: boolean): void {
    if (this.sending) return;
    if (this.queue.length === 0 || (!all && this.queue.length < this.options.batchSize)) return;
    this.sending = this.drain(all).finally(() => {
      this.sending = undefined;
      if (this.queue.length >= this.options.batchSize) this.kick(false);
    });
  }

  private async drain(all: boolean): Promise<void> {
    while (this.queue.length >= this.options.batchSize || (all && this.queue.length > 0)) {
      await this.sendBatch(this.queue.splice(0, this.options.batchSize));
      if (Date.now() > this.deadline) return;
    }
  }

  private async sendBatch(batch: Record<string, unknown>[], split = true): Promise<void> {
    const key = randomUUID();
    const json = Buffer.from(JSON.stringify(batch));
    const body = json.length > 1024 ? gzipSync(json) : json;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': this.options.apiKey, 'idempotency-key': key, 'user-agent': '@loglane/pino' };
    if (body !== json) headers['content-encoding'] = 'gzip';
    let problem = '';
    for (let attempt = 1; attempt <= this.options.maxRetries; attempt++) {
      let retryAfterMs: number | undefined;
      try {
        const res = await fetch(`${this.options.url}/v1/logs`, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.options.timeoutMs) });
        if (res.status === 202) {
          const answer = (await res.json().catch(() => ({}))) as { accepted?: number; rejected?: unknown[] };
          this.sent += answer.accepted ?? batch.length;
          if (answer.rejected?.length) this.report(`@loglane/pino: the server refused ${answer.rejected.length} of ${batch.length} logs: ${JSON.stringify(answer.rejected.slice(0, 3))}`);
          return;
        }
        const text = await res.text().catch(() => '');
        if (res.status === 413 && split && batch.length > 1) {
          const half = Math.ceil(batch.length / 2);
          await this.sendBatch(batch.slice(0, half), false);
          await this.sendBatch(batch.slice(half), false);
          return;
        }
        if (res.status === 401) {
          if (!this.warnedKey) this.report('@loglane/pino: the server refused the API key (401 INVALID_API_KEY); logs are dropped until the key is fixed.');
          this.warnedKey = true;
          this.dropped += batch.length;
          return;
        }
        if (res.status < 500 && res.status !== 429 && res.status !== 408) {
          this.report(`@loglane/pino: the server refused a batch of ${batch.length} logs (${res.status}): ${text.slice(0, 300)}`);
          this.dropped += batch.length;
          return;
        }
        problem = `${res.status}`;
        const ra = Number(res.headers.get('retry-after'));
        if (Number.isFinite(ra) && ra >= 0) retryAfterMs = ra * 1000;
      } catch (err) {
        problem = err instanceof Error ? err.message : String(err);
      }
      if (attempt === this.options.maxRetries) break;
      const backoff = Math.min(30_000, 250 * 2 ** (attempt - 1));
      const wait = retryAfterMs ?? backoff * (0.5 + Math.random() / 2);
      if (Date.now() + wait > this.deadline) break;
      await sleep(wait);
    }
    this.dropped += batch.length;
    this.report(`@loglane/pino: dropped a batch of ${batch.length} logs after retries (${problem}).`);
  }

  /** Sends everything queued, within closeTimeoutMs; then reports what was lost, if anything. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.deadline = Date.now() + this.options.closeTimeoutMs;
    while (Date.now() < this.deadline && (this.sending || this.queue.length > 0)) {
      if (this.sending) await this.sending;
      else this.kick(true);
    }
    if (this.queue.length > 0) {
      this.dropped += this.queue.length;
      this.queue = [];
    }
    if (this.dropped > 0) this.report(`@loglane/pino: ${this.dropped} logs could not be delivered.`);
  }
}

/** The transport pino loads in its worker thread. */
export default async function loglaneTransport(options: LoglaneTransportOptions) {
  const shipper = new Shipper(options);
  return build(
    async (source: AsyncIterable<Record<string, unknown>>) => {
      for await (const line of source) shipper.push(line);
    },
    { close: async () => shipper.close() },
  );
}
