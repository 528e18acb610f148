/**
 * The shippers' protocols against POST /v1/logs (issue 28): the same realistic logs through each
 * ingest path, as fast as the server takes them, on a fresh database per engine.
 *
 *   npm run bench:shippers -- [--engine sqlite|postgres|both] [--logs 1000000] [--clients 4] [--batch 1000] [--quiet 20] [--rounds 1] [--only <text>] [--pg-url URL]
 *
 * The logs are bench/realistic-logs.ts's (seeded; ~414 bytes of NDJSON each), a pool of 50 batches
 * sent over and over until `--logs` were sent, each protocol to a project of its own, encoded as
 * its shippers send them:
 * - `/v1/logs`: NDJSON of the logs as they are;
 * - `/es/_bulk`: a `create` action (the source as `_index`) and an ECS-shaped document
 *   (`@timestamp`, `log.level`, `service.name`, `message`, the metadata's fields);
 * - Loki JSON and Loki protobuf (snappy, as Promtail sends it): a stream per source and level
 *   (`service_name`, `level` labels), each line the JSON of the message and metadata;
 * - HEC: the events of a batch back to back, `{"time", "source", "event": {message, level, …}}`;
 * - syslog: RFC 5424, octet-counted, the key in structured data and the metadata left out (no field
 *   of syslog holds it), over ONE TCP connection written as fast as it drains; counted end to end,
 *   until the project's logCount says every message is stored.
 * `--clients` keep-alive clients send each HTTP protocol's batches; `--quiet` seconds pass between
 * protocols, so that each starts with the background work (the skip index's builder) caught up
 * with the one before, not paying for it. The figure is logs/s from the
 * first request to the last answer (syslog: to the last message stored), and its share of
 * /v1/logs' (target ≥ 85 %; syslog ≥ 20,000 messages/s). With `--rounds` above 1 every protocol,
 * /v1/logs first, is run that many times in turn, each share taken against its own round's
 * /v1/logs, and the medians reported: on a shared 2-core machine the speed moves within minutes. Every project's logCount must equal what
 * it was sent (exit 1 otherwise).
 *
 * Writes bench/results/shippers-<timestamp>.json and bench/results/latest-shippers.json.
 */
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import snappy from 'snappy';
import type { Engine } from '../src/config.js';
import { PushRequest } from '../src/features/logs/ingest/loki.js';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { RealisticLogs, toNdjson, type RealisticLog } from './realistic-logs.js';
import { fmt, groupServerOutput, round, table, writeResults } from './report.js';
import { call, createDatabase, freePort, send, startServer, type RunningServer } from './server.js';

const USAGE = `Usage: npm run bench:shippers -- [options]

  --logs <n>                       logs per protocol (default 1000000)
  --clients <n>                    keep-alive clients per HTTP protocol (default 4)
  --batch <n>                      logs per request (default 1000)
  --quiet <seconds>                pause between protocols (default 20)
  --rounds <n>                     runs of every protocol, in turn; medians reported (default 1)
  --only <text>                    only the protocols whose name holds <text> (e.g. loki), and /v1/logs
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  pgAdminUrl: string;
  logs: number;
  clients: number;
  batch: number;
  only: string | undefined;
  quietS: number;
  rounds: number;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '1000000' },
    clients: { type: 'string', default: '4' },
    batch: { type: 'string', default: '1000' },
    only: { type: 'string' },
    quiet: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
  });
  const int = (name: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min} (got "${v}")`);
    return n;
  };
  if (engineProblem) throw new Error(engineProblem);
  return { engines: engines!, pgAdminUrl, logs: int('logs', values.logs, 1), clients: int('clients', values.clients, 1), batch: int('batch', values.batch, 1), only: values.only?.toLowerCase(), quietS: int('quiet', values.quiet, 0), rounds: int('rounds', values.rounds, 1) };
}

const options = optionsOrExit(parseOptions, USAGE);
const POOL = 50;


