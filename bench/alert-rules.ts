/**
 * The alert rules of bench:alerts and bench:match, and the logs they look at: the same kinds of
 * rules written with level, source and RE2 pattern, or in the query language.
 */
import type { ConditionInput } from '../src/features/alerts/rules.js';
import { generateLogs, type BenchLog } from './logs.js';

/** How the rules are written: level, source and RE2 pattern, or the query language. */
export type RuleKind = 'pattern' | 'query';

/** A rule's condition as the API takes it. */
export type Condition = ConditionInput;

export interface RuleSpec {
  name: string;
  condition: Condition;
  cooldown: string;
}

const SOURCES = ['api', 'web', 'worker', 'billing', 'auth'];
const JOBS = ['send-email', 'resize-image', 'sync-crm', 'rebuild-search-index', 'export-report'];
const PATHS = ['orders', 'customers', 'cart', 'products', 'search'];
const WINDOWS = ['5m', '15m', '1h', '10m', '30m'];

/**
 * Rules a team could well have on the stream of bench/logs.ts: error and warn rules per source,
 * some with RE2 patterns on words of the messages, a few on info/debug, one that never matches.
 * `rare` ones match at most ~1 % of the stream, the others up to ~15 %; none matches a probe
 * (level fatal, source "probe"). `r` varies the details when the list comes round again.
 */
const TEMPLATES: ((r: number) => { name: string; level: string; source?: string; pattern?: string; rare: boolean })[] = [
  (r) => ({ name: `${SOURCES[r % 5]} errors`, level: 'error', source: SOURCES[r % 5], rare: true }),
  (r) => ({ name: `api 502/504 on ${PATHS[r % 5]}`, level: 'error', source: 'api', pattern: `^(GET|POST|PUT|DELETE) /v1/${PATHS[r % 5]}\\b.* 50[24] `, rare: true }),
  (r) => ({ name: `${JOBS[r % 5]} keeps failing`, level: 'error', source: 'worker', pattern: `job ${JOBS[r % 5]} .* failed on attempt [3-5]/5`, rare: true }),
  (r) => ({ name: `large card declines ${r}`, level: 'error', source: 'billing', pattern: `declined: card_declined, amount [${1 + (r % 8)}-9]\\d{2}\\.00 EUR`, rare: true }),
  (r) => ({ name: `password guessing ${r}`, level: 'warn', source: 'auth', pattern: `wrong password \\([${5 + (r % 4)}-9] recent failures\\)`, rare: true }),
  (r) => ({ name: `slow api requests ${r}`, level: 'warn', source: 'api', pattern: `\\b[${2 + (r % 3)}-9]\\d{3}ms\\b`, rare: false }),
  (r) => ({ name: `web rate limited ${r}`, level: 'warn', source: 'web', pattern: ' 429 ', rare: true }),
  (r) => ({ name: `any error ${r}`, level: 'error', rare: false }),
  (r) => ({ name: `404s and 429s ${r}`, level: 'warn', pattern: '\\b(404|429)\\b', rare: false }),
  (r) => ({ name: `slow ${JOBS[r % 5]}`, level: 'info', source: 'worker', pattern: `job ${JOBS[r % 5]} id=job_[0-9a-f]+ finished in \\d{3} ms`, rare: false }),
  (r) => ({ name: `api writes to ${PATHS[r % 5]}`, level: 'info', source: 'api', pattern: `^(POST|PUT|DELETE) /v1/${PATHS[r % 5]}/`, rare: false }),
  (r) => ({ name: `logins without mfa ${r}`, level: 'debug', source: 'auth', pattern: 'mfa=none', rare: false }),
  (r) => ({ name: `big charges ${r}`, level: 'info', source: 'billing', pattern: `charged [${5 + (r % 4)}-9]\\d{2}\\.\\d{2} EUR`, rare: false }),
  (r) => ({ name: `worker fatal ${r}`, level: 'fatal', source: 'worker', rare: true }),
  (r) => ({ name: `billing warnings ${r}`, level: 'warn', source: 'billing', rare: false }),
  (r) => ({ name: `scripted clients failing ${r}`, level: 'error', source: 'web', pattern: 'ua="(python-requests|okhttp)/', rare: true }),
  (r) => ({ name: `health checks ${r}`, level: 'info', source: SOURCES[r % 2], pattern: '/healthz (200|204|304)', rare: false }),
  (r) => ({ name: `long queue waits ${r}`, level: 'warn', source: 'worker', pattern: `waited [${5 + (r % 4)}-9]\\d{3} ms`, rare: true }),
  (r) => ({ name: `failed logins from 10.${r}/16`, level: 'error', source: 'auth', pattern: `from 10\\.${r}\\.\\d+\\.\\d+:`, rare: true }),
  (r) => ({ name: `webauthn logins ${r}`, level: 'info', source: 'auth', pattern: 'mfa=webauthn', rare: false }),
];

/**
 * The same rules in the query language (`--rules query`), on the logs' words, phrases, regexes and
 * metadata (`status`, `durationMs`, and `path` and `userId` from withQueryMetadata), with OR, NOT,
 * lists, ranges and wildcards where a team would write them. Same names, levels and rarity.
 */
