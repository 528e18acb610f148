/**
 * Issue 28: Splunk's HTTP Event Collector at /services/collector. The real client, splunk-logging,
 * sends to a real server on both engines, and each log is read back through the search API with
 * every mapped field checked; then the protocol's other forms (concatenated events, raw lines,
 * health) and its answers (HEC's codes for a missing or wrong token, no data, an invalid event).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { describeEngines, request, useAccount, useProject, useServer, type TestServer, type StoredLog } from './harness.js';

const require = createRequire(import.meta.url);
const { Logger: SplunkLogger } = require('splunk-logging') as { Logger: new (config: Record<string, unknown>) => SplunkLoggerInstance };
interface SplunkLoggerInstance {
  send(payload: Record<string, unknown>, callback: (err: Error | null, resp: { statusCode: number } | undefined, body: unknown) => void): void;
  error: (err: Error, context: unknown) => void;
}


async function readBack(s: TestServer, token: string, projectId: string, query = ''): Promise<StoredLog[]> {
  const res = await request(s.url, 'GET', `/v1/projects/${projectId}/logs?limit=100${query}`, { token });
  expect(res.status).toBe(200);
  return (res.body as { data: StoredLog[] }).data;
}

const hec = (s: TestServer, path: string, body: string, headers: Record<string, string>) => request(s.url, 'POST', `/services/collector${path}`, { raw: body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });

describeEngines('Splunk HEC', (engine) => {
  const s = useServer(engine);
  const account = useAccount(s);
  const project = useProject(s, account);

  it('stores what splunk-logging sends, each field where it belongs', async () => {
    const logger = new SplunkLogger({ token: project.apiKey, url: s.url, maxBatchCount: 1 });
    const failures: Error[] = [];
    logger.error = (err) => failures.push(err);
    const send = (payload: Record<string, unknown>) =>
      new Promise<{ status: number | undefined; body: unknown }>((resolve, reject) => logger.send(payload, (err, resp, body) => (err ? reject(err) : resolve({ status: resp?.statusCode, body }))));
    const sent = Date.now();
    const first = await send({ message: { text: 'card declined', orderId: 'ord_7', amount: 12.5 }, severity: 'error', metadata: { source: 'payments', sourcetype: '_json', index: 'main', host: 'pay-1' } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ text: 'Success', code: 0 });
    const second = await send({ message: 'plain text from splunk-logging', severity: 'warn', metadata: { source: 'payments' } });
    expect(second.status).toBe(200);
    expect(failures).toEqual([]);

    const logs = await readBack(s, account.accessToken, project.id, '&source=payments');
    const declined = logs.find((l) => l.metadata.text === 'card declined');
    expect(declined).toMatchObject({ level: 'error', source: 'payments', message: '', metadata: { text: 'card declined', orderId: 'ord_7', amount: 12.5, host: 'pay-1', sourcetype: '_json', index: 'main' } });
    // splunk-logging stamps each event with its own time, in seconds with decimals.
    expect(Math.abs(Date.parse(declined!.timestamp) - sent)).toBeLessThan(60_000);
    expect(logs.find((l) => l.message === 'plain text from splunk-logging')).toMatchObject({ level: 'warn', source: 'payments' });
  });

  it('reads events back to back, a text or an object each, with time, host, source, sourcetype, index and fields', async () => {
    const body = [
      JSON.stringify({ time: 1764324000.25, host: 'web-1', source: 'nginx', sourcetype: 'access', index: 'web', event: 'GET /health 200', fields: { dc: 'fra' } }),
      JSON.stringify({ time: '1764324001', event: { msg: 'pino line', level: 30, reqId: 'r-1' }, source: 'api' }),
      JSON.stringify({ event: { line: 'a line from docker', tag: 'c0ffee' }, source: 'docker' }),
    ].join('');
    const res = await hec(s, '/event', body, { authorization: `Splunk ${project.apiKey}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ text: 'Success', code: 0 });
    const nginx = (await readBack(s, account.accessToken, project.id, '&source=nginx'))[0];
    expect(nginx).toMatchObject({ message: 'GET /health 200', timestamp: '2025-11-28T10:00:00.250Z', level: 'info', metadata: { host: 'web-1', sourcetype: 'access', index: 'web', fields: { dc: 'fra' } } });
    const api = (await readBack(s, account.accessToken, project.id, '&source=api'))[0];
    expect(api).toMatchObject({ message: 'pino line', timestamp: '2025-11-28T10:00:01.000Z', level: 'info', metadata: { reqId: 'r-1' } });
    const docker = (await readBack(s, account.accessToken, project.id, '&source=docker'))[0];
    expect(docker).toMatchObject({ message: 'a line from docker', metadata: { tag: 'c0ffee' } });
  });

  it('takes raw lines, one log each, with the source and sourcetype of the query', async () => {
    const res = await hec(s, '/raw?source=cron&sourcetype=syslog', 'job started\r\n\njob finished\n', { authorization: `Splunk ${project.apiKey}` });
    expect(res.status).toBe(200);
    const logs = await readBack(s, account.accessToken, project.id, '&source=cron');
    expect(logs.map((l) => l.message).sort()).toEqual(['job finished', 'job started']);
    expect(logs[0]!.metadata).toEqual({ sourcetype: 'syslog' });
  });

  it('answers HEC\'s codes: health, no token, a wrong token, no data, an invalid event (the ones before it stored)', async () => {
    const health = await request(s.url, 'GET', '/services/collector/health');
    expect([health.status, health.body]).toEqual([200, { text: 'HEC is healthy', code: 17 }]);
    const none = await hec(s, '/event', '{"event":"x"}', {});
    expect([none.status, none.body]).toEqual([401, { text: 'Token is required', code: 2 }]);
    const wrong = await hec(s, '/event', '{"event":"x"}', { authorization: 'Splunk llk_not_a_key' });
    expect([wrong.status, wrong.body]).toEqual([403, { text: 'Invalid token', code: 4 }]);
    const empty = await hec(s, '/event', '  \n', { authorization: `Splunk ${project.apiKey}` });
    expect([empty.status, empty.body]).toEqual([400, { text: 'No data', code: 5 }]);
    const partly = await hec(s, '/event', '{"event":"kept before the bad one","source":"partial"}{"event":', { authorization: `Splunk ${project.apiKey}` });
    expect(partly.status).toBe(400);
    expect(partly.body).toMatchObject({ text: 'Invalid data format', code: 6, 'invalid-event-number': 1 });
    expect((await readBack(s, account.accessToken, project.id, '&source=partial')).map((l) => l.message)).toEqual(['kept before the bad one']);
    const noEvent = await hec(s, '/event', '{"time": 1}', { authorization: `Splunk ${project.apiKey}` });
    expect(noEvent.body).toMatchObject({ code: 6, 'invalid-event-number': 0 });
    // A log Loglane refuses (a message over 64 KiB) is an invalid event too, by its number.
    const big = await hec(s, '/event', `{"event":"ok","source":"big"}{"event":"${'x'.repeat(70_000)}","source":"big"}`, { authorization: `Splunk ${project.apiKey}` });
    expect(big.body).toMatchObject({ code: 6, 'invalid-event-number': 1 });
    expect((await readBack(s, account.accessToken, project.id, '&source=big')).map((l) => l.message)).toEqual(['ok']);
  });
});

describe('Splunk HEC never answers 5xx to a bad body', () => {
  const s = useServer('sqlite');
  const account = useAccount(s);
  const project = useProject(s, account);
  it('for random bodies', async () => {
    const bodies = ['{', '}', '{"event":', '[]', '{"event":null}', '{"event":"a"} garbage', '\u0000\u0001', '{"event":{"a":'.repeat(50), '"just a string"', '{"event":"x","time":"not a time"}'];
    for (const body of bodies) {
      const res = await hec(s, '/event', body, { authorization: `Splunk ${project.apiKey}` });
      expect(res.status, body).toBeLessThan(500);
    }
  });
});
