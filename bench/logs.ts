/**
 * Realistic log lines for the ingest benchmark, shared by the HTTP run and the raw-insert run so
 * both store the same rows. Seeded, so every run sends the same data.
 */
import { parseLevel } from '../src/features/logs/levels.js';

/** A log as a client sends it to POST /v1/logs. */
export interface BenchLog {
  timestamp: string;
  level: string;
  source: string;
  message: string;
  metadata: { host: string; region: string; requestId: string; durationMs: number; status: number };
}

/** The same log in the columns of the raw-insert table (and of Loglane's own `logs` table). */
export interface RawRow {
  ts: number;
  level: number;
  source: string;
  message: string;
  metadata: string;
}

/** mulberry32: a tiny seeded PRNG, good enough for test data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SOURCES = ['api', 'web', 'worker', 'billing', 'auth'] as const;
const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-southeast-1'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const PATHS = ['/v1/orders/{id}', '/v1/customers/{id}/invoices', '/v1/search?q=shoes&page={n}', '/v1/cart/{id}/items', '/healthz', '/v1/products/{id}'];
const AGENTS = ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15', 'okhttp/4.12.0', 'python-requests/2.31.0', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Gecko/20100101'];
const JOBS = ['send-email', 'resize-image', 'sync-crm', 'rebuild-search-index', 'export-report'];

export function generateLogs(count: number, seed: number, startMs: number, stepMs: number): BenchLog[] {
  const rand = seededRandom(seed);
  const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const hex = (chars: number) => Array.from({ length: chars }, () => Math.floor(rand() * 16).toString(16)).join('');

  const logs: BenchLog[] = [];
  for (let i = 0; i < count; i++) {
    const roll = rand();
    // 70 % info, 15 % debug, 10 % warn, 5 % error.
    const level = roll < 0.7 ? 'info' : roll < 0.85 ? 'debug' : roll < 0.95 ? 'warn' : 'error';
    const source = pick(SOURCES);
    const durationMs = level === 'warn' ? int(800, 5000) : int(1, 400);
    let status = level === 'error' ? pick([500, 502, 504]) : level === 'warn' ? pick([200, 429, 404]) : pick([200, 200, 200, 201, 204, 304]);
    let message: string;
    switch (source) {
      case 'api':
      case 'web': {
        const path = pick(PATHS).replace('{id}', String(int(1000, 999_999))).replace('{n}', String(int(1, 40)));
        message = `${pick(METHODS)} ${path} ${status} ${int(120, 48_000)}B ${durationMs}ms ip=10.${int(0, 255)}.${int(0, 255)}.${int(1, 254)} ua="${pick(AGENTS)}"`;
        break;
      }
      case 'worker':
        message = level === 'error'
          ? `job ${pick(JOBS)} id=job_${hex(12)} failed on attempt ${int(1, 5)}/5 after ${durationMs} ms: connection reset by peer`
          : `job ${pick(JOBS)} id=job_${hex(12)} finished in ${durationMs} ms (queue=${pick(['default', 'low', 'critical'])}, waited ${int(0, 9000)} ms)`;
        status = 0;
        break;
      case 'billing':
        message = level === 'error'
          ? `charge for invoice inv_${hex(10)} (customer cus_${hex(10)}) declined: card_declined, amount ${int(5, 900)}.00 EUR`
          : `invoice inv_${hex(10)} for customer cus_${hex(10)} charged ${int(5, 900)}.${String(int(0, 99)).padStart(2, '0')} EUR in ${durationMs} ms`;
        break;
      case 'auth':
        message = level === 'warn' || level === 'error'
          ? `login failed for user usr_${hex(12)} from 10.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}: wrong password (${int(1, 9)} recent failures)`
          : `login succeeded for user usr_${hex(12)} (mfa=${pick(['totp', 'webauthn', 'none'])}) in ${durationMs} ms`;
        break;
    }
    logs.push({
      timestamp: new Date(startMs + i * stepMs + int(0, stepMs)).toISOString(),
      level,
      source,
      message,
      metadata: { host: `${source}-${int(1, 12)}`, region: pick(REGIONS), requestId: `req_${hex(16)}`, durationMs, status },
    });
  }
  return logs;
}

/** What the server stores for a log (see normaliseLog): epoch ms, level index, metadata as JSON text. */
export function toRawRow(log: BenchLog): RawRow {
  return { ts: Date.parse(log.timestamp), level: parseLevel(log.level)!, source: log.source, message: log.message, metadata: JSON.stringify(log.metadata) };
}

/**
 * A pre-serialised request body whose timestamps are rewritten for each send, so the load looks
 * like a live stream: each batch holds the logs of the last `spanMs` before it was sent, as a
 * shipper's batch does, while the client does no JSON work (a copy of the bytes and a 24-byte
 * write per log). Where timestamps land matters: batches that each spread over a minute or more,
 * all overlapping, insert all over the time indexes and cost SQLite several times more than a
 * live stream (see docs/benchmarks.md).
 */
export class LiveBody {
  readonly #template: Buffer;
  /** Byte offset of each log's ISO timestamp, and how long before the batch's newest log it is. */
  readonly #offsets: number[] = [];
  readonly #lags: number[] = [];

  constructor(logs: BenchLog[], spanMs = 1000) {
    this.#template = Buffer.from(JSON.stringify(logs));
    let from = 0;
    for (const [i, log] of logs.entries()) {
      const at = this.#template.indexOf(`"timestamp":"${log.timestamp}"`, from);
      if (at < 0 || log.timestamp.length !== 24) throw new Error('LiveBody: a timestamp is not a 24-character ISO string');
      this.#offsets.push(at + 13);
      this.#lags.push(logs.length > 1 ? Math.round(((logs.length - 1 - i) * spanMs) / (logs.length - 1)) : 0);
      from = at + 13 + 24;
    }
  }

  get length(): number {
    return this.#template.length;
  }

  /** The body with its newest log stamped `now` and the others as far before it as they were. */
  at(now: number): Buffer {
    const body = Buffer.from(this.#template);
    let cached = Number.NaN;
    let iso = '';
    for (let i = 0; i < this.#offsets.length; i++) {
      const ts = now - this.#lags[i]!;
      if (ts !== cached) {
        cached = ts;
        iso = new Date(ts).toISOString();
      }
      body.write(iso, this.#offsets[i]!, 'latin1');
    }
    return body;
  }
}
