/**
 * The time ranges of recent commits (store/blocks/spans.ts), which let the skip index's builder name
 * a block's time range before reading it (on PostgreSQL the read is then planned over those days'
 * partitions only). A range must never be narrower than the block's logs: a summary that missed
 * some would make searches pass over blocks that hold matches. So the unit cases check every way a
 * block can be only partly known (gaps, spans dropped, dropped past the bound), and the server
 * cases check, on both engines, that every block summarised counts all its logs and their true time
 * range, with commits whose times jump back and forth.
 */
import { describe, expect, it } from 'vitest';
import { createCommitSpans } from '../src/features/logs/store/blocks/spans.js';
import { describeEngines, useAccount, useProject, useServer } from './harness.js';

describe('commit spans', () => {
  it('a block wholly covered by recorded commits gets the union of their time ranges', () => {
    const spans = createCommitSpans(8);
    spans.add('p', 1, 3, 100, 200);
    spans.add('p', 4, 8, 50, 150);
    expect(spans.bounds('p', 1, 8)).toEqual({ minTs: 50, maxTs: 200 });
    expect(spans.bounds('p', 2, 5)).toEqual({ minTs: 50, maxTs: 200 });
    expect(spans.size()).toBe(1); // contiguous, within 8 seqs: one span
  });

  it('a gap, a block past the recorded commits, another project: no range', () => {
    const spans = createCommitSpans(4);
    spans.add('p', 1, 4, 10, 20);
    spans.add('p', 9, 12, 30, 40);
    expect(spans.bounds('p', 1, 8)).toBeUndefined();
    expect(spans.bounds('p', 5, 8)).toBeUndefined();
    expect(spans.bounds('p', 9, 16)).toBeUndefined();
    expect(spans.bounds('q', 1, 4)).toBeUndefined();
    // The missing commit arrives late (another node's announcement): the block is covered.
    spans.add('p', 5, 8, 0, 5);
    expect(spans.bounds('p', 1, 8)).toEqual({ minTs: 0, maxTs: 20 });
    expect(spans.bounds('p', 1, 12)).toEqual({ minTs: 0, maxTs: 40 });
  });

  it('a commit recorded twice, or overlapping one recorded, changes nothing', () => {
    const spans = createCommitSpans(100);
    spans.add('p', 1, 10, 100, 200);
    spans.add('p', 1, 10, 100, 200);
    spans.add('p', 5, 15, 0, 1000);
    expect(spans.bounds('p', 1, 10)).toEqual({ minTs: 100, maxTs: 200 });
    expect(spans.bounds('p', 1, 15)).toBeUndefined();
    expect(spans.size()).toBe(1);
  });

  it('spans are not merged past a block, so a block keeps about its own range', () => {
    const spans = createCommitSpans(4);
    spans.add('p', 1, 4, 1000, 1000);
    spans.add('p', 5, 8, 1, 1);
    expect(spans.bounds('p', 1, 4)).toEqual({ minTs: 1000, maxTs: 1000 });
    expect(spans.bounds('p', 5, 8)).toEqual({ minTs: 1, maxTs: 1 });
    expect(spans.size()).toBe(2);
  });

  it('forget drops what a summarised block covered; past the bound everything goes', () => {
    const spans = createCommitSpans(2, 5);
    for (let i = 0; i < 4; i++) spans.add('p', 2 * i + 1, 2 * i + 2, i, i);
    spans.forget('p', 4);
    expect(spans.size()).toBe(2);
    expect(spans.bounds('p', 1, 4)).toBeUndefined();
    expect(spans.bounds('p', 5, 8)).toEqual({ minTs: 2, maxTs: 3 });
    for (let i = 0; i < 4; i++) spans.add(`other${i}`, 1, 1, 0, 0);
    expect(spans.size()).toBe(0);
    expect(spans.bounds('p', 5, 8)).toBeUndefined();
  });

  it('times are widened to whole milliseconds, never narrowed', () => {
    const spans = createCommitSpans();
    spans.add('p', 1, 2, 10.5, 20.5);
    expect(spans.bounds('p', 1, 2)).toEqual({ minTs: 10, maxTs: 21 });
  });
});

const BLOCK = 64;

describeEngines('the builder with commits of jumping times', (engine) => {
  const s = useServer(engine, { env: { INDEX_BLOCK_LOGS: String(BLOCK), INDEX_INTERVAL: '1h', DEFAULT_PLAN: 'enterprise' } });
  const owner = useAccount(s);
  const project = useProject(s, owner, 'spans');

  it('every block summarised holds all its logs and their true time range', async () => {
    const day = 86_400_000;
    const now = Date.now();
    // Commits of 10 logs, each from another day (up to 30 days back, on a plan whose partitions reach
    // that far), so a block's logs lie in several partitions and a block spans several commits.
    for (let c = 0; c < 20; c++) {
      const back = ((c * 7) % 30) * day;
      const items = Array.from({ length: 10 }, (_, i) => ({ value: { message: `commit ${c} log ${i}`, level: 'info', timestamp: new Date(now - back - i * 1000).toISOString() } }));
      await s.app.services.logs.ingest(project.id, 'enterprise', items);
      await s.app.services.logs.drain();
    }
    const before = s.app.services.store.builtBlocks();
    while ((await s.app.services.logs.buildIndex()) > 0);
    const after = s.app.services.store.builtBlocks();
    // PostgreSQL named each block's time range from its commits; SQLite reads by seq alone.
    expect(after.timed - before.timed).toBe(engine === 'postgres' ? Math.floor(200 / BLOCK) : 0);
    const blocks = await s.database.db.selectFrom('log_blocks').select(['first_seq', 'last_seq', 'min_ts', 'max_ts', 'logs']).where('project_id', '=', project.id).orderBy('first_seq').execute();
    expect(blocks.length).toBe(Math.floor(200 / BLOCK));
    for (const b of blocks) {
      const truth = await s.database.db
        .selectFrom('logs')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('ts').as('min'), eb.fn.max('ts').as('max')])
        .where('project_id', '=', project.id)
        .where('seq', '>=', b.first_seq)
        .where('seq', '<=', b.last_seq)
        .executeTakeFirstOrThrow();
      expect({ logs: Number(b.logs), min: Number(b.min_ts), max: Number(b.max_ts) }).toEqual({ logs: BLOCK, min: Number(truth.min), max: Number(truth.max) });
      expect(Number(truth.n)).toBe(BLOCK);
    }
    // A search for one log of each block's oldest commit finds it through the index.
    const found = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent('"commit 0 log 9"')}&from=0`, { token: owner.accessToken });
    expect(found.status).toBe(200);
    expect((found.body.data as { message: string }[]).map((l) => l.message)).toEqual(['commit 0 log 9']);
  }, 120_000);
});