interface Protocol {
  name: string;
  path: string;
  headers: (key: string) => Record<string, string>;
  encode: (logs: RealisticLog[]) => Buffer;
  expect: number;
}

const ns = (iso: string) => `${BigInt(Date.parse(iso)) * 1_000_000n}`;

/** Logs grouped by source and level, as a Loki shipper's streams. */
function streams(logs: RealisticLog[]): Map<string, { source: string; level: string; logs: RealisticLog[] }> {
  const out = new Map<string, { source: string; level: string; logs: RealisticLog[] }>();
  for (const l of logs) {
    const k = `${l.source}\u0000${l.level}`;
    let s = out.get(k);
    if (!s) out.set(k, (s = { source: l.source, level: l.level, logs: [] }));
    s.logs.push(l);
  }
  return out;
}

const PROTOCOLS: Protocol[] = [
  { name: '/v1/logs (NDJSON)', path: '/v1/logs', headers: (key) => ({ 'x-api-key': key, 'content-type': 'application/x-ndjson' }), encode: (logs) => toNdjson(logs), expect: 202 },
  {
    name: 'Elasticsearch bulk',
    path: '/es/_bulk',
    headers: (key) => ({ authorization: `ApiKey ${key}`, 'content-type': 'application/x-ndjson' }),
    encode: (logs) => Buffer.from(logs.map((l) => `${JSON.stringify({ create: { _index: l.source } })}\n${JSON.stringify({ '@timestamp': l.timestamp, 'log.level': l.level, 'service.name': l.source, message: l.message, ...l.metadata })}\n`).join('')),
    expect: 200,
  },
  {
    name: 'Loki push, JSON',
    path: '/loki/api/v1/push',
    headers: (key) => ({ authorization: `Basic ${Buffer.from(`bench:${key}`).toString('base64')}`, 'content-type': 'application/json' }),
    encode: (logs) => Buffer.from(JSON.stringify({ streams: [...streams(logs).values()].map((s) => ({ stream: { service_name: s.source, level: s.level }, values: s.logs.map((l) => [ns(l.timestamp), JSON.stringify({ message: l.message, ...l.metadata })]) })) })),
    expect: 204,
  },
  {
    name: 'Loki push, protobuf + snappy',
    path: '/loki/api/v1/push',
    headers: (key) => ({ authorization: `Basic ${Buffer.from(`bench:${key}`).toString('base64')}`, 'content-type': 'application/x-protobuf' }),
    encode: (logs) => {
      const message = PushRequest.create({
        streams: [...streams(logs).values()].map((s) => ({
          labels: `{service_name="${s.source}", level="${s.level}"}`,
          entries: s.logs.map((l) => {
            const ms = Date.parse(l.timestamp);
            return { timestamp: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 }, line: JSON.stringify({ message: l.message, ...l.metadata }) };
          }),
        })),
      });
      return snappy.compressSync(Buffer.from(PushRequest.encode(message).finish()));
    },
    expect: 204,
  },
  {
    name: 'Splunk HEC',
    path: '/services/collector/event',
    headers: (key) => ({ authorization: `Splunk ${key}`, 'content-type': 'application/x-www-form-urlencoded' }),
    encode: (logs) => Buffer.from(logs.map((l) => JSON.stringify({ time: Date.parse(l.timestamp) / 1000, source: l.source, event: { message: l.message, level: l.level, ...l.metadata } })).join('\n')),
    expect: 200,
  },
];

const SEVERITY: Record<string, number> = { trace: 7, debug: 7, info: 6, warn: 4, error: 3, fatal: 2 };

/** One RFC 5424 message, octet-counted, with the key in its structured data. */
function syslogFrame(l: RealisticLog, key: string): Buffer {
  const msg = `<${16 * 8 + (SEVERITY[l.level] ?? 6)}>1 ${l.timestamp} bench-host ${l.source} - - [loglane@53595 key="${key}"] ${l.message}`;
  return Buffer.from(`${Buffer.byteLength(msg)} ${msg}`);
}

