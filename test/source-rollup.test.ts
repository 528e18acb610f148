/**
 * The per-minute rollup by level and source (log_source_counts, migration 0011) that stats with
 * groupBy=source read. It must always say what counting the logs says: after ingest, with partial
 * minutes at both ends of the range and a level filter, after retention deletes logs, when a
 * project is deleted, and when the migration fills it from logs already stored.
 */
import { afterEach, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import type { Db } from '../src/db/types.js';
import { createProject, describeEngines, errorOf, ingest, setPlan, signup, startServer, type Account, type TestServer } from './harness.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** The rollup's rows and the same counts taken from the logs, as sorted "minute level source n" lines. */
async function rollupAndTruth(db: Db, projectId: string): Promise<{ rollup: string[]; truth: string[] }> {
  const rollup = await db.selectFrom('log_source_counts').select(['minute', 'level', 'source', 'n']).where('project_id', '=', projectId).execute();
  const { rows: truth } = await sql<{ minute: number; level: number; source: string; n: number }>`
    select ts - (ts % 60000) as minute, level, coalesce(source, '') as source, count(*) as n
    from logs where project_id = ${projectId} group by 1, 2, 3`.execute(db);
  const lines = (rows: { minute: number; level: number; source: string; n: number }[]) => rows.map((r) => `${Number(r.minute)} ${Number(r.level)} ${r.source} ${Number(r.n)}`).sort();
  return { rollup: lines(rollup), truth: lines(truth) };
}

describeEngines('stats by source from the per-minute rollup', (engine) => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** Logs over a few minutes: sources api, web, one with odd characters, and none; every level. */
  function spread(start: number, n: number) {
    const sources = ['api', 'web', 'api', 'ünïcode src', undefined];
    const levels = ['debug', 'info', 'warn', 'error', 'info'];
    return Array.from({ length: n }, (_, i) => ({
      message: `log ${i}`,
      timestamp: start + i * 7_919, // ~8 s apart: several per minute, minutes cut anywhere
      level: levels[i % levels.length],
      ...(sources[(i * 3) % sources.length] === undefined ? {} : { source: sources[(i * 3) % sources.length] }),
    }));
  }

  async function statsBody(server: TestServer, account: Account, projectId: string, params: string) {
    const res = await server.request('GET', `/v1/projects/${projectId}/logs/stats?${params}`, { token: account.accessToken });
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  it('answers as counting the logs does, with partial minutes at both ends and a level filter; kept through retention and project deletion', async () => {
    s = await startServer(engine, { env: { RETENTION_DAYS_FREE: '2' } });
    const owner = await signup(s);
    const project = await createProject(s, owner, 'rollup');
    const other = await createProject(s, await signup(s), 'other');
    const now = s.clock.now();
    const start = now - 2 * 3_600_000 + 12_345; // not on a minute
    // Two requests into one project, the second adding to minutes the first already counted.
    expect((await ingest(s, project.apiKey, spread(start, 300))).status).toBe(202);
    expect((await ingest(s, project.apiKey, spread(start + 3_001, 200))).status).toBe(202);
    expect((await ingest(s, other.apiKey, spread(start, 50))).status).toBe(202);
    // Old logs retention will take.
    expect((await ingest(s, project.apiKey, spread(now - 3 * DAY, 40))).status).toBe(202);

    let { rollup, truth } = await rollupAndTruth(s.database.db, project.id);
    expect(rollup.length).toBeGreaterThan(20);
    expect(rollup).toEqual(truth);

    // A range that cuts minutes at both ends, 5-minute buckets, with and without a level filter:
    // the rollup path (no query) against the app's count of the same logs (query=*).
    const from = start + 95_000;
    const to = start + 30 * MINUTE + 20_001; // within the logs (they span ~40 minutes)
    for (const extra of ['', '&level=warn', '&level=debug,error']) {
      const params = `from=${from}&to=${to}&interval=5m&groupBy=source${extra}`;
      const bySql = await statsBody(s, owner, project.id, params);
      const byApp = await statsBody(s, owner, project.id, `${params}&query=${encodeURIComponent('*')}`);
      expect(bySql, extra).toEqual(byApp);
      const grouped = bySql.buckets.reduce((n, b) => n + Object.values(b.groups ?? {}).reduce((x, y) => x + y, 0), 0);
      expect(grouped, extra).toBe(bySql.buckets.reduce((n, b) => n + b.total, 0));
      expect(grouped, extra).toBeGreaterThan(0);
    }
    // Names: the source as sent, and "(none)" for logs without one.
    const all = await statsBody(s, owner, project.id, `from=${start}&to=${now}&interval=1d&groupBy=source`);
    const names = new Set(all.buckets.flatMap((b) => Object.keys(b.groups ?? {})));
    expect([...names].sort()).toEqual(['(none)', 'api', 'web', 'ünïcode src']);

    // Retention deletes the old logs in batches: the rollup loses exactly them.
    expect(await s.app.services.logs.runRetention(7)).toBe(40);
    ({ rollup, truth } = await rollupAndTruth(s.database.db, project.id));
    expect(rollup).toEqual(truth);
    expect(rollup.every((line) => Number(line.split(' ')[0]) > now - 2 * DAY)).toBe(true);

    // Deleting the project takes its rollup with it, and leaves the other project's.
    const res = await s.request('DELETE', `/v1/projects/${project.id}`, { token: owner.accessToken });
    expect(res.status).toBe(204);
    expect((await rollupAndTruth(s.database.db, project.id)).rollup).toEqual([]);
    ({ rollup, truth } = await rollupAndTruth(s.database.db, other.id));
    expect(rollup.length).toBeGreaterThan(0);
    expect(rollup).toEqual(truth);
  });

  it('a tenant with any number of values holds bounded memory: past GROUP_BY_MAX_VALUES values count under "(other)", and too many sources are a 400', async () => {
    s = await startServer(engine, { env: { GROUP_BY_MAX_VALUES: '10' } });
    const owner = await signup(s);
    await setPlan(s, owner.id, 'enterprise');
    const project = await createProject(s, owner, 'many values');
    const t = s.clock.now() - 3_600_000;
    // 150 sources and 150 users, each in one log; user u0 in 20 logs more, so it is the top value.
    const logs = Array.from({ length: 150 }, (_, i) => ({ message: `m ${i}`, timestamp: t + i, source: `src-${i}`, metadata: { user: `u${i}` } }));
    for (let i = 0; i < 20; i++) logs.push({ message: 'again', timestamp: t + 200 + i, source: 'src-0', metadata: { user: 'u0' } });
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    const range = `from=${t - 1}&to=${t + 1000}&interval=1d`;
    const byUser = await statsBody(s, owner, project.id, `${range}&groupBy=${encodeURIComponent('@user')}`);
    const groups = byUser.buckets.find((b) => b.total > 0)!.groups!;
    // Every log is still counted; u0 keeps its name, and no more than the cap of names is kept.
    expect(Object.values(groups).reduce((x, y) => x + y, 0)).toBe(170);
    expect(groups.u0).toBe(21);
    expect(groups['(other)']).toBeGreaterThanOrEqual(150 - 10);
    // By source, SQL would hand back 150 rows past the cap of 10 × 10: refused, with the parameter.
    const res = await s.request('GET', `/v1/projects/${project.id}/logs/stats?${range}&groupBy=source`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(400);
    expect(errorOf(res).details).toEqual([expect.objectContaining({ path: 'querystring:/groupBy' })]);
    // A narrower range holds fewer: answered.
    expect((await statsBody(s, owner, project.id, `from=${t - 1}&to=${t + 50}&interval=1d&groupBy=source`)).buckets.some((b) => b.total === 51)).toBe(true);
  });

  it('migration 0011 fills the rollup from the logs already stored', async () => {
    s = await startServer(engine);
    const owner = await signup(s);
    await setPlan(s, owner.id, 'pro');
    const project = await createProject(s, owner, 'before 0011');
    expect((await ingest(s, project.apiKey, spread(s.clock.now() - 3_600_000, 120))).status).toBe(202);
    const db = s.database.db;
    await migrateTo(db, '0010_alert_query');
    expect((await sql<{ n: number }>`select count(*) as n from logs where project_id = ${project.id}`.execute(db)).rows[0]!.n).toBeTruthy();
    expect((await migrateToLatest(db)).applied).toContain('0011_log_source_counts');
    const { rollup, truth } = await rollupAndTruth(db, project.id);
    expect(rollup.length).toBeGreaterThan(10);
    expect(rollup).toEqual(truth);
  });
});

it('one pass counts both rollups: per minute and level, and per minute, level and source (none under the empty name)', async () => {
  const { minuteCounts } = await import('../src/features/logs/store/batch.js');
  const { levels, sources } = minuteCounts([0, 1, MINUTE, MINUTE + 5, 59_999], [2, 2, 2, 4, 2], ['a', null, 'a', 'a', 'a']);
  expect(sources.n.map((n, i) => `${sources.minute[i]} ${sources.level[i]} ${sources.source[i]} ${n}`).sort()).toEqual([`0 2  1`, `0 2 a 2`, `${MINUTE} 2 a 1`, `${MINUTE} 4 a 1`]);
  expect(levels.n.map((n, i) => `${levels.minute[i]} ${levels.level[i]} ${n}`).sort()).toEqual([`0 2 3`, `${MINUTE} 2 1`, `${MINUTE} 4 1`]);
});

describeEngines('a project\'s purge before its deletion', (engine) => {
  it('each step keeps the log count and both rollups exact, then forgets the block summaries (SQLite steps on the writer\'s thread; PostgreSQL purges nothing ahead)', async () => {
    const s = await startServer(engine, { env: { INDEX_BLOCK_LOGS: '64', INDEX_INTERVAL: '1h' } });
    try {
      const owner = await signup(s);
      const project = await createProject(s, owner, 'purged');
      const start = s.clock.now() - 3_600_000 + 4_321;
      const logs = Array.from({ length: 700 }, (_, i) => ({ message: `log ${i}`, timestamp: start + i * 3_001, level: ['info', 'error', 'warn'][i % 3], ...(i % 4 ? { source: `src-${i % 5}` } : {}) }));
      expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
      const db = s.database.db;
      const store = s.app.services.store;
      expect(await s.app.services.logs.buildIndex()).toBe(10);
      const blocks = async () => Number((await sql<{ n: number }>`select count(*) as n from log_blocks where project_id = ${project.id}`.execute(db)).rows[0]!.n);
      const blooms = async () => Number((await sql<{ n: number }>`select count(*) as n from log_block_blooms where project_id = ${project.id}`.execute(db)).rows[0]!.n);
      expect(await blooms()).toBeGreaterThan(10);
      const countOf = async () => Number((await db.selectFrom('projects').select('log_count').where('id', '=', project.id).executeTakeFirstOrThrow()).log_count);
      const stored = async () => Number((await sql<{ n: number }>`select count(*) as n from logs where project_id = ${project.id}`.execute(db)).rows[0]!.n);
      const levelRollup = async () => {
        const rows = await db.selectFrom('log_counts').select(['minute', 'level', 'n']).where('project_id', '=', project.id).execute();
        const { rows: truth } = await sql<{ minute: number; level: number; n: number }>`select ts - (ts % 60000) as minute, level, count(*) as n from logs where project_id = ${project.id} group by 1, 2`.execute(db);
        const lines = (r: { minute: number; level: number; n: number }[]) => r.map((x) => `${Number(x.minute)} ${Number(x.level)} ${Number(x.n)}`).sort();
        return { rollup: lines(rows), truth: lines(truth) };
      };
      if (engine === 'sqlite') {
        const writer = (store as unknown as { writer: { deleteStep(projectId: string, batch: number, before: number | null): Promise<number> } }).writer;
        for (const step of [250, 250, 200]) {
          const before = await stored();
          const n = await writer.deleteStep(project.id, step, null);
          expect(n).toBe(step);
          expect(await stored()).toBe(before - n);
          expect(await countOf()).toBe(before - n);
          const { rollup, truth } = await rollupAndTruth(db, project.id);
          expect(rollup).toEqual(truth);
          const levels = await levelRollup();
          expect(levels.rollup).toEqual(levels.truth);
        }
        expect(await stored()).toBe(0);
        // With the logs gone, the next steps forget the summaries, 50 blocks at a time.
        expect(await blocks()).toBe(10);
        expect(await writer.deleteStep(project.id, 250, null)).toBe(10);
        expect([await blocks(), await blooms()]).toEqual([0, 0]);
        expect(await writer.deleteStep(project.id, 250, null)).toBe(0);
      }
      await store.purgeProject(project.id);
      expect(await stored()).toBe(engine === 'sqlite' ? 0 : 700);
      expect(await blocks()).toBe(engine === 'sqlite' ? 0 : 10);
      // The deletion itself takes what is left.
      expect((await s.request('DELETE', `/v1/projects/${project.id}`, { token: owner.accessToken })).status).toBe(204);
      expect([await stored(), await blocks(), await blooms()]).toEqual([0, 0, 0]);
    } finally {
      await s.close();
    }
  });
});
