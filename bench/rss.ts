/**
 * Memory under sustained ingest: the server's resident set size (RSS) over a long run, per engine.
 *
 *   npm run bench:rss -- [--engine sqlite|postgres|both] [--duration 300] [--rate 0] [--clients 10] [--batch 1000] [--compaction 10s] [--pg-url URL]
 *
 * For each engine: a fresh database, the built server (dist/cli.js) as a child process, one account
 * and project, then `--clients` keep-alive clients sending `--batch`-log requests for `--duration`
 * seconds: as fast as the server answers (the default, --rate 0), or paced to `--rate` logs per
 * second in total, a steady realistic load (e.g. --rate 2000 --batch 100). The server's RSS is
 * read from /proc/<pid>/status every second; the report gives the peak (the highest of the samples
 * and the kernel's high-water mark VmHWM), the median of the samples, and a timeline every
 * `--every` seconds (RSS then, logs/s since the start and within the interval), next to the
 * target: peak RSS under 300 MB. A missed target is reported, not an error.
 *
 * `--compaction <duration>` runs each engine twice on a fresh database: once with COMPACT_AFTER=off,
 * then with COMPACT_AFTER=<duration>, and reports the second run's ingest as a share of the first
 * (target: at least 90 %) and the compactor's backlog, sampled every 10 s straight from the
 * database: the logs still in rows (logCount less the logs of packed blocks) less those received
 * within the last COMPACT_AFTER, which are not due yet. A compactor that keeps up holds that backlog
 * near a few blocks' worth per project (4,096 logs a block) however long the run.
 *
 * Writes bench/results/rss-<timestamp>.json and bench/results/latest-rss.json (format: the
 * RssResults interface below). Exits 1 if a server does not start or stop cleanly, an answer is
 * not 202/429/503, or the project's logCount differs from the logs acknowledged; 2 on bad options.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { parseDuration } from '../src/duration.js';
import type { Engine } from '../src/config.js';
import { buildBodies, progressLine, runLoad, type Bodies, type LoadResult } from './load.js';
import { COMMON_USAGE, parseBenchArgs, optionsOrExit } from './options.js';
import { peakRssBytes, rssBytes } from './proc.js';
import { fmt, groupServerOutput, mb, percentile, round, table, writeResults } from './report.js';
import { call, createDatabase, startServer, type BenchDatabase } from './server.js';

const TARGET_PEAK_BYTES = 300e6;

const USAGE = `Usage: npm run bench:rss -- [options]

  --duration <seconds>             length of the run per engine (default 300)
  --rate <logs/s>                  total logs per second to send; 0: as fast as the server
                                   answers (default 0)
  --clients <n>                    concurrent HTTP clients (default 10)
  --batch <n>                      logs per request (default 1000)
  --every <seconds>                timeline interval (default 30)
  --compaction <duration>          run twice per engine, COMPACT_AFTER=off then COMPACT_AFTER=<duration>
                                   (e.g. 10s), and compare ingest; samples the compactor's backlog
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  durationS: number;
  rate: number;
  clients: number;
  batch: number;
  everyS: number;
  /** COMPACT_AFTER of the second run per engine (the first with it off); undefined: one run, with the environment's. */
  compaction: string | undefined;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    duration: { type: 'string', default: '300' },
    rate: { type: 'string', default: '0' },
    clients: { type: 'string', default: '10' },
    batch: { type: 'string', default: '1000' },
    every: { type: 'string', default: '30' },
    compaction: { type: 'string' },
  });
  const whole = (raw: string, min: number, max: number) => (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : undefined);
  const durationS = Number(values.duration);
  const rate = Number(values.rate);
  const clients = whole(values.clients, 1, 1000);
  const batch = whole(values.batch, 1, 10_000);
  const everyS = Number(values.every);
  const problems = [
    engineProblem,
    Number.isFinite(durationS) && durationS > 0 ? undefined : `--duration must be a positive number of seconds (got "${values.duration}")`,
    Number.isFinite(rate) && rate >= 0 ? undefined : `--rate must be a number of logs per second, 0 for as fast as it goes (got "${values.rate}")`,
    clients !== undefined ? undefined : `--clients must be a whole number from 1 to 1000 (got "${values.clients}")`,
    batch !== undefined ? undefined : `--batch must be a whole number from 1 to 10000, the most one request may carry (got "${values.batch}")`,
    Number.isFinite(everyS) && everyS >= 1 ? undefined : `--every must be at least 1 second (got "${values.every}")`,
    values.compaction === undefined || (parseDuration(values.compaction) ?? -1) > 0 ? undefined : `--compaction must be a duration such as 10s or 1m (got "${values.compaction}")`,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { engines: engines!, durationS, rate, clients: clients!, batch: batch!, everyS, compaction: values.compaction, pgAdminUrl };
}

