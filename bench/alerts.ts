/**
 * Alerts benchmark: how long a log takes to become an alert history entry, and what evaluating
 * alert rules costs ingestion, on each engine.
 *
 *   npm run bench:alerts -- [--engine sqlite|postgres|both] [--duration 15] [--probes 50]
 *                           [--background-rate 2000] [--clients 10] [--rules pattern|query]
 *                           [--pg-url URL]
 *
 * 1. Latency (one server and database per engine). For 1, 10 and 100 enabled rules in a project
 *    (the probe rule alone, then with 9 and 99 "background" rules that the probes never match),
 *    `--probes` probes are sent one after another, ~100 ms apart, while 2 clients send
 *    `--background-rate` logs/s of ordinary logs (200-log batches) to the same project. A probe is
 *    one fatal log from source "probe" with a unique message; the probe rule (fatal, source probe,
 *    threshold 1, window 1m, cooldown 0s, channel push without subscriptions) fires on each. The
 *    end-to-end latency runs from just before the probe's POST /v1/logs until a poll of the rule's
 *    history (every 10 ms) shows the entry whose sample holds the probe's message; the server-side
 *    part is the entry's triggeredAt minus the wall-clock time the probe was sent.
 * 2. Throughput (a fresh server and database for each run, so both start alike). The load of
 *    bench:ingest (`--clients` clients × 1,000-log batches of bench/logs.ts logs, here stamped over
 *    the minute before the run so every rule's window holds them) for `--duration` seconds into a
 *    project without rules, then into a project with 100 enabled rules: 99 on the stream's levels,
 *    sources and words (79 with RE2 patterns; ~85 of them match something in every batch; high
 *    thresholds, cooldown 15m, so each fires at most once) plus the probe rule. Both runs also send
 *    one probe a second. Alert evaluation runs after the commit, off the request's path, so the
 *    202 rate alone could hide a growing evaluation backlog: in the run with rules the bench also
 *    reads the rules' counters (alert_counts) straight from the database, compares them with the
 *    matches it works out itself for the batches acknowledged, and reports how much was counted
 *    when the load ended, how long the rest took, and the rate counting that catch-up. Its own
 *    count uses the server's predicate (parseQuery, withFilter and matchEach of
 *    src/features/logs/query), so it means what the server's does.
 *
 * `--rules query` writes the same kinds of rules in the query language instead (`condition.query`
 * with field terms on metadata such as `@status:>=500` and `@path:"/v1/orders"`, words, phrases and
 * `/regex/` terms; the probe rule too), and the logs then carry two more metadata fields for them
 * to look at: `path` (the endpoint of api and web logs) and `userId` (auth logs, and most api and
 * web logs). The default, `--rules pattern`, is the rules of level, source and RE2 pattern.
 *
 * Exits 1 on any 5xx or unexpected answer, a failed request (server gone), a probe whose history
 * entry never appears, counters that never reach (or exceed) the expected matches, a logCount that
 * differs from the logs acknowledged, a server that does not exit 0 on SIGTERM, or any server log
 * line at level error or above (those lines are printed). The load generator runs in this process,
 * so on a small machine it competes with the server for CPU; compare figures from one machine only.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { Engine } from '../src/config.js';
import { SQLITE_FILE } from '../src/db/connect.js';
import { levelIndex } from '../src/features/logs/levels.js';
import { compileRe2 } from '../src/features/logs/pattern.js';
import { EVERY_LOG, matchEach, parseQuery, withFilter, type Query } from '../src/features/logs/query/index.js';
import { backgroundRules, logsFor, type Condition, type RuleKind, type RuleSpec } from './alert-rules.js';
import { LiveBody, toRawRow, type BenchLog } from './logs.js';
import { createDatabase, send, startServer, type BenchDatabase, type HttpResponse, type RunningServer, call } from './server.js';
import { COMMON_USAGE, parseBenchArgs, optionsOrExit } from './options.js';

const RULE_COUNTS = [1, 10, 100] as const;
const PROBE_GAP_MS = 100;
const POLL_MS = 10;
/** A probe whose entry has not appeared by then counts as missing (it may still turn up late). */
const PROBE_TIMEOUT_MS = 15_000;
/** After this many missing probes in a row, the rest of that rule count is skipped. */
const MAX_MISSES_IN_A_ROW = 3;
const WARMUP_MS = 1000;
const BACKGROUND_CLIENTS = 2;
const BACKGROUND_BATCH = 200;
const BATCH_SIZE = 1_000;
const POOL_BATCHES = 50;
const LOAD_PROBE_EVERY_MS = 1000;
/** How long, after the throughput load, the probes' entries may take to appear. */
const DRAIN_TIMEOUT_MS = 120_000;
const MAX_EXAMPLES = 5;

