/**
 * Grafana Loki's push API (docs/integrations.md, "Grafana Loki push") driven by the real clients,
 * pino-loki (JSON) and winston-loki (snappy-compressed protobuf), and by hand-made pushes for what
 * the clients do not send (structured metadata, refused entries, the error answers, gzip), on a
 * real server on each engine; every log is read back through the API.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import pino from 'pino';
import { pinoLoki, type LokiOptions } from 'pino-loki';
import snappy from 'snappy';
import winston from 'winston';
import LokiTransport from 'winston-loki';
import { expect, it } from 'vitest';
import { PushRequest } from '../src/features/logs/ingest/loki.js';
import { createProject, describeEngines, useAccount, useServer, waitFor, type StoredLog } from './harness.js';



const require = createRequire(import.meta.url);
/** pino and pino-loki for an application in its own process (a file outside this tree), by absolute location. */
const PINO_URL = pathToFileURL(require.resolve('pino')).href;
const PINO_LOKI = path.join(path.dirname(require.resolve('pino-loki/package.json')), 'dist/index.mjs');

/** Epoch nanoseconds of `ms`, plus `subMs` nanoseconds, as Loki's JSON wants them (a string). */
const ns = (ms: number, subMs = 0) => String(BigInt(ms) * 1_000_000n + BigInt(subMs));
const iso = (ms: number) => new Date(ms).toISOString();

