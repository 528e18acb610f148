/**
 * Issue 25, finding 3: OTLP resource amplification. An OTLP request names its resource's (and
 * scope's) attributes once, and every record carries them in its metadata, so a ~80 KB request of
 * 10,000 empty records under a 57 KB resource became 572 MB of logs: the SQLite writer's thread
 * died of heap exhaustion, PostgreSQL answered 500 "Invalid string length", and even a request
 * answered 429 froze the server first, because every record was normalised before the rate limit.
 * Now the byte size of a request's logs is counted while they are normalised, and a request whose
 * logs pass the largest batch the ingest queue takes is refused (413) as soon as it does; the
 * plan's rate and the queue's bounds are checked before anything is normalised.
 */
import protobuf from 'protobufjs';
import { expect, it } from 'vitest';
import { beside, expectUnharmed } from './hostile.js';
import { createProject, describeEngines, errorOf, ingest, signup, useServer, waitFor, type Account, type TestServer } from './harness.js';
import { ingestWork } from '../src/features/logs/ingest/ingest.js';

/** The part of opentelemetry/proto/collector/logs/v1 these requests use, as an exporter encodes it. */
const root = protobuf.parse(`
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; int64 int_value = 3; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message LogRecord { int32 severity_number = 2; AnyValue body = 5; repeated KeyValue attributes = 6; }
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
`).root;
const Request = root.lookupType('ExportLogsServiceRequest');

/**
 * An export of `records` empty log records under one resource of `resourceKb` KB of attributes
 * (`service.name` and 2 KB strings): each record alone is a few bytes, each stored log carries the
 * whole resource.
 */
function amplifying(records: number, resourceKb: number): Buffer {
  const attributes = [{ key: 'service.name', value: { stringValue: 'amplifier' } }];
  for (let i = 0; i < resourceKb / 2; i++) attributes.push({ key: `k8s.label.${i}`, value: { stringValue: String(i % 10).repeat(2040) } });
  const message = Request.fromObject({
    resourceLogs: [{ resource: { attributes }, scopeLogs: [{ scope: { name: 'amp' }, logRecords: Array.from({ length: records }, () => ({})) }] }],
  });
  return Buffer.from(Request.encode(message).finish());
}