interface ProtocolResult {
  protocol: string;
  logs: number;
  seconds: number;
  logsPerSecond: number;
  bytesPerLog: number;
  vsV1: number | null;
  logCount: number;
  failures: number;
  /** With --rounds: each round's figures. */
  rounds?: { logsPerSecond: number; vsV1: number | null }[];
}

async function sendHttp(server: RunningServer, agent: http.Agent, protocol: Protocol, key: string, bodies: Buffer[], total: number): Promise<{ seconds: number; failures: number; bytes: number }> {
  let next = 0;
  let failures = 0;
  let bytes = 0;
  const requests = Math.ceil(total / options.batch);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      for (;;) {
        const i = next++;
        if (i >= requests) return;
        const body = bodies[i % bodies.length]!;
        for (let attempt = 0; ; attempt++) {
          const res = await send(agent, `${server.baseUrl}${protocol.path}`, 'POST', protocol.headers(key), body);
          if (res.status === protocol.expect && !(protocol.expect === 200 && res.body.includes('"errors":true'))) {
            bytes += body.length;
            break;
          }
          // 429/503 are the server asking for a pause: the shipper waits and sends again.
          if ((res.status === 429 || res.status === 503) && attempt < 20) {
            await sleep(200);
            continue;
          }
          failures++;
          if (failures <= 3) console.error(`  ${protocol.name}: ${res.status} ${res.body.slice(0, 200)}`);
          break;
        }
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failures, bytes };
}

async function sendSyslog(port: number, frames: Buffer[], total: number, stored: () => Promise<number>): Promise<{ seconds: number; bytes: number }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  const started = performance.now();
  let bytes = 0;
  for (let i = 0; i < total; i++) {
    const frame = frames[i % frames.length]!;
    bytes += frame.length;
    if (!socket.write(frame)) await new Promise((r) => socket.once('drain', r));
  }
  // End to end: until every message is stored.
  while ((await stored()) < total) await sleep(50);
  const seconds = (performance.now() - started) / 1000;
  socket.end();
  return { seconds, bytes };
}

async function runEngine(engine: Engine): Promise<{ results: ProtocolResult[]; failures: string[] }> {
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients * 2 });
  const syslogPort = await freePort();
  process.env.SYSLOG_TCP_PORT = String(syslogPort);
  process.env.SYSLOG_HOST = '127.0.0.1';
  let server: RunningServer | undefined;
  const failures: string[] = [];
  const results: ProtocolResult[] = [];
  try {
    server = await startServer(database, agent);
    const base = server.baseUrl;
    const { accessToken } = await call<{ accessToken: string }>(agent, `${base}/v1/auth/signup`, 'POST', 201, undefined, { email: `shippers-${Date.now()}@example.com`, password: 'bench password' });
    const gen = new RealisticLogs({ seed: 28, startMs: Date.now() - 3_600_000, logsPerSecond: 1000 });
    const pool = Array.from({ length: POOL }, () => gen.batch(options.batch).logs);
    const count = async (id: string) => (await call<{ logCount: number }>(agent, `${base}/v1/projects/${id}`, 'GET', 200, accessToken)).logCount;
    let v1Rate: number | undefined;
    for (let pass = 0; pass < options.rounds; pass++)
    for (const protocol of [...PROTOCOLS, undefined]) {
      const name = protocol?.name ?? 'syslog, TCP (one connection)';
      const label = options.rounds > 1 ? `${name} (round ${pass + 1})` : name;
      if (options.only !== undefined && protocol?.path !== '/v1/logs' && !name.toLowerCase().includes(options.only)) continue;
      if (results.length > 0) await sleep(options.quietS * 1000);
      const project = await call<{ id: string; apiKey: string }>(agent, `${base}/v1/projects`, 'POST', 201, accessToken, { name: label });
      process.stdout.write(`  ${engine}: ${label}… `);
      let sent: { seconds: number; bytes: number; failures?: number };
      if (protocol) {
        const bodies = pool.map((logs) => protocol.encode(logs));
        sent = await sendHttp(server, agent, protocol, project.apiKey, bodies, options.logs);
      } else {
        const frames = pool.flat().map((l) => syslogFrame(l, project.apiKey));
        sent = await sendSyslog(syslogPort, frames, options.logs, () => count(project.id));
      }
      const logCount = await count(project.id);
      const rate = options.logs / sent.seconds;
      if (protocol?.path === '/v1/logs') v1Rate = rate;
      if (logCount !== options.logs) failures.push(`${engine} ${name}: logCount ${fmt(logCount)}, but ${fmt(options.logs)} were sent`);
      if (sent.failures) failures.push(`${engine} ${name}: ${sent.failures} requests failed`);
      console.log(`${fmt(rate)} logs/s`);
      results.push({ protocol: name, logs: options.logs, seconds: round(sent.seconds, 2)!, logsPerSecond: Math.round(rate), bytesPerLog: round(sent.bytes / options.logs, 0)!, vsV1: v1Rate ? round(rate / v1Rate, 3) : null, logCount, failures: sent.failures ?? 0 });
    }
  } finally {
    const code = await server?.stop();
    if (server && code !== 0) failures.push(`${engine}: the server exited with ${code}`);
    for (const { line, count } of groupServerOutput(server?.output ?? [])) console.log(`  the server wrote ${count}× ${line}`);
    agent.destroy();
    await database.drop();
  }
  return { results: options.rounds > 1 ? medians(results) : results, failures };
}

