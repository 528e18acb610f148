/**
 * Realistic logs for the storage and codec benchmarks (issue 27): what a fleet of Node services
 * logging with pino and pino-http sends, about 400 bytes of NDJSON per log. Seeded, so every run
 * makes the same logs.
 *
 * The mix, by count: about 52 % pino-http "request completed" lines (request, headers, remote
 * address, status, response time), about 44 % application lines from 48 message templates with
 * ids, amounts, durations and counts in them, and about 4 % errors with a multi-line stack. Each
 * comes from one of 12 services. bench/logs.ts's logs are shorter and more uniform; these are
 * for measuring how well logs compress, where uniform data would flatter every codec.
 *
 * Logs are in the shape POST /v1/logs takes: pino's `level`, `time` and `msg` as `level`,
 * `timestamp` and `message`, the service as `source`, every other field in `metadata`.
 */
import { seededRandom } from './logs.js';

export interface RealisticLog {
  timestamp: string;
  level: string;
  source: string;
  message: string;
  metadata: Record<string, unknown>;
}

export interface RealisticBatch {
  logs: RealisticLog[];
  /** The logs as NDJSON, one line each with its newline: what a shipper sends. */
  ndjson: Buffer;
}

const SERVICES = ['api-gateway', 'orders', 'payments', 'users', 'auth', 'inventory', 'search', 'notifications', 'shipping', 'billing', 'catalog', 'jobs'] as const;
const ROUTES: { method: string; path: string }[] = [
  { method: 'GET', path: '/v1/orders/{id}' },
  { method: 'GET', path: '/v1/orders?customer={id}&page={n}' },
  { method: 'POST', path: '/v1/orders' },
  { method: 'PATCH', path: '/v1/orders/{id}' },
  { method: 'GET', path: '/v1/customers/{id}' },
  { method: 'GET', path: '/v1/customers/{id}/invoices' },
  { method: 'POST', path: '/v1/payments/{id}/capture' },
  { method: 'GET', path: '/v1/products/{id}' },
  { method: 'GET', path: '/v1/products?category={word}&page={n}' },
  { method: 'GET', path: '/v1/search?q={word}&limit=20' },
  { method: 'POST', path: '/v1/cart/{id}/items' },
  { method: 'DELETE', path: '/v1/cart/{id}/items/{id}' },
  { method: 'GET', path: '/v1/shipments/{id}/tracking' },
  { method: 'POST', path: '/v1/auth/login' },
  { method: 'POST', path: '/v1/auth/refresh' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/metrics' },
];
const WORDS = ['shoes', 'jacket', 'lamp', 'desk', 'chair', 'phone', 'charger', 'socks', 'kettle', 'bike', 'tent', 'watch'];
const AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'okhttp/4.12.0',
  'python-requests/2.31.0',
  'Go-http-client/1.1',
  'kube-probe/1.29',
];
const HOSTS = ['api.shop.example.com', 'internal.shop.example.com'];
const ERROR_TYPES = [
  { type: 'Error', message: 'connect ECONNREFUSED 10.0.{n}.{n}:5432' },
  { type: 'TypeError', message: "Cannot read properties of undefined (reading '{word}')" },
  { type: 'TimeoutError', message: 'operation timed out after {ms} ms' },
  { type: 'ValidationError', message: 'order ord_{hex} has no shipping address' },
  { type: 'FetchError', message: 'request to http://inventory:8080/v1/stock/{id} failed, reason: socket hang up' },
  { type: 'PaymentError', message: 'card declined for customer cus_{hex}: insufficient_funds' },
];
const FRAMES = [
  'at OrderService.create (/app/dist/services/order-service.js:{line}:{col})',
  'at async Object.handler (/app/dist/routes/orders.js:{line}:{col})',
  'at PaymentClient.capture (/app/dist/clients/payment-client.js:{line}:{col})',
  'at Pool.query (/app/node_modules/pg-pool/index.js:{line}:{col})',
  'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  'at InventoryClient.reserve (/app/dist/clients/inventory-client.js:{line}:{col})',
  'at Object.onResponse (/app/node_modules/undici/lib/core/request.js:{line}:{col})',
  'at preHandlerCallback (/app/node_modules/fastify/lib/handleRequest.js:{line}:{col})',
  'at validate (/app/dist/lib/validate.js:{line}:{col})',
  'at Worker.run (/app/dist/jobs/worker.js:{line}:{col})',
];