const QUERY_TEMPLATES: ((r: number) => { name: string; level: string; query: string; rare: boolean })[] = [
  (r) => ({ name: `${SOURCES[r % 5]} errors`, level: 'error', query: `source:${SOURCES[r % 5]}`, rare: true }),
  (r) => ({ name: `api 502/504 on ${PATHS[r % 5]}`, level: 'error', query: `source:api @path:"/v1/${PATHS[r % 5]}" @status:(502 OR 504)`, rare: true }),
  (r) => ({ name: `${JOBS[r % 5]} keeps failing`, level: 'error', query: `source:worker "job ${JOBS[r % 5]}" /failed on attempt [3-5]\\/5/`, rare: true }),
  (r) => ({ name: `large card declines ${r}`, level: 'error', query: `source:billing declined /amount [${1 + (r % 8)}-9]\\d{2}\\.00 EUR/`, rare: true }),
  (r) => ({ name: `password guessing ${r}`, level: 'warn', query: `source:auth "wrong password" /\\([${5 + (r % 4)}-9] recent failures\\)/`, rare: true }),
  (r) => ({ name: `slow api requests ${r}`, level: 'warn', query: `source:api @durationMs:>=${2000 + 1000 * (r % 3)}`, rare: false }),
  (r) => ({ name: `web rate limited ${r}`, level: 'warn', query: 'source:web @status:429', rare: true }),
  (r) => ({ name: `any error ${r}`, level: 'error', query: '@status:>=500 OR "connection reset"', rare: false }),
  (r) => ({ name: `404s and 429s ${r}`, level: 'warn', query: '@status:(404 OR 429) -source:worker', rare: false }),
  (r) => ({ name: `slow ${JOBS[r % 5]}`, level: 'info', query: `source:worker "job ${JOBS[r % 5]}" @durationMs:[100 TO 999]`, rare: false }),
  (r) => ({ name: `api writes to ${PATHS[r % 5]}`, level: 'info', query: `source:api @path:"/v1/${PATHS[r % 5]}" (POST OR PUT OR DELETE)`, rare: false }),
  (r) => ({ name: `logins without mfa ${r}`, level: 'debug', query: 'source:auth "mfa=none"', rare: false }),
  (r) => ({ name: `big charges ${r}`, level: 'info', query: `source:billing charged /charged [${5 + (r % 4)}-9]\\d{2}\\.\\d{2} EUR/`, rare: false }),
  (r) => ({ name: `worker fatal ${r}`, level: 'fatal', query: 'source:worker', rare: true }),
  (r) => ({ name: `billing warnings ${r}`, level: 'warn', query: 'source:billing', rare: false }),
  (r) => ({ name: `scripted clients failing ${r}`, level: 'error', query: 'source:web (okhttp OR "python-requests/")', rare: true }),
  (r) => ({ name: `health checks ${r}`, level: 'info', query: `source:${SOURCES[r % 2]} @path:"/healthz" @status:(200 OR 204 OR 304)`, rare: false }),
  (r) => ({ name: `long queue waits ${r}`, level: 'warn', query: `source:worker /waited [${5 + (r % 4)}-9]\\d{3} ms/`, rare: true }),
  (r) => ({ name: `failed logins from 10.${r}/16`, level: 'error', query: `source:auth @userId:usr_* "from 10.${r}."`, rare: true }),
  (r) => ({ name: `webauthn logins ${r}`, level: 'info', query: 'source:auth "mfa=webauthn"', rare: false }),
];

/** `n` background rules of a kind: high thresholds (rare ones 20,000+, others 1,000,000), cooldown 15m. */
export function backgroundRules(n: number, kind: RuleKind): RuleSpec[] {
  const templates: readonly ((r: number) => { name: string; level: string; source?: string; pattern?: string; query?: string; rare: boolean })[] = kind === 'query' ? QUERY_TEMPLATES : TEMPLATES;
  return Array.from({ length: n }, (_, i) => {
    const t = templates[i % templates.length]!(Math.floor(i / templates.length));
    const condition: Condition = { level: t.level, threshold: t.rare ? 20_000 + 1_000 * i : 1_000_000, window: WINDOWS[i % WINDOWS.length]! };
    if (t.source !== undefined) condition.source = t.source;
    if (t.pattern !== undefined) condition.pattern = t.pattern;
    if (t.query !== undefined) condition.query = t.query;
    return { name: t.name, condition, cooldown: '15m' };
  });
}

/**
 * The logs with the metadata the query rules look at besides status and durationMs: `path`, the
 * endpoint of api and web requests (`/v1/orders`, `/healthz`), and `userId`, of auth logs and of
 * three api or web requests in four.
 */
function withQueryMetadata(logs: BenchLog[]): BenchLog[] {
  return logs.map((log) => {
    const metadata: BenchLog['metadata'] & { path?: string; userId?: string } = { ...log.metadata };
    if (log.source === 'api' || log.source === 'web') {
      const url = log.message.split(' ')[1]!.split('?')[0]!;
      metadata.path = /^\/v1\/[^/]+/.exec(url)?.[0] ?? url;
      if (parseInt(log.metadata.requestId[4]!, 16) < 12) metadata.userId = `usr_${log.metadata.requestId.slice(4, 16)}`;
    } else if (log.source === 'auth') {
      const user = /user (usr_[0-9a-f]+)/.exec(log.message)?.[1];
      if (user !== undefined) metadata.userId = user;
    }
    return { ...log, metadata };
  });
}

/** The logs a run sends: with `--rules query`, with withQueryMetadata's fields. */
export function logsFor(kind: RuleKind, count: number, seed: number, startMs: number, stepMs: number): BenchLog[] {
  const logs = generateLogs(count, seed, startMs, stepMs);
  return kind === 'query' ? withQueryMetadata(logs) : logs;
}