const USAGE = `Usage: npm run bench:alerts -- [options]

  --duration <seconds>             length of each throughput run (default 15)
  --probes <n>                     probes per rule count in the latency runs (default 50)
  --background-rate <logs/s>       background load during the latency runs (default 2000)
  --clients <n>                    concurrent clients in the throughput runs (default 10)
  --tails <n>                      live tails open during the throughput run with rules (default 10)
  --skip-latency                   run the throughput part only
  --rules <pattern|query>          the rules' kind: level, source and RE2 pattern (default), or
                                   the same kinds of rules as query-language condition.query
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  durationS: number;
  probes: number;
  backgroundRate: number;
  clients: number;
  tails: number;
  skipLatency: boolean;
  ruleKind: RuleKind;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
      duration: { type: 'string', default: '15' },
      probes: { type: 'string', default: '50' },
      'background-rate': { type: 'string', default: '2000' },
      clients: { type: 'string', default: '10' },
      tails: { type: 'string', default: '10' },
      'skip-latency': { type: 'boolean', default: false },
      rules: { type: 'string', default: 'pattern' },
  });
  const durationS = Number(values.duration);
  const probes = Number(values.probes);
  const backgroundRate = Number(values['background-rate']);
  const clients = Number(values.clients);
  const tails = Number(values.tails);
  const problems = [
    engineProblem,
    Number.isFinite(durationS) && durationS > 0 ? undefined : `--duration must be a positive number of seconds (got "${values.duration}")`,
    Number.isInteger(probes) && probes >= 1 ? undefined : `--probes must be a whole number of at least 1 (got "${values.probes}")`,
    Number.isFinite(backgroundRate) && backgroundRate > 0 ? undefined : `--background-rate must be a positive number of logs per second (got "${values['background-rate']}")`,
    Number.isInteger(clients) && clients >= 1 ? undefined : `--clients must be a whole number of at least 1 (got "${values.clients}")`,
    Number.isInteger(tails) && tails >= 0 && tails <= 100 ? undefined : `--tails must be a whole number from 0 to 100 (got "${values.tails}")`,
    values.rules === 'pattern' || values.rules === 'query' ? undefined : `--rules must be pattern or query (got "${values.rules}")`,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { engines: engines!, durationS, probes, backgroundRate, clients, tails, skipLatency: values['skip-latency'] === true, ruleKind: values.rules as RuleKind, pgAdminUrl };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const round = (v: number | undefined, digits = 1) => (v === undefined ? null : Number(v.toFixed(digits)));
const ms = (v: number | undefined) => (v === undefined ? 'n/a' : `${fmt(v, v < 10 ? 1 : 0)} ms`);

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | undefined {
  return sorted.length === 0 ? undefined : sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(values: number[]): { p50: number | undefined; p99: number | undefined; max: number | undefined } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** What went wrong during one engine's run; any entry makes the bench exit 1. */
class Problems {
  readonly list: string[] = [];
  readonly #kinds = new Map<string, { count: number; examples: string[] }>();

  add(message: string): void {
    this.list.push(message);
  }

  /** An answer that should not have come; counted per kind, a few examples kept. */
  unexpected(where: string, res: HttpResponse): void {
    const kind = `${where}: HTTP ${res.status}`;
    const entry = this.#kinds.get(kind) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < MAX_EXAMPLES) entry.examples.push(res.body.slice(0, 300));
    this.#kinds.set(kind, entry);
  }

  all(): string[] {
    const grouped = [...this.#kinds].map(([kind, { count, examples }]) => `${count}× ${kind}, e.g.:\n${examples.map((e) => `      ${e}`).join('\n')}`);
    return [...grouped, ...this.list];
  }
}

interface Ctx {
  server: RunningServer;
  database: BenchDatabase;
  /** Setup calls and the loads. */
  agent: http.Agent;
  /** The probes' POSTs, on their own connection so they never wait behind the load. */
  probeAgent: http.Agent;
  /** The history polls, on their own connection too. */
  pollAgent: http.Agent;
  token: string;
  problems: Problems;
}

// ---------------------------------------------------------------------------------------------
// Rules

interface Rule {
  id: string;
  lastTriggeredAt: string | null;
}

const PROBE_RULES: Record<RuleKind, RuleSpec> = {
  pattern: { name: 'probe', condition: { level: 'fatal', threshold: 1, window: '1m', source: 'probe' }, cooldown: '0s' },
  query: { name: 'probe', condition: { level: 'fatal', threshold: 1, window: '1m', query: 'source:probe' }, cooldown: '0s' },
};

/** Creates the background rules, then the probe rule last (so it is not first in the evaluation). */
async function createRules(ctx: Ctx, projectId: string, background: number, kind: RuleKind): Promise<{ probeRuleId: string; backgroundRuleIds: string[] }> {
  const url = `${ctx.server.baseUrl}/v1/alerts`;
  const create = (spec: RuleSpec) => call<Rule>(ctx.agent, url, 'POST', 201, ctx.token, { projectId, ...spec, channels: ['push'] });
  const backgroundRuleIds: string[] = [];
  for (const spec of backgroundRules(background, kind)) backgroundRuleIds.push((await create(spec)).id);
  return { probeRuleId: (await create(PROBE_RULES[kind])).id, backgroundRuleIds };
}

/**
 * A rule's condition as the server's own predicate: its query (or every log) ANDed with its level
 * (exactly), source and pattern, as search ANDs the legacy parameters (withFilter). The rule's
 * window is left out: the logs sent are stamped within the last second or so, inside every window.
 */
function rulePredicate(c: Condition): Query {
  const query = c.query === undefined ? EVERY_LOG : parseQuery(c.query, '/condition/query');
  return withFilter(query, {
    levels: [levelIndex(c.level)!],
    ...(c.source === undefined ? {} : { source: c.source }),
    ...(c.pattern === undefined ? {} : { pattern: compileRe2(c.pattern) }),
  });
}

async function createProject(ctx: Ctx, name: string): Promise<{ id: string; apiKey: string }> {
  return call<{ id: string; apiKey: string }>(ctx.agent, `${ctx.server.baseUrl}/v1/projects`, 'POST', 201, ctx.token, { name });
}

// ---------------------------------------------------------------------------------------------
// Probes and history

interface HistoryEntry {
  id: string;
  triggeredAt: string;
  matchedCount: number;
  deliveries: { channel: string; status: string; error?: string }[];
  sample: { message: string }[];
}

interface Probe {
  message: string;
  /** Wall-clock ms just before the POST (comparable with the server's triggeredAt). */
  sentWall: number;
  /** performance.now() just before the POST. */
  sentAt: number;
  /** How long the POST took to answer 202. */
  ackMs?: number;
  /** End-to-end: until a poll showed the entry. */
  seenMs?: number;
  /** The entry's triggeredAt minus sentWall. */
  serverMs?: number;
}

function probeBody(message: string, wall: number): Buffer {
  return Buffer.from(JSON.stringify([{ timestamp: new Date(wall).toISOString(), level: 'fatal', source: 'probe', message }]));
}

/** Sends one probe; resolves when the POST is answered (a non-202 is recorded as a problem). */
async function postProbe(ctx: Ctx, apiKey: string, probe: Probe, where: string): Promise<boolean> {
  const body = probeBody(probe.message, probe.sentWall);
  try {
    const res = await send(ctx.probeAgent, `${ctx.server.baseUrl}/v1/logs`, 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json' }, body);
    if (res.status !== 202) {
      ctx.problems.unexpected(`${where}: probe POST /v1/logs`, res);
      return false;
    }
    probe.ackMs = performance.now() - probe.sentAt;
    return true;
  } catch (err) {
    ctx.problems.add(`${where}: probe POST /v1/logs failed: ${errorText(err)}`);
    return false;
  }
}

/** One page of a rule's history; undefined (and a problem recorded) if the answer is not 200. */
async function historyPage(ctx: Ctx, ruleId: string, where: string, cursor?: string): Promise<{ data: HistoryEntry[]; nextCursor: string | null } | undefined> {
  const query = cursor === undefined ? 'limit=100' : `limit=100&cursor=${encodeURIComponent(cursor)}`;
  const res = await send(ctx.pollAgent, `${ctx.server.baseUrl}/v1/alerts/${ruleId}/history?${query}`, 'GET', { authorization: `Bearer ${ctx.token}` });
  if (res.status !== 200) {
    ctx.problems.unexpected(`${where}: GET /v1/alerts/:id/history`, res);
    return undefined;
  }
  return JSON.parse(res.body) as { data: HistoryEntry[]; nextCursor: string | null };
}

/** Every entry of a rule's history, all pages. */
async function wholeHistory(ctx: Ctx, ruleId: string, where: string): Promise<HistoryEntry[] | undefined> {
  const entries: HistoryEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await historyPage(ctx, ruleId, where, cursor);
    if (!page) return undefined;
    entries.push(...page.data);
    if (page.nextCursor === null) return entries;
    cursor = page.nextCursor;
  }
}

/** Polls the newest history page every POLL_MS until an entry's sample holds `message`. */
async function waitForEntry(ctx: Ctx, ruleId: string, probe: Probe, where: string): Promise<HistoryEntry | undefined> {
  const deadline = probe.sentAt + PROBE_TIMEOUT_MS;
  for (;;) {
    let page;
    try {
      page = await historyPage(ctx, ruleId, where);
    } catch (err) {
      ctx.problems.add(`${where}: GET /v1/alerts/:id/history failed: ${errorText(err)}`);
      return undefined;
    }
    if (!page) return undefined;
    const entry = page.data.find((e) => e.sample.some((s) => s.message === probe.message));
    if (entry) {
      probe.seenMs = performance.now() - probe.sentAt;
      probe.serverMs = Date.parse(entry.triggeredAt) - probe.sentWall;
      return entry;
    }
    if (performance.now() > deadline) return undefined;
    await sleep(POLL_MS);
  }
}

function tallyDeliveries(entries: HistoryEntry[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const d of entries.flatMap((e) => e.deliveries)) {
    const key = d.error ? `${d.status} (${d.error})` : d.status;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}

// ---------------------------------------------------------------------------------------------
// Loads

interface Statuses {
  '202': number;
  other: number;
}

/** Ordinary logs at `rate` logs/s from BACKGROUND_CLIENTS clients, stamped with the time of sending. */
function startBackground(ctx: Ctx, apiKey: string, rate: number, where: string, kind: RuleKind): { stop(): Promise<{ logsPerSec: number; ackP50: number | undefined; ackP99: number | undefined; statuses: Statuses }> } {
  const logs = logsFor(kind, 20_000, 7, 0, 1);
  const intervalMs = (BACKGROUND_CLIENTS * BACKGROUND_BATCH * 1000) / rate;
  const statuses: Statuses = { '202': 0, other: 0 };
  const latencies: number[] = [];
  let acknowledged = 0;
  let stopped = false;
  let offset = 0;
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const start = performance.now();

  async function client(index: number): Promise<void> {
    let next = performance.now() + (index * intervalMs) / BACKGROUND_CLIENTS;
    while (!stopped) {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      if (stopped) break;
      next = Math.max(next + intervalMs, performance.now());
      const now = Date.now();
      const batch: BenchLog[] = [];
      for (let i = 0; i < BACKGROUND_BATCH; i++) {
        const log = logs[offset++ % logs.length]!;
        // Spread over the last ~200 ms, as a client that flushes every so often would send them.
        batch.push({ ...log, timestamp: new Date(now - (BACKGROUND_BATCH - i)).toISOString() });
      }
      const sent = performance.now();
      let res;
      try {
        res = await send(ctx.agent, `${ctx.server.baseUrl}/v1/logs`, 'POST', headers, Buffer.from(JSON.stringify(batch)));
      } catch (err) {
        ctx.problems.add(`${where}: a background client stopped: request failed: ${errorText(err)}`);
        return;
      }
      if (res.status === 202) {
        statuses['202']++;
        acknowledged += BACKGROUND_BATCH;
        latencies.push(performance.now() - sent);
      } else {
        statuses.other++;
        ctx.problems.unexpected(`${where}: background POST /v1/logs`, res);
      }
    }
  }

  const clients = Array.from({ length: BACKGROUND_CLIENTS }, (_, i) => client(i));
  return {
    async stop() {
      stopped = true;
      await Promise.all(clients);
      const { p50, p99 } = summary(latencies);
      return { logsPerSec: acknowledged / ((performance.now() - start) / 1000), ackP50: p50, ackP99: p99, statuses };
    },
  };
}

interface LoadResult {
  seconds: number;
  acknowledgedLogs: number;
  latencies: number[];
  statuses: Statuses;
}

/** bench:ingest's load: `clients` loops each sending the next pooled batch until the deadline. */
async function runLoad(ctx: Ctx, apiKey: string, bodies: LiveBody[], clients: number, durationS: number, label: string, onAck?: (bodyIndex: number) => void): Promise<LoadResult> {
  const result: LoadResult = { seconds: 0, acknowledgedLogs: 0, latencies: [], statuses: { '202': 0, other: 0 } };
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const url = `${ctx.server.baseUrl}/v1/logs`;
  let next = 0;
  let rejected = 0;
  const start = performance.now();
  const deadline = start + durationS * 1000;

  async function client(): Promise<void> {
    while (performance.now() < deadline) {
      const bodyIndex = next++ % bodies.length;
      const body = bodies[bodyIndex]!.at(Date.now());
      const sent = performance.now();
      let res;
      try {
        res = await send(ctx.agent, url, 'POST', headers, body);
      } catch (err) {
        ctx.problems.add(`${label}: a client stopped: request failed: ${errorText(err)}`);
        return;
      }
      if (res.status === 202) {
        const answer = JSON.parse(res.body) as { accepted: number; rejected: unknown[] };
        result.statuses['202']++;
        result.acknowledgedLogs += answer.accepted;
        rejected += answer.rejected.length;
        result.latencies.push(performance.now() - sent);
        onAck?.(bodyIndex);
      } else {
        result.statuses.other++;
        ctx.problems.unexpected(`${label}: POST /v1/logs`, res);
        if (res.status === 429 || res.status === 503) {
          const retryAfterS = Number(res.headers['retry-after']);
          await sleep(Math.min((Number.isFinite(retryAfterS) ? retryAfterS : 1) * 1000, Math.max(0, deadline - performance.now())));
        }
      }
    }
  }

  const tty = process.stderr.isTTY;
  let last = { at: start, logs: 0 };
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const rate = (result.acknowledgedLogs - last.logs) / ((now - last.at) / 1000);
    last = { at: now, logs: result.acknowledgedLogs };
    const line = `  ${label}: ${fmt((now - start) / 1000)} / ${durationS} s   ${fmt(rate)} logs/s now   ${fmt(result.acknowledgedLogs)} acknowledged`;
    if (tty) process.stderr.write(`\r${line.padEnd(90)}`);
    else if (++ticks % 5 === 0) progress(line);
  }, 1000);
  await Promise.all(Array.from({ length: clients }, client));
  clearInterval(timer);
  if (tty) process.stderr.write(`\r${' '.repeat(90)}\r`);
  result.seconds = (performance.now() - start) / 1000;
  result.latencies.sort((a, b) => a - b);
  if (rejected > 0) ctx.problems.add(`${label}: the server rejected ${rejected} generated log(s)`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// A server per phase

const PINO_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

interface ServerOutputCheck {
  /** Lines at level error or above, and lines that are not pino JSON (crashes on stderr). */
  errors: string[];
  /** Warnings grouped as "warn msg" → count. */
  warnings: Map<string, number>;
}

function checkServerOutput(lines: string[]): ServerOutputCheck {
  const errors: string[] = [];
  const warnings = new Map<string, number>();
  for (const line of lines) {
    let entry: { level?: number; msg?: string } | undefined;
    try {
      entry = JSON.parse(line) as { level?: number; msg?: string };
    } catch {
      entry = undefined;
    }
    if (entry === undefined || typeof entry.level !== 'number' || entry.level >= 50) errors.push(line);
    else if (entry.level >= 40) {
      const key = `${PINO_LEVELS[entry.level] ?? entry.level} "${entry.msg ?? ''}"`;
      warnings.set(key, (warnings.get(key) ?? 0) + 1);
    }
  }
  return { errors, warnings };
}

interface ServerRun<T> {
  value: T;
  exit: number | NodeJS.Signals;
  stopMs: number;
  output: ServerOutputCheck;
}

/** A fresh database and server, signed up; runs `fn`, stops the server, checks what it logged. */
async function withServer<T>(engine: Engine, options: Options, problems: Problems, label: string, fn: (ctx: Ctx) => Promise<T>): Promise<ServerRun<T>> {
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const pollAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const server = await startServer(database, agent);
    let value: T | undefined;
    let error: unknown;
    try {
      const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, {
        email: `bench-${randomBytes(4).toString('hex')}@example.com`,
        password: randomBytes(12).toString('hex'),
      });
      value = await fn({ server, database, agent, probeAgent, pollAgent, token: accessToken, problems });
    } catch (err) {
      error = err;
    }
    const stopStart = performance.now();
    const exit = await server.stop();
    const stopMs = performance.now() - stopStart;
    const output = checkServerOutput(server.output);
    if (error !== undefined) {
      throw new Error(`${label}: ${errorText(error)}\nThe server exited (${exit}). Its last output:\n${server.output.slice(-20).join('\n') || '(none)'}`);
    }
    if (exit !== 0) problems.add(`${label}: the server did not stop cleanly on SIGTERM (exit ${exit})`);
    if (output.errors.length > 0) problems.add(`${label}: the server logged ${output.errors.length} line(s) at level error or above (printed below)`);
    return { value: value as T, exit, stopMs, output };
  } finally {
    agent.destroy();
    probeAgent.destroy();
    pollAgent.destroy();
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Latency

interface LatencyResult {
  rules: number;
  probesSent: number;
  found: number;
  /** Entries that appeared only after PROBE_TIMEOUT_MS (found in the check after the run). */
  late: number[];
  endToEnd: number[];
  server: number[];
  ack: number[];
  background: { logsPerSec: number; ackP50: number | undefined; ackP99: number | undefined; statuses: Statuses };
  deliveries: Record<string, number>;
  entries: number;
}

async function measureLatency(ctx: Ctx, engine: Engine, rules: number, options: Options, runId: string): Promise<LatencyResult> {
  const label = `${engine} latency, ${rules} rule${rules === 1 ? '' : 's'}`;
  const project = await createProject(ctx, `alerts-latency-${rules}`);
  progress(`${engine}: latency with ${rules} rule(s): creating the rules`);
  const { probeRuleId } = await createRules(ctx, project.id, rules - 1, options.ruleKind);
  progress(`${engine}: latency with ${rules} rule(s): ${options.probes} probes under ${fmt(options.backgroundRate)} logs/s of background load`);

  const background = startBackground(ctx, project.apiKey, options.backgroundRate, label, options.ruleKind);
  const probes: Probe[] = [];
  let missesInARow = 0;
  let backgroundResult: Awaited<ReturnType<typeof background.stop>>;
  try {
    await sleep(WARMUP_MS);
    for (let i = 0; i < options.probes; i++) {
      const probe: Probe = { message: `probe ${runId} rules=${rules} #${i} ${randomBytes(4).toString('hex')}`, sentWall: Date.now(), sentAt: performance.now() };
      probes.push(probe);
      const [posted, entry] = await Promise.all([postProbe(ctx, project.apiKey, probe, label), waitForEntry(ctx, probeRuleId, probe, label)]);
      if (posted && !entry) {
        missesInARow++;
        if (missesInARow >= MAX_MISSES_IN_A_ROW) {
          ctx.problems.add(`${label}: ${MAX_MISSES_IN_A_ROW} probes in a row got no history entry within ${PROBE_TIMEOUT_MS / 1000} s; skipped the remaining probes`);
          break;
        }
      } else missesInARow = 0;
      if (!posted) break;
      await sleep(PROBE_GAP_MS);
    }
  } finally {
    backgroundResult = await background.stop();
  }

  // Probes that timed out may have fired late; and the deliveries should all have ended by now.
  let entries: HistoryEntry[] = [];
  for (let wait = 0; wait < 10_000; wait += 250) {
    entries = (await wholeHistory(ctx, probeRuleId, label)) ?? [];
    if (!entries.some((e) => e.deliveries.some((d) => d.status === 'pending'))) break;
    await sleep(250);
  }
  const late: number[] = [];
  for (const probe of probes.filter((p) => p.ackMs !== undefined && p.seenMs === undefined)) {
    const entry = entries.find((e) => e.sample.some((s) => s.message === probe.message));
    if (entry) late.push(Date.parse(entry.triggeredAt) - probe.sentWall);
  }
  const posted = probes.filter((p) => p.ackMs !== undefined);
  const found = probes.filter((p) => p.seenMs !== undefined);
  const missing = posted.length - found.length;
  if (missing > 0) {
    ctx.problems.add(`${label}: ${missing} of ${posted.length} probes got no history entry within ${PROBE_TIMEOUT_MS / 1000} s` + (late.length > 0 ? ` (${late.length} appeared later, triggeredAt − sent: ${late.map((v) => `${fmt(v)} ms`).join(', ')})` : ''));
  }
  return {
    rules,
    probesSent: posted.length,
    found: found.length,
    late,
    endToEnd: found.map((p) => p.seenMs!),
    server: found.map((p) => p.serverMs!),
    ack: posted.map((p) => p.ackMs!),
    background: backgroundResult,
    deliveries: tallyDeliveries(entries),
    entries: entries.length,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Throughput

interface ThroughputResult {
  rules: number;
  load: LoadResult;
  logCount: number;
  peakRssBytes: number | undefined;
  stopMs: number;
  /** With rules: the probes sent during the load, and when their entries were written. */
  probesSent: number;
  probesFound: number;
  /** triggeredAt − sent, ms. */
  probeServerMs: number[];
  /** From the end of the load until every probe's entry was there (0 if all were already). */
  drainMs: number | undefined;
  /**
   * With rules: how far alert evaluation (which runs after the 202) had got. `expected` is how
   * many (log, rule) matches the acknowledged batches hold for the 99 stream rules (worked out here
   * with the server's predicate, rulePredicate), `countedAtEnd` what the server's counters (alert_counts) held for
   * those rules when the load ended, `catchUpMs` how long after the load they reached `expected`.
   */
  evaluation?: { expected: number; countedAtEnd: number; catchUpMs: number | undefined };
  backgroundRules: number;
  backgroundRulesFired: number;
  tails: TailReport[];
}

/**
 * The logs of bench:ingest, but stamped over the minute before now, so every rule's window holds
 * them; and for each batch, how many (log, rule) matches it holds for `specs`, decided by the
 * server's own predicate (rulePredicate, matchEach) on the logs as the server stores them.
 */
async function buildPool(specs: RuleSpec[], kind: RuleKind): Promise<{ bodies: LiveBody[]; matches: number[] }> {
  const count = POOL_BATCHES * BATCH_SIZE;
  const spreadMs = 60_000;
  const logs = logsFor(kind, count, 42, Date.now() - spreadMs, Math.max(1, Math.floor(spreadMs / count)));
  const bodies: LiveBody[] = [];
  for (let i = 0; i < count; i += BATCH_SIZE) bodies.push(new LiveBody(logs.slice(i, i + BATCH_SIZE)));
  const matches: number[] = new Array<number>(bodies.length).fill(0);
  const rows = logs.map(toRawRow);
  const deadline = Date.now() + 600_000;
  const predicates = specs.map(({ condition }) => rulePredicate(condition));
  const verdicts = await matchEach(rows, () => predicates, 'bench-reference', deadline);
  verdicts.forEach((answers, i) => {
    answers.forEach((verdict, k) => {
      if (verdict === undefined) throw new Error(`the bench's own count could not decide a log for the rule "${specs[k]!.name}"`);
      if (verdict) matches[Math.floor(i / BATCH_SIZE)]!++;
    });
  });
  return { bodies, matches };
}

/**
 * Reads the rules' counters straight from the server's database (the API does not show them):
 * the matches counted so far for the rules of a project other than one.
 */
async function openCounterReader(database: BenchDatabase, projectId: string, exceptRuleId: string): Promise<{ counted(): Promise<number>; close(): Promise<void> }> {
  const statement = 'select coalesce(sum(c.n), 0) as n from alert_counts c join alert_rules r on r.id = c.rule_id where r.project_id = $1 and r.id <> $2';
  if (database.databaseUrl === undefined) {
    const db = new Sqlite(path.join(database.dataDir, SQLITE_FILE), { readonly: true, fileMustExist: true });
    const query = db.prepare<[string, string], { n: number }>(statement.replace('$1', '?').replace('$2', '?'));
    return { counted: async () => Number(query.get(projectId, exceptRuleId)?.n ?? 0), close: async () => void db.close() };
  }
  const client = new pg.Client({ connectionString: database.databaseUrl });
  await client.connect();
  return {
    counted: async () => Number((await client.query<{ n: string }>(statement, [projectId, exceptRuleId])).rows[0]?.n ?? 0),
    close: () => client.end(),
  };
}

/**
 * The filters of the tails open during the run with rules: what a team watching the stream has
 * open (two on everything, the rest on levels, sources and words of bench/logs.ts).
 */
const TAIL_FILTERS = ['', '', 'level=error', 'level=warn', 'source=api', 'source=worker', 'level=error&source=api', 'q=timeout', 'level=info&source=billing', 'q=failed'];

interface TailReport {
  filter: string;
  events: number;
  /** The server ended the stream before the run did (a tail too far behind is dropped). */
  endedEarly: boolean;
}

/** Opens `n` live tails on the project and counts the `event: log` frames each receives. */
async function openTails(ctx: Ctx, projectId: string, n: number): Promise<{ stop(): TailReport[] }> {
  const reports: TailReport[] = [];
  const requests: http.ClientRequest[] = [];
  let stopping = false;
  const marker = Buffer.from('event: log\n');
  await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const filter = TAIL_FILTERS[i % TAIL_FILTERS.length]!;
      const report: TailReport = { filter: filter || '(none)', events: 0, endedEarly: false };
      reports.push(report);
      return new Promise<void>((resolve, reject) => {
        const req = http.get(`${ctx.server.baseUrl}/v1/projects/${projectId}/logs/tail${filter ? `?${filter}` : ''}`, { headers: { authorization: `Bearer ${ctx.token}` }, agent: false }, (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`tail ${report.filter}: status ${res.statusCode}`));
            res.resume();
            return;
          }
          let carry: Buffer = Buffer.alloc(0);
          res.on('data', (chunk: Buffer) => {
            const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
            let at = 0;
            for (;;) {
              const i = buf.indexOf(marker, at);
              if (i < 0) break;
              report.events++;
              at = i + marker.length;
            }
            carry = buf.subarray(Math.max(at, buf.length - marker.length + 1));
          });
          res.on('end', () => void (stopping || (report.endedEarly = true)));
          res.on('error', () => void (stopping || (report.endedEarly = true)));
          resolve();
        });
        req.on('error', (err) => (stopping ? undefined : reject(err)));
        requests.push(req);
      });
    }),
  );
  return {
    stop() {
      stopping = true;
      for (const req of requests) req.destroy();
      return reports;
    },
  };
}