describeEngines('Grafana Loki push', (engine) => {
  const s = useServer(engine);
  const account = useAccount(s, { plan: 'pro' });

  const pushUrl = () => `${s.url}/loki/api/v1/push`;
  const basic = (key: string, user = 'loglane') => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;

  async function read(projectId: string): Promise<StoredLog[]> {
    const res = await s.request('GET', `/v1/projects/${projectId}/logs?limit=1000&from=2000-01-01T00:00:00Z`, { token: account.accessToken });
    expect(res.status).toBe(200);
    return (res.body.data as StoredLog[]).reverse();
  }

  /** Reads until `n` logs are there (a client that does not wait for its answers). */
  const readCount = (projectId: string, n: number, what: string) =>
    waitFor(async () => {
      const logs = await read(projectId);
      return logs.length >= n ? logs : undefined;
    }, 10_000, what);

  async function push(headers: Record<string, string>, body: string | Buffer): Promise<{ status: number; type: string; text: string }> {
    const res = await fetch(pushUrl(), { method: 'POST', headers, body });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  }

  it('pino-loki (JSON, in process, unbatched) delivers every field mapped', async () => {
    const project = await createProject(s, account, 'pino-loki');
    const errors: unknown[] = [];
    const saved = console.error;
    // pino-loki reports a refused push on console.error; the test fails on any.
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      const options: LokiOptions = {
        host: s.url,
        basicAuth: { username: 'loglane', password: project.apiKey },
        labels: { service_name: 'checkout', env: 'test' },
        batching: false,
      };
      const loki = pinoLoki(options);
      // Every line pino writes, as pino wrote it, to compare the stored times with pino's own.
      const written: Record<string, any>[] = [];
      const capture = new Writable({
        write(chunk, _enc, done) {
          for (const line of String(chunk).split('\n')) if (line.trim() !== '') written.push(JSON.parse(line));
          done();
        },
      });
      const logger = pino({ level: 'trace' }, pino.multistream([{ stream: loki, level: 'trace' }, { stream: capture, level: 'trace' }]));
      logger.info({ orderId: 'o-42', amount: 12.5, user: { id: 7, tier: 'gold' }, tags: ['a', 'b'] }, 'order placed');
      logger.error({ orderId: 'o-43', err: { type: 'CardDeclined', code: 51 } }, 'payment failed');
      logger.warn({ meta: { traceId: 'abc123', attempt: 2 } }, 'retrying with structured metadata');
      logger.fatal('shutting down');

      const logs = await readCount(project.id, 4, 'the four pino-loki logs');
      expect(logs).toHaveLength(4);
      expect(errors).toEqual([]);
      expect(written).toHaveLength(4);
      const byMessage = new Map(logs.map((l) => [l.message, l]));
      for (const line of written) {
        const log = byMessage.get(line.msg as string);
        expect(log, `the log "${line.msg}"`).toBeDefined();
        // The entry's time is pino's time, to the millisecond.
        expect(log!.timestamp).toBe(iso(line.time as number));
        expect(log!.source).toBe('checkout');
        // The labels (env, and pino-loki's own hostname label) and pino's fields, under their own names.
        expect(log!.metadata).toMatchObject({ env: 'test', hostname: line.hostname, pid: line.pid });
      }

      const placed = byMessage.get('order placed')!;
      expect(placed.level).toBe('info');
      expect(placed.metadata).toMatchObject({ orderId: 'o-42', amount: 12.5, user: { id: 7, tier: 'gold' }, tags: ['a', 'b'] });
      const failed = byMessage.get('payment failed')!;
      expect(failed.level).toBe('error');
      expect(failed.metadata).toMatchObject({ orderId: 'o-43', err: { type: 'CardDeclined', code: 51 } });
      // pino-loki's "warning" label is warn; its structured metadata (the `meta` key, values as strings) joins the metadata.
      const retry = byMessage.get('retrying with structured metadata')!;
      expect(retry.level).toBe('warn');
      expect(retry.metadata).toMatchObject({ traceId: 'abc123', attempt: '2', meta: { traceId: 'abc123', attempt: 2 } });
      expect(byMessage.get('shutting down')!.level).toBe('fatal');
      // The message and the time are not left in metadata too.
      for (const log of logs) {
        expect(log.metadata).not.toHaveProperty('msg');
        expect(log.metadata).not.toHaveProperty('time');
      }
      loki.end();
    } finally {
      console.error = saved;
    }
  });

  it('pino-loki as a pino.transport (worker thread, batched), in an application that logs and exits, delivers its batch', async () => {
    const project = await createProject(s, account, 'pino-loki worker');
    // Its own process, as applications run it: ending a transport blocks the thread until the worker
    // has sent its batch, and the server of this test answers on this test's thread.
    const options: LokiOptions = { host: s.url, basicAuth: { username: 'loglane', password: project.apiKey }, labels: { service_name: 'checkout', env: 'test' }, batching: { interval: 60 } };
    const source = `
import pino from ${JSON.stringify(PINO_URL)};
const transport = pino.transport({ target: ${JSON.stringify(PINO_LOKI)}, options: ${JSON.stringify(options)} });
const logger = pino(transport);
for (let i = 0; i < 20; i++) logger.info({ i }, 'batched ' + i);
logger.error({ i: 20 }, 'batched error');
`;
    const file = path.join(os.tmpdir(), `loglane-pino-loki-${randomBytes(6).toString('hex')}.mjs`);
    await writeFile(file, source);
    const t0 = Date.now();
    let ran: { code: number | null; stderr: string };
    try {
      ran = await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? '' } });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.stdout.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      });
    } finally {
      await rm(file, { force: true });
    }
    const t1 = Date.now();
    // pino-loki prints a refused push on the console: nothing printed.
    expect(ran).toEqual({ code: 0, stderr: '' });
    // The batch was pushed (and answered) before the process exited: no waiting here.
    const logs = await read(project.id);
    expect(logs).toHaveLength(21);
    expect(new Set(logs.map((l) => l.message))).toEqual(new Set([...Array.from({ length: 20 }, (_, i) => `batched ${i}`), 'batched error']));
    for (const log of logs) {
      expect(log.source).toBe('checkout');
      expect(Date.parse(log.timestamp)).toBeGreaterThanOrEqual(t0);
      expect(Date.parse(log.timestamp)).toBeLessThanOrEqual(t1);
      expect(log.metadata).toMatchObject({ env: 'test', i: expect.any(Number) });
      expect(log.level).toBe(log.message === 'batched error' ? 'error' : 'info');
    }
  });

  it('winston-loki (snappy-compressed protobuf) delivers, flushed on close', async () => {
    const project = await createProject(s, account, 'winston-loki');
    const failures: unknown[] = [];
    const transport = new LokiTransport({
      host: s.url,
      basicAuth: `loglane:${project.apiKey}`,
      labels: { job: 'billing' },
      json: false,
      interval: 60,
      gracefulShutdown: false,
      onConnectionError: (err) => failures.push(err),
    });
    // With `snappy` installed and json: false, winston-loki sends protobuf: make sure this run does.
    const batcher = (transport as unknown as { batcher: { contentType: string; options: { json: boolean } } }).batcher;
    expect(batcher.contentType).toBe('application/x-protobuf');
    expect(batcher.options.json).toBe(false);
    const logger = winston.createLogger({ level: 'debug', transports: [transport] });
    let logged = 0;
    transport.on('logged', () => logged++);

    const before = Date.now();
    logger.info('invoice issued', { invoice: 'inv-1', amount: 30 });
    logger.warn('card expiring');
    logger.info({ message: 'tenant invoice', labels: { tenant: 'acme' } });
    logger.warn('dunning started', { invoice: 'inv-2' });
    // winston hands the entries to the transport a moment later; the transport says so per entry.
    await waitFor(() => logged === 4, 5000, 'winston-loki to take the four entries');
    const after = Date.now();
    await transport.close();
    expect(failures).toEqual([]);

    const logs = await readCount(project.id, 4, 'the four winston-loki logs');
    expect(logs).toHaveLength(4);
    // winston-loki's line is the message, a space, and the rest of winston's info (its level and meta) as JSON.
    const expected: Array<[string, Record<string, unknown>, string, Record<string, unknown>]> = [
      ['invoice issued', { level: 'info', invoice: 'inv-1', amount: 30 }, 'info', {}],
      ['card expiring', { level: 'warn' }, 'warn', {}],
      ['tenant invoice', { level: 'info' }, 'info', { tenant: 'acme' }],
      ['dunning started', { level: 'warn', invoice: 'inv-2' }, 'warn', {}],
    ];
    for (const [text, rest, level, labels] of expected) {
      const log = logs.find((l) => l.message.startsWith(`${text} {`));
      expect(log, `the log "${text}"`).toBeDefined();
      expect(JSON.parse(log!.message.slice(text.length + 1))).toEqual(rest);
      expect(log!.level).toBe(level);
      expect(log!.source).toBe('billing');
      // The labels beyond job (the source) and level (the level) are metadata; winston-loki's protobuf carries nothing else.
      expect(log!.metadata).toEqual(labels);
      // winston-loki stamps each entry itself (Date.now() when logged), to the millisecond.
      const t = Date.parse(log!.timestamp);
      expect(t).toBeGreaterThanOrEqual(before);
      expect(t).toBeLessThanOrEqual(after);
    }
  });

  it('takes structured metadata, a JSON line, the source fallbacks and all three ways of sending the key', async () => {
    const project = await createProject(s, account, 'loki raw');
    const now = Date.now() - 5000;
    const body = {
      streams: [
        {
          stream: { app: 'worker', env: 'prod', detected_level: 'warn' },
          values: [
            [ns(now, 456_789), 'queue is slow', { trace_id: '4bf92f3577b34da6', attempt: '3' }],
            [ns(now + 1), 'metadata names the level', { level: 'error' }],
          ],
        },
        {
          stream: { service_name: 'api', job: 'ignored-job', app: 'ignored-app' },
          values: [[ns(now + 2), '{"msg":"from a JSON line","level":30,"user":{"id":1},"env":"line"}', { env: 'metadata' }]],
        },
        { stream: {}, values: [[ns(now + 3), '{"message":"no labels","source":"cron","lvl":"debug"}']] },
        { stream: { job: 'batch' }, values: [[ns(now + 4), '{not json, so text']] },
      ],
    };
    const text = JSON.stringify(body);
    expect(await push({ 'content-type': 'application/json', authorization: basic(project.apiKey, 'anyone') }, text)).toEqual({ status: 204, type: '', text: '' });
    const ok = { 'content-type': 'application/json' };
    const one = (message: string, offset: number) => JSON.stringify({ streams: [{ stream: { job: 'auth-check' }, values: [[ns(now + offset), message]] }] });
    expect((await push({ ...ok, 'x-api-key': project.apiKey }, one('by x-api-key', 10))).status).toBe(204);
    expect((await push({ ...ok, authorization: `Bearer ${project.apiKey}` }, one('by bearer', 11))).status).toBe(204);

    const logs = await read(project.id);
    expect(logs.map((l) => l.message)).toEqual(['queue is slow', 'metadata names the level', 'from a JSON line', 'no labels', '{not json, so text', 'by x-api-key', 'by bearer']);
    const [slow, named, json, bare, notJson] = logs as [StoredLog, StoredLog, StoredLog, StoredLog, StoredLog];
    expect(slow).toMatchObject({ level: 'warn', source: 'worker', timestamp: iso(now) });
    expect(slow.metadata).toEqual({ env: 'prod', trace_id: '4bf92f3577b34da6', attempt: '3' });
    // `level` comes before `detected_level`.
    expect(named).toMatchObject({ level: 'error', source: 'worker', timestamp: iso(now + 1) });
    expect(named.metadata).toEqual({ env: 'prod', detected_level: 'warn' });
    // service_name before job and app; labels and structured metadata merged over the line's fields; pino's number 30.
    expect(json).toMatchObject({ level: 'info', source: 'api', timestamp: iso(now + 2) });
    expect(json.metadata).toEqual({ job: 'ignored-job', app: 'ignored-app', user: { id: 1 }, env: 'metadata' });
    expect(bare).toMatchObject({ level: 'debug', source: 'cron', metadata: {} });
    expect(notJson).toMatchObject({ level: 'info', source: 'batch', metadata: {} });
    expect(logs.slice(5).every((l) => l.source === 'auth-check')).toBe(true);
  });

  it('takes a hand-made snappy protobuf push with structured metadata and sub-millisecond times', async () => {
    const project = await createProject(s, account, 'loki proto');
    const ms = Date.now() - 10_000;
    const message = PushRequest.fromObject({
      streams: [
        {
          labels: '{service_name="gateway", region="eu-west-1", level="error"}',
          entries: [
            { timestamp: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 + 999_999 }, line: 'upstream timed out', structuredMetadata: [{ name: 'trace_id', value: 'abc' }, { name: 'level', value: 'warn' }] },
            { timestamp: { seconds: Math.floor((ms + 1) / 1000), nanos: ((ms + 1) % 1000) * 1_000_000 }, line: 'no metadata' },
          ],
        },
      ],
    });
    const res = await push({ 'content-type': 'application/x-protobuf', 'x-api-key': project.apiKey }, snappy.compressSync(PushRequest.encode(message).finish()));
    expect(res).toEqual({ status: 204, type: '', text: '' });
    const logs = await read(project.id);
    expect(logs.map((l) => [l.message, l.level, l.source, l.timestamp])).toEqual([
      // Structured metadata is merged over the labels: its level decides.
      ['upstream timed out', 'warn', 'gateway', iso(ms)],
      ['no metadata', 'error', 'gateway', iso(ms + 1)],
    ]);
    expect(logs[0]!.metadata).toEqual({ region: 'eu-west-1', trace_id: 'abc' });
    expect(logs[1]!.metadata).toEqual({ region: 'eu-west-1' });
  });

  it('refuses the bad entries of a push with a 400 naming them, and stores the others', async () => {
    const project = await createProject(s, account, 'loki partial');
    const now = Date.now() - 3000;
    const headers = { 'content-type': 'application/json', 'x-api-key': project.apiKey };
    const lineNotText = await push(headers, JSON.stringify({ streams: [{ stream: { job: 'p' }, values: [[ns(now), 'first'], [ns(now + 1), 42], [ns(now + 2), 'third']] }] }));
    expect(lineNotText.status).toBe(400);
    expect(lineNotText.type).toMatch(/^text\/plain/);
    expect(lineNotText.text).toMatch(/^1 of 3 entries were refused/);
    expect(lineNotText.text).toMatch(/entry 1: .*line/);

    const timeNotDigits = await push(headers, JSON.stringify({ streams: [{ stream: { job: 'p' }, values: [[ns(now + 3), 'fourth']] }, { stream: { job: 'p' }, values: [['yesterday', 'never'], [ns(now + 4), 'fifth']] }] }));
    expect(timeNotDigits.status).toBe(400);
    expect(timeNotDigits.type).toMatch(/^text\/plain/);
    expect(timeNotDigits.text).toMatch(/^1 of 3 entries were refused/);
    expect(timeNotDigits.text).toMatch(/entry 1: .*time/);

    // Every entry refused is a 400 too, nothing stored.
    const allBad = await push(headers, JSON.stringify({ streams: [{ stream: { job: 'p' }, values: [['soon', 'a'], [ns(now), { line: 'an object' }]] }] }));
    expect(allBad.status).toBe(400);
    expect(allBad.text).toMatch(/^2 of 2 entries were refused/);

    const logs = await read(project.id);
    expect(logs.map((l) => l.message)).toEqual(['first', 'third', 'fourth', 'fifth']);
    expect(logs.map((l) => l.timestamp)).toEqual([iso(now), iso(now + 2), iso(now + 3), iso(now + 4)]);
  });

  it('answers a bad key 401, an empty push 204, a body it cannot read 400 (never 5xx), and takes gzip', async () => {
    const project = await createProject(s, account, 'loki answers');
    const good = JSON.stringify({ streams: [{ stream: { job: 'g' }, values: [[ns(Date.now() - 1000), 'gzipped']] }] });

    const wrongKeys: Record<string, string>[] = [{ authorization: basic('ll_not_a_real_key') }, { 'x-api-key': 'wrong' }, { authorization: 'Bearer wrong' }, {}];
    for (const auth of wrongKeys) {
      const res = await push({ 'content-type': 'application/json', ...auth }, good);
      expect(res.status).toBe(401);
      expect(res.type).toMatch(/^text\/plain/);
      expect(res.text.length).toBeGreaterThan(0);
    }
    // The right key as the user name, not the password, is no key.
    expect((await push({ 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${project.apiKey}:`).toString('base64')}` }, good)).status).toBe(401);

    const headers = { 'content-type': 'application/json', 'x-api-key': project.apiKey };
    expect(await push(headers, '{"streams":[]}')).toEqual({ status: 204, type: '', text: '' });

    for (const [type, body] of [
      ['application/json', 'this is not JSON'],
      ['application/json', '{"streams": 3}'],
      ['application/json', '[1, 2]'],
      ['application/x-protobuf', 'this is not snappy'],
      ['application/x-protobuf', JSON.stringify({ streams: [] })],
      // Valid snappy around bytes that are no PushRequest.
      ['application/x-protobuf', snappy.compressSync(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]))],
    ] as const) {
      const res = await push({ 'content-type': type, 'x-api-key': project.apiKey }, body);
      expect(res.status, `${type} ${String(body)}`).toBe(400);
      expect(res.type).toMatch(/^text\/plain/);
    }
    // Random bytes in either type, to a project of their own (a chance decode may store something).
    const fuzzed = await createProject(s, account, 'loki fuzz');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('application/json', 'application/x-protobuf'), fc.uint8Array({ maxLength: 300 }), async (type, bytes) => {
        const res = await push({ 'content-type': type, 'x-api-key': fuzzed.apiKey }, Buffer.from(bytes));
        return res.status < 500;
      }),
      { numRuns: 100 },
    );

    expect(await push({ ...headers, 'content-encoding': 'gzip' }, gzipSync(good))).toEqual({ status: 204, type: '', text: '' });
    const logs = await read(project.id);
    expect(logs.map((l) => [l.message, l.source])).toEqual([['gzipped', 'g']]);
  });
});
