/**
 * Issue 17's figures: how fast an alert reaches a webhook, how soon a recovery is noticed, and what
 * evaluating 1,000 silence rules on the clock costs.
 *
 *   npm run bench:webhooks -- [--engine sqlite|postgres|both] [--probes 50] [--background-rate 2000]
 *                             [--resolves 3] [--window 10] [--clock-rules 1000] [--clock-seconds 60]
 *
 * The built server runs with WEBHOOK_ALLOWED_ORIGINS set to a receiver in this process (node:http
 * on 127.0.0.1), and the receiver's webhook destination in the bench project.
 * 1. Latency: a probe rule (fatal, source probe, threshold 1, window 1m, cooldown 0s, channel
 *    webhook) fires on each probe, one fatal log with a unique message, sent ~200 ms apart while
 *    2 clients send `--background-rate` logs/s of info logs (200-log batches) to the same project.
 *    Latency runs from just before the probe's POST /v1/logs to the webhook whose sample holds the
 *    probe's message arriving at the receiver (target p99 < 500 ms).
 * 2. Recovery: a rule (fatal, source resolve-N, threshold 1, window `--window` s, channel webhook)
 *    fires on one log; the condition turns false when that log leaves the window, and the
 *    `alert.resolved` webhook must arrive within window + 10 s of that moment (the server's clock
 *    runs every ALERT_CLOCK_INTERVAL, default 5 s). `--resolves` rules, side by side.
 * 3. The clock's cost: the server's CPU over `--clock-seconds` seconds, first without rules, then
 *    with `--clock-rules` enabled `below` rules (threshold 1, window 5m, each on its own source,
 *    spread over 10 projects); in both a tenth of those sources get a log a second, so the counts
 *    move and the ingest is the same: the difference, as a share of one core (target < 5 %).
 *
 * Results: bench/results/latest-webhooks.json (and a dated copy). Exits 1 when a probe's webhook
 * never arrives, a recovery misses its deadline, or the server logs an error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine } from '../src/config.js';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { processCpuSeconds } from './proc.js';
import { fmt, percentile, table, writeResults } from './report.js';
import { call, createDatabase, send, startServer, type RunningServer } from './server.js';

const USAGE = `Usage: npm run bench:webhooks -- [options]

  --probes <n>                     probes in the latency run (default 50)
  --background-rate <logs/s>       background load during the latency run (default 2000)
  --resolves <n>                   rules whose recovery is timed (default 3)
  --window <seconds>               their window (default 10)
  --clock-rules <n>                below rules in the clock-cost run (default 1000)
  --clock-seconds <s>              length of each clock-cost measure (default 60)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  pgAdminUrl: string;
  probes: number;
  backgroundRate: number;
  resolves: number;
  windowS: number;
  clockRules: number;
  clockSeconds: number;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    probes: { type: 'string', default: '50' },
    'background-rate': { type: 'string', default: '2000' },
    resolves: { type: 'string', default: '3' },
    window: { type: 'string', default: '10' },
    'clock-rules': { type: 'string', default: '1000' },
    'clock-seconds': { type: 'string', default: '60' },
  });
  const n = (name: string, min: number) => {
    const v = Number(values[name as keyof typeof values]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be a whole number of at least ${min}`);
    return v;
  };
  if (engineProblem) throw new Error(engineProblem);
  return { engines: engines!, pgAdminUrl, probes: n('probes', 1), backgroundRate: n('background-rate', 0), resolves: n('resolves', 1), windowS: n('window', 1), clockRules: n('clock-rules', 1), clockSeconds: n('clock-seconds', 5) };
}

interface Hook {
  at: number;
  type: string;
  alertId: string;
  sample: { message: string }[];
}

/** The webhook receiver: every body it is sent, with when it arrived. */
async function startReceiver() {
  const hooks: Hook[] = [];
  const waiters: { match: (h: Hook) => boolean; resolve: (h: Hook) => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200).end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; alert: { id: string }; sample: { message: string }[] };
        const hook = { at, type: body.type, alertId: body.alert.id, sample: body.sample };
        hooks.push(hook);
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (waiters[i]!.match(hook)) {
            waiters[i]!.resolve(hook);
            waiters.splice(i, 1);
          }
        }
      } catch {
        // Not a webhook of ours: ignored.
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hooks,
    /** The first hook (already here or still to come) that `match` accepts, or undefined after `timeoutMs`. */
    wait(match: (h: Hook) => boolean, timeoutMs: number): Promise<Hook | undefined> {
      const found = hooks.find(match);
      if (found) return Promise.resolve(found);
      return Promise.race([new Promise<Hook>((resolve) => waiters.push({ match, resolve })), sleep(timeoutMs).then(() => undefined)]);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Setup {
  server: RunningServer;
  agent: http.Agent;
  token: string;
}

async function account(server: RunningServer, agent: http.Agent): Promise<string> {
  const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, { email: `webhooks-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`, password: 'bench password' });
  return accessToken;
}

async function project(s: Setup, name: string, receiverOrigin: string | undefined): Promise<{ id: string; apiKey: string }> {
  const p = await call<{ id: string; apiKey: string }>(s.agent, `${s.server.baseUrl}/v1/projects`, 'POST', 201, s.token, { name });
  if (receiverOrigin) await call(s.agent, `${s.server.baseUrl}/v1/projects/${p.id}/destinations`, 'POST', 201, s.token, { type: 'webhook', name: 'bench receiver', url: `${receiverOrigin}/hook` });
  return p;
}

const rule = (s: Setup, body: Record<string, unknown>) => call<{ id: string }>(s.agent, `${s.server.baseUrl}/v1/alerts`, 'POST', 201, s.token, body);

async function postLogs(agent: http.Agent, s: Setup, apiKey: string, logs: unknown[]): Promise<void> {
  const res = await send(agent, `${s.server.baseUrl}/v1/logs`, 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json' }, Buffer.from(JSON.stringify(logs)));
  if (res.status !== 202) throw new Error(`POST /v1/logs answered ${res.status}: ${res.body.slice(0, 200)}`);
}

/** 2 clients of 200-log batches at `rate` logs/s in all, until `stop` is set. */
function background(s: Setup, apiKey: string, rate: number, stop: { done: boolean }): Promise<void> {
  if (rate === 0) return Promise.resolve();
  const perClientGap = (2 * 200 * 1000) / rate;
  const client = async (k: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let next = Date.now();
    for (let i = 0; !stop.done; i++) {
      const batch = Array.from({ length: 200 }, (_, j) => ({ level: 'info', source: 'web', message: `GET /v1/orders/${i * 200 + j} 200 in ${j % 90} ms (client ${k})` }));
      await postLogs(agent, s, apiKey, batch);
      next += perClientGap;
      await sleep(Math.max(0, next - Date.now()));
    }
    agent.destroy();
  };
  return Promise.all([client(0), client(1)]).then(() => undefined);
}

async function runEngine(engine: Engine, options: Options) {
  const receiver = await startReceiver();
  process.env.WEBHOOK_ALLOWED_ORIGINS = receiver.origin;
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true });
  const server = await startServer(database, agent);
  const failures: string[] = [];
  try {
    const s: Setup = { server, agent, token: await account(server, agent) };

    // 1. Latency under background load.
    const p = await project(s, 'webhook latency', receiver.origin);
    const probeRule = await rule(s, { projectId: p.id, name: 'probe', condition: { level: 'fatal', threshold: 1, window: '1m', source: 'probe' }, channels: ['webhook'], cooldown: '0s' });
    const stop = { done: false };
    const load = background(s, p.apiKey, options.backgroundRate, stop);
    await sleep(1000);
    const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const latencies: number[] = [];
    process.stderr.write(`  ${engine}: ${options.probes} probes under ${fmt(options.backgroundRate)} logs/s…\n`);
    for (let i = 0; i < options.probes; i++) {
      const message = `probe ${i} ${Math.random().toString(36).slice(2)}`;
      const sent = Date.now();
      const arrived = receiver.wait((h) => h.alertId === probeRule.id && h.sample.some((l) => l.message === message), 10_000);
      await postLogs(probeAgent, s, p.apiKey, [{ level: 'fatal', source: 'probe', message }]);
      const hook = await arrived;
      if (!hook) failures.push(`probe ${i}: no webhook within 10 s`);
      else latencies.push(hook.at - sent);
      await sleep(200);
    }
    stop.done = true;
    await load;
    probeAgent.destroy();
    latencies.sort((a, b) => a - b);

    // 2. Recovery.
    process.stderr.write(`  ${engine}: ${options.resolves} recoveries with a ${options.windowS} s window…\n`);
    const q = await project(s, 'webhook recovery', receiver.origin);
    const recoveries = await Promise.all(
      Array.from({ length: options.resolves }, async (_, i) => {
        const r = await rule(s, { projectId: q.id, name: `recovery ${i}`, condition: { level: 'fatal', threshold: 1, window: `${options.windowS}s`, source: `resolve-${i}` }, channels: ['webhook'], cooldown: '1h' });
        await sleep(i * 1500);
        const ts = Date.now();
        await postLogs(agent, s, q.apiKey, [{ level: 'fatal', source: `resolve-${i}`, message: `recovery ${i}`, timestamp: new Date(ts).toISOString() }]);
        const fired = await receiver.wait((h) => h.alertId === r.id && h.type === 'alert.triggered', 10_000);
        const resolved = await receiver.wait((h) => h.alertId === r.id && h.type === 'alert.resolved', 2 * options.windowS * 1000 + 30_000);
        // The condition turns false when the log leaves the window.
        const falseAt = ts + options.windowS * 1000;
        if (!fired) failures.push(`recovery ${i}: the triggered webhook never came`);
        if (!resolved) failures.push(`recovery ${i}: the resolved webhook never came`);
        const after = resolved ? (resolved.at - falseAt) / 1000 : undefined;
        if (after !== undefined && after > options.windowS + 10) failures.push(`recovery ${i}: resolved ${after.toFixed(1)} s after the condition turned false (target < ${options.windowS + 10} s)`);
        return after;
      }),
    );

    // 3. The clock's cost.
    process.stderr.write(`  ${engine}: the clock's CPU without rules, for ${options.clockSeconds} s…\n`);
    const cpuOver = async (seconds: number, during?: () => Promise<void>) => {
      const start = processCpuSeconds(server.pid)!;
      const t0 = Date.now();
      const stopFeed = { done: false };
      const feeding = during ? (async () => { while (!stopFeed.done) { await during(); await sleep(1000); } })() : Promise.resolve();
      await sleep(seconds * 1000);
      stopFeed.done = true;
      await feeding;
      return (processCpuSeconds(server.pid)! - start) / ((Date.now() - t0) / 1000);
    };
    // Rules stop firing into the receiver's latency figures: the probe rule is disabled.
    await call(s.agent, `${server.baseUrl}/v1/alerts/${probeRule.id}`, 'PUT', 200, s.token, { enabled: false });
    // The projects and the feed first: the baseline carries the same ingest as the run with rules,
    // so the difference is the rules' (their evaluation on the clock and of the fed logs).
    const perProject = Math.ceil(options.clockRules / 10);
    const clockProjects: { id: string; apiKey: string; sources: string[] }[] = [];
    for (let k = 0; k * perProject < options.clockRules; k++) {
      const cp = await project(s, `clock ${k}`, undefined);
      const sources: string[] = [];
      for (let i = 0; i < perProject && k * perProject + i < options.clockRules; i += 10) sources.push(`job-${k}-${i}`);
      clockProjects.push({ ...cp, sources });
    }
    const feedAgent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    const feed = async () => {
      for (const cp of clockProjects) await postLogs(feedAgent, s, cp.apiKey, cp.sources.map((source) => ({ level: 'info', source, message: 'still alive' })));
    };
    const baseline = await cpuOver(options.clockSeconds, feed);
    process.stderr.write(`  ${engine}: creating ${options.clockRules} below rules…\n`);
    let made = 0;
    for (let k = 0; k < clockProjects.length; k++) {
      for (let i = 0; i < perProject && made < options.clockRules; i++, made++) {
        await rule(s, { projectId: clockProjects[k]!.id, name: `quiet ${k}.${i}`, condition: { level: 'info', threshold: 1, window: '5m', source: `job-${k}-${i}`, comparison: 'below' }, channels: ['email'], cooldown: '1h' });
      }
    }
    process.stderr.write(`  ${engine}: the clock's CPU with ${options.clockRules} below rules, for ${options.clockSeconds} s…\n`);
    const withRules = await cpuOver(options.clockSeconds, feed);
    feedAgent.destroy();
    const share = withRules - baseline;

    const errors = server.output.filter((l) => /"level":(50|60)/.test(l));
    if (errors.length > 0) failures.push(`the server logged ${errors.length} error line(s): ${errors.slice(0, 3).join(' | ')}`);
    return {
      engine,
      latency: { probes: options.probes, received: latencies.length, backgroundRate: options.backgroundRate, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] },
      recovery: { windowS: options.windowS, secondsAfterFalse: recoveries },
      clock: { rules: options.clockRules, seconds: options.clockSeconds, idleCores: baseline, withRulesCores: withRules, shareOfOneCore: share },
      failures,
    };
  } finally {
    const code = await server.stop();
    if (code !== 0) failures.push(`the server exited with ${code}`);
    agent.destroy();
    await receiver.close();
    await database.drop();
  }
}