async function measureThroughput(engine: Engine, rules: 0 | 100, options: Options, problems: Problems, runId: string): Promise<{ result: ThroughputResult; output: ServerOutputCheck }> {
  const label = `${engine} throughput, ${rules} rules`;
  const run = await withServer(engine, options, problems, label, async (ctx) => {
    const project = await createProject(ctx, `alerts-throughput-${rules}`);
    let probeRuleId: string | undefined;
    let backgroundRuleIds: string[] = [];
    if (rules > 0) {
      progress(`${engine}: throughput with ${rules} rules: creating the rules`);
      ({ probeRuleId, backgroundRuleIds } = await createRules(ctx, project.id, rules - 1, options.ruleKind));
    }
    const counters = probeRuleId === undefined ? undefined : await openCounterReader(ctx.database, project.id, probeRuleId);
    const tails = rules > 0 && options.tails > 0 ? await openTails(ctx, project.id, options.tails) : undefined;

    try {
      const pool = await buildPool(backgroundRules(backgroundRuleIds.length, options.ruleKind), options.ruleKind);
      let expected = 0;
      const onAck = (i: number) => void (expected += pool.matches[i]!);
      progress(`${engine}: throughput with ${rules} rules: ${options.clients} clients × ${fmt(BATCH_SIZE)}-log batches for ${options.durationS} s`);

      // One probe a second in both runs, so both carry the same load; only the run with rules can fire.
      const probes: Probe[] = [];
      const loadDone = { value: false };
      const prober = (async () => {
        let i = 0;
        while (!loadDone.value) {
          await sleep(LOAD_PROBE_EVERY_MS);
          if (loadDone.value) break;
          const probe: Probe = { message: `probe ${runId} load rules=${rules} #${i++} ${randomBytes(4).toString('hex')}`, sentWall: Date.now(), sentAt: performance.now() };
          probes.push(probe);
          if (!(await postProbe(ctx, project.apiKey, probe, label))) break;
        }
      })();
      const load = await runLoad(ctx, project.apiKey, pool.bodies, options.clients, options.durationS, label, onAck);
      const loadEnd = performance.now();
      const countedAtEnd = counters ? await counters.counted() : 0;
      // A moment for the tails to receive what was committed last, then close them.
      if (tails) await sleep(500);
      const tailReports = tails?.stop() ?? [];
      for (const t of tailReports) {
        if (t.endedEarly) problems.add(`${label}: the server ended the tail with filter ${t.filter} during the run (it fell behind)`);
        else if (t.filter === '(none)' && t.events < load.acknowledgedLogs) problems.add(`${label}: an unfiltered tail received ${fmt(t.events)} logs of the ${fmt(load.acknowledgedLogs)} acknowledged`);
      }
      loadDone.value = true;
      await prober;
      const peakRssBytes = ctx.server.peakRssBytes();

      const posted = probes.filter((p) => p.ackMs !== undefined);
      let drainMs: number | undefined;
      let catchUpMs: number | undefined;
      let found = 0;
      let backgroundRulesFired = 0;
      if (probeRuleId !== undefined) {
        progress(`${engine}: throughput with ${rules} rules: waiting for the probes' history entries and the rule counters`);
        for (;;) {
          if (catchUpMs === undefined && counters) {
            const counted = await counters.counted();
            if (counted >= expected) catchUpMs = performance.now() - loadEnd;
            if (counted > expected) problems.add(`${label}: the rules' counters hold ${fmt(counted)} matches, more than the ${fmt(expected)} the acknowledged logs hold`);
          }
          if (drainMs === undefined) {
            const entries = (await wholeHistory(ctx, probeRuleId, label)) ?? [];
            found = 0;
            for (const probe of posted) {
              const entry = entries.find((e) => e.sample.some((s) => s.message === probe.message));
              if (entry) {
                probe.serverMs = Date.parse(entry.triggeredAt) - probe.sentWall;
                found++;
              }
            }
            if (found === posted.length) drainMs = performance.now() - loadEnd;
          }
          if (drainMs !== undefined && catchUpMs !== undefined) break;
          if (performance.now() - loadEnd > DRAIN_TIMEOUT_MS) {
            if (drainMs === undefined) problems.add(`${label}: ${posted.length - found} of ${posted.length} probes sent during the load had no history entry ${DRAIN_TIMEOUT_MS / 1000} s after it ended`);
            if (catchUpMs === undefined) problems.add(`${label}: ${DRAIN_TIMEOUT_MS / 1000} s after the load, the rules' counters still held fewer than the ${fmt(expected)} matches the acknowledged logs hold`);
            break;
          }
          await sleep(100);
        }
        const { data } = await call<{ data: Rule[] }>(ctx.agent, `${ctx.server.baseUrl}/v1/alerts?projectId=${project.id}`, 'GET', 200, ctx.token);
        const background = new Set(backgroundRuleIds);
        backgroundRulesFired = data.filter((r) => background.has(r.id) && r.lastTriggeredAt !== null).length;
      }
      const { logCount } = await call<{ logCount: number }>(ctx.agent, `${ctx.server.baseUrl}/v1/projects/${project.id}`, 'GET', 200, ctx.token);
      // The probes are logs of the project too.
      const expectedLogs = load.acknowledgedLogs + posted.length;
      if (logCount !== expectedLogs) problems.add(`${label}: logCount ${fmt(logCount)} differs from the ${fmt(expectedLogs)} logs acknowledged with 202`);
      const result: ThroughputResult = {
        rules,
        load,
        logCount,
        peakRssBytes,
        stopMs: 0,
        probesSent: posted.length,
        probesFound: found,
        probeServerMs: posted.filter((p) => p.serverMs !== undefined).map((p) => p.serverMs!),
        drainMs,
        backgroundRules: backgroundRuleIds.length,
        backgroundRulesFired,
        tails: tailReports,
      };
      if (counters) result.evaluation = { expected, countedAtEnd, catchUpMs };
      return result;
    } finally {
      await counters?.close();
    }
  });
  return { result: { ...run.value, stopMs: run.stopMs }, output: run.output };
}