export interface RssSample {
  /** Seconds since the load started. */
  t: number;
  rssBytes: number;
  /** Logs acknowledged so far. */
  logs: number;
}

export interface RssTimelinePoint {
  t: number;
  rssBytes: number;
  /** Logs per second from the start to t. */
  logsPerSecSoFar: number;
  /** Logs per second within the interval that ends at t. */
  logsPerSecInterval: number;
}

/** The compactor's backlog at one moment (a run with compaction on). */
export interface BacklogSample {
  t: number;
  /** Logs not packed yet: logCount less the logs of packed blocks. */
  inRows: number;
  /** Of those, the ones received more than COMPACT_AFTER ago: due for packing (inRows less the logs acknowledged within COMPACT_AFTER before t). */
  due: number;
}

export interface RssEngineResult {
  engine: Engine;
  /** The server's COMPACT_AFTER ('off', a duration, or 'default' when the environment left it unset). */
  compactAfter: string;
  /** Every 10 s, with compaction on. */
  backlog: BacklogSample[];
  seconds: number;
  acknowledgedLogs: number;
  logsPerSec: number;
  p50Ms: number | null;
  p99Ms: number | null;
  requests: LoadResult['statuses'];
  /** Highest RSS seen: the samples' maximum or VmHWM at the end, whichever is higher. */
  peakRssBytes: number | null;
  /** VmHWM at the end of the run (includes the start-up, before the samples). */
  hwmBytes: number | null;
  p50RssBytes: number | null;
  meetsTarget: boolean | null;
  timeline: RssTimelinePoint[];
  /** Every second's sample. */
  samples: RssSample[];
  logCount: number;
  countsMatch: boolean;
  serverExit: number | string;
  serverOutput: { level: string; line: string; count: number }[];
  failures: string[];
}

/** One engine's run with compaction on against the same run with it off. */
export interface CompactionComparison {
  engine: Engine;
  compactAfter: string;
  offLogsPerSec: number;
  onLogsPerSec: number;
  /** on / off; target at least 0.9. */
  ratio: number;
  meetsTarget: boolean;
  /** The backlog's due logs at the end and at most over the second half of the run. */
  dueAtEnd: number | null;
  dueMaxSecondHalf: number | null;
  peakRssOnBytes: number | null;
}

export interface RssResults {
  kind: 'rss';
  startedAt: string;
  node: string;
  cpus: number;
  durationS: number;
  /** Total logs/s asked for; 0: as fast as the server answers. */
  rate: number;
  clients: number;
  batchSize: number;
  avgLogBytes: number;
  targetPeakBytes: number;
  engines: RssEngineResult[];
  /** With --compaction: each engine's second run against its first. */
  compaction: CompactionComparison[];
}

function timeline(samples: RssSample[], everyS: number): RssTimelinePoint[] {
  const points: RssTimelinePoint[] = [];
  let last = { t: 0, logs: 0 };
  for (const s of samples) {
    // The sample closest after each mark (samples are about a second apart), and the last one.
    const due = Math.floor(s.t / everyS) > Math.floor(last.t / everyS) || s === samples.at(-1);
    if (!due || s.t - last.t < 0.5) continue;
    points.push({ t: round(s.t, 1)!, rssBytes: s.rssBytes, logsPerSecSoFar: Math.round(s.logs / s.t), logsPerSecInterval: Math.round((s.logs - last.logs) / (s.t - last.t)) });
    last = s;
  }
  return points;
}

