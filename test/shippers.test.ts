/**
 * The recipes of docs/integrations.md against a real server, on both engines: payloads shaped
 * exactly as the shippers send them with those configurations, read back through
 * GET /v1/projects/:id/logs.
 *
 * - Vector's http sink, json codec: with newline_delimited framing it sends NDJSON with no newline
 *   after the last event (Content-Type application/x-ndjson), without framing a JSON array
 *   `[{…},{…}]` (application/json). Timestamps are RFC 3339 with 0, 3, 6 or 9 fractional digits
 *   (chrono's SecondsFormat::AutoSi).
 * - Fluent Bit's http output: json_lines (each record followed by a newline) and json (an array),
 *   the date key first, written by `json_date_format iso8601` with microseconds.
 * - The doc's curl commands, run by the real curl (when it is installed) exactly as written there.
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import type { Log } from '../packages/client/src/index.js';
import { createProject, describeEngines, errorOf, useAccount, useServer } from './harness.js';

const exec = promisify(execFile);

/** Yesterday (UTC): the fixed times of day below are then in the past and within every plan's retention. */
const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const at = (time: string) => `${DAY}T${time}`;

const DOC = fs.readFileSync(new URL('../docs/integrations.md', import.meta.url), 'utf8');

/** The commands of the doc's curl section in order, each with the answer the doc prints after it. */
function curlRecipe(): Array<{ command: string; expected?: unknown }> {
  const start = DOC.indexOf('\n## curl\n');
  const section = DOC.slice(start, DOC.indexOf('\n## ', start + 1));
  const steps: Array<{ command: string; expected?: unknown }> = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const raw of block[1]!.replace(/\\\n/g, ' ').split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      if (line.startsWith('#')) {
        const answer = /^# (\{.*\})/.exec(line);
        if (answer && steps.length > 0) steps[steps.length - 1]!.expected = JSON.parse(answer[1]!);
        continue;
      }
      steps.push({ command: line });
    }
  }
  return steps;
}

const HAVE_CURL = spawnSync('curl', ['--version']).status === 0 && spawnSync('gzip', ['--version']).status === 0;