// ---------------------------------------------------------------------------------------------
// Per engine

interface EngineReport {
  engine: Engine;
  latency: LatencyResult[];
  throughput: ThroughputResult[];
  serverErrors: string[];
  serverWarnings: Map<string, number>;
  problems: string[];
}

async function benchEngine(engine: Engine, options: Options): Promise<EngineReport> {
  const problems = new Problems();
  const runId = randomBytes(3).toString('hex');
  const serverErrors: string[] = [];
  const serverWarnings = new Map<string, number>();
  const keep = (output: ServerOutputCheck) => {
    serverErrors.push(...output.errors);
    for (const [k, n] of output.warnings) serverWarnings.set(k, (serverWarnings.get(k) ?? 0) + n);
  };

  let latency: LatencyResult[] = [];
  if (!options.skipLatency) {
    progress(`${engine}: latency runs (one server)`);
    const latencyRun = await withServer(engine, options, problems, `${engine} latency`, async (ctx) => {
      const results: LatencyResult[] = [];
      for (const rules of RULE_COUNTS) results.push(await measureLatency(ctx, engine, rules, options, runId));
      return results;
    });
    keep(latencyRun.output);
    latency = latencyRun.value;
  }

  const throughput: ThroughputResult[] = [];
  for (const rules of [0, 100] as const) {
    const { result, output } = await measureThroughput(engine, rules, options, problems, runId);
    throughput.push(result);
    keep(output);
  }
  return { engine, latency, throughput, serverErrors, serverWarnings, problems: problems.all() };
}