async function postOtlp(s: TestServer, apiKey: string, body: Buffer): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const res = await fetch(`${s.url}/v1/otlp/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'x-api-key': apiKey }, body });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
}

async function logCount(s: TestServer, account: Account, projectId: string): Promise<number> {
  const res = await s.request('GET', `/v1/projects/${projectId}`, { token: account.accessToken });
  expect(res.status).toBe(200);
  return res.body.logCount as number;
}

/** The highest heap use of this process (the server runs in it) while `work` runs, sampled every few ms. */
async function peakHeapDuring<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { result, growthMb: Math.round((peak - base) / 1048576) };
  } finally {
    clearInterval(timer);
  }
}

/** The bound the amplification test holds the server's heap growth to; 572 MB of logs were made before. */
const HEAP_GROWTH_BOUND_MB = 256;

describeEngines('hostile OTLP', (engine) => {
  const s = useServer(engine);

  it('a ~80 KB export of 10,000 records under a 57 KB resource (572 MB once copied into every record) is refused with 413 before any record is built: heap growth stays under 256 MB, the bystander is unharmed, and the writer goes on committing', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'amplifier');
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    const body = amplifying(10_000, 57);
    expect(body.length).toBeLessThan(100 * 1024);

    const before = ingestWork.normalised;
    const { result, report } = await beside(s, vp.apiKey, () => peakHeapDuring(() => Promise.all([postOtlp(s, ap.apiKey, body), postOtlp(s, ap.apiKey, body)])), { label: 'OTLP resource amplification', minMs: 3000 });
    // Refused before any record was built: only the bystander's logs (5 a request) were normalised.
    expect(ingestWork.normalised - before).toBeLessThanOrEqual(5 * report.requests);
    console.log(`[hostile ${engine}] OTLP amplification: statuses ${result.result.map((r) => r.status).join(', ')}, heap growth ${result.growthMb} MB`);

    for (const answer of result.result) {
      // Refused as too large (never fits), or as over the plan's rate (the other copy took it), never a 5xx.
      expect([413, 429]).toContain(answer.status);
      const error = JSON.parse(answer.text) as { error: { code: string } };
      expect(error.error.code).toBe(answer.status === 413 ? 'PAYLOAD_TOO_LARGE' : 'RATE_LIMITED');
      if (answer.status === 429) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
    expect(result.result.some((r) => r.status === 413)).toBe(true);
    expect(result.growthMb).toBeLessThan(HEAP_GROWTH_BOUND_MB);
    expectUnharmed(report);
    expect(await logCount(s, victim, vp.id)).toBe(report.acknowledgedLogs);
    expect(await logCount(s, attacker, ap.id)).toBe(0);

    // The writer is alive: the same resource under fewer records (31 MB of logs, just under the 32 MiB a batch may come to) is taken whole.
    const fits = await waitFor(async () => {
      const answer = await postOtlp(s, ap.apiKey, amplifying(540, 57));
      return answer.status === 429 ? undefined : answer;
    }, 15_000, 'the plan rate to let the export in', 250);
    expect(fits.status).toBe(200);
    const later = await ingest(s, ap.apiKey, [{ message: 'after the attack' }]);
    expect(later.status).toBe(202);
    expect(await logCount(s, attacker, ap.id)).toBe(541);
  }, 120_000);

  it('twelve concurrent exports of 31 MB of logs each (540 records under a 57 KB resource) build no more at once than the project\'s in-flight share: heap growth stays under 256 MB, each is stored or refused with Retry-After, the bystander is unharmed', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'concurrent amplifier');
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    const body = amplifying(540, 57);

    const { result, report } = await beside(s, vp.apiKey, () => peakHeapDuring(() => Promise.all(Array.from({ length: 12 }, () => postOtlp(s, ap.apiKey, body)))), { label: 'OTLP amplification, 12 concurrent exports', minMs: 3000 });
    const statuses = result.result.map((r) => r.status);
    console.log(`[hostile ${engine}] OTLP concurrent amplification: statuses ${statuses.join(', ')}, heap growth ${result.growthMb} MB`);

    for (const answer of result.result) {
      expect([200, 429, 503]).toContain(answer.status);
      if (answer.status !== 200) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
    expect(result.growthMb).toBeLessThan(HEAP_GROWTH_BOUND_MB);
    expectUnharmed(report);
    expect(await logCount(s, victim, vp.id)).toBe(report.acknowledgedLogs);
    // Exactly the exports answered 200 were stored, whole.
    expect(await logCount(s, attacker, ap.id)).toBe(540 * statuses.filter((st) => st === 200).length);
  }, 120_000);

  it('an export the plan\'s rate refuses (429) is refused before any of its records is normalised', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'over its rate');
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    // The free plan's bucket holds 10,000 logs: this takes them all.
    const spend = await ingest(s, ap.apiKey, Array.from({ length: 10_000 }, (_, i) => ({ message: `m${i}` })));
    expect(spend.status).toBe(202);
    const body = amplifying(10_000, 1);

    const before = ingestWork.normalised;
    const { result, report } = await beside(s, vp.apiKey, async () => {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await postOtlp(s, ap.apiKey, body));
      return answers;
    }, { label: 'OTLP export over the plan rate', minMs: 3000 });
    const normalised = ingestWork.normalised - before;

    for (const answer of result) {
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect((JSON.parse(answer.text) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    }
    // Only the bystander's logs (5 a request) were normalised; the attacker's 30,000 records none.
    expect(normalised).toBeLessThanOrEqual(5 * report.requests);
    expectUnharmed(report);
    expect(await logCount(s, victim, vp.id)).toBe(report.acknowledgedLogs);
    expect(errorOf(await ingest(s, ap.apiKey, Array.from({ length: 10_000 }, () => ({ message: 'still over' })))).code).toBe('RATE_LIMITED');
  }, 120_000);
});
