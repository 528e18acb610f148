import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestQueue } from '../src/features/logs/ingest-queue.js';
import type { Batch, LogWriter } from '../src/features/logs/writer.js';
import { createProject, describeEngines, errorOf, ingest, setPlan, signup, startServer, type TestServer } from './harness.js';

/** A writer whose commits finish when the test says so. */
function gatedWriter() {
  const calls: Batch[][] = [];
  const gates: (() => void)[] = [];
  let seq = 0;
  const writer: LogWriter = {
    write(batches) {
      calls.push(batches);
      return new Promise((resolve) =>
        gates.push(() =>
          resolve(
            batches.map((b) => {
              const prevSeq = seq;
              seq += b.rows.length;
              return { prevSeq, firstSeq: prevSeq + 1, lastSeq: seq };
            }),
          ),
        ),
      );
    },
    close: async () => {},
  };
  return { writer, calls, release: () => gates.shift()?.() };
}

const batch = (n: number): Batch => ({ projectId: 'proj_x', receivedAt: 0, rows: Array.from({ length: n }, () => ({ ts: 0, level: 2, source: null, message: 'm', metadata: null })) });

describe('the ingest queue', () => {
  it('commits what waits together, and refuses with 503 OVERLOADED past its bound', async () => {
    const g = gatedWriter();
    const committed: number[] = [];
    const q = new IngestQueue(g.writer, { maxQueuedLogs: 100, maxLogsPerCommit: 1000, onCommit: (c) => committed.push(...c.map((x) => x.lastSeq)) });
    const lastOf = async (p: Promise<{ lastSeq: number } | null>) => (await p)?.lastSeq;
    const first = lastOf(q.submit(batch(10))); // goes to the writer at once
    const second = lastOf(q.submit(batch(40)));
    const third = lastOf(q.submit(batch(40)));
    await expect(q.submit(batch(20))).rejects.toMatchObject({ code: 'OVERLOADED', retryAfter: 1 });
    expect(q.queuedLogs).toBe(90);
    g.release();
    expect(await first).toBe(10);
    await new Promise((r) => setImmediate(r));
    // second and third went into one commit.
    expect(g.calls.map((c) => c.map((b) => b.rows.length))).toEqual([[10], [40, 40]]);
    g.release();
    expect([await second, await third]).toEqual([50, 90]);
    expect(committed).toEqual([10, 50, 90]);
    expect(q.queuedLogs).toBe(0);
    await q.drain();
  });

  it('a batch larger than the bound is still taken when nothing waits', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, { maxQueuedLogs: 100, maxLogsPerCommit: 1000, onCommit: () => {} });
    const big = q.submit(batch(500));
    g.release();
    expect(await big).toEqual({ prevSeq: 0, firstSeq: 1, lastSeq: 500 });
  });

  it('a failed commit fails every request in it, and the queue goes on', async () => {
    let fail = true;
    const writer: LogWriter = {
      write: async (batches) => {
        if (fail) throw new Error('disk full');
        return batches.map(() => ({ prevSeq: 0, firstSeq: 1, lastSeq: 1 }));
      },
      close: async () => {},
    };
    const q = new IngestQueue(writer, { maxQueuedLogs: 100, maxLogsPerCommit: 1000, onCommit: () => {} });
    await expect(q.submit(batch(1))).rejects.toThrow('disk full');
    fail = false;
    expect(await q.submit(batch(1))).toEqual({ prevSeq: 0, firstSeq: 1, lastSeq: 1 });
  });
});

describeEngines('ingestion under overload', (engine) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(engine, { env: { INGEST_QUEUE_LIMIT: '10000' } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers only 202 or 503 with Retry-After, and stores exactly what it acknowledged', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'enterprise');
    const p = await createProject(s, a);
    const body = Array.from({ length: 6000 }, (_, i) => ({ message: `load ${i} ${'x'.repeat(100)}` }));
    const results = await Promise.all(Array.from({ length: 12 }, () => ingest(s, p.apiKey, body)));
    let accepted = 0;
    for (const r of results) {
      expect([202, 503]).toContain(r.status);
      if (r.status === 202) accepted += r.body.accepted;
      else {
        expect(errorOf(r).code).toBe('OVERLOADED');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect(accepted).toBeGreaterThan(0);
    const project = (await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).body;
    expect(project.logCount).toBe(accepted);
  });
});

describeEngines('per-plan ingest rate limits', (engine) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(engine, { env: { INGEST_RATE_FREE: '100', INGEST_RATE_STARTER: '0' } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('past the plan\'s rate a project gets 429 RATE_LIMITED with Retry-After; it refills; other plans and projects are unaffected', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    // The bucket holds one full request (10,000 logs) at first.
    expect((await ingest(s, p.apiKey, Array.from({ length: 10_000 }, (_, i) => ({ message: `m${i}` })))).status).toBe(202);
    const limited = await ingest(s, p.apiKey, Array.from({ length: 500 }, () => ({ message: 'five seconds worth' })));
    expect(limited.status).toBe(429);
    expect(errorOf(limited).code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    s.clock.advance(6000);
    expect((await ingest(s, p.apiKey, Array.from({ length: 500 }, () => ({ message: 'refilled' })))).status).toBe(202);

    const b = await signup(s);
    await setPlan(s, b.id, 'starter');
    const q = await createProject(s, b);
    for (let i = 0; i < 3; i++) expect((await ingest(s, q.apiKey, Array.from({ length: 10_000 }, () => ({ message: 'unlimited' })))).status).toBe(202);
    const project = (await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).body;
    expect(project.logCount).toBe(10_500);
  });
});
