/**
 * The query language's table (docs/search.md, "The rules"): a fixed set of logs shaped as pino
 * and OpenTelemetry send them (stored form: message + metadata JSON text), the queries over them, and
 * the logs each selects, derived by hand from docs/search.md. Plain data: the unit test runs them
 * through the predicate, and test/query-e2e.test.ts through search, stats, tail and alerts.
 */

/** A stored log (level = index of trace … fatal; metadata = JSON text as stored) with a stable name. */
export interface NamedLog {
  name: string;
  ts: number;
  level: number;
  source: string | null;
  message: string;
  metadata: string | null;
}

export interface QueryCase {
  query: string;
  /** Names of the logs the query selects. */
  expect: string[];
  /** Set when the case rests on a choice docs/search.md leaves open (the choice is said here). */
  note?: string;
}

export interface QueryErrorCase {
  query: string;
  /** 1-based, in code points. */
  column: number;
  /** What details[0].message must say after `at column N: `. */
  expected: RegExp;
}

const TRACE = 0, DEBUG = 1, INFO = 2, WARN = 3, ERROR = 4, FATAL = 5;
const at = (hhmm: string) => Date.parse(`2026-11-23T${hhmm}:00.000Z`);
const json = (o: object) => JSON.stringify(o);

export const QUERY_LOGS: readonly NamedLog[] = [
  // pino (pino-http's request logs: msg, reqId, req, res, responseTime, hostname, pid)
  { name: 'pino-200', ts: at('10:00'), level: INFO, source: 'api', message: 'request completed', metadata: json({ reqId: 'req-1007', req: { method: 'GET', url: '/v1/orders', remoteAddress: '10.0.0.1' }, res: { statusCode: 200 }, responseTime: 12, hostname: 'web-1', pid: 4242 }) },
  { name: 'pino-503', ts: at('10:05'), level: ERROR, source: 'api', message: 'request completed', metadata: json({ reqId: 'req-1008', req: { method: 'POST', url: '/v1/orders' }, res: { statusCode: 503 }, responseTime: 1502.5, hostname: 'web-2' }) },
  { name: 'pino-404', ts: at('10:10'), level: WARN, source: 'api', message: 'request completed', metadata: json({ reqId: 'req-2001', req: { method: 'GET', url: '/v1/orders/42' }, res: { statusCode: 404 }, responseTime: 3, hostname: 'web-1' }) },
  { name: 'pino-timeout', ts: at('10:15'), level: ERROR, source: 'worker', message: 'upstream timeout after 30s', metadata: json({ reqId: 'req-1009', err: { type: 'TimeoutError', message: 'Connection reset by peer' }, attempt: 3 }) },
  { name: 'pino-500-string', ts: at('10:20'), level: ERROR, source: 'API', message: 'request failed', metadata: json({ reqId: 'REQ-1010', req: { method: 'delete', url: '/v1/users/7' }, res: { statusCode: '500' } }) },
  // OpenTelemetry: flat dotted attribute keys, resource and scope objects; then the same attribute nested, and half nested.
  { name: 'otel-500', ts: at('11:00'), level: ERROR, source: 'checkout', message: 'HTTP 500 from payments', metadata: json({ 'http.response.status_code': 500, 'http.request.method': 'POST', 'url.path': '/v1/payments', 'service.name': 'checkout', resource: { 'service.name': 'checkout', 'service.version': '1.4.2' }, scope: { name: '@opentelemetry/instrumentation-http', version: '0.52.0' }, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' }) },
  { name: 'otel-201', ts: at('11:01'), level: INFO, source: 'checkout', message: 'payment authorised', metadata: json({ 'http.response.status_code': 201, 'http.request.method': 'POST', 'service.name': 'checkout', http: { route: '/v1/payments/:id' }, resource: { 'service.name': 'checkout' } }) },
  { name: 'otel-502-mixed', ts: at('11:02'), level: WARN, source: 'gateway', message: 'slow response', metadata: json({ http: { 'response.status_code': 502 }, 'service.name': 'gateway', duration_ms: '2500' }) },
  { name: 'otel-200-nested', ts: at('11:03'), level: INFO, source: 'gateway', message: 'proxied', metadata: json({ http: { response: { status_code: 200 } }, 'service.name': 'gateway', 'net.peer.ip': '10.0.0.1' }) },
  { name: 'ip-110', ts: at('11:04'), level: INFO, source: 'gateway', message: 'connection from 110.0.0.12', metadata: json({ client: { ip: '110.0.0.12' } }) },
  // identifiers, arrays, nulls, booleans
  { name: 'uuid', ts: at('12:00'), level: DEBUG, source: 'worker', message: 'job 3f2b8c1e-9d4a-4e6b-8f7a-1c2d3e4f5a6b finished', metadata: json({ job: { id: '3f2b8c1e-9d4a-4e6b-8f7a-1c2d3e4f5a6b', durationMs: 840 } }) },
  { name: 'arrays', ts: at('12:05'), level: INFO, source: 'worker', message: 'batch processed', metadata: json({ tags: ['billing', 'eu-west', 'retry', 'billing'], counts: [1, 2, 3], ids: [500, '501'], items: [{ sku: 'A-1', qty: 2 }, { sku: 'B-2', qty: 10 }] }) },
  { name: 'empty-array', ts: at('12:06'), level: INFO, source: 'worker', message: 'nothing to do', metadata: json({ tags: [], note: null }) },
  { name: 'alice', ts: at('12:10'), level: INFO, source: 'auth', message: 'login ok', metadata: json({ user: { email: 'alice@example.com', admin: true }, mfa: false, retry: 'false' }) },
  { name: 'bob', ts: at('12:11'), level: WARN, source: 'auth', message: 'login failed', metadata: json({ user: { email: 'Bob@Example.org', admin: 'TRUE' }, mfa: null }) },
  // Unicode: accents (one value decomposed, NFD), Turkish dotted İ, ß, Greek capitals, emoji
  { name: 'cafe', ts: at('13:00'), level: INFO, source: 'Café', message: 'Café crème servi à Zoë', metadata: json({ city: 'Zürich', greeting: 'Grüße', 'clé': 'valeur', decomposed: 'cafe\u0301' }) },
  { name: 'turkish', ts: at('13:01'), level: INFO, source: 'istanbul', message: 'İstanbul office opened', metadata: json({ office: 'İZMİR' }) },
  { name: 'emoji', ts: at('13:02'), level: INFO, source: null, message: 'deploy finished 🚀 in 3s', metadata: json({ emoji: '🎉', user: 'ΣΊΣΥΦΟΣ' }) },
  // keys with dots and spaces, and metadata keys named like the log's own fields
  { name: 'weird-keys', ts: at('13:03'), level: DEBUG, source: 'legacy', message: 'legacy format', metadata: json({ 'weird key': { x: 1 }, 'a.b': { c: 'dotted' }, level: 'custom', message: 'meta message' }) },
  { name: 'fatal', ts: at('14:00'), level: FATAL, source: 'db', message: 'database unreachable: connection reset', metadata: json({ db: { host: 'db-1', port: 5432 } }) },
  { name: 'trace', ts: at('14:01'), level: TRACE, source: 'db', message: 'query plan cached', metadata: json({ sql: 'SELECT * FROM orders WHERE id = ?' }) },
  { name: 'no-meta', ts: at('14:02'), level: INFO, source: null, message: 'plain line without metadata', metadata: null },
  // numbers, numeric strings, a string that only looks like one
  { name: 'numbers', ts: at('14:03'), level: INFO, source: 'metrics', message: 'cpu sample', metadata: json({ cpu: 0.75, load: '1.5', temp: -3, code: '007', version: 'v2' }) },
  { name: 'level-key', ts: at('14:04'), level: INFO, source: 'api', message: 'error budget fine', metadata: json({ level: 'error' }) },
  { name: 'escapes', ts: at('14:05'), level: INFO, source: 'api', message: 'path a:b (x) "quoted" *star* q?', metadata: json({ url: '/v1/orders?id=*' }) },
];

const ALL = QUERY_LOGS.map((l) => l.name);
const except = (...names: string[]) => ALL.filter((n) => !names.includes(n));
const INFO_LOGS = ['pino-200', 'otel-201', 'otel-200-nested', 'ip-110', 'arrays', 'empty-array', 'alice', 'cafe', 'turkish', 'emoji', 'no-meta', 'numbers', 'level-key', 'escapes'];
const WARN_LOGS = ['pino-404', 'otel-502-mixed', 'bob'];
const ERROR_LOGS = ['pino-503', 'pino-timeout', 'pino-500-string', 'otel-500'];
const API = ['pino-200', 'pino-503', 'pino-404', 'pino-500-string', 'level-key', 'escapes'];
const REQUESTS = ['pino-200', 'pino-503', 'pino-404'];

export const QUERY_CASES: readonly QueryCase[] = [
  // empty: every log
  { query: '', expect: ALL },
  { query: '   ', expect: ALL },

  // terms: words of the message and of every metadata value, never keys
  { query: 'timeout', expect: ['pino-timeout'] },
  { query: 'TIMEOUT', expect: ['pino-timeout'] },
  { query: 'request', expect: [...REQUESTS, 'pino-500-string'] },
  { query: '503', expect: ['pino-503'] },
  { query: '500', expect: ['pino-500-string', 'otel-500', 'arrays'] },
  { query: 'statusCode', expect: [] },
  { query: 'checkout', expect: ['otel-500', 'otel-201'] },
  { query: 'reset', expect: ['pino-timeout', 'fatal'] },
  { query: 'connection reset', expect: ['pino-timeout', 'fatal'] },
  // several words: next to each other, in order, in the message or in one value
  { query: 'req-1007', expect: ['pino-200'] },
  { query: 'REQ-1010', expect: ['pino-500-string'] },
  { query: '10.0.0.1', expect: ['pino-200', 'otel-200-nested'] },
  { query: '110.0.0.12', expect: ['ip-110'] },
  { query: '3f2b8c1e-9d4a-4e6b-8f7a-1c2d3e4f5a6b', expect: ['uuid'] },
  { query: 'reset-connection', expect: [] },
  { query: 'by-peer', expect: ['pino-timeout'] },
  // Unicode: NFC, simple lower case
  { query: 'café', expect: ['cafe'] },
  { query: 'CAFÉ', expect: ['cafe'] },
  { query: 'cafe', expect: [] },
  { query: 'GRÜßE', expect: ['cafe'] },
  { query: 'istanbul', expect: ['turkish'] },
  { query: 'izmir', expect: ['turkish'] },
  { query: 'σίσυφοσ', expect: ['emoji'] },

  // phrases: case-insensitive substring of the message or of a metadata string value
  { query: '"connection reset"', expect: ['pino-timeout', 'fatal'] },
  { query: '"RESET BY"', expect: ['pino-timeout'] },
  { query: '"request comp"', expect: REQUESTS },
  { query: '"500"', expect: ['pino-500-string', 'otel-500', 'otel-502-mixed'] },
  { query: '"🚀"', expect: ['emoji'] },

  // wildcards: against words in a bare term
  { query: 'time*', expect: ['pino-timeout'] },
  { query: '*out', expect: ['pino-timeout', 'no-meta', 'otel-500', 'otel-201'] },
  { query: 'log?n', expect: ['alice', 'bob'] },
  { query: 'req-10*', expect: ['pino-200', 'pino-503', 'pino-timeout', 'pino-500-string'] },

  // regex: on the message, case-sensitive unless (?i); after a field, on that value
  { query: '/^request/', expect: [...REQUESTS, 'pino-500-string'] },
  { query: '/Request/', expect: [] },
  { query: '/(?i)REQUEST c/', expect: REQUESTS },
  { query: '/\\d+\\.\\d+\\.\\d+\\.\\d+/', expect: ['ip-110'] },
  { query: '@reqId:/^req-10/', expect: ['pino-200', 'pino-503', 'pino-timeout'] },
  { query: '@res.statusCode:/^5/', expect: ['pino-503', 'pino-500-string'] },

  // level: equality ignoring case, comparisons by severity, ranges, lists
  { query: 'level:error', expect: ERROR_LOGS },
  { query: 'level:ERROR', expect: ERROR_LOGS },
  { query: 'level:>=warn', expect: [...WARN_LOGS, ...ERROR_LOGS, 'fatal'] },
  { query: 'level:<info', expect: ['trace', 'uuid', 'weird-keys'] },
  { query: 'level:[debug TO info]', expect: ['uuid', 'weird-keys', ...INFO_LOGS] },
  { query: 'level:{info TO fatal}', expect: [...WARN_LOGS, ...ERROR_LOGS] },
  { query: 'level:(trace OR fatal)', expect: ['trace', 'fatal'] },
  // @level is metadata
  { query: '@level:error', expect: ['level-key'] },
  { query: '@level:*', expect: ['weird-keys', 'level-key'] },

  // source: equality ignoring case, wildcards
  { query: 'source:api', expect: API },
  { query: 'source:API', expect: API },
  { query: 'source:"api"', expect: API },
  { query: 'source:gate*', expect: ['otel-502-mixed', 'otel-200-nested', 'ip-110'] },
  { query: 'source:CAFÉ', expect: ['cafe'] },
  { query: 'source:(checkout OR db)', expect: ['otel-500', 'otel-201', 'fatal', 'trace'] },
  { query: '-source:*', expect: ['emoji', 'no-meta'] },

  // message: the bare forms on the message only
  { query: 'message:timeout', expect: ['pino-timeout'] },
  { query: 'message:reset', expect: ['fatal'] },
  { query: 'message:"connection reset"', expect: ['fatal'] },
  { query: 'message:checkout', expect: [] },
  { query: 'message:/^request/', expect: [...REQUESTS, 'pino-500-string'] },
  { query: '@message:"meta message"', expect: ['weird-keys'] },

  // timestamp: ISO 8601 or epoch ms
  { query: 'timestamp:>=2026-11-23T14:00:00Z', expect: ['fatal', 'trace', 'no-meta', 'numbers', 'level-key', 'escapes'] },
  { query: 'timestamp:[2026-11-23T11:00:00Z TO 2026-11-23T11:02:00Z]', expect: ['otel-500', 'otel-201', 'otel-502-mixed'] },
  { query: 'timestamp:{2026-11-23T11:00:00Z TO 2026-11-23T11:02:00Z}', expect: ['otel-201'] },
  { query: 'timestamp:<=1795428300000', expect: ['pino-200', 'pino-503'] },
  { query: 'timestamp:[2026-11-23T13:00:00+01:00 TO *]', expect: ['uuid', 'arrays', 'empty-array', 'alice', 'bob', 'cafe', 'turkish', 'emoji', 'weird-keys', 'fatal', 'trace', 'no-meta', 'numbers', 'level-key', 'escapes'] },

  // metadata equality: strings ignoring case, numbers numerically, true/false/null
  { query: '@res.statusCode:503', expect: ['pino-503'] },
  { query: '@res.statusCode:500', expect: ['pino-500-string'] },
  { query: '@req.method:get', expect: ['pino-200', 'pino-404'] },
  { query: 'req.method:DELETE', expect: ['pino-500-string'] },
  { query: '@req.url:"/v1/orders"', expect: ['pino-200', 'pino-503'] },
  { query: '@req.url:"/v1/orders*"', expect: [] },
  { query: '@responseTime:1502.50', expect: ['pino-503'] },
  { query: '@code:7', expect: [] },
  { query: '@user.admin:true', expect: ['alice', 'bob'] },
  { query: '@mfa:false', expect: ['alice'] },
  { query: '@retry:FALSE', expect: ['alice'] },
  { query: '@mfa:null', expect: ['bob'] },
  { query: '@note:null', expect: ['empty-array'] },
  // wildcards in a value: the whole value, ignoring case; numbers as written
  { query: '@user.email:*@example.com', expect: ['alice'] },
  { query: '@user.email:*@EXAMPLE.*', expect: ['alice', 'bob'] },
  { query: '@req.url:\\/v1\\/orders*', expect: ['pino-200', 'pino-503', 'pino-404'] },
  { query: '@res.statusCode:5*', expect: ['pino-503', 'pino-500-string'] },

  // paths: nested objects and flat dotted keys alike, quoted segments, arrays
  { query: '@http.response.status_code:>=500', expect: ['otel-500', 'otel-502-mixed'] },
  { query: 'http.response.status_code:200', expect: ['otel-200-nested'] },
  { query: '@http.response.status_code:*', expect: ['otel-500', 'otel-201', 'otel-502-mixed', 'otel-200-nested'] },
  { query: '@http.route:"/v1/payments/:id"', expect: ['otel-201'] },
  { query: 'service.name:gateway', expect: ['otel-502-mixed', 'otel-200-nested'] },
  { query: '@resource.service.name:checkout', expect: ['otel-500', 'otel-201'] },
  { query: '@"weird key".x:1', expect: ['weird-keys'] },
  { query: '@a.b.c:dotted', expect: ['weird-keys'] },
  { query: '@tags:retry', expect: ['arrays'] },
  { query: '@tags:eu-*', expect: ['arrays'] },
  { query: '@ids:501', expect: ['arrays'] },
  { query: '@items.sku:b-2', expect: ['arrays'] },
  { query: '@items.qty:>5', expect: ['arrays'] },
  { query: '@items.qty:>10', expect: [] },

  // comparisons and ranges: numbers and numeric strings; anything else does not match
  { query: '@res.statusCode:>=500', expect: ['pino-503', 'pino-500-string'] },
  { query: '@res.statusCode:[400 TO 499]', expect: ['pino-404'] },
  { query: '@res.statusCode:<300', expect: ['pino-200'] },
  { query: '@responseTime:>1000', expect: ['pino-503'] },
  { query: '@responseTime:[* TO 12]', expect: ['pino-200', 'pino-404'] },
  { query: '@responseTime:{3 TO 12}', expect: [] },
  { query: '@duration_ms:>2000', expect: ['otel-502-mixed'] },
  { query: '@load:>1', expect: ['numbers'] },
  { query: '@temp:<0', expect: ['numbers'] },
  { query: '@code:>=7', expect: ['numbers'] },
  { query: '@version:>1', expect: [] },
  { query: '@ids:>=501', expect: ['arrays'] },

  // exists: not null, not an empty array
  { query: '@tags:*', expect: ['arrays'] },
  { query: '@mfa:*', expect: ['alice'] },
  { query: '-@mfa:*', expect: except('alice') },

  // value lists
  { query: '@res.statusCode:(200 OR 404)', expect: ['pino-200', 'pino-404'] },
  { query: '@res.statusCode:(>=500 OR 404)', expect: ['pino-503', 'pino-500-string', 'pino-404'] },

  // boolean: juxtaposition is AND; NOT/- > AND > OR; lower-case and/or/not are words
  { query: 'level:error source:api', expect: ['pino-503', 'pino-500-string'] },
  { query: 'level:error AND source:worker', expect: ['pino-timeout'] },
  { query: 'source:db OR source:auth', expect: ['fatal', 'trace', 'alice', 'bob'] },
  { query: 'level:info source:auth OR level:fatal', expect: ['alice', 'fatal'] },
  { query: 'level:info (source:auth OR level:fatal)', expect: ['alice'] },
  { query: 'request OR failed', expect: [...REQUESTS, 'pino-500-string', 'bob'] },
  { query: 'request or failed', expect: [] },
  { query: 'NOT level:info', expect: ['trace', 'uuid', 'weird-keys', ...WARN_LOGS, ...ERROR_LOGS, 'fatal'] },
  { query: '-level:info -level:error', expect: ['trace', 'uuid', 'weird-keys', ...WARN_LOGS, 'fatal'] },
  { query: '-source:api level:error', expect: ['pino-timeout', 'otel-500'] },
  { query: 'NOT (level:info OR level:debug OR level:trace)', expect: [...WARN_LOGS, ...ERROR_LOGS, 'fatal'] },
  { query: '((level:warn OR level:fatal) (source:db OR source:gateway))', expect: ['otel-502-mixed', 'fatal'] },
  { query: 'login -failed', expect: ['alice'] },

  // escapes
  { query: 'a\\:b', expect: ['escapes'] },
  { query: '\\(x\\)', expect: ['escapes'] },
  { query: '"\\"quoted\\""', expect: ['escapes'] },
  { query: '"*star*"', expect: ['escapes'] },
  { query: '@url:\\/v1\\/orders\\?id=\\*', expect: ['escapes'] },
  { query: '@url:"/v1/orders?id=*"', expect: ['escapes'] },

  // choices docs/search.md leaves open
  { query: '*', expect: ALL, note: 'a bare * selects every log, even one without words' },
  { query: '🚀', expect: ['emoji'], note: 'a bare term with no word characters is matched as a phrase' },
  { query: 'level:*', expect: ALL, note: 'level and message always exist; source:* is source not null' },
  { query: 'source:/^gate/', expect: ['otel-502-mixed', 'otel-200-nested', 'ip-110'], note: 'a regex after source applies to the source' },
  { query: 'timestamp:2026-11-23T10:05:00Z', expect: ['pino-503'], note: 'timestamp:T is equality to the millisecond' },
  { query: '@"service.name":checkout', expect: ['otel-500', 'otel-201'], note: 'a quoted segment is one key, never split at its dots' },
];

const LONG = 'a'.repeat(2001);
const terms = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const nested = (n: number) => '('.repeat(n) + 'a' + ')'.repeat(n);

export const QUERY_ERRORS: readonly QueryErrorCase[] = [
  // a value is missing
  { query: '@status:', column: 9, expected: /^expected a value after ':'$/ },
  { query: '@status: 500', column: 9, expected: /^expected a value after ':'$/ },
  { query: 'level:', column: 7, expected: /a value after ':'/ },
  // operators without terms
  { query: 'a AND', column: 6, expected: /a term after AND/ },
  { query: 'a OR', column: 5, expected: /a term after OR/ },
  { query: 'NOT', column: 4, expected: /a term after NOT/ },
  { query: 'OR a', column: 1, expected: /a term before OR/ },
  { query: 'a AND OR b', column: 7, expected: /a term after AND/ },
  { query: 'a OR AND b', column: 6, expected: /a term after OR/ },
  { query: '- a', column: 2, expected: /a term right after '-'/ },
  // parentheses
  { query: '(a OR b', column: 8, expected: /'\)' to close the '\(' at column 1/ },
  { query: 'a)', column: 2, expected: /a term or the end of the query/ },
  { query: '()', column: 2, expected: /a term/ },
  // quotes and regular expressions
  { query: 'say "hello', column: 11, expected: /'"' to close the quote opened at column 5/ },
  { query: '/abc', column: 5, expected: /'\/' to close the regular expression opened at column 1/ },
  { query: 'http://example.com', column: 7, expected: /a regular expression between the slashes/ },
  { query: 'x /(/', column: 3, expected: /a valid RE2 regular expression/ },
  { query: '/(?=x)y/', column: 1, expected: /a valid RE2 regular expression/ },
  { query: '@msg:/[/', column: 6, expected: /a valid RE2 regular expression/ },
  { query: '🚀 /a{1000}b{1000}c{1000}/', column: 3, expected: /a cheaper regular expression/ },
  // escapes
  { query: 'abc\\', column: 5, expected: /a character after '\\'/ },
  // field names
  { query: ':x', column: 1, expected: /a field name before ':'/ },
  { query: 'a..b:1', column: 3, expected: /a field name segment/ },
  { query: '@:x', column: 2, expected: /a field name segment/ },
  { query: '@"weird key" x', column: 13, expected: /':' after the field name/ },
  // level values: the six levels only
  { query: 'level:err', column: 7, expected: /a level: trace, debug, info, warn, error or fatal/ },
  // ingestion's aliases (warning, critical, …) are not level values here
  { query: 'level:warning', column: 7, expected: /a level/ },
  { query: 'level:>=critical', column: 9, expected: /a level/ },
  { query: 'level:50', column: 7, expected: /a level/ },
  { query: 'level:warn*', column: 7, expected: /a level/ },
  { query: 'level:>=loud', column: 9, expected: /a level/ },
  { query: 'level:[info TO severe]', column: 16, expected: /a level/ },
  { query: 'level:/err/', column: 7, expected: /a level/ },
  // timestamps
  { query: 'timestamp:>=yesterday', column: 13, expected: /an ISO 8601 time or epoch milliseconds/ },
  { query: 'timestamp:[2026-11-24 TO 2026-13-01]', column: 26, expected: /an ISO 8601 time/ },
  // comparison and range bounds: numbers
  { query: '@x:>abc', column: 5, expected: /a number/ },
  { query: '@x:>=', column: 6, expected: /a number right after '>='/ },
  { query: '@x:< 5', column: 5, expected: /a number right after '<'/ },
  { query: '@x:[a TO 5]', column: 5, expected: /a number/ },
  { query: '@x:[1 TO]', column: 9, expected: /a bound after 'TO'/ },
  { query: '@x:[1 5]', column: 7, expected: /'TO'/ },
  { query: '@x:[1 TO 5', column: 11, expected: /'\]' or '\}' to close the range opened at column 4/ },
  { query: 'source:>5', column: 8, expected: /a source name/ },
  { query: 'message:[1 TO 2]', column: 9, expected: /a word, a quoted phrase/ },
  // value lists
  { query: '@x:(a OR b', column: 11, expected: /'\)' to close the list opened at column 4/ },
  { query: '@x:(a b)', column: 7, expected: /'OR' or '\)'/ },
  { query: '@x:()', column: 5, expected: /a value after '\('/ },
  { query: '@x:(a OR)', column: 9, expected: /a value after OR/ },
  // limits
  { query: LONG, column: 2001, expected: /at most 2,000 characters/ },
  { query: `${terms(64)} w64`, column: terms(64).length + 2, expected: /at most 64 terms/ },
  { query: `${terms(60)} @x:(1 OR 2 OR 3 OR 4 OR 5)`, column: `${terms(60)} @x:(1 OR 2 OR 3 OR 4 OR `.length + 1, expected: /at most 64 terms/ },
  { query: nested(17), column: 17, expected: /at most 16 levels of nesting/ },
  { query: `${'('.repeat(15)}@x:(1 OR (2 OR 3))${')'.repeat(15)}`, column: 25, expected: /at most 16 levels of nesting/ },
];
