/**
 * A newest-first page stays exact when a block is packed while the page is being read. The page
 * reads the pack list (to bound its read of the rows), then the rows, then the pack list again: a
 * block packed after the first read has left the rows by the time they are read, and only the
 * second read of the pack list finds it (store/packs/read.ts, "rows first, packs second"). Here a
 * second store on the same database reads the page, and a Kysely plugin on its reads packs the
 * newest complete block, through the server's store, right after the page's first read of the pack
 * list comes back: the moment between the two reads, made to happen every time.
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { expect, it } from 'vitest';
import type { LogStore } from '../src/features/logs/store/index.js';
import { createPostgresLogStore } from '../src/features/logs/store/postgres.js';
import { createSqliteLogStore } from '../src/features/logs/store/sqlite.js';
import { openDatabase } from '../src/db/connect.js';
import { describeEngines, useAccount, useProject, useServer } from './harness.js';

const BLOCK = 16;
const LOGS = 5 * BLOCK;

/** Runs `then` once, when a read of the pack list (rows with `packed` and `max_ts`) comes back. */
class AfterPackList implements KyselyPlugin {
  then: (() => Promise<void>) | undefined;
  fired = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const row = args.result.rows[0];
    const then = this.then;
    if (then && row && 'packed' in row && 'max_ts' in row) {
      this.then = undefined;
      this.fired++;
      await then();
    }
    return args.result;
  }
}

describeEngines('a block packed in the middle of a newest-first page', (engine) => {
  const s = useServer(engine, { env: { INDEX_BLOCK_LOGS: String(BLOCK), COMPACT_AFTER: 'off', INDEX_INTERVAL: '1h', DEFAULT_PLAN: 'enterprise' } });
  const owner = useAccount(s);
  const project = useProject(s, owner, 'race');

  it('is still found: the page holds every log once', async () => {
    const base = Date.now() - 3_600_000;
    const items = Array.from({ length: LOGS }, (_, i) => ({ value: { message: `log ${i + 1}`, level: 'info', timestamp: new Date(base + i * 1000).toISOString() } }));
    await s.app.services.logs.ingest(project.id, 'enterprise', items);
    await s.app.services.logs.drain();
    while ((await s.app.services.logs.buildIndex()) > 0);
    const server: LogStore = s.app.services.store;
    const blocks = await server.blocksToPack(Date.now() + 60_000, 64);
    expect(blocks.map((b) => b.firstSeq).sort((a, b) => a - b)).toEqual([1, 17, 33, 49, 65]);
    const packBlock = async (first: number) => {
      const b = blocks.find((x) => x.firstSeq === first)!;
      const prepared = await server.preparePack(project.id, b.firstSeq, b.lastSeq, { minTs: b.minTs, maxTs: b.maxTs });
      expect(await server.savePack(prepared!)).toBe('packed');
    };
    // The three oldest blocks packed; the two newest (seqs 49 to 80) in rows.
    for (const first of [1, 17, 33]) await packBlock(first);

    const hook = new AfterPackList();
    const deps = { config: s.config, now: () => Date.now(), log: s.app.log };
    // Its own connection: the hook packs through the server's while this one's read is still open.
    const own = openDatabase(s.config);
    const reader =
      engine === 'sqlite'
        ? createSqliteLogStore(own.db.withPlugin(hook), own.sqliteFile!, deps)
        : createPostgresLogStore(own.db, own.db.withPlugin(hook), s.config.databaseUrl!, deps);
    try {
      // The newest complete block is packed between the page's first read of the pack list and its read of the rows.
      hook.then = () => packBlock(65);
      const keys = await reader.pageKeys(project.id, {}, undefined, 40);
      expect(hook.fired).toBe(1);
      expect(keys.map((k) => k.seq)).toEqual(Array.from({ length: 40 }, (_, i) => LOGS - i));
      const rows = await reader.rowsAt(project.id, keys);
      expect(rows.map((r) => r.message)).toEqual(keys.map((k) => `log ${k.seq}`));
      // And the page the API answers, now that the block is packed.
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?limit=40`, { token: owner.accessToken });
      expect(res.status).toBe(200);
      expect((res.body.data as { message: string }[]).map((l) => l.message)).toEqual(keys.map((k) => `log ${k.seq}`));
    } finally {
      await reader.close();
      await own.close();
    }
  }, 60_000);
});