describeEngines('log shippers', (engine) => {
  const s = useServer(engine);
  const account = useAccount(s, { plan: 'pro' });

  function post(apiKey: string, contentType: string, body: string | Buffer, headers: Record<string, string> = {}) {
    return s.request('POST', '/v1/logs', { raw: body, headers: { 'content-type': contentType, 'x-api-key': apiKey, ...headers } });
  }

  /** A project's logs, oldest first. */
  async function stored(projectId: string): Promise<Log[]> {
    const res = await s.request('GET', `/v1/projects/${projectId}/logs?limit=1000&from=2000-01-01T00:00:00Z`, { token: account.accessToken });
    expect(res.status).toBe(200);
    return res.body.data.reverse();
  }

  async function logCount(projectId: string): Promise<number> {
    const res = await s.request('GET', `/v1/projects/${projectId}`, { token: account.accessToken });
    return res.body.logCount;
  }

  const summary = (logs: Log[]) => logs.map((l) => [l.message, l.level, l.source, l.timestamp]);

  // ---------------------------------------------------------------------------------------- Vector

  /** Events of Vector's file and docker_logs sources after the recipe's remap set level and source. */
  const vectorEvents = () => [
    { file: '/var/log/app/api.log', host: 'web-1', level: 'info', message: 'GET /health 200 3ms', source: 'api', source_type: 'file', timestamp: at('10:15:30.123456789Z') },
    { file: '/var/log/app/api.log', host: 'web-1', level: 'error', message: 'upstream timed out', source: 'api', source_type: 'file', timestamp: at('10:15:31.500Z') },
    { file: '/var/log/app/api.log', host: 'web-1', level: 'info', message: 'listening on :8080', source: 'api', source_type: 'file', timestamp: at('10:15:32Z') },
    {
      container_created_at: at('09:00:00.000000001Z'), container_id: '3f4e1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f', container_name: 'worker',
      host: 'node-7', image: 'acme/worker:1.2', label: { 'com.docker.compose.service': 'worker' }, level: 'info', message: 'job 42 done', source: 'worker',
      source_type: 'docker_logs', stream: 'stdout', timestamp: at('10:15:33.999999Z'),
    },
  ];

  function checkVector(logs: Log[]): void {
    expect(summary(logs)).toEqual([
      ['GET /health 200 3ms', 'info', 'api', at('10:15:30.123Z')],
      ['upstream timed out', 'error', 'api', at('10:15:31.500Z')],
      ['listening on :8080', 'info', 'api', at('10:15:32.000Z')],
      ['job 42 done', 'info', 'worker', at('10:15:33.999Z')], // cut to the millisecond, not rounded up
    ]);
    expect(logs[0]!.metadata).toEqual({ file: '/var/log/app/api.log', host: 'web-1', source_type: 'file' });
    expect(logs[3]!.metadata).toEqual({
      container_created_at: at('09:00:00.000000001Z'), container_id: vectorEvents()[3]!.container_id, container_name: 'worker', host: 'node-7',
      image: 'acme/worker:1.2', label: { 'com.docker.compose.service': 'worker' }, source_type: 'docker_logs', stream: 'stdout',
    });
  }

  it('Vector http sink, json codec with newline_delimited framing, gzip: NDJSON mapped field by field', async () => {
    const project = await createProject(s, account, 'vector ndjson');
    // The recipe's healthcheck sends HEAD to /healthz and wants a 200.
    expect((await s.request('HEAD', '/healthz')).status).toBe(200);
    const body = gzipSync(vectorEvents().map((e) => JSON.stringify(e)).join('\n'));
    const res = await post(project.apiKey, 'application/x-ndjson', body, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 4, rejected: [] });
    checkVector(await stored(project.id));
    expect(await logCount(project.id)).toBe(4);
  });

  it('Vector http sink, json codec without framing: a JSON array, gzip', async () => {
    const project = await createProject(s, account, 'vector array');
    const res = await post(project.apiKey, 'application/json', gzipSync(JSON.stringify(vectorEvents())), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 4, rejected: [] });
    checkVector(await stored(project.id));
  });

  it('Vector: a pino line unpacked by the recipe\'s remap keeps its own message, level and time', async () => {
    const project = await createProject(s, account, 'vector pino');
    const time = Date.parse(at('10:16:00.042Z'));
    // The file source read `{"level":50,"time":…,"pid":4242,"hostname":"web-1","orderId":42,"msg":"payment failed"}`;
    // the remap merged it, moved msg to message and time to timestamp, and set the default source.
    const event = { file: '/var/log/app/checkout.log', host: 'web-1', hostname: 'web-1', level: 50, message: 'payment failed', orderId: 42, pid: 4242, source: 'app', source_type: 'file', timestamp: time };
    const res = await post(project.apiKey, 'application/x-ndjson', gzipSync(JSON.stringify(event)), { 'content-encoding': 'gzip' });
    expect(res.body).toEqual({ accepted: 1, rejected: [] });
    const logs = await stored(project.id);
    expect(summary(logs)).toEqual([['payment failed', 'error', 'app', at('10:16:00.042Z')]]);
    expect(logs[0]!.metadata).toEqual({ file: '/var/log/app/checkout.log', host: 'web-1', hostname: 'web-1', orderId: 42, pid: 4242, source_type: 'file' });
  });

  // ------------------------------------------------------------------------------------ Fluent Bit

  /** Records of the recipe: tail (Path_Key file), `Rename log message`, `Add source api`, `Add level error` on matching lines. */
  const fluentRecipeRecords = () => [
    { timestamp: at('10:20:00.250000Z'), file: '/var/log/app/api.log', message: 'ERROR connection reset by peer', source: 'api', level: 'error' },
    { timestamp: at('10:20:01.000001Z'), file: '/var/log/app/api.log', message: 'worker started', source: 'api' },
  ];
  const jsonLines = (records: object[]) => records.map((r) => JSON.stringify(r) + '\n').join('');

  it('Fluent Bit http output, json_lines with json_date_key timestamp and iso8601, gzip: the recipe\'s records', async () => {
    const project = await createProject(s, account, 'fluent lines');
    const res = await post(project.apiKey, 'application/x-ndjson', gzipSync(jsonLines(fluentRecipeRecords())), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 2, rejected: [] });
    const logs = await stored(project.id);
    expect(summary(logs)).toEqual([
      ['ERROR connection reset by peer', 'error', 'api', at('10:20:00.250Z')],
      ['worker started', 'info', 'api', at('10:20:01.000Z')],
    ]);
    expect(logs.map((l) => l.metadata)).toEqual([{ file: '/var/log/app/api.log' }, { file: '/var/log/app/api.log' }]);
  });

  it('Fluent Bit http output, Format json (an array), without the rename: `log` is the message', async () => {
    const project = await createProject(s, account, 'fluent json');
    const records = [
      // tail with Path_Key, and no filter at all
      { timestamp: at('10:21:00.000500Z'), log: 'worker started', file: '/var/log/app/api.log' },
      // tail on Docker's json-file logs with the docker parser (it takes `time` as the record's time)
      { timestamp: at('10:21:01.123456Z'), log: 'job 7 failed\n', stream: 'stderr' },
    ];
    const res = await post(project.apiKey, 'application/json', JSON.stringify(records));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 2, rejected: [] });
    const logs = await stored(project.id);
    expect(summary(logs)).toEqual([
      ['worker started', 'info', null, at('10:21:00.000Z')],
      ['job 7 failed\n', 'info', null, at('10:21:01.123Z')], // Docker's newline is kept, as the doc says
    ]);
    // `log` became the message and is not repeated in metadata.
    expect(logs.map((l) => l.metadata)).toEqual([{ file: '/var/log/app/api.log' }, { stream: 'stderr' }]);
  });

  it('Fluent Bit: a parser that drops `log` leaves records without a message (refused); Preserve_Key On keeps them', async () => {
    const project = await createProject(s, account, 'fluent parser');
    const parsed = { remote: '10.0.0.7', host: '-', user: '-', method: 'GET', path: '/', code: '200', size: '612', referer: '-', agent: 'curl/8.0' };
    const line = '10.0.0.7 - - [22/Nov/2026:10:22:00 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.0"';

    // The nginx parser alone: every record lacks a message, so the request is a 400 that says why.
    const bare = await post(project.apiKey, 'application/x-ndjson', jsonLines([{ timestamp: at('10:22:00.000000Z'), ...parsed }, { timestamp: at('10:22:01.000000Z'), ...parsed }]));
    expect(bare.status).toBe(400);
    const err = errorOf(bare);
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details).toEqual([{ path: '/0', message: 'message is required' }, { path: '/1', message: 'message is required' }]);

    // Mixed with a good record, the bad one is refused alone.
    const mixed = await post(project.apiKey, 'application/x-ndjson', jsonLines([{ timestamp: at('10:22:02.000000Z'), log: line, ...parsed }, { timestamp: at('10:22:03.000000Z'), ...parsed }]));
    expect(mixed.status).toBe(202);
    expect(mixed.body).toEqual({ accepted: 1, rejected: [{ index: 1, message: 'message is required' }] });

    // The doc's fix: Preserve_Key On + Reserve_Data On keep the line and the parsed fields.
    const kept = await post(project.apiKey, 'application/x-ndjson', jsonLines([{ timestamp: at('10:22:04.000000Z'), log: line, ...parsed }]));
    expect(kept.body).toEqual({ accepted: 1, rejected: [] });
    const logs = await stored(project.id);
    expect(summary(logs)).toEqual([
      [line, 'info', null, at('10:22:02.000Z')],
      [line, 'info', null, at('10:22:04.000Z')],
    ]);
    expect(logs[1]!.metadata).toEqual(parsed);
    expect(await logCount(project.id)).toBe(2);
  });

  it('Fluent Bit date settings: epoch_ms is read too; without them `date` (seconds) stays in metadata and the time of receipt is used', async () => {
    const project = await createProject(s, account, 'fluent defaults');
    // json_date_key timestamp + json_date_format epoch_ms
    const ms = await post(project.apiKey, 'application/x-ndjson', jsonLines([{ timestamp: Date.parse(at('10:23:00.250Z')), log: 'epoch_ms' }]));
    expect(ms.body).toEqual({ accepted: 1, rejected: [] });
    // no date settings: json_date_key date, json_date_format double
    const seconds = Date.parse(at('10:23:00.250Z')) / 1000;
    const before = Date.now();
    const res = await post(project.apiKey, 'application/x-ndjson', jsonLines([{ date: seconds, log: 'no date settings' }]));
    const after = Date.now();
    expect(res.body).toEqual({ accepted: 1, rejected: [] });
    const logs = await stored(project.id);
    expect(logs).toHaveLength(2);
    const [first, log] = [logs[0]!, logs[1]!];
    expect(summary([first])).toEqual([['epoch_ms', 'info', null, at('10:23:00.250Z')]]);
    expect(log.message).toBe('no date settings');
    expect(log.metadata).toEqual({ date: seconds });
    expect(Date.parse(log.timestamp)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(log.timestamp)).toBeLessThanOrEqual(after + 1000);
  });

  it('Fluent Bit json_date_format double or epoch: a timestamp in seconds is read as seconds', async () => {
    const project = await createProject(s, account, 'fluent seconds');
    const when = Date.parse('2026-11-22T10:24:00.250Z');
    const body = [JSON.stringify({ timestamp: when / 1000, log: 'double' }), JSON.stringify({ timestamp: Math.floor(when / 1000), log: 'epoch' })].join('\n');
    const res = await post(project.apiKey, 'application/x-ndjson', body);
    expect(res.status).toBe(202);
    const logs = await stored(project.id);
    expect(logs.map((l: { message: string; timestamp: string }) => [l.message, l.timestamp])).toEqual([
      ['epoch', '2026-11-22T10:24:00.000Z'],
      ['double', '2026-11-22T10:24:00.250Z'],
    ]);
  });

  it('Fluent Bit formats the doc rules out: json_stream is a 400 and msgpack a 415, and nothing is stored', async () => {
    const project = await createProject(s, account, 'fluent formats');
    const records = fluentRecipeRecords();
    // json_stream: records one after another, nothing between them, sent as application/json.
    const stream = await post(project.apiKey, 'application/json', records.map((r) => JSON.stringify(r)).join(''));
    expect(stream.status).toBe(400);
    expect(errorOf(stream).code).toBe('VALIDATION_ERROR');
    const msgpack = await post(project.apiKey, 'application/msgpack', Buffer.from([0x81, 0xa3, 0x6c, 0x6f, 0x67, 0xa2, 0x68, 0x69]));
    expect(msgpack.status).toBe(415);
    expect(errorOf(msgpack).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(await logCount(project.id)).toBe(0);
  });

  // ------------------------------------------------------------------------------------------ curl

  it('the curl recipes\' requests: one log, an array, and a gzipped NDJSON file retried twice with one Idempotency-Key', async () => {
    const project = await createProject(s, account, 'curl bytes');
    const one = await post(project.apiKey, 'application/json', '{"message": "Hello from curl", "level": "info", "source": "shell", "metadata": {"user": "me"}}');
    expect(one.status).toBe(202);
    expect(one.body).toEqual({ accepted: 1, rejected: [] });
    const many = await post(project.apiKey, 'application/json', '[{"message": "first"}, {"message": "second", "level": "warning"}, {"level": "info"}]');
    expect(many.status).toBe(202);
    expect(many.body).toEqual({ accepted: 2, rejected: [{ index: 2, message: 'message is required' }] });

    const file = gzipSync(Array.from({ length: 500 }, (_, i) => JSON.stringify({ message: `line ${i}`, level: i % 2 ? 'debug' : 'info', time: Date.parse(at('11:00:00.000Z')) + i })).join('\n') + '\n');
    const headers = { 'content-encoding': 'gzip', 'idempotency-key': 'app-ndjson-2026-11-22' };
    const first = await post(project.apiKey, 'application/x-ndjson', file, headers);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ accepted: 500, rejected: [] });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let retry = 0; retry < 2; retry++) {
      const again = await post(project.apiKey, 'application/x-ndjson', file, headers);
      expect(again.status).toBe(202);
      expect(again.body).toEqual({ accepted: 500, rejected: [] });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(await logCount(project.id)).toBe(503);

    const logs = await stored(project.id);
    const hello = logs.find((l) => l.message === 'Hello from curl');
    expect([hello?.level, hello?.source, hello?.metadata]).toEqual(['info', 'shell', { user: 'me' }]);
    expect(logs.find((l) => l.message === 'second')?.level).toBe('warn');
    const lines = logs.filter((l) => l.message.startsWith('line '));
    expect(new Set(lines.map((l) => l.message)).size).toBe(500);
    expect(lines.find((l) => l.message === 'line 499')?.timestamp).toBe(at('11:00:00.499Z'));

    // Another body under the same key is refused, not stored.
    const reused = await post(project.apiKey, 'application/x-ndjson', gzipSync('{"message":"other"}'), headers);
    expect(reused.status).toBe(422);
    expect(errorOf(reused).code).toBe('IDEMPOTENCY_KEY_REUSED');

    const wrongKey = await post('llk_wrong', 'application/json', '{"message": "x"}');
    expect(wrongKey.status).toBe(401);
    expect(errorOf(wrongKey).code).toBe('INVALID_API_KEY');
    expect(await logCount(project.id)).toBe(503);
  });

  it.skipIf(!HAVE_CURL)('the curl recipes run by curl exactly as docs/integrations.md writes them, each printing the answer the doc shows (skipped only where curl or gzip is not installed)', async () => {
    const project = await createProject(s, account, 'curl doc');
    const steps = curlRecipe();
    expect(steps.map((st) => st.command.split(' ')[0])).toEqual(['curl', 'curl', 'gzip', 'curl']);
    expect(steps.filter((st) => st.expected !== undefined)).toHaveLength(3);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-curl-'));
    try {
      fs.writeFileSync(path.join(dir, 'app.ndjson'), Array.from({ length: 500 }, (_, i) => JSON.stringify({ message: `line ${i}`, level: 'info' }) + '\n').join(''));
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LOGLANE_API_KEY: project.apiKey };
      const run = async (command: string) => (await exec('bash', ['-c', command.replaceAll('https://logs.example.com', s.url)], { cwd: dir, env })).stdout;
      for (const step of steps) {
        const out = await run(step.command);
        if (step.expected !== undefined) expect(JSON.parse(out)).toEqual(step.expected);
      }
      // The idempotent upload sent twice more, as --retry or a person would: the same answer, stored once.
      const upload = steps.find((st) => st.command.includes('Idempotency-Key'))!;
      for (let retry = 0; retry < 2; retry++) expect(JSON.parse(await run(upload.command))).toEqual(upload.expected);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(await logCount(project.id)).toBe(503);
    const logs = await stored(project.id);
    const hello = logs.find((l) => l.message === 'Hello from curl');
    expect([hello?.level, hello?.source, hello?.metadata]).toEqual(['info', 'shell', { user: 'me' }]);
    expect(logs.filter((l) => l.message.startsWith('line ')).length).toBe(500);
  });
});
