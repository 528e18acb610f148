/**
 * OpenTelemetry logs over OTLP/HTTP, sent by the official OpenTelemetry JS SDK with both the
 * http/json and the http/protobuf exporters, and read back through the API.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, useAccount, useServer } from './harness.js';

interface StoredLog {
  id: string;
  timestamp: string;
  level: string;
  message: string;
  source: string | null;
  metadata: Record<string, any>;
}

describeEngines('OTLP/HTTP logs', (engine) => {
  const s = useServer(engine);
  const account = useAccount(s, { plan: 'pro' });

  async function read(projectId: string): Promise<StoredLog[]> {
    const res = await s.request('GET', `/v1/projects/${projectId}/logs?limit=1000&from=2000-01-01T00:00:00Z`, { token: account.accessToken });
    expect(res.status).toBe(200);
    return (res.body.data as StoredLog[]).reverse();
  }

  /** Emits the same records through an SDK LoggerProvider whose processor exports with `exporter`. */
  async function emitThrough(exporter: JsonExporter | ProtoExporter, t0: number): Promise<void> {
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'checkout', 'deployment.environment': 'test', 'host.name': 'web-1' }),
      processors: [new BatchLogRecordProcessor({ exporter, maxExportBatchSize: 100, scheduledDelayMillis: 50 })],
    });
    const logger = provider.getLogger('checkout.payments', '1.4.2');
    const severities: Array<[SeverityNumber, string]> = [
      [SeverityNumber.TRACE, 'TRACE'],
      [SeverityNumber.DEBUG3, 'DEBUG3'],
      [SeverityNumber.INFO, 'INFO'],
      [SeverityNumber.WARN2, 'WARN2'],
      [SeverityNumber.ERROR, 'ERROR'],
      [SeverityNumber.FATAL4, 'FATAL4'],
    ];
    severities.forEach(([n, text], i) => logger.emit({ severityNumber: n, severityText: text, body: `record ${i}`, timestamp: t0 + i, attributes: { 'order.id': 4242 + i, retry: i % 2 === 0, ratio: 0.5, tags: ['a', 'b'] } }));
    // No number: the text decides; neither: info.
    logger.emit({ severityText: 'Warning', body: 'by text', timestamp: t0 + 6 });
    logger.emit({ body: { event: 'checkout', items: [1, 2] }, timestamp: t0 + 7 });
    for (let i = 0; i < 250; i++) logger.emit({ severityNumber: SeverityNumber.INFO, body: `bulk ${i}`, timestamp: t0 + 100 + i });
    await provider.forceFlush();
    await provider.shutdown();
  }

  function checkMapped(logs: StoredLog[], t0: number): void {
    expect(logs).toHaveLength(258);
    expect(logs.slice(0, 6).map((l) => l.level)).toEqual(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
    const first = logs[0]!;
    expect(first.message).toBe('record 0');
    expect(first.source).toBe('checkout');
    expect(first.timestamp).toBe(new Date(t0).toISOString());
    expect(first.metadata).toMatchObject({
      'order.id': 4242,
      retry: true,
      ratio: 0.5,
      tags: ['a', 'b'],
      resource: { 'service.name': 'checkout', 'deployment.environment': 'test', 'host.name': 'web-1' },
      scope: { name: 'checkout.payments', version: '1.4.2' },
      severityText: 'TRACE',
    });
    expect(logs[6]).toMatchObject({ level: 'warn', message: 'by text' });
    expect(logs[7]!.level).toBe('info');
    expect(JSON.parse(logs[7]!.message)).toEqual({ event: 'checkout', items: [1, 2] });
    expect(logs[7]!.metadata.body).toEqual({ event: 'checkout', items: [1, 2] });
    expect(logs.slice(8).map((l) => l.message)).toEqual(Array.from({ length: 250 }, (_, i) => `bulk ${i}`));
  }

  it('the http/json exporter delivers, with every field mapped', async () => {
    const project = await createProject(s, account, 'otlp json');
    const t0 = Date.now() - 60_000;
    await emitThrough(new JsonExporter({ url: `${s.url}/v1/otlp/v1/logs`, headers: { 'x-api-key': project.apiKey } }), t0);
    checkMapped(await read(project.id), t0);
  });

  it('the http/protobuf exporter delivers, configured only by the OTEL_ environment variables, gzip-compressed', async () => {
    const project = await createProject(s, account, 'otlp proto');
    const saved = { ...process.env };
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${s.url}/v1/otlp`;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `x-api-key=${project.apiKey}`;
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip';
    try {
      const t0 = Date.now() - 30_000;
      await emitThrough(new ProtoExporter(), t0);
      checkMapped(await read(project.id), t0);
    } finally {
      for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_COMPRESSION']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it('answers a partial success for the records it refuses, and stores the rest', async () => {
    const project = await createProject(s, account, 'otlp partial');
    const ns = (ms: number) => `${BigInt(ms) * 1_000_000n + 123_456n}`;
    const now = Date.now();
    const body = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
          scopeLogs: [
            {
              scope: { name: 'raw' },
              logRecords: [
                { timeUnixNano: ns(now - 1000), severityNumber: 17, body: { stringValue: 'kept one' }, traceId: '5B8EFFF798038103D269B633813FC60C', spanId: 'EEE19B7EC3C1B174', attributes: [{ key: 'big', value: { intValue: '9007199254740993' } }] },
                { observedTimeUnixNano: ns(now - 900), severityNumber: 9, body: { stringValue: 'too much metadata' }, attributes: [{ key: 'blob', value: { stringValue: 'x'.repeat(70_000) } }] },
                { timeUnixNano: ns(now + 3 * 86_400_000), body: { stringValue: 'from the future' } },
                { severityText: 'err', body: { stringValue: 'kept two, no time' } },
              ],
            },
          ],
        },
      ],
    };
    const res = await fetch(`${s.url}/v1/otlp/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': project.apiKey }, body: gzipSync(JSON.stringify(body)) });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } };
    expect(answer.partialSuccess.rejectedLogRecords).toBe('2');
    expect(answer.partialSuccess.errorMessage).toMatch(/record 1: metadata is larger than 64 KiB/);
    expect(answer.partialSuccess.errorMessage).toMatch(/record 2: timestamp is more than 24 hours in the future/);
    const logs = await read(project.id);
    expect(logs.map((l) => l.message)).toEqual(['kept one', 'kept two, no time']);
    expect(logs[0]).toMatchObject({ level: 'error', source: 'api', timestamp: new Date(now - 1000).toISOString() });
    expect(logs[0]!.metadata).toMatchObject({ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', big: '9007199254740993' });
    expect(logs[1]!.level).toBe('error');

    // A full success is an empty response; every record refused is still a partial success (not worth a retry).
    const ok = await fetch(`${s.url}/v1/otlp/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey }, body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'fine' } }] }] }] }) });
    expect(await ok.json()).toEqual({});
    const none = await fetch(`${s.url}/v1/otlp/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey }, body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: ns(now + 5 * 86_400_000), body: { stringValue: 'no' } }] }] }] }) });
    expect(none.status).toBe(200);
    expect(((await none.json()) as { partialSuccess: { rejectedLogRecords: string } }).partialSuccess.rejectedLogRecords).toBe('1');
  });

  it('refuses what it cannot take with the Loglane error body and OTLP retry semantics', async () => {
    const project = await createProject(s, account, 'otlp errors');
    const post = (headers: Record<string, string>, body: string | Buffer) => s.request('POST', '/v1/otlp/v1/logs', { headers, raw: body });
    const garbage = await post({ 'content-type': 'application/x-protobuf', 'x-api-key': project.apiKey }, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    expect(garbage.status).toBe(400);
    expect(errorOf(garbage).code).toBe('VALIDATION_ERROR');
    const badJson = await post({ 'content-type': 'application/json', 'x-api-key': project.apiKey }, '{"resourceLogs": ');
    expect(badJson.status).toBe(400);
    const text = await post({ 'content-type': 'text/plain', 'x-api-key': project.apiKey }, 'hello');
    expect(text.status).toBe(415);
    const noKey = await post({ 'content-type': 'application/json' }, '{}');
    expect(noKey.status).toBe(401);
    expect(errorOf(noKey)).toMatchObject({ code: 'INVALID_API_KEY' });
    expect(errorOf(noKey).message).toMatch(/x-api-key/);
    const bomb = await post({ 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': project.apiKey }, gzipSync(Buffer.alloc(6 * 1024 * 1024, 0x20)));
    expect(bomb.status).toBe(413);
    const empty = await post({ 'content-type': 'application/json', 'x-api-key': project.apiKey }, '{}');
    expect(empty.status).toBe(200);
  });

  it('no OTLP/JSON body, however malformed at any depth, gets a 5xx', async () => {
    const project = await createProject(s, account, 'otlp fuzz');
    const junk = fc.oneof(fc.anything({ maxDepth: 2 }), fc.constant(null), fc.string(), fc.integer(), fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 }));
    const or = <T,>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: junk });
    const anyValue = or(fc.oneof(fc.record({ stringValue: fc.string() }), fc.record({ intValue: fc.oneof(fc.string(), fc.integer()) }), fc.record({ kvlistValue: or(fc.record({ values: or(fc.array(junk, { maxLength: 2 })) })) }), fc.record({ arrayValue: or(fc.record({ values: junk })) }), fc.record({ bytesValue: junk })));
    const kv = or(fc.record({ key: or(fc.string()), value: anyValue }));
    const record = or(
      fc.record(
        { timeUnixNano: or(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String)), severityNumber: junk, severityText: junk, body: anyValue, attributes: or(fc.array(kv, { maxLength: 3 })), traceId: junk, spanId: junk, eventName: junk },
        { requiredKeys: [] },
      ),
    );
    const request = or(
      fc.record({
        resourceLogs: or(fc.array(or(fc.record({ resource: or(fc.record({ attributes: or(fc.array(kv, { maxLength: 2 })) })), scopeLogs: or(fc.array(or(fc.record({ scope: or(fc.record({ name: junk, version: junk, attributes: junk }, { requiredKeys: [] })), logRecords: or(fc.array(record, { maxLength: 4 })) }, { requiredKeys: [] })), { maxLength: 2 })) }, { requiredKeys: [] })), { maxLength: 2 })),
      }),
    );
    await fc.assert(
      fc.asyncProperty(request, async (body) => {
        const res = await fetch(`${s.url}/v1/otlp/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey }, body: JSON.stringify(body) ?? 'null' });
        await res.arrayBuffer();
        return res.status < 500;
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});
