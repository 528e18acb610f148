/**
 * Issue 28: the pieces every shipper protocol shares, on their own: the record reader (a shipper's
 * record into a log), the key in each of the auth forms clients send, and the Elasticsearch bulk
 * body's reader, which must answer anything it is given with items or a 4xx, never a crash.
 */
import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { bulkAnswer, parseBulk, type ItemOutcome } from '../src/features/logs/ingest/elasticsearch.js';
import { shipperKeyOf } from '../src/features/logs/ingest/keys.js';
import { normaliseLog } from '../src/features/logs/ingest/normalise.js';
import { readRecord } from '../src/features/logs/ingest/record.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');

describe('reading a record', () => {
  it('takes message, level, time and source from their first field, and keeps the rest as metadata', () => {
    const log = readRecord(
      { '@timestamp': '2026-11-28T10:00:00.123Z', log: { level: 'WARNING', file: { path: '/var/log/app.log' } }, message: 'disk almost full', service: { name: 'api', version: '1.2' }, host: { name: 'web-1' }, msg: 'second' },
      { sourceFields: ['service.name'] },
    );
    expect(log).toEqual({
      message: 'disk almost full',
      timestamp: '2026-11-28T10:00:00.123Z',
      level: 'WARNING',
      source: 'api',
      metadata: { log: { file: { path: '/var/log/app.log' } }, service: { version: '1.2' }, host: { name: 'web-1' }, msg: 'second' },
    });
    const row = normaliseLog(log, NOW);
    expect(row.ok && row.row).toMatchObject({ level: 3, source: 'api', message: 'disk almost full', ts: Date.parse('2026-11-28T10:00:00.123Z') });
  });

  it('reads dotted keys as ECS writes them flat, and msg, log and _msg when there is no message', () => {
    expect(readRecord({ 'log.level': 'error', 'service.name': 'billing', msg: 'pino line' }, { sourceFields: ['service.name'] })).toEqual({ message: 'pino line', level: 'error', source: 'billing', metadata: {} });
    expect(readRecord({ log: 'docker line\n', stream: 'stdout' }).message).toBe('docker line\n');
    expect(readRecord({ _msg: 'victorialogs line' }).message).toBe('victorialogs line');
  });

  it('keeps a record without a message, with an empty one and every field in metadata', () => {
    const log = readRecord({ user: 'ann', action: 'login' });
    expect(log).toEqual({ message: '', metadata: { user: 'ann', action: 'login' } });
    expect(normaliseLog(log, NOW).ok).toBe(true);
  });

  it('reads a message object one level deep (splunk-logging sends its fields that way)', () => {
    expect(readRecord({ message: { msg: 'charged', severity: 'info', amount: 12 }, host: 'h1' })).toEqual({ message: 'charged', level: 'info', metadata: { host: 'h1', amount: 12 } });
  });

  it('leaves a level it does not know as info, the value kept in metadata', () => {
    const log = readRecord({ message: 'x', level: 'loud', severity: 'error' });
    expect(log.level).toBeUndefined();
    expect(log.metadata).toEqual({ level: 'loud', severity: 'error' });
    const row = normaliseLog(log, NOW);
    expect(row.ok && row.row.level).toBe(2);
    // pino's numbers are levels.
    expect(readRecord({ msg: 'y', level: 50 }).level).toBe(50);
  });

  it('reads numeric times by their magnitude: seconds, milliseconds, microseconds, nanoseconds', () => {
    const at = Date.parse('2026-11-28T10:00:00.250Z');
    for (const t of [at / 1000, at, at * 1000, `${at * 1e6}`, String(at / 1000)]) {
      const row = normaliseLog(readRecord({ message: 'm', time: t }), NOW);
      expect(row.ok && row.row.ts, `time ${t}`).toBe(at);
    }
    // Not a time: the log is refused with the usual reason, not stored at a wrong moment.
    expect(normaliseLog(readRecord({ message: 'm', ts: 'yesterday' }), NOW)).toMatchObject({ ok: false });
  });

  it('uses the default source only when the record names none, and merges the protocol fields over the record', () => {
    expect(readRecord({ message: 'a' }, { defaultSource: 'app-logs' }).source).toBe('app-logs');
    expect(readRecord({ message: 'a', source: 'own' }, { defaultSource: 'app-logs' }).source).toBe('own');
    expect(readRecord({ message: 'a', host: 'x', env: 'dev' }, { extra: { host: 'label-host' } }).metadata).toEqual({ host: 'label-host', env: 'dev' });
  });

  it('never changes the record it was given, and keeps a __proto__ key as data', () => {
    const record = JSON.parse('{"message":"m","log":{"level":"info","x":1},"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const before = JSON.stringify(record);
    const log = readRecord(record);
    expect(JSON.stringify(record)).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(log.metadata, '__proto__')).toBe(true);
  });

  it('gives normaliseLog an object it accepts or refuses with a reason, for any JSON object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 })), (record) => {
        const row = normaliseLog(readRecord(record as Record<string, unknown>, { sourceFields: ['service.name'], defaultSource: 'idx' }), NOW);
        if (!row.ok) expect(typeof row.message).toBe('string');
      }),
      { numRuns: 500 },
    );
  });
});

