/**
 * Issue 28: the Elasticsearch bulk API under /es (docs/integrations.md, "Elasticsearch bulk API"),
 * driven by the real clients, @elastic/elasticsearch (client.bulk and the bulk helper) and
 * pino-elasticsearch, against a real server on each engine; every stored document is read back
 * through the search API with each mapped field checked. Then the credential forms, and by hand
 * the probes shippers make before they send, the content type the client uses, and a body that is
 * not bulk at all. Nothing is mocked.
 */
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { Client, errors } from '@elastic/elasticsearch';
import pino from 'pino';
import type { DestinationStream, Options as PinoElasticOptions } from 'pino-elasticsearch';
import { afterEach, describe, expect, it } from 'vitest';
import { describeEngines, useAccount, useProject, useServer, type Account, type TestServer, type StoredLog } from './harness.js';


/**
 * pino-elasticsearch is CommonJS (`module.exports = pinoElasticSearch`) while its types declare an
 * ES default export, which TypeScript's NodeNext reads as the module object: required, as it runs.
 */
const pinoElastic = createRequire(import.meta.url)('pino-elasticsearch') as (options: PinoElasticOptions) => DestinationStream;

const iso = (ms: number) => new Date(ms).toISOString();
const LOG_ID = /^log_.{13}$/;
const ES_PRODUCT = 'Elasticsearch';

/** A moment an hour ago on a whole second, so that every form of a time (s, ms, µs, ns) is exact. */
const hourAgo = () => Math.floor((Date.now() - 3_600_000) / 1000) * 1000;

/** The project's logs through the search API (newest first), up to 1,000, with extra filters. */
async function search(s: TestServer, account: Account, projectId: string, filters = ''): Promise<StoredLog[]> {
  const res = await s.request('GET', `/v1/projects/${projectId}/logs?limit=1000&from=2000-01-01T00:00:00Z${filters}`, { token: account.accessToken });
  expect(res.status, res.text).toBe(200);
  return res.body.data as StoredLog[];
}

/** The stored logs by id, failing on an id that is not there. */
async function byIds(s: TestServer, account: Account, projectId: string, ids: string[]): Promise<StoredLog[]> {
  const logs = new Map((await search(s, account, projectId)).map((l) => [l.id, l]));
  return ids.map((id) => {
    const log = logs.get(id);
    expect(log, `the log ${id}`).toBeDefined();
    return log!;
  });
}

/** The one answer of a bulk item, whatever its action. */
function itemOf(item: Record<string, any> | undefined): { action: string; _index: string; _id?: string; status: number; result?: string; error?: { type: string; reason: string } } {
  expect(item).toBeDefined();
  const actions = Object.keys(item!);
  expect(actions).toHaveLength(1);
  return { action: actions[0]!, ...item![actions[0]!] };
}

