/**
 * Memory under sustained ingest: the server's resident set size (RSS) over a long run, per engine.
 *
 *   npm run bench:rss -- [--engine sqlite|postgres|both] [--duration 300] [--rate 0] [--clients 10] [--batch 1000] [--pg-url URL]
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
 * Writes bench/results/rss-<timestamp>.json and bench/results/latest-rss.json (format: the
 * RssResults interface below). Exits 1 if a server does not start or stop cleanly, an answer is
 * not 202/429/503, or the project's logCount differs from the logs acknowledged; 2 on bad options.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import type { Engine } from '../src/config.js';
import { buildBodies, progressLine, runLoad, type Bodies, type LoadResult } from './load.js';
import { COMMON_USAGE, parseBenchArgs, optionsOrExit } from './options.js';
import { peakRssBytes, rssBytes } from './proc.js';
import { fmt, groupServerOutput, mb, percentile, round, table, writeResults } from './report.js';
import { call, createDatabase, startServer } from './server.js';

const TARGET_PEAK_BYTES = 300e6;

const USAGE = `Usage: npm run bench:rss -- [options]

  --duration <seconds>             length of the run per engine (default 300)
  --rate <logs/s>                  total logs per second to send; 0: as fast as the server
                                   answers (default 0)
  --clients <n>                    concurrent HTTP clients (default 10)
  --batch <n>                      logs per request (default 1000)
  --every <seconds>                timeline interval (default 30)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  durationS: number;
  rate: number;
  clients: number;
  batch: number;
  everyS: number;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    duration: { type: 'string', default: '300' },
    rate: { type: 'string', default: '0' },
    clients: { type: 'string', default: '10' },
    batch: { type: 'string', default: '1000' },
    every: { type: 'string', default: '30' },
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
  ].filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { engines: engines!, durationS, rate, clients: clients!, batch: batch!, everyS, pgAdminUrl };
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

export interface RssEngineResult {
  engine: Engine;
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

async function measure(engine: Engine, bodies: Bodies, options: Options): Promise<RssEngineResult> {
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  const server = await startServer(database, agent).catch(async (err: unknown) => {
    agent.destroy();
    await database.drop();
    throw err;
  });
  let stopped = false;
  try {
    const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, {
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: randomBytes(12).toString('hex'),
    });
    const project = await call<{ id: string; apiKey: string }>(agent, `${server.baseUrl}/v1/projects`, 'POST', 201, accessToken, { name: 'bench' });

    const samples: RssSample[] = [];
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
        if (t >= nextMark && rss !== undefined) {
          nextMark += options.everyS;
          process.stderr.write(`\r${`  ${engine}: ${fmt(t)} s   RSS ${fmt(mb(rss))} MB   ${fmt(logs / t)} logs/s so far`.padEnd(90)}\n`);
        }
      },
    });
    progress.done();
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
    agent.destroy();
    await database.drop();
  }
}

function printSummary(r: RssEngineResult, options: Options): void {
  const mbs = (v: number | null) => (v === null ? 'n/a' : `${fmt(mb(v))} MB`);
  const load = options.rate > 0 ? `paced to ${fmt(options.rate)} logs/s` : 'as fast as it goes';
  console.log(`${r.engine}: ${options.clients} clients × ${fmt(options.batch)}-log batches, ${load}, for ${fmt(r.seconds, 1)} s`);
  console.log(`  ingest    ${fmt(r.logsPerSec)} logs/s   p50 ${r.p50Ms ?? 'n/a'} ms   p99 ${r.p99Ms ?? 'n/a'} ms   (202: ${r.requests['202']}, 429: ${r.requests['429']}, 503: ${r.requests['503']}, other: ${r.requests.other})`);
  const verdict = r.meetsTarget === null ? '' : r.meetsTarget ? ` ✓ under the ${fmt(mb(TARGET_PEAK_BYTES))} MB target` : ` ✗ over the ${fmt(mb(TARGET_PEAK_BYTES))} MB target`;
  console.log(`  RSS       peak ${mbs(r.peakRssBytes)}${verdict}   p50 ${mbs(r.p50RssBytes)}   (VmHWM ${mbs(r.hwmBytes)}, ${r.samples.length} samples)`);
  console.log(`  ${r.countsMatch ? `logCount ${fmt(r.logCount)} = acknowledged ✓` : `logCount ${fmt(r.logCount)} ≠ acknowledged ${fmt(r.acknowledgedLogs)} ✗`}`);
  const rows = r.timeline.map((p) => [fmt(p.t), fmt(mb(p.rssBytes)), fmt(p.logsPerSecSoFar), fmt(p.logsPerSecInterval)]);
  console.log(table(['  t (s)', 'RSS (MB)', 'logs/s so far', 'logs/s in interval'], rows, [0, 1, 2, 3]).replace(/^/gm, '  '));
  for (const g of r.serverOutput.filter((g) => !['warn', 'info', 'debug', 'trace'].includes(g.level)).slice(0, 5)) console.log(`  the server wrote ${g.count}× ${g.line}`);
  for (const f of r.failures) console.log(`  FAILED: ${f}`);
}

const options = optionsOrExit(parseOptions, USAGE);

const startedAt = new Date().toISOString();
const bodies = buildBodies(options.batch);
console.log(`${options.clients} clients × ${fmt(options.batch)}-log batches (${fmt(bodies.avgLogBytes)} bytes per log), ` +
  `${options.rate > 0 ? `${fmt(options.rate)} logs/s` : 'as fast as it goes'}, ${options.durationS} s per engine; ${os.cpus().length} CPUs, Node ${process.version}\n`);

const engines: RssEngineResult[] = [];
let failed = false;
for (const engine of options.engines) {
  try {
    const r = await measure(engine, bodies, options);
    engines.push(r);
    printSummary(r, options);
    if (r.failures.length > 0) failed = true;
  } catch (err) {
    console.log(`${engine}: FAILED: ${err instanceof Error ? err.message : String(err)}`);
    failed = true;
  }
  console.log();
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
};
const files = writeResults('rss', results);
console.log(`Results: ${files.run} (and ${files.latest})`);
if (failed) {
  console.error('\nThe benchmark found problems (see FAILED above).');
  process.exitCode = 1;
}
