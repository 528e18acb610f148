/**
 * Issue 16: a needle in a million logs reads only a few blocks. A project gets 1,000,000 logs over
 * seven days through the HTTP API (each with its own request id), the builder summarises them in
 * blocks of 4,096 (the default), and searches and stats for one request id, a bare word and an
 * absent value are then counted (not timed): blocks and rows read, against the ~244 blocks in range.
 * A candidate block is read by its slices (256 logs) whose own filters may hold the needle.
 */
import { beforeAll, expect, it } from 'vitest';
import { describeEngines, ingest, useAccount, useProject, useServer } from './harness.js';

const LOGS = 1_000_000;
const BLOCK = 4096;
const SLICE = BLOCK / 16;
const PER_REQUEST = 10_000;
const IN_FLIGHT = 4;
const WEEK = 7 * 86_400_000;

describeEngines('a needle in a million logs', (engine) => {
  const s = useServer(engine, { env: { INDEX_INTERVAL: '1h', RETENTION_DAYS_ENTERPRISE: '3650' } });
  const owner = useAccount(s, { plan: 'enterprise' });
  const project = useProject(s, owner, 'million');
  let t0: number;
  const step = WEEK / LOGS;

  beforeAll(async () => {
    t0 = s.clock.now() - WEEK - 60_000;
    let next = 0;
    const sender = async () => {
      while (next < LOGS) {
        const from = next;
        next += PER_REQUEST;
        const body = Array.from({ length: Math.min(PER_REQUEST, LOGS - from) }, (_, k) => {
          const i = from + k;
          return { timestamp: Math.floor(t0 + i * step), level: i % 20 === 0 ? 'warn' : 'info', message: `served r${i} in ${i % 500} ms`, metadata: { reqId: `r${i}`, status: i % 20 === 0 ? 503 : 200 } };
        });
        const res = await ingest(s, project.apiKey, body);
        if (res.status !== 202) throw new Error(`${res.status} ${res.text}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    expect(await s.app.services.logs.buildIndex()).toBe(Math.floor(LOGS / BLOCK));
    s.app.services.logs.setSearchIndex('on');
  }, 600_000);

  /** What the search read through the index: a fresh report, so a search that fell back to the scan fails here. */
  const freshReport = (before: unknown) => {
    const report = s.app.services.logs.lastIndexReport();
    expect(report, 'the search went through the index').not.toBe(before);
    return report!;
  };
  const search = async (query: string) => {
    const before = s.app.services.logs.lastIndexReport();
    const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t0 - 1}&limit=100`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    return { messages: res.body.data.map((l) => l.message), report: freshReport(before) };
  };

  it('a request id, a bare word and an absent value each read at most a few blocks of ~244', async () => {
    for (const [query, want] of [
      ['@reqId:r123457', ['served r123457 in 457 ms']],
      ['r987654', ['served r987654 in 154 ms']],
      ['@reqId:r5 OR @reqId:r999999', ['served r999999 in 499 ms', 'served r5 in 5 ms']],
      ['@reqId:absent-value', []],
      ['absentword', []],
    ] as const) {
      const { messages, report } = await search(query);
      expect(messages, query).toEqual(want);
      expect(report.blocksInRange, query).toBe(Math.floor(LOGS / BLOCK));
      // The unsummarised tail (576 logs), the blocks that hold the values, and a false positive at most;
      // of those blocks, the slices that hold the values and two false positives at most.
      expect(report.blocksRead, query).toBeLessThanOrEqual(1 + want.length + 1);
      expect(report.seqsRead, query).toBeLessThanOrEqual((want.length + 2) * SLICE + (LOGS % BLOCK));
      expect(report.rowsRead, query).toBeLessThanOrEqual(report.seqsRead);
    }
  });

  it("a request id's stats read as few blocks as its search, and count it", async () => {
    const before = s.app.services.logs.lastIndexReport();
    const res = await s.request('GET', `/v1/projects/${project.id}/logs/stats?query=${encodeURIComponent('@reqId:r400000')}&from=${t0 - 1}&to=${t0 + WEEK}&interval=1d`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.buckets.reduce((n: number, b: { total: number }) => n + b.total, 0)).toBe(1);
    const report = freshReport(before);
    expect(report.blocksRead).toBeLessThanOrEqual(3);
    expect(report.seqsRead).toBeLessThanOrEqual(3 * SLICE + (LOGS % BLOCK));
  });
});
