/**
 * Payloads shaped exactly as log shippers send them with the configurations in
 * docs/integrations.md (Vector's http sink, Fluent Bit's http output, the curl recipes), accepted
 * and mapped on both engines.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, setPlan, signup, startServer, type Account, type TestServer } from './harness.js';

describeEngines('log shippers', (engine) => {
  let s: TestServer;
  let account: Account;
  beforeAll(async () => {
    s = await startServer(engine);
    account = await signup(s);
    await setPlan(s, account.id, 'pro');
  });
  afterAll(async () => {
    await s?.close();
  });

  async function post(apiKey: string, contentType: string, body: string | Buffer, headers: Record<string, string> = {}) {
    return s.request('POST', '/v1/logs', { raw: body, headers: { 'content-type': contentType, 'x-api-key': apiKey, ...headers } });
  }

  async function stored(projectId: string): Promise<any[]> {
    const res = await s.request('GET', `/v1/projects/${projectId}/logs?limit=1000&from=2000-01-01T00:00:00Z`, { token: account.accessToken });
    expect(res.status).toBe(200);
    return (res.body.data as any[]).reverse();
  }

  /** Events as Vector's file source produces them, after the recipe's remap set level and source. */
  const vectorEvents = () => [
    { file: '/var/log/app/api.log', host: 'web-1', message: 'GET /health 200 3ms', source_type: 'file', timestamp: '2026-11-22T10:15:30.123456789Z', level: 'info', source: 'api' },
    { file: '/var/log/app/api.log', host: 'web-1', message: 'upstream timed out', source_type: 'file', timestamp: '2026-11-22T10:15:31.5Z', level: 'error', source: 'api' },
    { container_name: 'worker', container_id: 'c0ffee', image: 'acme/worker:1.2', stream: 'stderr', host: 'node-7', message: 'job 42 failed', source_type: 'docker_logs', timestamp: '2026-11-22T10:15:32.000001Z', level: 'warn', source: 'worker' },
  ];

  function checkVector(logs: any[]): void {
    expect(logs.map((l) => [l.message, l.level, l.source, l.timestamp])).toEqual([
      ['GET /health 200 3ms', 'info', 'api', '2026-11-22T10:15:30.123Z'],
      ['upstream timed out', 'error', 'api', '2026-11-22T10:15:31.500Z'],
      ['job 42 failed', 'warn', 'worker', '2026-11-22T10:15:32.000Z'],
    ]);
    expect(logs[0].metadata).toEqual({ file: '/var/log/app/api.log', host: 'web-1', source_type: 'file' });
    expect(logs[2].metadata).toMatchObject({ container_name: 'worker', image: 'acme/worker:1.2', stream: 'stderr', source_type: 'docker_logs' });
  }

  it('Vector http sink, json codec with newline_delimited framing, gzip', async () => {
    const project = await createProject(s, account, 'vector ndjson');
    const body = gzipSync(vectorEvents().map((e) => JSON.stringify(e)).join('\n') + '\n');
    const res = await post(project.apiKey, 'application/x-ndjson', body, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 3, rejected: [] });
    checkVector(await stored(project.id));
  });

  it('Vector http sink, json codec without framing (a JSON array)', async () => {
    const project = await createProject(s, account, 'vector array');
    const res = await post(project.apiKey, 'application/json', JSON.stringify(vectorEvents()));
    expect(res.status).toBe(202);
    checkVector(await stored(project.id));
  });

  /** Records as Fluent Bit's tail input produces them: the line is in `log`. */
  const fluentRecords = () => [
    { timestamp: '2026-11-22T10:20:00.250000Z', log: 'connection reset by peer', level: 'error', source: 'nginx', host: 'edge-2', path: '/var/log/nginx/error.log' },
    { timestamp: '2026-11-22T10:20:01.000000Z', log: 'worker started', host: 'edge-2', path: '/var/log/nginx/error.log' },
  ];

  function checkFluent(logs: any[]): void {
    expect(logs.map((l) => [l.message, l.level, l.source, l.timestamp])).toEqual([
      ['connection reset by peer', 'error', 'nginx', '2026-11-22T10:20:00.250Z'],
      ['worker started', 'info', null, '2026-11-22T10:20:01.000Z'],
    ]);
    expect(logs[0].metadata).toEqual({ host: 'edge-2', path: '/var/log/nginx/error.log' });
  }

  it('Fluent Bit http output, json_lines with json_date_key timestamp and iso8601, gzip', async () => {
    const project = await createProject(s, account, 'fluent lines');
    const body = gzipSync(fluentRecords().map((r) => JSON.stringify(r)).join('\n') + '\n');
    const res = await post(project.apiKey, 'application/x-ndjson', body, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(202);
    checkFluent(await stored(project.id));
  });

  it('Fluent Bit http output, json format (an array); its default double `date` stays in metadata', async () => {
    const project = await createProject(s, account, 'fluent json');
    const res = await post(project.apiKey, 'application/json', JSON.stringify(fluentRecords()));
    expect(res.status).toBe(202);
    checkFluent(await stored(project.id));

    // Without the recipe's date settings Fluent Bit sends {"date": 1795342800.25, ...}: the log is
    // kept (time of receipt) and the date is in its metadata.
    const other = await createProject(s, account, 'fluent defaults');
    const before = Date.now();
    const plain = await post(other.apiKey, 'application/json', JSON.stringify([{ date: 1795342800.25, log: 'no date settings' }]));
    expect(plain.status).toBe(202);
    const [log] = await stored(other.id);
    expect(log.message).toBe('no date settings');
    expect(log.metadata).toEqual({ date: 1795342800.25 });
    expect(Date.parse(log.timestamp)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('the curl recipes: one log, an array, and a gzipped NDJSON file retried with one Idempotency-Key', async () => {
    const project = await createProject(s, account, 'curl');
    const one = await post(project.apiKey, 'application/json', '{"level": "info", "message": "Hello from curl", "source": "shell", "metadata": {"user": "me"}}');
    expect(one.body).toEqual({ accepted: 1, rejected: [] });
    const many = await post(project.apiKey, 'application/json', '[{"message": "first"}, {"message": "second", "level": "warning"}, {"level": "info"}]');
    expect(many.status).toBe(202);
    expect(many.body).toEqual({ accepted: 2, rejected: [{ index: 2, message: 'message is required' }] });

    const file = gzipSync(Array.from({ length: 500 }, (_, i) => JSON.stringify({ message: `line ${i}`, level: i % 2 ? 'debug' : 'info' })).join('\n'));
    const headers = { 'content-encoding': 'gzip', 'idempotency-key': 'deploy-2026-11-22-batch-1' };
    const first = await post(project.apiKey, 'application/x-ndjson', file, headers);
    const retry = await post(project.apiKey, 'application/x-ndjson', file, headers);
    expect(first.body).toEqual({ accepted: 500, rejected: [] });
    expect(retry.body).toEqual({ accepted: 500, rejected: [] });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const res = await s.request('GET', `/v1/projects/${project.id}`, { token: account.accessToken });
    expect(res.body.logCount).toBe(503);

    const wrongKey = await post('llk_wrong', 'application/json', '{"message": "x"}');
    expect(wrongKey.status).toBe(401);
    expect(errorOf(wrongKey).code).toBe('INVALID_API_KEY');
  });
});
