import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { EvaluationQueue } from '../src/features/alerts/evaluation-queue.js';
import { EventLoopTurns, IngestAdmission, ReadSlots } from '../src/features/logs/ingest/admission.js';
import { IngestQueue, type IngestQueueOptions } from '../src/features/logs/ingest/ingest-queue.js';
import { createIngest, ingestWork, SLICE_LOGS } from '../src/features/logs/ingest/ingest.js';
import { IngestRateLimiter } from '../src/features/logs/ingest/rate-limit.js';
import { createPostgresWriter, postgresUnavailable } from '../src/features/logs/store/postgres.js';
import { sqliteUnavailable } from '../src/features/logs/store/sqlite.js';
import { createSqliteWriter } from '../src/features/logs/store/sqlite-writer.js';
import type { Batch, LogWriter } from '../src/features/logs/store/writer.js';
import { createProject, describeEngines, errorOf, holdCommits, ingest, setPlan, signup, type Response, useServer, waitFor } from './harness.js';

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

const batch = (n: number, projectId = 'proj_x', messageChars = 1): Batch => ({ projectId, receivedAt: 0, rows: Array.from({ length: n }, () => ({ ts: 0, level: 2, source: null, message: 'm'.repeat(messageChars), metadata: null })) });

/** Generous bounds, each test narrowing the one it is about. */
const options = (o: Partial<IngestQueueOptions> = {}): IngestQueueOptions => ({ maxQueuedLogs: 1e6, maxQueuedBytes: 1e9, maxLogsPerCommit: 1e6, maxBytesPerCommit: 1e9, projectShare: 1, onCommit: () => {}, isUnavailable: () => false, ...o });

/** Lets the queue take its next group after a commit finished. */
const settle = () => new Promise((r) => setImmediate(r));