const options = optionsOrExit(parseOptions, USAGE);
const results = [];
for (const engine of options.engines) results.push(await runEngine(engine, options));
const ms = (v: number | undefined) => (v === undefined ? '-' : `${fmt(v, 0)} ms`);
console.log(
  table(
    ['engine', 'ingest → webhook p50', 'p95', 'p99 (< 500 ms)', 'recovery after the condition turned false (< window + 10 s)', `clock, ${fmt(options.clockRules)} below rules (< 5 % of a core)`],
    results.map((r) => [
      r.engine,
      ms(r.latency.p50),
      ms(r.latency.p95),
      ms(r.latency.p99),
      r.recovery.secondsAfterFalse.map((v) => (v === undefined ? 'missing' : `${v.toFixed(1)} s`)).join(', ') + ` (window ${r.recovery.windowS} s)`,
      `${fmt(r.clock.shareOfOneCore * 100, 2)} % (idle ${fmt(r.clock.idleCores * 100, 2)} %, with rules ${fmt(r.clock.withRulesCores * 100, 2)} %)`,
    ]),
  ),
);
const written = writeResults('webhooks', { node: process.version, results });
console.log(`results: ${written.latest}`);
const failures = results.flatMap((r) => r.failures.map((f) => `${r.engine}: ${f}`));
for (const f of failures) console.error(f);
process.exit(failures.length > 0 ? 1 : 0);
