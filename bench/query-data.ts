/**
 * Rows for the query benchmark, generated straight in the columns of Loglane's `logs` table (no
 * JSON round trip): a seeded mix of levels, sources and message shapes, so every run loads the
 * same data (apart from the timestamps, which end at the time of the run).
 *
 * Besides the common words ("timeout" is in ~2 % of the messages), a rare token, RARE_TERM, is
 * planted at fixed positions (rarePlantIndices): 10 logs in the last hour, 10 more in the rest of
 * the last 24 hours and 10 in the older rest, whatever the size. A search for it matches a handful
 * of logs, so it must read its whole time range, where a search for a common word fills its first
 * page after a few thousand rows.
 */
import { seededRandom } from './logs.js';

/** One log in the columns the bulk loaders write; project_id, seq and received_at are the loader's. */
export interface QueryRow {
  ts: number;
  level: number;
  source: string;
  message: string;
  metadata: string;
}

/** Level index (0 trace … 5 fatal) → share of the logs. */
const LEVEL_SHARES: readonly [number, number][] = [
  [0, 0.05],
  [1, 0.15],
  [2, 0.6],
  [3, 0.12],
  [4, 0.07],
  [5, 0.01],
];

/** Source → share of the logs. */
const SOURCE_SHARES: readonly [string, number][] = [
  ['api', 0.3],
  ['web', 0.15],
  ['worker', 0.15],
  ['auth', 0.1],
  ['search', 0.1],
  ['billing', 0.08],
  ['mailer', 0.07],
  ['cron', 0.05],
];

export const SOURCES = SOURCE_SHARES.map(([s]) => s);

/** Planted in a few logs only (a request id that a handful of log lines share). */
export const RARE_TERM = 'req_c0ffee5eed42d00d';
/** An RE2 pattern that matches exactly the logs holding RARE_TERM. */
export const RARE_PATTERN = 'req_c0ffee[0-9a-f]{10}';
/** A request id (metadata `reqId`, and `req=` in api and web messages) held by exactly NEEDLE_LOGS logs, spread over the whole range. */
export const NEEDLE_REQ_ID = 'req_5eed1e5eed1e5eed';
export const NEEDLE_LOGS = 5;
/** A request id no log holds. */
export const ABSENT_REQ_ID = 'req_0000000000000000';

/** How many logs get RARE_TERM per range: [newest - 1 h, newest], [-24 h, -1 h), older. */
export const RARE_PER_RANGE = 10;
const HOUR_MS = 3_600_000;

/**
 * The indices (0-based, oldest first) of the logs that get RARE_TERM in a run of `total` logs
 * spread evenly over [startMs, endMs]: RARE_PER_RANGE evenly spaced in each range (fewer when the
 * logs are so sparse that two land on the same log or a range is empty).
 */
export function rarePlantIndices(total: number, startMs: number, endMs: number): number[] {
  if (total <= 1) return [];
  const span = endMs - startMs;
  const ranges: [number, number][] = [
    [0, HOUR_MS],
    [HOUR_MS, 24 * HOUR_MS],
    [24 * HOUR_MS, span],
  ];
  const out = new Set<number>();
  for (const [near, far] of ranges) {
    const hi = Math.min(far, span);
    if (hi <= near) continue;
    for (let k = 0; k < RARE_PER_RANGE; k++) {
      const age = near + ((k + 0.5) * (hi - near)) / RARE_PER_RANGE;
      out.add(Math.min(total - 1, Math.max(0, Math.round(((span - age) * (total - 1)) / span))));
    }
  }
  return [...out].sort((a, b) => a - b);
}

export const MIN_MESSAGE = 150;
export const MAX_MESSAGE = 250;