/** Per protocol, the median of its rounds (logs/s and its share of /v1/logs). */
function medians(results: ProtocolResult[]): ProtocolResult[] {
  const byName = new Map<string, ProtocolResult[]>();
  for (const r of results) byName.set(r.protocol, [...(byName.get(r.protocol) ?? []), r]);
  const mid = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  return [...byName].map(([protocol, rs]) => ({
    ...rs[0]!,
    protocol: `${protocol} (median of ${rs.length})`,
    logsPerSecond: Math.round(mid(rs.map((r) => r.logsPerSecond))),
    seconds: round(mid(rs.map((r) => r.seconds)), 2)!,
    vsV1: rs[0]!.vsV1 === null ? null : round(mid(rs.map((r) => r.vsV1!)), 3),
    rounds: rs.map((r) => ({ logsPerSecond: r.logsPerSecond, vsV1: r.vsV1 })),
  }));
}

console.log(`shippers: ${fmt(options.logs)} logs per protocol, ${options.clients} clients × ${fmt(options.batch)}-log batches; ${os.cpus().length} CPUs, Node ${process.version}`);
const all: Record<string, ProtocolResult[]> = {};
const failures: string[] = [];
for (const engine of options.engines) {
  const run = await runEngine(engine);
  all[engine] = run.results;
  failures.push(...run.failures);
  console.log(
    table(
      ['protocol', 'logs/s', 'vs /v1/logs', 'bytes sent a log', 'target'],
      run.results.map((r) => [r.protocol, fmt(r.logsPerSecond), r.vsV1 === null ? '' : `${fmt(r.vsV1 * 100, 1)} %`, fmt(r.bytesPerLog), r.protocol.startsWith('syslog') ? `≥ 20,000/s ${r.logsPerSecond >= 20_000 ? '✓' : '✗'}` : r.protocol.startsWith('/v1') ? '' : `≥ 85 % ${r.vsV1 !== null && r.vsV1 >= 0.85 ? '✓' : '✗'}`]),
      [1, 2, 3],
    ),
  );
}
const written = writeResults('shippers', { options, cpus: os.cpus().length, node: process.version, results: all, failures });
console.log(`\nResults: ${written.run} (and ${written.latest})`);
if (failures.length > 0) {
  console.error(`\n${failures.join('\n')}`);
  process.exit(1);
}