/**
 * Application message templates: the level they are logged at, the text with placeholders, and
 * the structured fields beside it (pino's `log.info({orderId, ...}, 'text')`).
 */
type Fields = Record<string, string>;
const TEMPLATES: { level: string; text: string; fields?: Fields }[] = [
  { level: 'info', text: 'order {order} created for customer {customer} ({count} items, {amount} EUR)', fields: { orderId: '{order}', customerId: '{customer}' } },
  { level: 'info', text: 'order {order} paid', fields: { orderId: '{order}', paymentId: 'pay_{hex}' } },
  { level: 'info', text: 'order {order} shipped with {carrier}', fields: { orderId: '{order}', carrier: '{carrier}', trackingNumber: '{tracking}' } },
  { level: 'info', text: 'order {order} cancelled by customer', fields: { orderId: '{order}', reason: '{reason}' } },
  { level: 'info', text: 'user {user} logged in', fields: { userId: '{user}', mfa: '{mfa}' } },
  { level: 'info', text: 'user {user} logged out', fields: { userId: '{user}' } },
  { level: 'warn', text: 'login failed for {email}: wrong password ({count} recent failures)', fields: { email: '{email}', ip: '{ip}' } },
  { level: 'info', text: 'password reset requested for {email}', fields: { email: '{email}' } },
  { level: 'info', text: 'session {session} refreshed', fields: { userId: '{user}', sessionId: '{session}' } },
  { level: 'info', text: 'invoice {invoice} issued for {amount} EUR', fields: { invoiceId: '{invoice}', customerId: '{customer}' } },
  { level: 'info', text: 'charge of {amount} EUR captured in {ms} ms', fields: { paymentId: 'pay_{hex}', provider: '{provider}' } },
  { level: 'warn', text: 'charge of {amount} EUR declined: {decline}', fields: { paymentId: 'pay_{hex}', customerId: '{customer}', provider: '{provider}' } },
  { level: 'info', text: 'refund of {amount} EUR issued for order {order}', fields: { orderId: '{order}' } },
  { level: 'debug', text: 'stock for sku {sku} is {count}', fields: { sku: '{sku}', warehouse: '{warehouse}' } },
  { level: 'info', text: 'reserved {count} units of {sku} for order {order}', fields: { sku: '{sku}', orderId: '{order}', warehouse: '{warehouse}' } },
  { level: 'warn', text: 'stock for sku {sku} below threshold ({count} left)', fields: { sku: '{sku}', warehouse: '{warehouse}' } },
  { level: 'debug', text: 'cache hit for {cachekey}', fields: { cache: 'redis', ttlS: '{n}' } },
  { level: 'debug', text: 'cache miss for {cachekey}, loading from database', fields: { cache: 'redis' } },
  { level: 'debug', text: 'query took {ms} ms: select * from orders where customer_id = $1 limit 50', fields: { rows: '{count}' } },
  { level: 'warn', text: 'slow query ({ms} ms) on table {table}', fields: { table: '{table}', rows: '{count}' } },
  { level: 'info', text: 'search for "{word}" answered {count} hits in {ms} ms', fields: { query: '{word}', page: '{n}' } },
  { level: 'debug', text: 'search index segment {n} merged in {ms} ms', fields: { docs: '{count}' } },
  { level: 'info', text: 'email "{mail}" sent to {email}', fields: { template: '{mail}', messageId: '<{hex}@mail.shop.example.com>' } },
  { level: 'info', text: 'push notification sent to {count} devices of user {user}', fields: { userId: '{user}' } },
  { level: 'warn', text: 'email to {email} bounced: mailbox full', fields: { email: '{email}' } },
  { level: 'info', text: 'shipment {shipment} label printed ({carrier})', fields: { shipmentId: '{shipment}', carrier: '{carrier}' } },
  { level: 'info', text: 'shipment {shipment} delivered', fields: { shipmentId: '{shipment}', trackingNumber: '{tracking}' } },
  { level: 'warn', text: 'carrier {carrier} answered 503, retrying in {n} s', fields: { attempt: '{n}' } },
  { level: 'info', text: 'product {sku} updated by {user}', fields: { sku: '{sku}', userId: '{user}', changed: 'price,stock' } },
  { level: 'info', text: 'price of {sku} changed from {amount} to {amount} EUR', fields: { sku: '{sku}' } },
  { level: 'info', text: 'job {job} started', fields: { jobId: 'job_{hex}', queue: '{queue}' } },
  { level: 'info', text: 'job {job} finished in {ms} ms', fields: { jobId: 'job_{hex}', queue: '{queue}', waitedMs: '{ms}' } },
  { level: 'warn', text: 'job {job} failed on attempt {n}/5, retrying', fields: { jobId: 'job_{hex}', queue: '{queue}' } },
  { level: 'debug', text: 'queue {queue} has {count} waiting jobs', fields: { queue: '{queue}' } },
  { level: 'info', text: 'webhook delivered to {url} in {ms} ms', fields: { webhookId: 'wh_{hex}', status: '200' } },
  { level: 'warn', text: 'webhook to {url} failed with 500, attempt {n}', fields: { webhookId: 'wh_{hex}' } },
  { level: 'info', text: 'rate limit for key {apikey} reset', fields: { apiKey: '{apikey}' } },
  { level: 'warn', text: 'client {ip} over rate limit ({count} requests in 60 s)', fields: { ip: '{ip}' } },
  { level: 'debug', text: 'feature flag {flag} evaluated to {bool} for user {user}', fields: { flag: '{flag}', userId: '{user}' } },
  { level: 'info', text: 'config reloaded ({count} keys)', fields: { version: '{n}' } },
  { level: 'debug', text: 'connection pool: {count} idle, {n} busy, {n} waiting', fields: { pool: 'pg' } },
  { level: 'warn', text: 'connection pool exhausted, request waited {ms} ms', fields: { pool: 'pg' } },
  { level: 'info', text: 'cart {cart} checked out ({count} items)', fields: { cartId: '{cart}', customerId: '{customer}' } },
  { level: 'debug', text: 'cart {cart} item {sku} quantity set to {n}', fields: { cartId: '{cart}', sku: '{sku}' } },
  { level: 'info', text: 'coupon {coupon} applied to order {order}: -{amount} EUR', fields: { orderId: '{order}', coupon: '{coupon}' } },
  { level: 'info', text: 'export report {report} generated: {count} rows in {ms} ms', fields: { reportId: 'rep_{hex}', format: 'csv' } },
  { level: 'debug', text: 'token verified for user {user} (kid {hex})', fields: { userId: '{user}' } },
  { level: 'info', text: 'customer {customer} address updated', fields: { customerId: '{customer}', country: '{country}' } },
];