const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-southeast-1'];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE'];
const PATHS = ['/v1/orders/{id}', '/v1/customers/{id}/invoices', '/v1/search?q=shoes&page={n}', '/v1/cart/{id}/items', '/v1/products/{id}', '/v1/checkout/{id}/confirm', '/v1/users/{id}/preferences'];
const PAGES = ['/', '/pricing', '/docs/getting-started', '/account/billing', '/blog/{n}', '/products/{id}', '/checkout'];
const AGENTS = ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15', 'okhttp/4.12.0', 'python-requests/2.31.0', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Gecko/20100101 Firefox/126.0', 'curl/8.5.0'];
const UPSTREAMS = ['payments-svc', 'inventory-svc', 'postgres-primary', 'redis-cache', 'search-cluster', 'tax-api'];
const JOBS = ['send-email', 'resize-image', 'sync-crm', 'rebuild-search-index', 'export-report', 'charge-subscription'];
const QUEUES = ['default', 'low', 'critical'];
const JOB_ERRORS = ['connection reset by peer', 'timeout waiting for lock on orders', 'upstream returned 503', 'deadline exceeded (timeout 30s)', 'out of memory in image decoder', 'unique constraint violation on external_id'];
const CRON_TASKS = ['cleanup-sessions', 'rotate-logs', 'refresh-exchange-rates', 'send-digest', 'expire-trials', 'vacuum-uploads'];
const TEMPLATES = ['welcome', 'password-reset', 'invoice', 'weekly-digest', 'trial-ending', 'login-alert'];
const TERMS = ['running shoes', 'red dress', 'usb-c cable', 'standing desk', 'noise cancelling headphones', 'coffee grinder', 'yoga mat'];
const DECLINES = ['card_declined', 'insufficient_funds', 'expired_card', 'processing_error', 'authentication_required'];

const HEX_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Cumulative shares, for picking by one random number. */
function cumulative<T>(shares: readonly [T, number][]): { values: T[]; bounds: number[] } {
  let sum = 0;
  const bounds = shares.map(([, share]) => (sum += share));
  return { values: shares.map(([v]) => v), bounds: bounds.map((b) => b / sum) };
}

/**
 * Generates logs `from`…`from + count - 1` of a run of `total` logs spread evenly over
 * [startMs, endMs], oldest first; the same seed and index always give the same log.
 * Generated in chunks so a million rows never sit in memory at once.
 */
export class LogGenerator {
  private readonly rand: () => number;
  private readonly levels = cumulative(LEVEL_SHARES);
  private readonly sources = cumulative(SOURCE_SHARES);
  private next = 0;
  /** Logs whose message contains "timeout" (what the q=timeout search finds). */
  timeoutMatches = 0;
  /** Logs at level error from source api (what the level+source page finds). */
  errorApiMatches = 0;
  /** The indices of the logs that hold RARE_TERM. */
  readonly rareIndices: number[];
  private readonly rare: Set<number>;

  constructor(
    seed: number,
    private readonly total: number,
    private readonly startMs: number,
    private readonly endMs: number,
  ) {
    this.rand = seededRandom(seed);
    this.rareIndices = rarePlantIndices(total, startMs, endMs);
    this.rare = new Set(this.rareIndices);
    this.needles = new Set(Array.from({ length: Math.min(NEEDLE_LOGS, total) }, (_, k) => Math.floor(((k + 0.5) * total) / NEEDLE_LOGS)));
  }

  /** The logs whose request id is NEEDLE_REQ_ID. */
  readonly needles: Set<number>;

