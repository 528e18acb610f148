/**
 * Exports (issue 29): every log of a big project streamed as NDJSON and as CSV, with the rate, and
 * the server's memory while a client reads at full speed and while one stops reading.
 *
 *   npm run bench:export -- [--engine sqlite|postgres|both] [--logs 1000000] [--days 1] [--reuse]
 *       [--pause 10]
 *
 * The project is bench:query's data (query-data.ts, bulk-loaded; `--reuse` keeps it for the next
 * run). The built server runs on it; the export reads the whole range:
 *
 *   ndjson    GET …/logs/export?format=ndjson                         ≥ 50,000 logs/s (SQLite)
 *   csv       GET …/logs/export?format=csv&columns=timestamp,level,source,@reqId,@res.statusCode,message
 *   paused    the NDJSON export again: 1 MB read, then --pause seconds without reading, sampling the
 *             server's resident memory every 250 ms (it must stay flat: one chunk held), then the rest
 *
 * Each answer is checked: as many lines as the project holds logs (and a header row for CSV), newest
 * first. The server's resident memory is read from /proc: its level before, its peak (VmHWM) after
 * each export, and the samples of the paused one.
 *
 * The skip index's builder and the compactor are off unless `--background`: a freshly loaded
 * project is otherwise summarised and packed while it is exported, and the figures would be theirs.
 *
 * Results: bench/results/latest-export-<engine>-<logs>.json. Exits 1 when an answer is wrong.
 */
import http from 'node:http';
import fs from 'node:fs';
import type { Engine } from '../src/config.js';
import { prepareBenchProject, DAY_MS } from './bulk-load.js';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { fmt, table, writeResults } from './report.js';
import { call, startServer, type RunningServer } from './server.js';

const USAGE = `Usage: npm run bench:export -- [options]

  --logs <n>        logs in the project (default 1000000)
  --days <n>        spread over the last n days (default 1)
  --reuse           keep the loaded database for the next run (as bench:query)
  --pause <s>       how long the paused export stops reading (default 10)
  --background      leave the skip index's builder and the compactor running (by default they
                    are off, so that the figures are the export's own and not the packing of a
                    freshly loaded project that a running server does in the background)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  pgAdminUrl: string;
  logs: number;
  days: number;
  reuse: boolean;
  pauseS: number;
  background: boolean;
}

function parse(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '1' },
    reuse: { type: 'boolean', default: false },
    pause: { type: 'string', default: '10' },
    background: { type: 'boolean', default: false },
  });
  if (!engines) throw new Error(engineProblem);
  const positive = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive whole number (got "${text}")`);
    return n;
  };
  return { engines, pgAdminUrl, logs: positive('logs', String(values.logs)), days: positive('days', String(values.days)), reuse: Boolean(values.reuse), pauseS: positive('pause', String(values.pause)), background: Boolean(values.background) };
}

/** The server's resident memory now (VmRSS), in bytes. */
function rssOf(pid: number): number | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