function printReport(r: EngineReport, options: Options): void {
  if (r.latency.length > 0) printLatency(r, options);
  printThroughput(r, options);
}

function printLatency(r: EngineReport, options: Options): void {
  console.log(`${r.engine} — ingest → alert history latency: ${options.probes} probes per row, one every ~${PROBE_GAP_MS} ms after the previous one's entry,`);
  console.log(`  while ${BACKGROUND_CLIENTS} clients send ${fmt(options.backgroundRate)} logs/s (${BACKGROUND_BATCH}-log batches) to the same project; history polled every ${POLL_MS} ms.`);
  console.log(`  "Rules" counts every enabled rule of the project: the probe rule plus 0, 9 or 99 background rules (${ruleKindText(options)}).`);
  const header = ['rules', 'found', 'end-to-end p50', 'p99', 'max', 'server-side p50', 'p99', 'max', 'probe 202 p50', 'p99', 'background', 'bg 202 p50', 'p99'];
  const rows = r.latency.map((l) => {
    const e = summary(l.endToEnd);
    const s = summary(l.server);
    const a = summary(l.ack);
    return [
      `${l.rules}${l.rules === 1 ? ' (probe only)' : ''}`,
      `${l.found}/${l.probesSent}`,
      ms(e.p50), ms(e.p99), ms(e.max), ms(s.p50), ms(s.p99), ms(s.max), ms(a.p50), ms(a.p99),
      `${fmt(l.background.logsPerSec)} logs/s`, ms(l.background.ackP50), ms(l.background.ackP99),
    ];
  });
  printTable(header, rows);
  for (const l of r.latency) console.log(`  ${l.rules} rule(s): ${l.entries} history entries; deliveries: ${Object.entries(l.deliveries).map(([k, n]) => `${n}× ${k}`).join(', ') || 'none'}`);
  if (options.probes < 100) console.log(`  (with ${options.probes} probes, p99 is the second-highest value or the highest: nearest rank)`);
  console.log();
}