/** A raw request under /es, as a shipper makes it. */
async function es(s: TestServer, method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${s.url}/es${path}`, { method, headers, body });
  const text = await res.text();
  let json: any;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const ndjson = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

/** Every client a test opens, closed after it. */
const clients: Client[] = [];
function client(s: TestServer, auth: ConstructorParameters<typeof Client>[0]['auth'], headers?: Record<string, string>): Client {
  const c = new Client({ node: `${s.url}/es`, auth, headers, maxRetries: 0 });
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describeEngines('Elasticsearch bulk API', (engine) => {
  describe('the official client, client.bulk', () => {
    const s = useServer(engine);
    const account = useAccount(s);
    const project = useProject(s, account);

    it('client.info() passes the product check and reports version 8.17.0', async () => {
      const info = await client(s, { apiKey: project.apiKey }).info();
      expect(info.version.number).toBe('8.17.0');
      expect(typeof info.tagline).toBe('string');
      expect(typeof info.cluster_name).toBe('string');
    });

    it('stores ECS documents sent with index and create, every field where docs/integrations.md puts it', async () => {
      const base = hourAgo();
      const c = client(s, { apiKey: project.apiKey });
      const res = await c.bulk({
        operations: [
          { index: { _index: 'ecs-logs' } },
          {
            '@timestamp': iso(base + 101),
            'log.level': 'warn',
            message: 'GET /orders took 1204 ms',
            service: { name: 'checkout', version: '1.4.2' },
            http: { request: { method: 'GET' }, response: { status_code: 200 } },
            trace: { id: '4bf92f3577b34da6a3ce929d0e0e4736' },
            url: { path: '/orders' },
          },
          { create: { _index: 'ecs-logs' } },
          {
            '@timestamp': iso(base + 102),
            log: { level: 'error', logger: 'db.pool' },
            message: 'connection refused',
            'service.name': 'orders-db',
            'trace.id': '00f067aa0ba902b7',
            error: { type: 'ECONNREFUSED', attempts: [1, 2, 3] },
          },
          { create: { _index: 'ecs-logs' } },
          { '@timestamp': iso(base + 103), 'log.level': 'INFO', message: 'cache warmed', host: { name: 'web-1' } },
        ],
      });
      expect(res.errors).toBe(false);
      expect(res.items).toHaveLength(3);
      const items = res.items.map(itemOf);
      expect(items.map((i) => i.action)).toEqual(['index', 'create', 'create']);
      for (const item of items) {
        expect(item).toMatchObject({ _index: 'ecs-logs', status: 201, result: 'created' });
        expect(item._id).toMatch(LOG_ID);
      }
      expect(new Set(items.map((i) => i._id)).size).toBe(3);

      const [slow, refused, warmed] = await byIds(s, account, project.id, items.map((i) => i._id!));
      expect(slow).toMatchObject({ message: 'GET /orders took 1204 ms', level: 'warn', timestamp: iso(base + 101), source: 'checkout' });
      // Nested objects are kept; service.name (the source) leaves `service`, the rest of it stays.
      expect(slow!.metadata).toEqual({
        service: { version: '1.4.2' },
        http: { request: { method: 'GET' }, response: { status_code: 200 } },
        trace: { id: '4bf92f3577b34da6a3ce929d0e0e4736' },
        url: { path: '/orders' },
      });
      // The nested log.level and the dotted service.name: both read, both left out of metadata.
      expect(refused).toMatchObject({ message: 'connection refused', level: 'error', timestamp: iso(base + 102), source: 'orders-db' });
      expect(refused!.metadata).toEqual({ log: { logger: 'db.pool' }, 'trace.id': '00f067aa0ba902b7', error: { type: 'ECONNREFUSED', attempts: [1, 2, 3] } });
      // No service.name and no source: the source is the action's index.
      expect(warmed).toMatchObject({ message: 'cache warmed', level: 'info', timestamp: iso(base + 103), source: 'ecs-logs' });
      expect(warmed!.metadata).toEqual({ host: { name: 'web-1' } });
    });

    it('reads each field in the order and forms docs/integrations.md gives (message, level, timestamp, source)', async () => {
      const base = hourAgo();
      const baseSec = base / 1000;
      const docs: { doc: Record<string, unknown>; expected: Partial<StoredLog> }[] = [
        { doc: { msg: 'from msg', level: 'WARNING', timestamp: iso(base + 1) }, expected: { message: 'from msg', level: 'warn', timestamp: iso(base + 1), source: 'rules', metadata: {} } },
        { doc: { log: 'from log', severity: 'err', time: baseSec }, expected: { message: 'from log', level: 'error', timestamp: iso(base), source: 'rules', metadata: {} } },
        { doc: { _msg: 'from _msg', lvl: 'Critical', ts: (base + 123) * 1000 }, expected: { message: 'from _msg', level: 'fatal', timestamp: iso(base + 123), metadata: {} } },
        { doc: { message: 'pino number, epoch ms', level: 20, time: base + 7 }, expected: { message: 'pino number, epoch ms', level: 'debug', timestamp: iso(base + 7), metadata: {} } },
        // Nanoseconds (half a millisecond in, so that a double's rounding cannot cross a millisecond).
        { doc: { message: 'epoch ns', level: 60, ts: (base + 9) * 1e6 + 500_000 }, expected: { message: 'epoch ns', level: 'fatal', timestamp: iso(base + 9) } },
        { doc: { message: 'seconds with a fraction', '@timestamp': baseSec + 0.25 }, expected: { timestamp: iso(base + 250), level: 'info', metadata: {} } },
        { doc: { message: 'an unknown level', level: 'loud' }, expected: { level: 'info', metadata: { level: 'loud' } } },
        { doc: { message: 'the source field', source: 'worker-7', 'log.level': 'Error' }, expected: { source: 'worker-7', level: 'error', metadata: {} } },
        { doc: { message: 'service.name before source', service: { name: 'api' }, source: 'second' }, expected: { source: 'api', metadata: { source: 'second' } } },
        { doc: { message: 'log.level before level', 'log.level': 'error', level: 'debug' }, expected: { level: 'error', metadata: { level: 'debug' } } },
        { doc: { message: 'message before msg', msg: 'second', '@timestamp': iso(base + 11), time: base + 99 }, expected: { message: 'message before msg', timestamp: iso(base + 11), metadata: { msg: 'second', time: base + 99 } } },
        { doc: { message: 42, msg: 'the first string wins' }, expected: { message: 'the first string wins', metadata: { message: 42 } } },
        { doc: { event: { action: 'login' }, user: 'ada' }, expected: { message: '', level: 'info', source: 'rules', metadata: { event: { action: 'login' }, user: 'ada' } } },
      ];
      const res = await client(s, { apiKey: project.apiKey }).bulk({ operations: docs.flatMap(({ doc }) => [{ index: { _index: 'rules' } }, doc]) });
      expect(res.errors).toBe(false);
      const items = res.items.map(itemOf);
      expect(items.map((i) => i.status)).toEqual(docs.map(() => 201));
      const logs = await byIds(s, account, project.id, items.map((i) => i._id!));
      logs.forEach((log, i) => {
        const { expected, doc } = docs[i]!;
        const { metadata, ...fields } = expected;
        expect(log, JSON.stringify(doc)).toMatchObject(fields);
        if (metadata) expect(log.metadata, JSON.stringify(doc)).toEqual(metadata);
      });
    });

    it('refuses update and delete per item (400 illegal_argument_exception) and stores the others', async () => {
      const c = client(s, { apiKey: project.apiKey });
      const res = await c.bulk({
        operations: [
          { index: { _index: 'mixed' } },
          { message: 'stored before the update' },
          { update: { _index: 'mixed', _id: 'log_0000000000001' } },
          { doc: { message: 'an update is never stored' } },
          { delete: { _index: 'mixed', _id: 'log_0000000000002' } },
          { create: { _index: 'mixed' } },
          { message: 'stored after the delete' },
        ],
      });
      expect(res.errors).toBe(true);
      const items = res.items.map(itemOf);
      expect(items.map((i) => [i.action, i.status])).toEqual([
        ['index', 201],
        ['update', 400],
        ['delete', 400],
        ['create', 201],
      ]);
      for (const refused of [items[1]!, items[2]!]) {
        expect(refused.error?.type).toBe('illegal_argument_exception');
        expect(typeof refused.error?.reason).toBe('string');
      }
      const [before, after] = await byIds(s, account, project.id, [items[0]!._id!, items[3]!._id!]);
      expect(before).toMatchObject({ message: 'stored before the update', source: 'mixed' });
      expect(after).toMatchObject({ message: 'stored after the delete', source: 'mixed' });
      expect(await search(s, account, project.id, '&q=never%20stored')).toEqual([]);
    });

    it('fails a document Loglane cannot take (a message over 64 KiB) with 400 mapper_parsing_exception, the others stored', async () => {
      const res = await client(s, { apiKey: project.apiKey }).bulk({
        operations: [{ index: { _index: 'big' } }, { message: 'the small one' }, { index: { _index: 'big' } }, { message: 'x'.repeat(70_000) }],
      });
      expect(res.errors).toBe(true);
      const [small, huge] = res.items.map(itemOf);
      expect(small).toMatchObject({ status: 201, result: 'created' });
      expect(huge).toMatchObject({ action: 'index', status: 400, error: { type: 'mapper_parsing_exception' } });
      expect(typeof huge!.error?.reason).toBe('string');
      expect(huge!._id).toBeUndefined();
      const stored = await search(s, account, project.id, '&source=big');
      expect(stored.map((l) => l.message)).toEqual(['the small one']);
      expect(stored[0]!.id).toBe(small!._id);
    });
  });

  describe('the bulk helper', () => {
    const s = useServer(engine);
    const account = useAccount(s);
    const project = useProject(s, account);

    it('client.helpers.bulk stores 200 documents, the index as the source of those that name none', async () => {
      const base = hourAgo();
      const docs = Array.from({ length: 200 }, (_, i) => ({
        '@timestamp': iso(base + i),
        'log.level': i % 3 === 0 ? 'warn' : 'info',
        message: `batch event ${i}`,
        seq: i,
        labels: { batch: 'b-1', even: i % 2 === 0 },
        ...(i % 10 === 0 ? {} : { service: { name: 'batcher' } }),
      }));
      const result = await client(s, { apiKey: project.apiKey }).helpers.bulk({
        datasource: docs,
        onDocument: () => ({ create: { _index: 'app-logs' } }),
      });
      expect(result.total).toBe(200);
      expect(result.successful).toBe(200);
      expect(result.failed).toBe(0);
      expect(result.aborted).toBe(false);

      const all = await search(s, account, project.id);
      expect(all).toHaveLength(200);
      expect(new Set(all.map((l) => l.message)).size).toBe(200);
      expect(await search(s, account, project.id, '&source=app-logs')).toHaveLength(20);
      expect(await search(s, account, project.id, '&source=batcher')).toHaveLength(180);

      const bySeq = new Map(all.map((l) => [l.metadata.seq as number, l]));
      expect(bySeq.get(30)).toMatchObject({ message: 'batch event 30', level: 'warn', timestamp: iso(base + 30), source: 'app-logs', metadata: { seq: 30, labels: { batch: 'b-1', even: true } } });
      expect(bySeq.get(30)!.metadata).toEqual({ seq: 30, labels: { batch: 'b-1', even: true } });
      expect(bySeq.get(157)).toMatchObject({ message: 'batch event 157', level: 'info', timestamp: iso(base + 157), source: 'batcher' });
      expect(bySeq.get(157)!.metadata).toEqual({ seq: 157, labels: { batch: 'b-1', even: false } });
    });
  });

  describe('credentials', () => {
    const s = useServer(engine);
    const account = useAccount(s);
    const project = useProject(s, account);

    it('the client gets in with the key in every form: API key, id:key API key, basic password, bearer, X-API-Key', async () => {
      const forms: [string, Client][] = [
        ['apiKey', client(s, { apiKey: project.apiKey })],
        ['apiKey id:key', client(s, { apiKey: { id: 'any-id', api_key: project.apiKey } })],
        ['basic', client(s, { username: 'anything', password: project.apiKey })],
        ['bearer', client(s, { bearer: project.apiKey })],
        ['x-api-key', client(s, undefined, { 'x-api-key': project.apiKey })],
      ];
      for (const [form, c] of forms) {
        expect((await c.info()).version.number, form).toBe('8.17.0');
        const res = await c.bulk({ operations: [{ create: { _index: 'auth' } }, { message: `sent with ${form}` }] });
        expect(res.errors, form).toBe(false);
        const [log] = await byIds(s, account, project.id, [itemOf(res.items[0])._id!]);
        expect(log, form).toMatchObject({ message: `sent with ${form}`, source: 'auth' });
      }
    });

    it('a wrong key makes the client\'s calls reject with a 401 ResponseError, and nothing is stored', async () => {
      const wrongKey = `${project.apiKey.slice(0, -4)}${project.apiKey.endsWith('aaaa') ? 'bbbb' : 'aaaa'}`;
      const before = (await search(s, account, project.id)).length;
      for (const c of [client(s, { apiKey: wrongKey }), client(s, { username: 'anything', password: wrongKey })]) {
        const infoError = await c.info().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(infoError).toBeInstanceOf(errors.ResponseError);
        expect((infoError as errors.ResponseError).statusCode).toBe(401);
        expect((infoError as errors.ResponseError).body).toMatchObject({ error: { type: 'security_exception' }, status: 401 });
        const bulkError = await c.bulk({ operations: [{ create: { _index: 'auth' } }, { message: 'never stored: wrong key' }] }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(bulkError).toBeInstanceOf(errors.ResponseError);
        expect((bulkError as errors.ResponseError).statusCode).toBe(401);
      }
      expect(await search(s, account, project.id)).toHaveLength(before);
    });

    it('a wrong or missing key is a 401 security_exception in Elasticsearch\'s shape, with the product header', async () => {
      const body = ndjson([{ create: { _index: 'auth' } }, { message: 'never stored: no key' }]);
      for (const headers of [{ authorization: 'ApiKey not-the-key' }, { 'x-api-key': 'not-the-key' }, {}] as Record<string, string>[]) {
        for (const [method, path, sent] of [['GET', '/', undefined], ['POST', '/_bulk', body]] as const) {
          const res = await es(s, method, path, { 'content-type': 'application/x-ndjson', ...headers }, sent);
          const what = `${method} ${path} with ${JSON.stringify(headers)}`;
          expect(res.status, what).toBe(401);
          expect(res.headers.get('x-elastic-product'), what).toBe(ES_PRODUCT);
          expect(res.json, what).toMatchObject({ error: { type: 'security_exception' }, status: 401 });
          expect(typeof res.json.error.reason, what).toBe('string');
        }
      }
      expect(await search(s, account, project.id, '&q=never%20stored')).toEqual([]);
    });
  });

  describe('pino-elasticsearch', () => {
    const s = useServer(engine);
    const account = useAccount(s);
    const project = useProject(s, account);

    it('delivers pino\'s lines: msg, numeric level, time, the index as source, extra fields in metadata', async () => {
      const stream = pinoElastic({ node: `${s.url}/es`, index: 'pino-app', esVersion: 8, flushBytes: 1, auth: { apiKey: project.apiKey } });
      const insertErrors: unknown[] = [];
      stream.on('insertError', (err) => insertErrors.push(err));
      const unknown: unknown[] = [];
      stream.on('unknown', (line) => unknown.push(line));
      // 'insert' comes once the stream has ended and every batch has been answered (and the index refreshed).
      const inserted = new Promise<Record<string, any>>((resolve, reject) => {
        stream.on('insert', resolve);
        stream.on('error', reject);
      });
      // Every line pino writes, to compare the stored times and fields with pino's own.
      const written: Record<string, any>[] = [];
      const capture = new Writable({
        write(chunk, _enc, done) {
          for (const line of String(chunk).split('\n')) if (line.trim() !== '') written.push(JSON.parse(line));
          done();
        },
      });
      const logger = pino({ level: 'info' }, pino.multistream([{ stream }, { stream: capture }]));
      logger.info({ orderId: 'ord_42', amount: 12.5, user: { id: 7, tier: 'gold' } }, 'order paid');
      logger.warn({ attempt: 2 }, 'retrying the charge');
      logger.error({ orderId: 'ord_43', failure: { code: 51, kind: 'CardDeclined' } }, 'payment failed');
      logger.child({ source: 'billing' }).info({ invoice: 'inv_9' }, 'invoice sent');
      stream.end();
      const stats = await inserted;
      expect(stats).toMatchObject({ total: 4, successful: 4, failed: 0 });
      expect(insertErrors).toEqual([]);
      expect(unknown).toEqual([]);
      expect(written).toHaveLength(4);

      const logs = await search(s, account, project.id);
      expect(logs).toHaveLength(4);
      const byMessage = new Map(logs.map((l) => [l.message, l]));
      for (const line of written) {
        const log = byMessage.get(line.msg as string);
        expect(log, `the log "${line.msg}"`).toBeDefined();
        // pino-elasticsearch sends pino's epoch-ms `time` as an ISO string in `time`: the same millisecond.
        expect(log!.timestamp).toBe(iso(line.time as number));
        // pino's own fields beside the extra ones; msg, level and time are not repeated.
        expect(log!.metadata).toMatchObject({ pid: line.pid, hostname: line.hostname });
        for (const key of ['msg', 'level', 'time', '@timestamp', 'message']) expect(log!.metadata, key).not.toHaveProperty(key);
      }
      const paid = byMessage.get('order paid')!;
      expect(paid).toMatchObject({ level: 'info', source: 'pino-app' });
      expect(paid.metadata).toEqual({ pid: process.pid, hostname: written[0]!.hostname, orderId: 'ord_42', amount: 12.5, user: { id: 7, tier: 'gold' } });
      expect(byMessage.get('retrying the charge')).toMatchObject({ level: 'warn', source: 'pino-app', metadata: { attempt: 2 } });
      const failed = byMessage.get('payment failed')!;
      expect(failed).toMatchObject({ level: 'error', source: 'pino-app' });
      expect(failed.metadata).toMatchObject({ orderId: 'ord_43', failure: { code: 51, kind: 'CardDeclined' } });
      // A `source` field names the source before the index does.
      const invoice = byMessage.get('invoice sent')!;
      expect(invoice).toMatchObject({ level: 'info', source: 'billing', metadata: { invoice: 'inv_9' } });
      expect(invoice.metadata).not.toHaveProperty('source');
    });
  });

  describe('raw requests: the probes, the content types, a body that is not bulk', () => {
    const s = useServer(engine);
    const account = useAccount(s);
    const project = useProject(s, account);

    const keyForms = () =>
      [
        ['ApiKey <key>', `ApiKey ${project.apiKey}`],
        ['ApiKey base64(id:key)', `ApiKey ${Buffer.from(`filebeat:${project.apiKey}`).toString('base64')}`],
      ] as const;

    it('answers the probes shippers make, 200 with the product header, with the key in either ApiKey form', async () => {
      const json = { 'content-type': 'application/json' };
      for (const [form, authorization] of keyForms()) {
        const headers = { authorization };
        const probes: [string, string, string | undefined][] = [
          ['GET', '/', undefined],
          ['HEAD', '/', undefined],
          ['GET', '/_license', undefined],
          ['GET', '/_xpack', undefined],
          ['GET', '/_index_template/loglane', undefined],
          ['HEAD', '/_index_template/loglane', undefined],
          ['PUT', '/_index_template/loglane', JSON.stringify({ index_patterns: ['app-*'], template: { settings: { number_of_shards: 1 } } })],
          ['GET', '/_ilm/policy/loglane', undefined],
          ['PUT', '/_ilm/policy/loglane', JSON.stringify({ policy: { phases: { hot: { actions: {} } } } })],
          ['GET', '/_ingest/pipeline/loglane', undefined],
          ['PUT', '/_ingest/pipeline/loglane', JSON.stringify({ processors: [] })],
          ['HEAD', '/some-index', undefined],
          ['GET', '/some-index', undefined],
          ['PUT', '/some-index', JSON.stringify({ settings: {} })],
          ['POST', '/some-index/_refresh', undefined],
          ['GET', '/some-index/_refresh', undefined],
        ];
        for (const [method, path, body] of probes) {
          const res = await es(s, method, path, body === undefined ? headers : { ...headers, ...json }, body);
          const what = `${method} /es${path} (${form})`;
          expect(res.status, `${what}: ${res.text}`).toBe(200);
          expect(res.headers.get('x-elastic-product'), what).toBe(ES_PRODUCT);
          if (method === 'PUT') expect(res.json, what).toMatchObject({ acknowledged: true });
          if (method === 'HEAD') expect(res.text, what).toBe('');
        }
        const info = await es(s, 'GET', '/', headers);
        expect(info.json, form).toMatchObject({ version: { number: '8.17.0' } });
        expect(typeof info.json.tagline, form).toBe('string');
        expect(typeof info.json.cluster_name, form).toBe('string');
      }
    });

    it('takes a bulk sent as application/vnd.elasticsearch+x-ndjson; compatible-with=8, the URL\'s index as the source', async () => {
      for (const [form, authorization] of keyForms()) {
        const res = await es(
          s,
          'POST',
          '/vnd-index/_bulk',
          {
            authorization,
            'content-type': 'application/vnd.elasticsearch+x-ndjson; compatible-with=8',
            accept: 'application/vnd.elasticsearch+json; compatible-with=8',
          },
          ndjson([{ create: {} }, { message: `compatible-with=8 (${form})`, level: 'warn' }, { index: { _index: 'named-index' } }, { message: `own index (${form})` }]),
        );
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-elastic-product')).toBe(ES_PRODUCT);
        expect(res.json).toMatchObject({ errors: false });
        expect(typeof res.json.took).toBe('number');
        const items = (res.json.items as Record<string, any>[]).map(itemOf);
        expect(items.map((i) => [i.action, i._index, i.status, i.result])).toEqual([
          ['create', 'vnd-index', 201, 'created'],
          ['index', 'named-index', 201, 'created'],
        ]);
        const [fromUrl, named] = await byIds(s, account, project.id, items.map((i) => i._id!));
        expect(fromUrl).toMatchObject({ message: `compatible-with=8 (${form})`, level: 'warn', source: 'vnd-index', metadata: {} });
        expect(named).toMatchObject({ message: `own index (${form})`, level: 'info', source: 'named-index', metadata: {} });
      }
    });

    it('answers a body that is not bulk lines with a 400 in Elasticsearch\'s error shape, not a 5xx', async () => {
      const headers = { authorization: keyForms()[0][1], 'content-type': 'application/x-ndjson' };
      for (const body of ['this is not json at all\n', '{"index": {}\n{"message": "half an action"}\n', '<xml/>']) {
        const res = await es(s, 'POST', '/_bulk', headers, body);
        expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
        expect(res.headers.get('x-elastic-product')).toBe(ES_PRODUCT);
        expect(res.json, body).toMatchObject({ status: 400, error: { type: expect.any(String), reason: expect.any(String) } });
      }
      expect(await search(s, account, project.id, '&q=half%20an%20action')).toEqual([]);
    });
  });
});