const MB = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / 1e6).toFixed(0)} MB`);

interface ExportRun {
  name: string;
  logs: number;
  bytes: number;
  seconds: number;
  logsPerSecond: number;
  mbPerSecond: number;
  rssBeforeBytes?: number;
  peakRssBytes?: number;
  pausedRssBytes?: { min: number; max: number; samples: number };
  newestFirst: boolean;
}

/** Reads one export to its end, counting lines and bytes; `pauseAfter` bytes in, stops reading for `pauseMs` while `onPause` samples. */
function readExport(url: string, token: string, pauseAfter?: number, pauseMs = 0, sample?: () => void): Promise<{ lines: number; bytes: number; seconds: number; firstTimes: string[]; header?: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => reject(new Error(`export answered ${res.statusCode}: ${text.slice(0, 300)}`)));
        return;
      }
      let lines = 0;
      let bytes = 0;
      let paused = pauseAfter === undefined;
      let head = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        if (head.length < 4096) head += chunk.toString('utf8', 0, Math.min(chunk.length, 4096));
        if (!paused && bytes >= pauseAfter!) {
          paused = true;
          res.pause();
          const timer = setInterval(() => sample?.(), 250);
          setTimeout(() => {
            clearInterval(timer);
            res.resume();
          }, pauseMs);
        }
      });
      res.on('end', () => {
        const firstLines = head.split('\n').slice(0, 4);
        resolve({ lines, bytes, seconds: (performance.now() - started) / 1000, firstTimes: firstLines, header: firstLines[0] });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function runEngine(engine: Engine, o: Options): Promise<{ engine: Engine; runs: ExportRun[]; problems: string[] }> {
  const project = await prepareBenchProject({ engine, logs: o.logs, days: o.days, placement: o.reuse ? { kind: 'kept' } : { kind: 'temp' }, pgAdminUrl: o.pgAdminUrl, progress: true });
  const agent = new http.Agent({ keepAlive: true });
  let server: RunningServer | undefined;
  const problems: string[] = [];
  const runs: ExportRun[] = [];
  try {
    server = await startServer(project.database, agent);
    const base = server.baseUrl;
    const { accessToken } = await call<{ accessToken: string }>(agent, `${base}/v1/auth/login`, 'POST', 200, undefined, { email: project.meta.email, password: project.meta.password });
    const range = `from=${project.meta.startMs - DAY_MS}&to=${project.meta.endMs + DAY_MS}`;
    const url = (params: string) => `${base}/v1/projects/${project.meta.projectId}/logs/export?${params}&${range}`;
    const cases: Array<{ name: string; params: string; header: boolean; pause?: boolean }> = [
      { name: 'ndjson', params: 'format=ndjson', header: false },
      { name: 'csv', params: 'format=csv&columns=timestamp,level,source,@reqId,@res.statusCode,message', header: true },
      { name: 'ndjson, paused', params: 'format=ndjson', header: false, pause: true },
    ];
    for (const c of cases) {
      const pid = server.pid;
      const before = rssOf(pid);
      const samples: number[] = [];
      process.stderr.write(`  ${engine}: exporting ${c.name}…\n`);
      const got = await readExport(url(c.params), accessToken, c.pause ? 1_000_000 : undefined, o.pauseS * 1000, () => {
        const r = rssOf(pid);
        if (r !== undefined) samples.push(r);
      });
      const logs = got.lines - (c.header ? 1 : 0);
      if (logs !== project.meta.logs) problems.push(`${engine} ${c.name}: ${logs} logs exported, the project holds ${project.meta.logs}`);
      let newestFirst = true;
      if (!c.header) {
        const times = got.firstTimes.filter((l) => l.startsWith('{')).slice(0, 3).map((l) => {
          try {
            return Date.parse((JSON.parse(l) as { timestamp: string }).timestamp);
          } catch {
            return Number.NaN;
          }
        });
        newestFirst = times.every((t, i) => i === 0 || t <= times[i - 1]!);
        if (!newestFirst) problems.push(`${engine} ${c.name}: the first logs are not newest first`);
      }
      runs.push({
        name: c.name,
        logs,
        bytes: got.bytes,
        seconds: got.seconds,
        logsPerSecond: Math.round(logs / got.seconds),
        mbPerSecond: got.bytes / 1e6 / got.seconds,
        rssBeforeBytes: before,
        peakRssBytes: server.peakRssBytes(),
        ...(samples.length > 0 ? { pausedRssBytes: { min: Math.min(...samples), max: Math.max(...samples), samples: samples.length } } : {}),
        newestFirst,
      });
    }
  } finally {
    await server?.stop();
    agent.destroy();
    await project.release();
  }
  return { engine, runs, problems };
}

const o = optionsOrExit(parse, USAGE);
// The server reads its settings from this environment (bench/server.ts startServer).
if (!o.background) {
  process.env.SEARCH_INDEX = 'off';
  process.env.COMPACT_AFTER = 'off';
}
const results = [];
let failed = false;
for (const engine of o.engines) {
  const r = await runEngine(engine, o);
  results.push(r);
  console.log(`\n${engine}: ${fmt(o.logs)} logs over ${o.days} day(s)`);
  console.log(
    table(
      ['export', 'logs', 'MB', 'seconds', 'logs/s', 'MB/s', 'RSS before', 'peak RSS', 'RSS while paused'],
      r.runs.map((x) => [x.name, fmt(x.logs), (x.bytes / 1e6).toFixed(0), x.seconds.toFixed(1), fmt(x.logsPerSecond), x.mbPerSecond.toFixed(1), MB(x.rssBeforeBytes), MB(x.peakRssBytes), x.pausedRssBytes ? `${MB(x.pausedRssBytes.min)}–${MB(x.pausedRssBytes.max)}` : '']),
      [1, 2, 3, 4, 5],
    ),
  );
  for (const p of r.problems) console.error(`WRONG: ${p}`);
  if (r.problems.length > 0) failed = true;
}
const written = writeResults(`export-${o.engines.length === 2 ? 'both' : o.engines[0]}-${o.logs}`, { logs: o.logs, days: o.days, background: o.background, results });
console.log(`\nresults: ${written.latest}`);
if (failed) process.exit(1);