function printThroughput(r: EngineReport, options: Options): void {
  const [none, many] = r.throughput;
  console.log(`${r.engine} — ingest throughput: ${options.clients} clients × ${fmt(BATCH_SIZE)}-log batches for ${options.durationS} s, a fresh database per run, one probe a second in both`);
  console.log(`  rules: ${ruleKindText(options)}`);
  const tHeader = ['rules', 'tails', 'logs/s', '202 p50', 'p99', 'requests 202/other', 'peak RSS', 'logCount', 'SIGTERM → exit'];
  const tRows = r.throughput.map((t) => [
    String(t.rules),
    String(t.tails.length),
    fmt(t.load.acknowledgedLogs / t.load.seconds),
    ms(percentile(t.load.latencies, 50)),
    ms(percentile(t.load.latencies, 99)),
    `${t.load.statuses['202']}/${t.load.statuses.other}`,
    t.peakRssBytes === undefined ? 'n/a' : `${fmt(t.peakRssBytes / 1e6)} MB`,
    t.logCount === t.load.acknowledgedLogs + t.probesSent ? `${fmt(t.logCount)} ✓` : `${fmt(t.logCount)} ✗`,
    ms(t.stopMs),
  ]);
  printTable(tHeader, tRows);
  if (none && many) {
    const ratio = ratioPct(r);
    console.log(`  with 100 rules and ${many.tails.length} open tails: ${fmt(ratio ?? 0, 1)} % of the rate without either (target ≥ 80 %)`);
    for (const t of many.tails) console.log(`    tail ${t.filter}: ${fmt(t.events)} logs received${t.endedEarly ? ' (ended early: fell behind)' : ''}`);
    const p = summary(many.probeServerMs);
    console.log(
      `  during that run, ${many.probesFound}/${many.probesSent} probes fired; triggeredAt − sent p50 ${ms(p.p50)}, p99 ${ms(p.p99)}, max ${ms(p.max)}; ` +
        `all entries there ${many.drainMs === undefined ? 'never (see FAILED)' : `${ms(many.drainMs)} after the load ended`}`,
    );
    console.log(`  ${many.backgroundRulesFired} of the ${many.backgroundRules} other rules fired (each at most once: cooldown 15m)`);
    const ev = many.evaluation;
    if (ev) {
      console.log(
        `  evaluation behind the 202s: when the load ended, the 99 stream rules' counters held ${fmt(ev.countedAtEnd)} of the ${fmt(ev.expected)} matches in the logs acknowledged ` +
          `(${fmt(ev.expected === 0 ? 100 : (100 * ev.countedAtEnd) / ev.expected, 1)} %); all counted ${ev.catchUpMs === undefined ? 'never (see FAILED)' : `${ms(ev.catchUpMs)} after the load ended`}`,
      );
      const evaluated = evaluatedLogsPerSec(many);
      if (evaluated !== undefined) {
        console.log(`  counting the catch-up: ${fmt(evaluated)} logs/s acknowledged and evaluated = ${fmt(evaluatedRatioPct(r) ?? 0, 1)} % of the rate without rules`);
      }
    }
  }
  if (r.serverWarnings.size > 0) {
    console.log(`  server warnings: ${[...r.serverWarnings].map(([k, n]) => `${n}× ${k}`).join('; ')}`);
  }
  if (r.serverErrors.length > 0) {
    console.log(`  the server logged ${r.serverErrors.length} line(s) at level error or above${r.serverErrors.length > 20 ? ' (the first 20)' : ''}:`);
    for (const line of r.serverErrors.slice(0, 20)) console.log(`    ${line.slice(0, 2000)}`);
  }
  for (const problem of r.problems) console.log(`  FAILED: ${problem}`);
}