describe('the key in every auth form', () => {
  const key = 'llk_' + 'a'.repeat(38);
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it.each([
    ['X-API-Key', { 'x-api-key': key }],
    ['Bearer', { authorization: `Bearer ${key}` }],
    ['Basic, any user name', { authorization: `Basic ${b64(`elastic:${key}`)}` }],
    ['Basic, no user name', { authorization: `Basic ${b64(`:${key}`)}` }],
    ['ApiKey, the key itself', { authorization: `ApiKey ${key}` }],
    ['ApiKey, base64 of id:key', { authorization: `ApiKey ${b64(`some-id:${key}`)}` }],
    ['Splunk', { authorization: `Splunk ${key}` }],
  ])('%s', (_name, headers) => expect(shipperKeyOf(req(headers))).toBe(key));

  it('finds none in an unknown scheme or a malformed header', () => {
    expect(shipperKeyOf(req({ authorization: `Digest ${key}` }))).toBeUndefined();
    expect(shipperKeyOf(req({ authorization: 'Basic' }))).toBeUndefined();
    expect(shipperKeyOf(req({}))).toBeUndefined();
  });
});

describe('reading a bulk body', () => {
  it('pairs actions with their documents, refuses update and delete per item, and takes the index from the action or the path', () => {
    const body = [
      '{"index":{"_index":"web"}}', '{"message":"a"}',
      '{"create":{}}', '{"message":"b","service":{"name":"svc"}}',
      '{"delete":{"_index":"web","_id":"1"}}',
      '{"update":{"_id":"2"}}', '{"doc":{"x":1}}',
      '{"index":{}}', 'not json',
      '{"create":{}}', '[1,2]',
      '',
    ].join('\n');
    const items = parseBulk(body, 'from-path');
    expect(items.map((i) => [i.action, i.index, i.log?.message ?? null, i.log?.source ?? null, i.error?.type ?? null])).toEqual([
      ['index', 'web', 'a', 'web', null],
      ['create', 'from-path', 'b', 'svc', null],
      ['delete', 'web', null, null, 'illegal_argument_exception'],
      ['update', 'from-path', null, null, 'illegal_argument_exception'],
      ['index', 'from-path', null, null, 'mapper_parsing_exception'],
      ['create', 'from-path', null, null, 'mapper_parsing_exception'],
    ]);
  });

  it('refuses a body that is not bulk lines with a 400, and more than 10,000 documents with a 413', () => {
    for (const body of ['', '\n\n', 'hello', '{"index":{}}', '{"search":{}}\n{}', '{"index":{},"create":{}}\n{}', '[]']) {
      expect(() => parseBulk(body, undefined), JSON.stringify(body)).toThrow(AppError);
    }
    const many = '{"index":{}}\n{"message":"m"}\n'.repeat(10_001);
    expect(() => parseBulk(many, 'x')).toThrow(expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE' }));
  });

  it('answers in Elasticsearch\'s shape, items in the order of the actions', () => {
    const items = parseBulk('{"index":{"_index":"we\\"b"}}\n{"message":"a"}\n{"delete":{}}\n{"create":{}}\n{"message":"b"}\n', 'p');
    const outcomes = new Map<(typeof items)[number], ItemOutcome>([
      [items[0]!, { id: 'log_0000000000001' }],
      [items[2]!, { status: 429, type: 'es_rejected_execution_exception', reason: 'over the "rate"' }],
    ]);
    expect(JSON.parse(bulkAnswer(items, outcomes, 7))).toEqual({
      took: 7,
      errors: true,
      items: [
        { index: { _index: 'we"b', _id: 'log_0000000000001', status: 201, result: 'created' } },
        { delete: { _index: 'p', status: 400, error: { type: 'illegal_argument_exception', reason: expect.any(String) } } },
        { create: { _index: 'p', status: 429, error: { type: 'es_rejected_execution_exception', reason: 'over the "rate"' } } },
      ],
    });
  });

  it('answers any bytes with items or an AppError, never another error', () => {
    const line = fc.oneof(fc.constantFrom('{"index":{}}', '{"create":{"_index":"i"}}', '{"delete":{}}', '{"update":{}}', '{}', '{"message":"m"}', '[', '"x"', 'null'), fc.string(), fc.json());
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.string({ maxLength: 40 }), (lines, noise) => {
        for (const body of [lines.join('\n'), lines.join('\n') + noise]) {
          try {
            const items = parseBulk(body, undefined);
            for (const i of items) expect(i.log !== undefined || i.error !== undefined).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(AppError);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('a __proto__ name in a shipper\'s fields stays data', () => {
  it('in Loki labels and structured metadata, and syslog structured data', async () => {
    const { parseLabels, decodeJsonPush, pushItems } = await import('../src/features/logs/ingest/loki.js');
    const { parseSyslog } = await import('../src/features/logs/ingest/syslog.js');
    expect(Object.hasOwn(parseLabels('{__proto__="x"}'), '__proto__')).toBe(true);
    const [item] = pushItems(decodeJsonPush(Buffer.from('{"streams":[{"stream":{"__proto__":"l"},"values":[["1","line",{"__proto__":"m"}]]}]}')));
    expect('value' in item! && Object.hasOwn((item.value as { metadata: object }).metadata, '__proto__')).toBe(true);
    const { log } = parseSyslog('<13>1 - - - - - [__proto__ __proto__="v"] m', NOW);
    expect(Object.hasOwn(log.metadata.sd as object, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('deep JSON in any shipper\'s body', () => {
  const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  it('refuses the record (its nesting past 32 levels), never the server', async () => {
    const { eventItems } = await import('../src/features/logs/ingest/hec.js');
    const { decodeJsonPush, pushItems } = await import('../src/features/logs/ingest/loki.js');
    for (const n of [40, 10_000, 200_000]) {
      const [bulk] = parseBulk(`{"index":{}}\n${deep(n)}\n`, 'i');
      if (bulk!.log) expect(normaliseLog(bulk!.log, NOW)).toMatchObject({ ok: false, message: expect.stringMatching(/nested more than 32 levels|not valid/) });
      else expect(bulk!.error?.type).toBe('mapper_parsing_exception');

      const { items, bad } = eventItems(`{"event":${deep(n)}}`);
      if (bad) expect(bad.eventNumber).toBe(0);
      else expect(normaliseLog((items[0] as { value: unknown }).value, NOW)).toMatchObject({ ok: false });

      try {
        const entries = pushItems(decodeJsonPush(Buffer.from(JSON.stringify({ streams: [{ stream: {}, values: [['1', deep(n)]] }] }))));
        expect(normaliseLog((entries[0] as { value: unknown }).value, NOW)).toMatchObject({ ok: false });
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
      }
    }
  });
});

describe('the text rule for request bodies', () => {
  it('passes over bytes instead of walking them key by key', async () => {
    const { findTextProblem } = await import('../src/http/text.js');
    // Bytes are not walked: even a property hung on them (which walking key by key would reach) is not looked at.
    const bytes = Object.assign(Buffer.alloc(64), { note: 'a\u0000b' });
    expect(findTextProblem(bytes)).toBeUndefined();
    expect(findTextProblem({ raw: bytes })).toBeUndefined();
    expect(findTextProblem({ text: 'a\u0000b' })).toMatchObject({ path: '/text' });
  });
});