describe('the ingest queue', () => {
  it('commits what waits together, and refuses with 503 OVERLOADED past its bound', async () => {
    const g = gatedWriter();
    const committed: number[] = [];
    const q = new IngestQueue(g.writer, options({ maxQueuedLogs: 100, maxLogsPerCommit: 1000, onCommit: (c) => committed.push(...c.map((x) => x.lastSeq)) }));
    const lastOf = async (p: Promise<{ lastSeq: number } | null>) => (await p)?.lastSeq;
    const first = lastOf(q.submit(batch(10, 'proj_a'))); // goes to the writer at once
    const second = lastOf(q.submit(batch(40, 'proj_b')));
    const third = lastOf(q.submit(batch(40, 'proj_c')));
    await expect(q.submit(batch(20, 'proj_d'))).rejects.toMatchObject({ code: 'OVERLOADED', retryAfter: 1 });
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
    const q = new IngestQueue(g.writer, options({ maxQueuedLogs: 100, maxLogsPerCommit: 1000 }));
    const big = q.submit(batch(500));
    g.release();
    expect(await big).toEqual({ prevSeq: 0, firstSeq: 1, lastSeq: 500 });
  });

  it('a failed lone commit fails its request, and the queue goes on', async () => {
    let fail = true;
    const writer: LogWriter = {
      write: async (batches) => {
        if (fail) throw new Error('disk full');
        return batches.map(() => ({ prevSeq: 0, firstSeq: 1, lastSeq: 1 }));
      },
      close: async () => {},
    };
    const q = new IngestQueue(writer, options());
    await expect(q.submit(batch(1))).rejects.toThrow('disk full');
    expect([q.queuedLogs, q.queuedBytes]).toEqual([0, 0]);
    fail = false;
    expect(await q.submit(batch(1))).toEqual({ prevSeq: 0, firstSeq: 1, lastSeq: 1 });
  });

  it('when a group commit fails, each batch is written alone: only the one the writer refuses fails, the others commit', async () => {
    const calls: string[][] = [];
    let seq = 0;
    let release!: () => void;
    const firstDone = new Promise<void>((r) => (release = r));
    const writer: LogWriter = {
      async write(batches) {
        calls.push(batches.map((b) => b.projectId));
        if (calls.length === 1) await firstDone;
        if (batches.some((b) => b.projectId === 'proj_bad')) throw new Error('the database refused a value');
        return batches.map((b) => ({ prevSeq: seq, firstSeq: seq + 1, lastSeq: (seq += b.rows.length) }));
      },
      close: async () => {},
    };
    const committed: string[] = [];
    const q = new IngestQueue(writer, options({ onCommit: (c) => committed.push(...c.map((x) => x.batch.projectId)) }));
    const first = q.submit(batch(1, 'proj_a'));
    // These three wait for the first commit and then go together.
    const results = [q.submit(batch(2, 'proj_b')), q.submit(batch(3, 'proj_bad')), q.submit(batch(4, 'proj_c'))].map((p) => p.then((r) => r, (err: Error) => err.message));
    release();
    expect(await first).toEqual({ prevSeq: 0, firstSeq: 1, lastSeq: 1 });
    expect(await Promise.all(results)).toEqual([{ prevSeq: 1, firstSeq: 2, lastSeq: 3 }, 'the database refused a value', { prevSeq: 3, firstSeq: 4, lastSeq: 7 }]);
    expect(calls).toEqual([['proj_a'], ['proj_b', 'proj_bad', 'proj_c'], ['proj_b'], ['proj_bad'], ['proj_c']]);
    expect(committed).toEqual(['proj_a', 'proj_b', 'proj_c']);
    expect([q.queuedLogs, q.queuedBytes]).toEqual([0, 0]);
  });

  it('when the database cannot write at all, a failed group is not written again batch by batch: its batches fail together', async () => {
    // Each engine's store says which of its errors mean that (LogStore.isUnavailable).
    const unavailable: [Error, (err: unknown) => boolean][] = [
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), postgresUnavailable],
      [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), postgresUnavailable],
      [new Error('log writer: database or disk is full'), sqliteUnavailable], // the SQLite writer's thread passes on the message only
    ];
    for (const [error, isUnavailable] of unavailable) {
      const calls: string[][] = [];
      let release!: () => void;
      const firstDone = new Promise<void>((r) => (release = r));
      const writer: LogWriter = {
        async write(batches) {
          calls.push(batches.map((b) => b.projectId));
          if (calls.length === 1) {
            await firstDone;
            return [{ prevSeq: 0, firstSeq: 1, lastSeq: 1 }];
          }
          throw error;
        },
        close: async () => {},
      };
      const q = new IngestQueue(writer, options({ isUnavailable }));
      const first = q.submit(batch(1, 'proj_a'));
      const group = [q.submit(batch(2, 'proj_b')), q.submit(batch(3, 'proj_c'))].map((p) => p.then(() => 'stored', (err: Error) => err.message));
      release();
      await first;
      expect(await Promise.all(group)).toEqual([error.message, error.message]);
      expect(calls, error.message).toEqual([['proj_a'], ['proj_b', 'proj_c']]);
      expect([q.queuedLogs, q.queuedBytes]).toEqual([0, 0]);
    }
  });

  it('a commit takes at most maxBytesPerCommit of logs (a lone larger batch goes alone), and a small batch joins past a large one that does not fit', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, options({ maxBytesPerCommit: 1000 }));
    const done = [
      q.submit(batch(1, 'proj_a', 10)), // alone: the writer was free
      q.submit(batch(2, 'proj_b', 300)), // 600
      q.submit(batch(1, 'proj_c', 600)), // would make 1,200: waits for the next commit
      q.submit(batch(4, 'proj_d', 100)), // 400: joins b
      q.submit(batch(1, 'proj_e', 5000)), // larger than a commit: alone
    ];
    expect(q.queuedBytes).toBe(10 + 600 + 600 + 400 + 5000);
    for (let i = 0; i < 4; i++) {
      g.release();
      await settle();
    }
    await Promise.all(done);
    const sizes = g.calls.map((c) => c.map((b) => b.rows.reduce((n, r) => n + r.message.length, 0)));
    expect(sizes).toEqual([[10], [600, 400], [600], [5000]]);
    expect(q.queuedBytes).toBe(0);
  });

  it('the queue is bounded by bytes too: past maxQueuedBytes, 503 OVERLOADED with Retry-After', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, options({ maxQueuedBytes: 1000 }));
    const first = q.submit(batch(1, 'proj_a', 900));
    await expect(q.submit(batch(1, 'proj_b', 200))).rejects.toMatchObject({ code: 'OVERLOADED', retryAfter: 1 });
    const fits = q.submit(batch(1, 'proj_b', 100));
    g.release();
    await first;
    await settle();
    g.release();
    await fits;
  });

  it('one project holds at most its share of the queue (logs and bytes): past it that project gets 429, while others still get in', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, options({ maxQueuedLogs: 100, maxQueuedBytes: 10_000, projectShare: 0.25 }));
    expect(q.projectShare).toEqual({ logs: 25, bytes: 2500 });
    // A lone batch passes whatever its size.
    const big = q.submit(batch(40, 'proj_a'));
    await expect(q.submit(batch(1, 'proj_a'))).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfter: 1 });
    const b1 = q.submit(batch(20, 'proj_b'));
    await expect(q.submit(batch(6, 'proj_b'))).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfter: 1 });
    const b2 = q.submit(batch(5, 'proj_b'));
    // By bytes: 2,000 then 600 more is past 2,500.
    const c1 = q.submit(batch(1, 'proj_c', 2000));
    await expect(q.submit(batch(1, 'proj_c', 600))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    // Room for another project, up to the whole queue's bound (100 logs): 40 + 25 + 1 + 20 = 86.
    const d = q.submit(batch(20, 'proj_d'));
    await expect(q.submit(batch(20, 'proj_e'))).rejects.toMatchObject({ code: 'OVERLOADED' });
    for (let i = 0; i < 2; i++) {
      g.release();
      await settle();
    }
    await Promise.all([big, b1, b2, c1, d]);
    // Its share is free again once committed.
    const again = q.submit(batch(25, 'proj_a'));
    g.release();
    expect(await again).not.toBeNull();
  });

  it('no batch larger than maxBatchBytes is taken, even alone in an empty queue: 413, and check() says so before the logs are built', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, options({ maxQueuedBytes: 1000, maxBytesPerCommit: 100 }));
    // Twice a commit or twice the body limit, never more than the whole queue.
    expect(q.maxBatchBytes).toBe(1000);
    expect(new IngestQueue(g.writer, options({ maxQueuedBytes: 1e9, maxBytesPerCommit: 16 * 1048576 })).maxBatchBytes).toBe(32 * 1048576);
    expect(new IngestQueue(g.writer, options({ maxQueuedBytes: 1e9, maxBytesPerCommit: 1048576 })).maxBatchBytes).toBe(10 * 1048576);
    expect(new IngestQueue(g.writer, options({ maxQueuedBytes: 1e9, maxBytesPerBatch: 5000 })).maxBatchBytes).toBe(5000);
    expect([q.queuedLogs, q.queuedBytes]).toEqual([0, 0]);
    await expect(q.submit(batch(2, 'proj_a', 501))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(() => q.check('proj_a', 2, 1001)).toThrow(expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE' }));
    expect([q.queuedLogs, q.queuedBytes]).toEqual([0, 0]);
    expect(g.calls).toEqual([]);
    // At the bound it goes (alone, as before).
    const fits = q.submit(batch(2, 'proj_a', 500));
    g.release();
    expect(await fits).not.toBeNull();
  });

  it('check() refuses as submit would (429 over a project\'s share, 503 past the queue) without queueing anything', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, options({ maxQueuedLogs: 100, maxQueuedBytes: 10_000, projectShare: 0.25 }));
    const first = q.submit(batch(20, 'proj_a'));
    expect(() => q.check('proj_a', 6, 0)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', retryAfter: 1 }));
    expect(() => q.check('proj_b', 81, 0)).toThrow(expect.objectContaining({ code: 'OVERLOADED', retryAfter: 1 }));
    q.check('proj_b', 25, 2500);
    expect(q.queuedLogs).toBe(20);
    g.release();
    await first;
  });

  it('a check given to shedWhen refuses a project (429) or everyone (503)', async () => {
    const g = gatedWriter();
    const q = new IngestQueue(g.writer, options());
    q.shedWhen((projectId) => (projectId === 'proj_busy' ? 'project' : projectId === 'proj_all' ? 'all' : undefined));
    await expect(q.submit(batch(1, 'proj_busy'))).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfter: 1 });
    await expect(q.submit(batch(1, 'proj_all'))).rejects.toMatchObject({ code: 'OVERLOADED', retryAfter: 1 });
    const ok = q.submit(batch(1, 'proj_ok'));
    g.release();
    expect(await ok).not.toBeNull();
  });

  it('admission before the body is read: a project past its share of in-flight bytes gets 429, all past the total 503; a lone request always passes; claims resize and release', () => {
    const a = new IngestAdmission({ perProjectBytes: 100, totalBytes: 250 });
    const big = a.admit('proj_a', 500); // lone: passes
    expect(() => a.admit('proj_a', 1)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', retryAfter: 1 }));
    big.resize(60); // its decoded body was smaller
    const a2 = a.admit('proj_a', 40);
    expect(() => a2.resize(41)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED' }));
    const b = a.admit('proj_b', 100);
    expect(() => a.admit('proj_c', 51)).toThrow(expect.objectContaining({ code: 'OVERLOADED', retryAfter: 1 }));
    const c = a.admit('proj_c', 50);
    expect(a.inFlightBytes).toBe(250);
    for (const claim of [big, a2, b, c, c]) claim.release(); // a second release does nothing
    expect(a.inFlightBytes).toBe(0);
    a.admit('proj_c', 250).release();
  });

  it('the queue admits a project\'s bodies up to maxInFlightBytesPerProject, or one commit\'s bytes when that is not given', () => {
    for (const [o, perProject] of [[{ maxBytesPerCommit: 1000, maxInFlightBytesPerProject: 100 }, 100], [{ maxBytesPerCommit: 1000 }, 1000]] as const) {
      const q = new IngestQueue(gatedWriter().writer, options(o));
      const first = q.admit('proj_a', perProject - 10);
      expect(() => q.admit('proj_a', 11)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED' }));
      q.admit('proj_a', 10).release();
      first.release();
      expect(q.inFlightBytes).toBe(0);
    }
  });
});

describe('the steps before the queue', () => {
  it('ingest counts the size of the logs while it builds them: past the queue\'s largest batch it stops with 413, having built no more than that, and gives the rate its logs back', async () => {
    const g = gatedWriter();
    const queue = new IngestQueue(g.writer, options({ maxBytesPerBatch: 100_000 }));
    const limiter = new IngestRateLimiter({ free: 1000 }, () => 0);
    // No Idempotency-Key: the database is not reached.
    const ingestLogs = createIngest({ db: undefined as never, queue, limiter, now: () => 0 });
    // 1,000 logs of 1,000 characters: 1 MB of logs against a bound of 100,000.
    const items = Array.from({ length: 1000 }, (_, i) => ({ value: { message: `${i} ${'x'.repeat(995)}` } }));
    const before = ingestWork.normalised;
    await expect(ingestLogs('proj_a', 'free', items)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    // It stopped at the 101st log, the first past the bound.
    expect(ingestWork.normalised - before).toBe(101);
    expect([queue.queuedLogs, g.calls.length]).toEqual([0, 0]);
    // What is known before building refuses before building: OTLP's attributes shared by every record.
    const shared = items.map((item) => ({ ...item, leastBytes: 200 }));
    await expect(ingestLogs('proj_a', 'free', shared)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(ingestWork.normalised - before).toBe(101);
    // The bucket (10,000 logs) got back what the refused requests took.
    limiter.take('proj_a', 'free', 10_000);
    // A request that fits goes through, in slices (of SLICE_LOGS logs here), and is stored whole.
    const many = [...items.slice(0, 50), ...Array.from({ length: 2 * SLICE_LOGS }, (_, i) => ({ value: { message: `small ${i}` } }))];
    const fits = ingestLogs('proj_c', 'free', many);
    await expect(ingestLogs('proj_b', 'free', [{ error: 'this line is not valid JSON' }, { value: { nomessage: true } }])).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await waitFor(() => g.calls.length === 1, 5000, 'the first commit to start');
    g.release();
    expect((await fits).result).toEqual({ accepted: many.length, rejected: [] });
    expect(g.calls[0]![0]!.rows.map((r) => r.message)).toEqual(many.map((item) => item.value.message));
  });

  it('read slots: at most N holders, the next waits in order; a slot goes back on release (once) or after its hold time', async () => {
    const slots = new ReadSlots(2, 50);
    const order: string[] = [];
    const a = await slots.acquire();
    // b's hold time starts inside this call, so no earlier than bAcquired: a lower bound that holds on any
    // machine (measured from later, a busy machine could spend the whole hold before the clock is read).
    const bAcquired = performance.now();
    const b = await slots.acquire();
    const c = slots.acquire().then((release) => (order.push('c'), release));
    const d = slots.acquire().then((release) => (order.push('d'), release));
    await settle();
    expect(order).toEqual([]);
    a();
    a(); // a second release gives nothing back
    const releaseC = await c;
    await settle();
    expect(order).toEqual(['c']);
    // b never gives its slot back: after its hold time (50 ms, less a timer's rounding) d gets one anyway.
    const releaseD = await d;
    expect(performance.now() - bAcquired).toBeGreaterThanOrEqual(30);
    expect(order).toEqual(['c', 'd']);
    for (const release of [b, releaseC, releaseD]) release();
    // Both slots are free again.
    (await slots.acquire())();
    (await slots.acquire())();
  });

  it('event-loop turns: pieces run in order, one per turn, with I/O and timers served between them', async () => {
    const turns = new EventLoopTurns();
    const seen: string[] = [];
    const pieces = [1, 2, 3].map((n) =>
      turns.run(() => {
        seen.push(`piece ${n}`);
        // Work queued by a piece runs before the next piece.
        setImmediate(() => seen.push(`after ${n}`));
        if (n === 2) throw new Error('piece 2 failed');
        return n;
      }),
    );
    expect(await pieces[0]).toBe(1);
    await expect(pieces[1]).rejects.toThrow('piece 2 failed');
    expect(await pieces[2]).toBe(3);
    await settle();
    expect(seen).toEqual(['piece 1', 'after 1', 'piece 2', 'after 2', 'piece 3', 'after 3']);
  });

  it('the alert evaluation backlog is bounded by bytes as well as logs, in all (everyone waits: 503) and per project (that project: 429)', async () => {
    let finish!: () => void;
    const evaluating = new Promise<void>((r) => (finish = r));
    const q = new EvaluationQueue(() => evaluating, () => {});
    const row = (projectId: string, message: string) => ({ project_id: projectId, seq: 1, ts: 0, received_at: 0, level: 2, source: null, message, metadata: null });
    const bounds = { logs: 100, bytes: 1000 };
    q.add('proj_a', [row('proj_a', 'x'.repeat(300))]);
    expect([q.backlog, q.backlogBytes]).toEqual([1, 300]);
    expect(q.pressure('proj_a', bounds)).toBe('project'); // 300 ≥ a quarter of 1,000 bytes
    expect(q.pressure('proj_b', bounds)).toBeUndefined();
    q.add('proj_b', Array.from({ length: 10 }, () => row('proj_b', 'y'.repeat(60))));
    expect(q.pressure('proj_c', bounds)).toBeUndefined();
    q.add('proj_c', [row('proj_c', 'z'.repeat(10))]);
    expect(q.pressure('proj_c', bounds)).toBeUndefined();
    q.add('proj_c', [row('proj_c', 'z'.repeat(1))]);
    expect(q.pressure('proj_d', bounds)).toBeUndefined();
    q.add('proj_d', Array.from({ length: 24 }, () => row('proj_d', '')));
    expect(q.pressure('proj_d', bounds)).toBeUndefined();
    q.add('proj_d', [row('proj_d', '')]);
    expect(q.pressure('proj_d', bounds)).toBe('project'); // 25 logs: a quarter of 100
    expect(q.pressure('proj_e', bounds)).toBeUndefined();
    q.add('proj_e', [row('proj_e', 'w'.repeat(100))]);
    expect(q.backlogBytes).toBe(300 + 600 + 11 + 100);
    expect(q.pressure('proj_e', bounds)).toBe('all'); // past 1,000 bytes in all
    finish();
    await q.drain();
    expect([q.backlog, q.backlogBytes]).toEqual([0, 0]);
    expect(q.pressure('proj_a', bounds)).toBeUndefined();
  });
});

describeEngines('a group commit with one batch the database refuses', (engine) => {
  const s = useServer(engine);

  it('the real writer: the batch with a value the database cannot take fails alone; the others in its group are stored', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'enterprise');
    const [p1, p2, p3] = [await createProject(s, a, 'one'), await createProject(s, a, 'two'), await createProject(s, a, 'three')];
    // A second writer on the server's database: the engine's own, not a stand-in.
    const writer = s.engine === 'sqlite' ? createSqliteWriter(s.database.sqliteFile!) : createPostgresWriter(s.database.db);
    const calls: number[] = [];
    const counting: LogWriter = { write: (batches) => (calls.push(batches.length), writer.write(batches)), close: () => writer.close() };
    const q = new IngestQueue(counting, options());
    const rows = (n: number, level: unknown = 2) => Array.from({ length: n }, (_, i) => ({ ts: Date.now(), level: level as number, source: null, message: `m${i}`, metadata: null }));
    try {
      const first = q.submit({ projectId: p1.id, receivedAt: Date.now(), rows: rows(1) });
      // Submitted while the first commit is being written: they go in one group. The middle one
      // carries a level that is an object (what "__proto__" used to become): no engine binds it.
      const group = [
        q.submit({ projectId: p2.id, receivedAt: Date.now(), rows: rows(3) }),
        q.submit({ projectId: p1.id, receivedAt: Date.now(), rows: rows(2, {}) }),
        q.submit({ projectId: p3.id, receivedAt: Date.now(), rows: rows(4) }),
      ].map((p) => p.then((r) => r?.lastSeq ?? null, () => 'failed'));
      await first;
      const outcome = await Promise.all(group);
      expect(calls).toEqual([1, 3, 1, 1, 1]);
      expect(outcome[1]).toBe('failed');
      expect(typeof outcome[0]).toBe('number');
      expect(typeof outcome[2]).toBe('number');
    } finally {
      await q.drain();
      await writer.close();
    }
    const count = async (id: string) => (await s.request('GET', `/v1/projects/${id}`, { token: a.accessToken })).body.logCount;
    expect([await count(p1.id), await count(p2.id), await count(p3.id)]).toEqual([1, 3, 4]);
  });
});

describeEngines('ingestion under overload', (engine) => {
  // A quarter of 10,000 logs is one project's share.
  const s = useServer(engine, { env: { INGEST_QUEUE_LIMIT: '10000' } });

  it('with commits stalled, the queue fills: past its bound every project gets 503 OVERLOADED, past its share one project gets 429; each with Retry-After; exactly what was acknowledged is stored', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'enterprise');
    const projects: { id: string; apiKey: string }[] = [];
    for (let i = 0; i < 6; i++) projects.push(await createProject(s, a, `load ${i}`));
    const body = Array.from({ length: 2400 }, (_, i) => ({ message: `load ${i} ${'x'.repeat(100)}` }));

    // Commits stall first, so the queue can only fill and the refusals are certain rather than a
    // question of how fast this machine commits: this holds what every commit needs (SQLite: the
    // write lock, by BEGIN IMMEDIATE; PostgreSQL: the projects' rows, which each commit updates).
    // It is let go as soon as the refusals have come, well within SQLite's busy timeout (5 s).
    const hold = await holdCommits(s.env, projects.map((p) => p.id));

    const answers: { project: number; res: Response }[] = [];
    const refusals = () => answers.filter((x) => x.res.status !== 202).length;
    let pending: Promise<void>[] = [];
    try {
      // 6 × 2,400 logs: the first is being written, three more wait (9,600), the last two find no room.
      pending = projects.map((p, i) => ingest(s, p.apiKey, body).then((res) => void answers.push({ project: i, res })));
      await waitFor(() => refusals() >= 2, 4000, 'two ingests refused');
      // One of the projects that got in sends more: past its share (2,500 logs), whatever the queue holds.
      const admitted = projects.findIndex((_, i) => !answers.some((x) => x.project === i));
      pending.push(ingest(s, projects[admitted]!.apiKey, body.slice(0, 200)).then((res) => void answers.push({ project: admitted, res })));
      await waitFor(() => refusals() >= 3, 4000, 'a third ingest refused');
    } finally {
      await hold.release();
    }
    await Promise.all(pending);

    const by = (status: number) => answers.filter((x) => x.res.status === status);
    expect(answers.map((x) => x.res.status).sort()).toEqual([202, 202, 202, 202, 429, 503, 503]);
    for (const { res } of by(503)) expect(errorOf(res).code).toBe('OVERLOADED');
    for (const { res } of by(429)) expect(errorOf(res).code).toBe('RATE_LIMITED');
    for (const { res } of [...by(503), ...by(429)]) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const [i, p] of projects.entries()) {
      const acknowledged = by(202).filter((x) => x.project === i).reduce((n, x) => n + x.res.body.accepted, 0);
      const project = (await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).body;
      expect(project.logCount).toBe(acknowledged);
    }
  });

  it('a request whose client goes away mid-body gives back its claim on the project\'s bytes in flight', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const queue = s.app.services.logs.queue;
    expect(queue.inFlightBytes).toBe(0);
    // Announces 4 MiB, sends 1 MiB, and goes away once the server has claimed it.
    const req = http.request(`${s.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(4 * 1024 * 1024), 'x-api-key': p.apiKey } });
    const closed = new Promise<void>((resolve) => req.on('close', () => resolve()));
    req.on('error', () => {});
    req.write(Buffer.alloc(1024 * 1024, 0x20));
    await waitFor(() => queue.inFlightBytes === 4 * 1024 * 1024, 5000, '4 MiB in flight');
    req.destroy();
    await closed;
    await waitFor(() => queue.inFlightBytes === 0, 5000, 'nothing in flight after the client went away');
    expect((await ingest(s, p.apiKey, [{ message: 'after' }])).status).toBe(202);
  });
});

describeEngines('per-plan ingest rate limits', (engine) => {
  const s = useServer(engine, { env: { INGEST_RATE_FREE: '100', INGEST_RATE_STARTER: '0' } });

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