const ruleKindText = (options: Options) => (options.ruleKind === 'query' ? 'condition.query in the query language, on logs with path and userId metadata' : 'level, source and RE2 pattern');

function ratioPct(r: EngineReport): number | undefined {
  const [none, many] = r.throughput;
  if (!none || !many) return undefined;
  return (100 * (many.load.acknowledgedLogs / many.load.seconds)) / (none.load.acknowledgedLogs / none.load.seconds);
}

/** The logs acknowledged over the time until they were all evaluated too (load + catch-up). */
function evaluatedLogsPerSec(t: ThroughputResult): number | undefined {
  const catchUpMs = t.evaluation?.catchUpMs;
  return catchUpMs === undefined ? undefined : t.load.acknowledgedLogs / (t.load.seconds + catchUpMs / 1000);
}

function evaluatedRatioPct(r: EngineReport): number | undefined {
  const [none, many] = r.throughput;
  const evaluated = many && evaluatedLogsPerSec(many);
  if (!none || evaluated === undefined) return undefined;
  return (100 * evaluated) / (none.load.acknowledgedLogs / none.load.seconds);
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`;
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

function resultLine(r: EngineReport, options: Options): string {
  const stats = (values: number[]) => {
    const s = summary(values);
    return { p50Ms: round(s.p50), p99Ms: round(s.p99), maxMs: round(s.max) };
  };
  return `BENCH_ALERTS ${JSON.stringify({
    engine: r.engine,
    rules: options.ruleKind,
    node: process.version,
    cpus: os.cpus().length,
    latency: {
      probes: options.probes,
      probeGapMs: PROBE_GAP_MS,
      pollMs: POLL_MS,
      backgroundClients: BACKGROUND_CLIENTS,
      backgroundBatch: BACKGROUND_BATCH,
      backgroundRateTarget: options.backgroundRate,
      rows: r.latency.map((l) => ({
        rules: l.rules,
        backgroundRules: l.rules - 1,
        probesSent: l.probesSent,
        found: l.found,
        lateServerMs: l.late,
        endToEnd: stats(l.endToEnd),
        serverSide: stats(l.server),
        probeAck: stats(l.ack),
        backgroundLogsPerSec: round(l.background.logsPerSec, 0),
        backgroundAckP50Ms: round(l.background.ackP50),
        backgroundAckP99Ms: round(l.background.ackP99),
        historyEntries: l.entries,
        deliveries: l.deliveries,
      })),
    },
    throughput: {
      clients: options.clients,
      batchSize: BATCH_SIZE,
      durationS: options.durationS,
      runs: r.throughput.map((t) => ({
        rules: t.rules,
        seconds: round(t.load.seconds, 2),
        acknowledgedLogs: t.load.acknowledgedLogs,
        logsPerSec: round(t.load.acknowledgedLogs / t.load.seconds, 0),
        p50Ms: round(percentile(t.load.latencies, 50)),
        p99Ms: round(percentile(t.load.latencies, 99)),
        requests: t.load.statuses,
        logCount: t.logCount,
        logCountMatches: t.logCount === t.load.acknowledgedLogs + t.probesSent,
        serverPeakRssBytes: t.peakRssBytes ?? null,
        stopMs: round(t.stopMs, 0),
        probesSent: t.probesSent,
        tails: t.tails,
        ...(t.rules > 0
          ? {
              probesFound: t.probesFound,
              probeServerSide: stats(t.probeServerMs),
              drainMs: round(t.drainMs, 0),
              backgroundRules: t.backgroundRules,
              backgroundRulesFired: t.backgroundRulesFired,
              evaluation: t.evaluation ? { expectedMatches: t.evaluation.expected, countedAtEnd: t.evaluation.countedAtEnd, catchUpMs: round(t.evaluation.catchUpMs, 0) } : null,
            }
          : {}),
      })),
      ratioPct: round(ratioPct(r), 1),
      evaluatedLogsPerSec: round(r.throughput[1] && evaluatedLogsPerSec(r.throughput[1]), 0),
      evaluatedRatioPct: round(evaluatedRatioPct(r), 1),
    },
    serverErrorLines: r.serverErrors.length,
    ok: r.problems.length === 0,
  })}`;
}

// ---------------------------------------------------------------------------------------------

const options = optionsOrExit(parseOptions, USAGE);
// 100 rules per project need the enterprise plan (unlimited rules); new accounts get DEFAULT_PLAN.
process.env.DEFAULT_PLAN = 'enterprise';
// One account opens every tail of the run.
process.env.MAX_TAILS_PER_USER = String(Math.max(options.tails, 5));

console.log(`Alerts benchmark: ${os.cpus().length} CPUs, Node ${process.version}\n`);
const reports: EngineReport[] = [];
let failed = false;
for (const engine of options.engines) {
  try {
    const report = await benchEngine(engine, options);
    printReport(report, options);
    reports.push(report);
    if (report.problems.length > 0) failed = true;
  } catch (err) {
    console.log(`${engine}: FAILED: ${errorText(err)}`);
    failed = true;
  }
  console.log();
}
for (const report of reports) console.log(resultLine(report, options));
if (failed) {
  console.error('\nThe benchmark found problems (see FAILED above).');
  process.exitCode = 1;
}