export interface RealisticOptions {
  seed: number;
  /** The first log's timestamp, epoch ms. */
  startMs: number;
  /** How many logs a second the fleet writes, on average; timestamps advance by that rate. */
  logsPerSecond?: number;
}

/** An endless seeded stream of realistic logs; `batch(n)` takes the next n with their NDJSON. */
export class RealisticLogs {
  readonly #rand: () => number;
  readonly #meanGapMs: number;
  readonly #pods = new Map<string, { pid: number; hostname: string }[]>();
  #now: number;

  constructor(options: RealisticOptions) {
    this.#rand = seededRandom(options.seed);
    this.#meanGapMs = 1000 / (options.logsPerSecond ?? 2000);
    this.#now = options.startMs;
  }

  #int(min: number, max: number): number {
    return min + Math.floor(this.#rand() * (max - min + 1));
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#rand() * items.length)]!;
  }

  #chars(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.#rand() * alphabet.length)];
    return out;
  }

  #hex(length: number): string {
    return this.#chars('0123456789abcdef', length);
  }

  #uuid(): string {
    const h = this.#hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[this.#int(0, 3)]}${h.slice(17, 20)}-${h.slice(20)}`;
  }

  #ip(): string {
    return `10.${this.#int(0, 40)}.${this.#int(0, 255)}.${this.#int(1, 254)}`;
  }

  /** One placeholder's value; ids come from ranges wide enough to rarely repeat, as in a busy shop. */
  #value(name: string): string {
    switch (name) {
      case 'order': return `ord_${this.#chars('0123456789abcdefghijklmnopqrstuvwxyz', 10)}`;
      case 'customer': return `cus_${this.#chars('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 14)}`;
      case 'user': return `usr_${this.#int(1000, 999_999)}`;
      case 'invoice': return `inv_${this.#int(100_000, 9_999_999)}`;
      case 'shipment': return `shp_${this.#hex(12)}`;
      case 'cart': return `cart_${this.#hex(10)}`;
      case 'session': return `ses_${this.#hex(16)}`;
      case 'sku': return `SKU-${this.#int(10_000, 99_999)}-${this.#pick(['S', 'M', 'L', 'XL'])}`;
      case 'email': return `${this.#pick(['anna', 'ben', 'chloe', 'david', 'emma', 'felix', 'grace', 'hugo'])}.${this.#chars('abcdefghijklmnopqrstuvwxyz', 5)}@${this.#pick(['gmail.com', 'outlook.com', 'example.org', 'proton.me'])}`;
      case 'amount': return `${this.#int(1, 900)}.${String(this.#int(0, 99)).padStart(2, '0')}`;
      case 'count': return String(this.#int(0, 500));
      case 'n': return String(this.#int(1, 9));
      case 'ms': return String(Math.round(Math.exp(this.#rand() * 8)));
      case 'hex': return this.#hex(12);
      case 'ip': return this.#ip();
      case 'word': return this.#pick(WORDS);
      case 'carrier': return this.#pick(['DHL', 'UPS', 'FedEx', 'La Poste', 'PostNL']);
      case 'tracking': return `${this.#chars('ABCDEFGHJKLMNPQRSTUVWXYZ', 2)}${this.#int(100_000_000, 999_999_999)}${this.#pick(['DE', 'FR', 'NL', 'US'])}`;
      case 'reason': return this.#pick(['changed my mind', 'found it cheaper', 'delivery too slow', 'ordered by mistake']);
      case 'mfa': return this.#pick(['totp', 'webauthn', 'none']);
      case 'provider': return this.#pick(['stripe', 'adyen', 'paypal']);
      case 'decline': return this.#pick(['insufficient_funds', 'card_declined', 'expired_card', 'do_not_honor']);
      case 'warehouse': return this.#pick(['ams-1', 'fra-2', 'par-1', 'nyc-3']);
      case 'cachekey': return `${this.#pick(['product', 'customer', 'cart', 'price'])}:${this.#int(1000, 999_999)}`;
      case 'table': return this.#pick(['orders', 'order_items', 'customers', 'payments', 'stock_movements']);
      case 'mail': return this.#pick(['order-confirmation', 'shipping-update', 'password-reset', 'invoice', 'welcome']);
      case 'queue': return this.#pick(['default', 'emails', 'exports', 'critical']);
      case 'job': return this.#pick(['send-email', 'resize-image', 'sync-crm', 'rebuild-search-index', 'export-report', 'expire-carts']);
      case 'url': return `https://hooks.${this.#pick(['acme', 'globex', 'initech', 'umbrella'])}.example.com/loglane/${this.#hex(8)}`;
      case 'apikey': return `key_${this.#hex(8)}`;
      case 'flag': return this.#pick(['new-checkout', 'one-click-pay', 'dark-mode', 'search-v2']);
      case 'bool': return this.#pick(['true', 'false']);
      case 'coupon': return this.#pick(['WELCOME10', 'SPRING24', 'FREESHIP', 'VIP20']);
      case 'report': return this.#pick(['sales-daily', 'stock-weekly', 'refunds-monthly']);
      case 'country': return this.#pick(['DE', 'FR', 'NL', 'BE', 'US', 'GB', 'ES']);
      default: throw new Error(`unknown placeholder {${name}}`);
    }
  }

  /** Fills a template's placeholders; a name used twice in one log keeps one value (an order id in text and fields). */
  #fill(text: string, seen: Map<string, string>): string {
    return text.replace(/\{(\w+)\}/g, (_, name: string) => {
      // Amounts, counts and small numbers differ each time they appear; ids stay.
      if (['amount', 'count', 'n', 'ms', 'hex'].includes(name)) return this.#value(name);
      let v = seen.get(name);
      if (v === undefined) {
        v = this.#value(name);
        seen.set(name, v);
      }
      return v;
    });
  }

  /** pino's pid and hostname: each service runs as 4 Kubernetes pods. */
  #base(service: string): Record<string, unknown> {
    let pods = this.#pods.get(service);
    if (pods === undefined) {
      pods = Array.from({ length: 4 }, () => ({ pid: this.#int(1, 40), hostname: `${service}-${this.#hex(9)}-${this.#chars('bcdfghjklmnpqrstvwxz2456789', 5)}` }));
      this.#pods.set(service, pods);
    }
    return { ...this.#pick(pods) };
  }

  #request(): RealisticLog {
    const service = this.#pick(SERVICES);
    const route = this.#pick(ROUTES);
    const url = route.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'id' ? String(this.#int(1000, 9_999_999)) : name === 'n' ? String(this.#int(1, 40)) : this.#pick(WORDS)));
    const roll = this.#rand();
    const statusCode = roll < 0.86 ? this.#pick([200, 200, 200, 200, 201, 204, 304]) : roll < 0.97 ? this.#pick([400, 401, 403, 404, 404, 409, 422, 429]) : this.#pick([500, 502, 503, 504]);
    const reqId = this.#uuid();
    return {
      timestamp: '',
      level: statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info',
      source: service,
      message: 'request completed',
      metadata: {
        ...this.#base(service),
        reqId,
        req: {
          method: route.method,
          url,
          headers: { host: this.#pick(HOSTS), 'user-agent': this.#pick(AGENTS), 'x-request-id': reqId },
          remoteAddress: this.#ip(),
          remotePort: this.#int(1024, 65_535),
        },
        res: { statusCode },
        responseTime: Math.round(Math.exp(this.#rand() * 7) * 1000) / 1000,
      },
    };
  }

  #application(): RealisticLog {
    const service = this.#pick(SERVICES);
    const template = this.#pick(TEMPLATES);
    const seen = new Map<string, string>();
    const message = this.#fill(template.text, seen);
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(template.fields ?? {})) {
      const filled = this.#fill(value, seen);
      fields[key] = /^\d+$/.test(filled) && filled.length < 10 ? Number(filled) : filled;
    }
    // Most levels are the template's; now and then an info line is logged at debug.
    const level = template.level === 'info' && this.#rand() < 0.1 ? 'debug' : template.level;
    return { timestamp: '', level, source: service, message, metadata: { ...this.#base(service), ...fields } };
  }

  #error(): RealisticLog {
    const service = this.#pick(SERVICES);
    const kind = this.#pick(ERROR_TYPES);
    const errMessage = kind.message.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'n' ? String(this.#int(0, 255)) : name === 'id' ? String(this.#int(1000, 999_999)) : this.#value(name)));
    const frames: string[] = [];
    const depth = this.#int(4, 9);
    for (let i = 0; i < depth; i++) frames.push(`    ${this.#pick(FRAMES).replace('{line}', String(this.#int(10, 400))).replace('{col}', String(this.#int(5, 60)))}`);
    const metadata: Record<string, unknown> = { ...this.#base(service), err: { type: kind.type, message: errMessage, stack: `${kind.type}: ${errMessage}\n${frames.join('\n')}` } };
    if (this.#rand() < 0.5) metadata.reqId = this.#uuid();
    return { timestamp: '', level: this.#rand() < 0.1 ? 'fatal' : 'error', source: service, message: this.#pick(['request failed', 'unhandled error in job', errMessage, 'upstream call failed']), metadata };
  }

  /** The next log: a request, an application line or an error, stamped a little after the previous one. */
  next(): RealisticLog {
    const roll = this.#rand();
    const log = roll < 0.52 ? this.#request() : roll < 0.96 ? this.#application() : this.#error();
    // Exponential gaps: logs come in bursts, several often in the same millisecond.
    this.#now += -Math.log(1 - this.#rand()) * this.#meanGapMs;
    log.timestamp = new Date(Math.floor(this.#now)).toISOString();
    return log;
  }

  /** The next `count` logs and their NDJSON. */
  batch(count: number): RealisticBatch {
    const logs = Array.from({ length: count }, () => this.next());
    return { logs, ndjson: toNdjson(logs) };
  }

  /** Epoch ms of the newest log made so far. */
  get nowMs(): number {
    return Math.floor(this.#now);
  }
}

export function toNdjson(logs: RealisticLog[]): Buffer {
  return Buffer.from(logs.map((l) => `${JSON.stringify(l)}\n`).join(''));
}

/** `total` logs in batches of `batchSize` (the last may be shorter), with their NDJSON. */
export function* realisticBatches(options: RealisticOptions & { total: number; batchSize: number }): Generator<RealisticBatch> {
  const stream = new RealisticLogs(options);
  for (let made = 0; made < options.total; made += options.batchSize) yield stream.batch(Math.min(options.batchSize, options.total - made));
}

/** Raw NDJSON bytes of `total` logs of this seed, without keeping them. */
export function realisticNdjsonBytes(options: RealisticOptions & { total: number }): number {
  let bytes = 0;
  for (const batch of realisticBatches({ ...options, batchSize: 1000 })) bytes += batch.ndjson.length;
  return bytes;
}