/** Logs not packed yet, read straight from the database: logCount less the logs of packed blocks. */
async function logsInRows(database: BenchDatabase, client: pg.Client | undefined): Promise<number> {
  const statement = 'select (select coalesce(sum(log_count), 0) from projects) - (select coalesce(sum(logs), 0) from log_blocks where packed > 0) as n';
  if (client) return Number((await client.query<{ n: string }>(statement)).rows[0]!.n);
  const db = new Sqlite(path.join(database.dataDir, 'loglane.db'), { readonly: true, fileMustExist: true });
  try {
    return Number((db.prepare(statement).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

const BACKLOG_EVERY_S = 10;

async function measure(engine: Engine, bodies: Bodies, options: Options, compactAfter: string | undefined): Promise<RssEngineResult> {
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  const before = process.env.COMPACT_AFTER;
  if (compactAfter !== undefined) process.env.COMPACT_AFTER = compactAfter;
  const server = await startServer(database, agent).catch(async (err: unknown) => {
    agent.destroy();
    await database.drop();
    throw err;
  }).finally(() => {
    if (before === undefined) delete process.env.COMPACT_AFTER;
    else process.env.COMPACT_AFTER = before;
  });
  const compactAfterMs = compactAfter === undefined ? undefined : parseDuration(compactAfter);
  let client: pg.Client | undefined;
  let stopped = false;
  try {
    const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, {
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: randomBytes(12).toString('hex'),
    });
    const project = await call<{ id: string; apiKey: string }>(agent, `${server.baseUrl}/v1/projects`, 'POST', 201, accessToken, { name: 'bench' });

    const samples: RssSample[] = [];
    const backlog: BacklogSample[] = [];
    if (compactAfterMs !== undefined && database.databaseUrl !== undefined) {
      client = new pg.Client({ connectionString: database.databaseUrl });
      await client.connect();
    }
    /** Logs acknowledged by t, from the samples (a second apart). */
    const ackedBy = (t: number) => {
      let logs = 0;
      for (const s of samples) if (s.t <= t) logs = s.logs;
      return logs;
    };
    let sampling: Promise<void> | undefined;
    let nextBacklog = BACKLOG_EVERY_S;
    // The live line on a terminal only; the marks below are printed either way.
    const progress = progressLine(engine, options.durationS, Infinity);
    let nextMark = options.everyS;
    const load = await runLoad({
      agent,
      targets: Array.from({ length: options.clients }, () => ({ node: 0, project: 0, baseUrl: server.baseUrl, apiKey: project.apiKey })),
      nodes: 1,
      projects: 1,
      bodies,
      durationS: options.durationS,
      rate: options.rate,
      onTick(t, logs) {
        const rss = rssBytes(server.pid);
        if (rss !== undefined) samples.push({ t: round(t, 2)!, rssBytes: rss, logs });
        progress.tick(t, logs);
        if (compactAfterMs !== undefined && t >= nextBacklog && !sampling) {
          nextBacklog += BACKLOG_EVERY_S;
          sampling = logsInRows(database, client)
            .then((inRows) => {
              const due = Math.max(0, inRows - (logs - ackedBy(t - compactAfterMs / 1000)));
              backlog.push({ t: round(t, 1)!, inRows, due });
            })
            .catch(() => {})
            .finally(() => (sampling = undefined));
        }
        if (t >= nextMark && rss !== undefined) {
          nextMark += options.everyS;
          const last = backlog.at(-1);
          const due = compactAfterMs === undefined || !last ? '' : `   due for packing ${fmt(last.due)}`;
          process.stderr.write(`\r${`  ${engine}: ${fmt(t)} s   RSS ${fmt(mb(rss))} MB   ${fmt(logs / t)} logs/s so far${due}`.padEnd(90)}\n`);
        }
      },
    });
    progress.done();
    await sampling;
    // One more sample at the very end, so the timeline closes on the run's last second.
    const lastRss = rssBytes(server.pid);
    if (lastRss !== undefined && load.seconds - (samples.at(-1)?.t ?? 0) >= 0.5) samples.push({ t: round(load.seconds, 2)!, rssBytes: lastRss, logs: load.acknowledgedLogs });
    const hwm = peakRssBytes(server.pid);
    const { logCount } = await call<{ logCount: number }>(agent, `${server.baseUrl}/v1/projects/${project.id}`, 'GET', 200, accessToken);
    const serverExit = await server.stop();
    stopped = true;

    const failures = [...load.failures];
    if (logCount !== load.acknowledgedLogs) failures.push(`logCount ${fmt(logCount)} differs from the ${fmt(load.acknowledgedLogs)} logs acknowledged with 202`);
    if (serverExit !== 0) failures.push(`the server did not stop cleanly on SIGTERM (exit ${serverExit})`);
    const sorted = samples.map((s) => s.rssBytes).sort((a, b) => a - b);
    const peak = Math.max(hwm ?? 0, sorted.at(-1) ?? 0) || undefined;
    return {
      engine,
      compactAfter: compactAfter ?? 'default',
      backlog,
      seconds: round(load.seconds, 2)!,
      acknowledgedLogs: load.acknowledgedLogs,
      logsPerSec: Math.round(load.acknowledgedLogs / load.seconds),
      p50Ms: round(percentile(load.latencies, 50), 1),
      p99Ms: round(percentile(load.latencies, 99), 1),
      requests: load.statuses,
      peakRssBytes: peak ?? null,
      hwmBytes: hwm ?? null,
      p50RssBytes: percentile(sorted, 50) ?? null,
      meetsTarget: peak === undefined ? null : peak < TARGET_PEAK_BYTES,
      timeline: timeline(samples, options.everyS),
      samples,
      logCount,
      countsMatch: logCount === load.acknowledgedLogs,
      serverExit,
      serverOutput: groupServerOutput(server.output),
      failures,
    };
  } finally {
    if (!stopped) await server.stop();
    await client?.end();
    agent.destroy();
    await database.drop();
  }
}

function printSummary(r: RssEngineResult, options: Options): void {
  const mbs = (v: number | null) => (v === null ? 'n/a' : `${fmt(mb(v))} MB`);
  const load = options.rate > 0 ? `paced to ${fmt(options.rate)} logs/s` : 'as fast as it goes';
  console.log(`${r.engine} (COMPACT_AFTER=${r.compactAfter}): ${options.clients} clients × ${fmt(options.batch)}-log batches, ${load}, for ${fmt(r.seconds, 1)} s`);
  console.log(`  ingest    ${fmt(r.logsPerSec)} logs/s   p50 ${r.p50Ms ?? 'n/a'} ms   p99 ${r.p99Ms ?? 'n/a'} ms   (202: ${r.requests['202']}, 429: ${r.requests['429']}, 503: ${r.requests['503']}, other: ${r.requests.other})`);
  const verdict = r.meetsTarget === null ? '' : r.meetsTarget ? ` ✓ under the ${fmt(mb(TARGET_PEAK_BYTES))} MB target` : ` ✗ over the ${fmt(mb(TARGET_PEAK_BYTES))} MB target`;
  console.log(`  RSS       peak ${mbs(r.peakRssBytes)}${verdict}   p50 ${mbs(r.p50RssBytes)}   (VmHWM ${mbs(r.hwmBytes)}, ${r.samples.length} samples)`);
  console.log(`  ${r.countsMatch ? `logCount ${fmt(r.logCount)} = acknowledged ✓` : `logCount ${fmt(r.logCount)} ≠ acknowledged ${fmt(r.acknowledgedLogs)} ✗`}`);
  const rows = r.timeline.map((p) => [fmt(p.t), fmt(mb(p.rssBytes)), fmt(p.logsPerSecSoFar), fmt(p.logsPerSecInterval)]);
  console.log(table(['  t (s)', 'RSS (MB)', 'logs/s so far', 'logs/s in interval'], rows, [0, 1, 2, 3]).replace(/^/gm, '  '));
  if (r.backlog.length > 0) {
    const every = Math.max(1, Math.round(r.backlog.length / 10));
    console.log(`  backlog (logs in rows, of which due for packing): ${r.backlog.filter((_, i) => i % every === 0 || i === r.backlog.length - 1).map((b) => `${fmt(b.t)} s ${fmt(b.inRows)}/${fmt(b.due)}`).join(', ')}`);
  }
  for (const g of r.serverOutput.filter((g) => !['warn', 'info', 'debug', 'trace'].includes(g.level)).slice(0, 5)) console.log(`  the server wrote ${g.count}× ${g.line}`);
  for (const f of r.failures) console.log(`  FAILED: ${f}`);
}

const options = optionsOrExit(parseOptions, USAGE);

const startedAt = new Date().toISOString();
const bodies = buildBodies(options.batch);
console.log(`${options.clients} clients × ${fmt(options.batch)}-log batches (${fmt(bodies.avgLogBytes)} bytes per log), ` +
  `${options.rate > 0 ? `${fmt(options.rate)} logs/s` : 'as fast as it goes'}, ${options.durationS} s per engine; ${os.cpus().length} CPUs, Node ${process.version}\n`);

const engines: RssEngineResult[] = [];
const compaction: CompactionComparison[] = [];
let failed = false;
for (const engine of options.engines) {
  const runs: RssEngineResult[] = [];
  for (const compactAfter of options.compaction === undefined ? [undefined] : ['off', options.compaction]) {
    try {
      const r = await measure(engine, bodies, options, compactAfter);
      runs.push(r);
      engines.push(r);
      printSummary(r, options);
      if (r.failures.length > 0) failed = true;
    } catch (err) {
      console.log(`${engine}: FAILED: ${err instanceof Error ? err.message : String(err)}`);
      failed = true;
    }
    console.log();
  }
  if (options.compaction !== undefined && runs.length === 2) {
    const [off, on] = runs as [RssEngineResult, RssEngineResult];
    const ratio = on.logsPerSec / off.logsPerSec;
    const secondHalf = on.backlog.filter((b) => b.t >= on.seconds / 2).map((b) => b.due);
    const c: CompactionComparison = {
      engine,
      compactAfter: options.compaction,
      offLogsPerSec: off.logsPerSec,
      onLogsPerSec: on.logsPerSec,
      ratio: round(ratio, 3)!,
      meetsTarget: ratio >= 0.9,
      dueAtEnd: on.backlog.at(-1)?.due ?? null,
      dueMaxSecondHalf: secondHalf.length > 0 ? Math.max(...secondHalf) : null,
      peakRssOnBytes: on.peakRssBytes,
    };
    compaction.push(c);
    console.log(`${engine}: with COMPACT_AFTER=${c.compactAfter}, ${fmt(c.onLogsPerSec)} logs/s against ${fmt(c.offLogsPerSec)} with it off: ${fmt(100 * ratio, 1)} % ${c.meetsTarget ? '✓' : '✗'} (target ≥ 90 %); ` +
      `due for packing at the end ${c.dueAtEnd === null ? 'n/a' : fmt(c.dueAtEnd)}, at most ${c.dueMaxSecondHalf === null ? 'n/a' : fmt(c.dueMaxSecondHalf)} over the second half\n`);
  }
}

const results: RssResults = {
  kind: 'rss',
  startedAt,
  node: process.version,
  cpus: os.cpus().length,
  durationS: options.durationS,
  rate: options.rate,
  clients: options.clients,
  batchSize: options.batch,
  avgLogBytes: round(bodies.avgLogBytes, 1)!,
  targetPeakBytes: TARGET_PEAK_BYTES,
  engines,
  compaction,
};
const files = writeResults('rss', results);
console.log(`Results: ${files.run} (and ${files.latest})`);
if (failed) {
  console.error('\nThe benchmark found problems (see FAILED above).');
  process.exitCode = 1;
}