  /** How many of the logs have ts >= fromMs (binary search over the even spread). */
  countSince(fromMs: number): number {
    let lo = 0;
    let hi = this.total;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tsOf(mid) >= fromMs) hi = mid;
      else lo = mid + 1;
    }
    return this.total - lo;
  }

  /** How many logs with ts >= fromMs hold RARE_TERM. */
  rareSince(fromMs: number): number {
    return this.rareIndices.filter((i) => this.tsOf(i) >= fromMs).length;
  }

  /** The ts of log `index` (0-based): evenly spread, increasing with the index, the last at endMs. */
  tsOf(index: number): number {
    if (this.total <= 1) return this.endMs;
    return this.startMs + Math.floor((index * (this.endMs - this.startMs)) / (this.total - 1));
  }

  /** The next `count` logs (fewer at the end). */
  take(count: number): QueryRow[] {
    const rows: QueryRow[] = [];
    const end = Math.min(this.total, this.next + count);
    for (; this.next < end; this.next++) rows.push(this.one(this.next));
    return rows;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.rand() * (max - min + 1));
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }

  private pickShare<T>(c: { values: T[]; bounds: number[] }): T {
    const r = this.rand();
    const i = c.bounds.findIndex((b) => r < b);
    return c.values[i < 0 ? c.values.length - 1 : i]!;
  }

  /** `chars` hex digits, 8 per random number (a table lookup per byte: this is the generator's hot spot). */
  private hex(chars: number): string {
    let out = '';
    while (out.length < chars) {
      const u = (this.rand() * 0x100000000) >>> 0;
      out += HEX_BYTE[u >>> 24]! + HEX_BYTE[(u >>> 16) & 0xff]! + HEX_BYTE[(u >>> 8) & 0xff]! + HEX_BYTE[u & 0xff]!;
    }
    return out.length === chars ? out : out.slice(0, chars);
  }

  private ip(): string {
    return `10.${this.int(0, 255)}.${this.int(0, 255)}.${this.int(1, 254)}`;
  }

  private one(index: number): QueryRow {
    const ts = this.tsOf(index);
    const level = this.pickShare(this.levels);
    const source = this.pickShare(this.sources);
    const bad = level >= 4;
    const warn = level === 3;
    const durationMs = bad ? this.int(50, 30_000) : warn ? this.int(800, 5000) : this.int(1, 400);
    const drawn = `req_${this.hex(16)}`;
    const requestId = this.needles.has(index) ? NEEDLE_REQ_ID : drawn;
    let status = bad ? this.pick([500, 502, 503, 504]) : warn ? this.pick([200, 404, 409, 429]) : this.pick([200, 200, 200, 201, 204, 304]);
    let message: string;
    // The request's route, as pino-http and OpenTelemetry record it (no ids, no query string).
    let route: string | undefined;
    switch (source) {
      case 'api': {
        const template = this.pick(PATHS);
        route = template.replace(/\/\{id\}.*$/, '').replace(/\?.*$/, '');
        const path = template.replace('{id}', String(this.int(1000, 999_999))).replace('{n}', String(this.int(1, 40)));
        const line = `${this.pick(METHODS)} ${path} ${status} ${this.int(120, 48_000)}B ${durationMs}ms ip=${this.ip()} ua="${this.pick(AGENTS)}" req=${requestId}`;
        message = bad
          ? `${line} error="${this.rand() < 0.35 ? `upstream timeout after ${durationMs} ms calling ${this.pick(UPSTREAMS)}` : `unhandled ${this.pick(['TypeError', 'DatabaseError', 'ValidationError'])} in handler`}"`
          : line;
        break;
      }
      case 'web': {
        const template = this.pick(PAGES);
        route = template.replace(/\/\{(id|n)\}$/, '');
        const page = template.replace('{id}', String(this.int(1000, 99_999))).replace('{n}', String(this.int(1, 300)));
        message = `${bad ? 'render failed' : 'rendered'} ${page} ${status} in ${durationMs}ms session=sess_${this.hex(12)} ip=${this.ip()} ua="${this.pick(AGENTS)}"`;
        break;
      }
      case 'worker': {
        const job = `job ${this.pick(JOBS)} id=job_${this.hex(12)}`;
        message = bad
          ? `${job} failed on attempt ${this.int(1, 5)}/5 after ${durationMs} ms: ${this.pick(JOB_ERRORS)}; will retry in ${this.int(5, 600)} s`
          : level <= 1
            ? `${job} picked up by worker-${this.int(1, 16)} (queue=${this.pick(QUEUES)}, depth=${this.int(0, 4000)}, waited ${this.int(0, 9000)} ms)`
            : `${job} finished in ${durationMs} ms (queue=${this.pick(QUEUES)}, waited ${this.int(0, 9000)} ms, attempts=${this.int(1, 3)})`;
        status = 0;
        break;
      }
      case 'auth':
        message = bad || warn
          ? `login failed for user usr_${this.hex(12)} from ${this.ip()}: ${this.pick(['wrong password', 'unknown email', 'mfa code expired', 'account locked'])} (${this.int(1, 9)} recent failures)`
          : `login succeeded for user usr_${this.hex(12)} (mfa=${this.pick(['totp', 'webauthn', 'none'])}) from ${this.ip()} in ${durationMs} ms`;
        break;
      case 'search': {
        const term = this.pick(TERMS);
        message = bad
          ? `search query="${term}" index=products failed: shard ${this.int(0, 4)} timeout after ${durationMs} ms (partial results: ${this.int(0, 4)}/5 shards)`
          : `search query="${term}" index=products hits=${this.int(0, 5000)} took=${durationMs}ms shards=5/5 page=${this.int(1, 10)}${warn ? ' slow=true' : ''}`;
        break;
      }
      case 'billing':
        message = bad
          ? `charge for invoice inv_${this.hex(10)} (customer cus_${this.hex(10)}) declined: ${this.pick(DECLINES)}, amount ${this.int(5, 900)}.00 EUR`
          : `invoice inv_${this.hex(10)} for customer cus_${this.hex(10)} charged ${this.int(5, 900)}.${String(this.int(0, 99)).padStart(2, '0')} EUR in ${durationMs} ms`;
        break;
      case 'mailer':
        message = bad
          ? `sending ${this.pick(TEMPLATES)} email to u${this.int(1, 99_999)}@example.com failed: ${this.pick(['smtp timeout after 30s', '550 mailbox unavailable', 'rate limited by provider'])}`
          : `sent ${this.pick(TEMPLATES)} email to u${this.int(1, 99_999)}@example.com message_id=<${this.hex(16)}@mail.example.com> in ${durationMs} ms`;
        break;
      default: {
        const task = this.pick(CRON_TASKS);
        message = bad
          ? `cron ${task} run ${this.hex(8)} failed after ${durationMs} ms: ${this.pick(JOB_ERRORS)}`
          : `cron ${task} run ${this.hex(8)} ${level <= 1 ? 'started' : `finished in ${durationMs} ms, ${this.int(0, 20_000)} items processed`}`;
        status = 0;
      }
    }
    // Real lines carry trace context and the like: pad to a length in [MIN_MESSAGE, MAX_MESSAGE].
    const target = this.int(MIN_MESSAGE, MAX_MESSAGE);
    if (message.length < target) message += ` trace_id=${this.hex(32)} span_id=${this.hex(16)} host=${source}-${this.int(1, 12)}.${this.pick(REGIONS)}.internal`;
    if (message.length > target) message = message.slice(0, target).trimEnd();
    if (this.rare.has(index)) message = `${message.slice(0, target - RARE_TERM.length - 5).replace(/\s+\S*$/, '')} req=${RARE_TERM}`;
    if (message.includes('timeout')) this.timeoutMatches++;
    if (level === 4 && source === 'api') this.errorApiMatches++;

    // pino-http's shape: the request id, the route and the response's status code, nested.
    const http = route === undefined ? '' : `,"path":"${route}","res":{"statusCode":${status}}`;
    const metadata = `{"host":"${source}-${this.int(1, 12)}","region":"${this.pick(REGIONS)}","reqId":"${requestId}","responseTime":${durationMs}${http}}`;
    return { ts, level, source, message, metadata };
  }
}
