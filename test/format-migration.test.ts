/**
 * Migration 0022 on a database with summarised blocks: the filter's format moves from a row of
 * log_block_blooms (part 2,000,000; no row: format 1) into log_blocks.format, and back on the way
 * down. A needle search answers the same on either side of it.
 */
import { expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import { createProject, describeEngines, ingest, signup, useServer } from './harness.js';

const BLOCK = 16;
const FORMAT_PART = 2_000_000;

describeEngines('migration 0022 (the filter format in log_blocks) over existing blocks', (engine) => {
  const s = useServer(engine, { env: { INDEX_BLOCK_LOGS: String(BLOCK), INDEX_INTERVAL: '1h' } });

  it('keeps each block\'s format, format rows and all, both ways', async () => {
    const owner = await signup(s);
    const project = await createProject(s, owner, 'formats');
    const logs = Array.from({ length: 2 * BLOCK }, (_, i) => ({ message: `line ${i}`, metadata: { reqId: `req-${i}` } }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(2);
    const db = s.database.db;
    const formats = async () =>
      (await db.selectFrom('log_blocks').select(['first_seq', 'format']).where('project_id', '=', project.id).orderBy('first_seq').execute()).map((b) => Number(b.format));
    const formatRows = async () =>
      (await db.selectFrom('log_block_blooms').select(['first_seq', 'bits']).where('project_id', '=', project.id).where('part', '=', FORMAT_PART).orderBy('first_seq').execute()).map((r) => [Number(r.first_seq), [...r.bits]]);
    const search = async () => {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent('@reqId:req-20')}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((l: { message: string }) => l.message);
    };
    expect(await formats()).toEqual([2, 2]);
    expect(await formatRows()).toEqual([]);
    expect(await search()).toEqual(['line 20']);

    // Down: each block of format 2 gets its format row back, as servers before 0022 kept it.
    await migrateTo(db, '0021_log_blocks_max_ts');
    expect(await formatRows()).toEqual([[1, [2]], [1 + BLOCK, [2]]]);
    // The first block as one summarised before formats were kept (no row: format 1).
    await db.deleteFrom('log_block_blooms').where('project_id', '=', project.id).where('part', '=', FORMAT_PART).where('first_seq', '=', 1).execute();

    // 0022 again, then whatever came after it.
    expect((await migrateToLatest(db)).applied[0]).toBe('0022_log_blocks_format');
    expect(await formats()).toEqual([1, 2]);
    expect(await formatRows()).toEqual([]);
    expect(await search()).toEqual(['line 20']);
  });
});
