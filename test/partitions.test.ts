/**
 * PostgreSQL's daily partitions of `logs` (migration 0006, src/features/logs/store/partitions.ts): the
 * window of partitions, the default partition, moving its rows into a new partition, retention by
 * whole partitions with an exact logCount, and the migration over existing rows. (SQLite keeps one
 * unpartitioned table, so this runs on PostgreSQL only.)
 */
import { afterEach, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connect.js';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import { DAY_MS, dayOf, ensurePartitions, isPartitioned, listPartitions, partitionName, partitionWindow } from '../src/features/logs/store/partitions.js';
import { createProject, createTestDatabase, describeEngines, ingest, setPlan, signup, startServer, type TestServer } from './harness.js';

const HOUR = 3_600_000;
const ENV = { RETENTION_DAYS_FREE: '5', RETENTION_DAYS_STARTER: '10', RETENTION_DAYS_PRO: '30' };

describeEngines('daily partitions of logs', (engine) => {
  if (engine !== 'postgres') {
    it.skip('runs on PostgreSQL only (SQLite keeps one unpartitioned table)', () => {});
    return;
  }
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  const server = async () => (s = await startServer(engine, { env: ENV }));

  const names = async (srv: TestServer) => (await listPartitions(srv.database.db)).map((p) => p.name);
  const days = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => partitionName(from + i));
  const ensure = async (srv: TestServer, db = srv.database.db) => ensurePartitions(db, await partitionWindow(db, srv.config.retentionDays, srv.clock.now()));
  /** Where a project's logs are stored: partition name → count. */
  const placement = async (srv: TestServer, projectId: string) => {
    const { rows } = await sql<{ part: string; n: number }>`select tableoid::regclass::text as part, count(*) as n from logs where project_id = ${projectId} group by 1`.execute(srv.database.db);
    return Object.fromEntries(rows.map((r) => [r.part, Number(r.n)]));
  };
  const logCount = async (srv: TestServer, projectId: string) =>
    Number((await srv.database.db.selectFrom('projects').select('log_count').where('id', '=', projectId).executeTakeFirstOrThrow()).log_count);
  /** What retention said it did with whole partitions. */
  const partitionLog = (srv: TestServer) =>
    srv.logs
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.includes('retention removed expired log partitions'))
      .map((line) => JSON.parse(line) as { deleted: number; emptied: string[]; dropped: string[] })
      .map(({ deleted, emptied, dropped }) => ({ deleted, emptied, dropped }));
  const rowCount = async (srv: TestServer, projectId: string) => Object.values(await placement(srv, projectId)).reduce((a, b) => a + b, 0);

  it('makes partitions from the longest retention in use to three days ahead, and a default partition', async () => {
    const srv = await server();
    const today = dayOf(srv.clock.now());
    expect(await isPartitioned(srv.database.db)).toBe(true);
    // At start no project exists: today and the next three days.
    expect(await names(srv)).toEqual(days(today, today + 3));
    const { rows } = await sql<{ bound: string }>`select pg_get_expr(c.relpartbound, c.oid) as bound from pg_class c where c.relname = 'logs_default'`.execute(srv.database.db);
    expect(rows[0]?.bound).toBe('DEFAULT');

    const u = await signup(srv);
    await createProject(srv, u);
    expect((await ensure(srv)).created).toEqual(days(today - 5, today - 1).reverse()); // free: 5 days
    expect(await names(srv)).toEqual(days(today - 5, today + 3));
    await setPlan(srv, u.id, 'pro');
    await ensure(srv);
    expect(await names(srv)).toEqual(days(today - 30, today + 3));
    expect((await ensure(srv)).created).toEqual([]); // nothing left to do
    // Every partition carries the three indexes of the parent.
    const { rows: indexes } = await sql<{ n: number }>`select count(*) as n from pg_indexes where tablename = ${partitionName(today - 17)}`.execute(srv.database.db);
    expect(Number(indexes[0]!.n)).toBe(3);
  });

  it('the hourly round truncates a partition emptied before it ran (rows packed and vacuumed by an earlier process), and leaves the others', async () => {
    const srv = await server();
    const u = await signup(srv);
    const p = await createProject(srv, u);
    const today = partitionName(dayOf(srv.clock.now()));
    const yesterday = partitionName(dayOf(srv.clock.now()) - 1);
    await ensure(srv);
    const logs = Array.from({ length: 2000 }, (_, i) => ({ message: `old ${i} ${'x'.repeat(200)}`, timestamp: srv.clock.now() - 86_400_000 - i }));
    expect((await ingest(srv, p.apiKey, logs)).status).toBe(202);
    expect((await ingest(srv, p.apiKey, { message: 'today' })).status).toBe(202);
    const size = async (name: string) => Number((await sql<{ n: string }>`select pg_total_relation_size(${name}::regclass) as n`.execute(srv.database.db)).rows[0]!.n);
    const fresh = await size(partitionName(dayOf(srv.clock.now()) + 2));
    // Yesterday's rows leave as packing leaves them: deleted, then vacuumed by a process gone since.
    await sql`delete from ${sql.id(yesterday)}`.execute(srv.database.db);
    await sql`vacuum ${sql.id(yesterday)}`.execute(srv.database.db);
    expect(await size(yesterday)).toBeGreaterThan(fresh);
    await srv.app.services.store.maintain();
    expect(await size(yesterday)).toBe(fresh);
    expect(await placement(srv, p.id)).toEqual({ [today]: 1 });
  });

  it('a partition that packing left with a few rows in many pages is rewritten to their size, its rows kept, and one holding more is left alone', async () => {
    const srv = await server();
    const u = await signup(srv);
    const p = await createProject(srv, u);
    const today = partitionName(dayOf(srv.clock.now()));
    const size = async (name: string) => Number((await sql<{ n: string }>`select pg_total_relation_size(${name}::regclass) as n`.execute(srv.database.db)).rows[0]!.n);
    const fresh = await size(partitionName(dayOf(srv.clock.now()) + 2));
    // A burst packing has taken since: 40,000 rows of ~600 bytes (seqs far above the project's), deleted and vacuumed.
    const burst = async (rows: number) => {
      await sql`insert into ${sql.id(today)} (project_id, seq, ts, received_at, level, source, message, metadata)
        select ${p.id}, 1000000 + g, ${srv.clock.now()}, ${srv.clock.now()}, 2, 'burst', repeat('x', 600), '{}' from generate_series(1, ${rows}) g`.execute(srv.database.db);
    };
    await burst(40_000);
    // The rows left come after the burst, in its last pages, as a day's newest rows do: VACUUM cannot cut them off.
    expect((await ingest(srv, p.apiKey, [{ message: 'kept one', metadata: { n: 1 } }, { message: 'kept two' }])).status).toBe(202);
    await sql`delete from ${sql.id(today)} where source = 'burst'`.execute(srv.database.db);
    await sql`vacuum ${sql.id(today)}`.execute(srv.database.db);
    expect(await size(today)).toBeGreaterThan(20 * 1024 * 1024);
    await srv.app.services.store.maintain();
    expect(await size(today)).toBeLessThan(fresh + 256 * 1024);
    expect(await placement(srv, p.id)).toEqual({ [today]: 2 });
    const page = await srv.request('GET', `/v1/projects/${p.id}/logs`, { token: u.accessToken });
    expect(page.body.data.map((l: { message: string; metadata: unknown }) => [l.message, l.metadata])).toEqual([['kept two', {}], ['kept one', { n: 1 }]]);
    // Still taking logs after it.
    expect((await ingest(srv, p.apiKey, { message: 'after' })).status).toBe(202);
    expect(await placement(srv, p.id)).toEqual({ [today]: 3 });

    // More rows than a sparse partition holds: left as it is, however large.
    await sql`delete from ${sql.id(today)}`.execute(srv.database.db);
    await burst(40_000);
    await sql`delete from ${sql.id(today)} where seq <= 1000000 + 31000`.execute(srv.database.db);
    await sql`vacuum ${sql.id(today)}`.execute(srv.database.db);
    const large = await size(today);
    await srv.app.services.store.maintain();
    expect(await size(today)).toBe(large);
    expect(await rowCount(srv, p.id)).toBe(9000);
  });

  it('a log far in the past or the future lands in the default partition and is still found', async () => {
    const srv = await server();
    const u = await signup(srv);
    const p = await createProject(srv, u);
    expect((await ingest(srv, p.apiKey, [{ message: 'ancient', timestamp: '2001-02-03T04:05:06Z' }, { message: 'today' }])).status).toBe(202);
    expect(await placement(srv, p.id)).toEqual({ logs_default: 1, [partitionName(dayOf(srv.clock.now()))]: 1 });
    const found = await srv.request('GET', `/v1/projects/${p.id}/logs?from=2001-01-01T00:00:00Z&to=2001-12-31T00:00:00Z`, { token: u.accessToken });
    expect(found.body.data.map((l: { message: string }) => l.message)).toEqual(['ancient']);
    const newest = await srv.request('GET', `/v1/projects/${p.id}/logs`, { token: u.accessToken });
    expect(newest.body.data.map((l: { message: string }) => l.message)).toEqual(['today', 'ancient']);

    // Thirty days on (no partition made meanwhile): a log of "now" has no partition either.
    srv.clock.advance(30 * 86_400_000);
    expect((await ingest(srv, p.apiKey, { message: 'from the future' })).status).toBe(202);
    expect((await placement(srv, p.id)).logs_default).toBe(2);
    const login = await srv.request('POST', '/v1/auth/login', { body: { email: u.email, password: u.password } });
    const future = await srv.request('GET', `/v1/projects/${p.id}/logs?from=${srv.clock.now() - HOUR}`, { token: login.body.accessToken });
    expect(future.body.data.map((l: { message: string }) => l.message)).toEqual(['from the future']);
    expect(await logCount(srv, p.id)).toBe(3);
  });

  it('making a partition moves the default partition\'s rows of that day into it, also when two nodes race', async () => {
    const srv = await server();
    const u = await signup(srv);
    const p = await createProject(srv, u);
    const old = (dayOf(srv.clock.now()) - 20) * DAY_MS + 12 * HOUR;
    const logs = [...Array.from({ length: 3 }, (_, i) => ({ message: `old ${i}`, timestamp: old + i * 1000 })), { message: 'new 0' }, { message: 'new 1' }];
    expect((await ingest(srv, p.apiKey, logs)).body.accepted).toBe(5);
    await ensure(srv); // free: five days back, so day -20 stays in the default partition
    expect((await placement(srv, p.id)).logs_default).toBe(3);

    await setPlan(srv, u.id, 'pro');
    // A second node on the same database makes partitions at the same moment.
    const other = openDatabase(srv.config);
    try {
      const [a, b] = await Promise.all([ensure(srv), ensure(srv, other.db)]);
      const created = [...a.created, ...b.created];
      expect(new Set(created).size).toBe(created.length); // each made once
      expect(created).toContain(partitionName(dayOf(old)));
      expect(a.moved + b.moved).toBe(3);
    } finally {
      await other.close();
    }
    const today = dayOf(srv.clock.now());
    expect(await names(srv)).toEqual(days(today - 30, today + 3));
    expect(await placement(srv, p.id)).toEqual({ [partitionName(dayOf(old))]: 3, [partitionName(today)]: 2 });
    expect(await logCount(srv, p.id)).toBe(5);
    const found = await srv.request('GET', `/v1/projects/${p.id}/logs?to=${old + HOUR}`, { token: u.accessToken });
    expect(found.body.data.map((l: { message: string }) => l.message)).toEqual(['old 2', 'old 1', 'old 0']);
  });

  it('retention empties and drops whole partitions once every project in them is past its retention; logCount stays exact', async () => {
    const srv = await server();
    const free = await signup(srv);
    const pro = await signup(srv);
    await setPlan(srv, pro.id, 'pro');
    const pf = await createProject(srv, free, 'free');
    const pp = await createProject(srv, pro, 'pro');
    await ensure(srv); // pro in use: thirty days back
    const today = dayOf(srv.clock.now());
    const noon = (daysAgo: number) => (today - daysAgo) * DAY_MS + 12 * HOUR;
    const batch = (n: number, ts: number, tag: string) => Array.from({ length: n }, (_, i) => ({ message: `${tag} ${i}`, timestamp: ts + i * 1000 }));
    // Day -10: the free project only. Day -15: both. Day -20: the pro project only. And recent logs.
    expect((await ingest(srv, pf.apiKey, [...batch(10, noon(10), 'f10'), ...batch(2, noon(15), 'f15'), ...batch(4, srv.clock.now() - 60_000, 'f-now')])).body.accepted).toBe(16);
    expect((await ingest(srv, pp.apiKey, [...batch(1, noon(15), 'p15'), ...batch(6, noon(20), 'p20'), ...batch(2, srv.clock.now() - 60_000, 'p-now')])).body.accepted).toBe(9);
    const d10 = partitionName(today - 10);
    const d15 = partitionName(today - 15);
    const d20 = partitionName(today - 20);
    expect(await placement(srv, pf.id)).toMatchObject({ [d10]: 10, [d15]: 2 });

    // Day -10 goes whole (TRUNCATE; kept, as it is inside the pro window); day -15 keeps the pro
    // log, and the batches delete the free ones; day -20 is within pro's 30 days.
    expect(await srv.app.services.logs.runRetention()).toBe(12);
    expect(partitionLog(srv)).toEqual([{ deleted: 10, emptied: [d10], dropped: [] }]);
    let parts = await names(srv);
    expect(parts).toContain(d10);
    expect(await placement(srv, pf.id)).not.toHaveProperty(d10);
    expect(await placement(srv, pp.id)).toMatchObject({ [d15]: 1, [d20]: 6 });
    expect(await logCount(srv, pf.id)).toBe(4);
    expect(await logCount(srv, pp.id)).toBe(9);

    // The pro user moves to free: days -15 and -20 expire whole, and with no plan in use keeping more
    // than five days, every partition older than that is dropped.
    await setPlan(srv, pro.id, 'free');
    expect(await srv.app.services.logs.runRetention()).toBe(7);
    const second = partitionLog(srv)[1]!;
    expect(second.deleted).toBe(7);
    expect(second.emptied).toEqual([d20, d15]);
    expect(second.dropped).toEqual(expect.arrayContaining([d20, d15, d10]));
    parts = await names(srv);
    for (const gone of [d10, d15, d20]) expect(parts).not.toContain(gone);
    expect(parts[0]).toBe(partitionName(dayOf(srv.clock.now() - 5 * DAY_MS)));
    expect(await logCount(srv, pf.id)).toBe(4);
    expect(await logCount(srv, pp.id)).toBe(2);
    expect(await rowCount(srv, pf.id)).toBe(4);
    expect(await rowCount(srv, pp.id)).toBe(2);
    const left = await srv.request('GET', `/v1/projects/${pp.id}/logs`, { token: pro.accessToken });
    expect(left.body.data.map((l: { message: string }) => l.message)).toEqual(['p-now 1', 'p-now 0']);
    // The per-minute rollup lost the emptied days' logs with them.
    for (const [id, n] of [[pf.id, 4], [pp.id, 2]] as const) {
      expect(Number((await srv.database.db.selectFrom('log_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('project_id', '=', id).executeTakeFirstOrThrow()).n)).toBe(n);
      expect(Number((await srv.database.db.selectFrom('log_source_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('project_id', '=', id).executeTakeFirstOrThrow()).n)).toBe(n);
    }
    expect(await srv.app.services.logs.runRetention()).toBe(0);
  });

  it('a partition that stays locked is left to the batch deletes, and dropped at a later round', async () => {
    const srv = await server();
    const u = await signup(srv);
    const p = await createProject(srv, u);
    const today = dayOf(srv.clock.now());
    const old = partitionName(today - 10);
    await srv.database.db.transaction().execute(async (tx) => {
      // Made by hand (free keeps five days, so the window does not reach day -10).
      await sql`create table ${sql.id(old)} partition of logs for values from (${sql.lit((today - 10) * DAY_MS)}) to (${sql.lit((today - 9) * DAY_MS)})`.execute(tx);
    });
    const ts = (today - 10) * DAY_MS + 12 * HOUR;
    expect((await ingest(srv, p.apiKey, [...Array.from({ length: 8 }, (_, i) => ({ message: `old ${i}`, timestamp: ts + i })), { message: 'new' }])).body.accepted).toBe(9);
    expect((await placement(srv, p.id))[old]).toBe(8);

    // A long reader holds the partition: TRUNCATE cannot have it within its lock timeout.
    const reader = new pg.Client({ connectionString: srv.env.DATABASE_URL });
    await reader.connect();
    try {
      await reader.query('begin');
      await reader.query(`lock table ${old} in access share mode`);
      expect(await srv.app.services.logs.runRetention()).toBe(8); // by the batches
      expect(srv.logs.join('')).toContain('log partitions busy');
      expect(await logCount(srv, p.id)).toBe(1);
      expect(await names(srv)).toContain(old);
    } finally {
      await reader.query('rollback');
      await reader.end();
    }
    expect(await srv.app.services.logs.runRetention()).toBe(0);
    expect(await names(srv)).not.toContain(old);
    expect(await logCount(srv, p.id)).toBe(1);
    expect(await rowCount(srv, p.id)).toBe(1);
  });

  it('the migration keeps existing rows, placing each in its day\'s partition or the default one', async () => {
    const testDb = await createTestDatabase(engine);
    const database = openDatabase(loadConfig(testDb.env));
    try {
      const db = database.db;
      await migrateTo(db, '0005_idempotency');
      expect(await isPartitioned(db)).toBe(false);
      const now = Date.now();
      const today = dayOf(now);
      const stamps = [now - 3 * DAY_MS, now - 3 * DAY_MS + 1, now - 60_000, now, Date.UTC(2001, 1, 3), now - 500 * DAY_MS];
      const rows = stamps.map((ts, i) => ({ project_id: 'proj_migrated', seq: i + 1, ts, received_at: now, level: i % 6, source: i % 2 ? 'api' : null, message: `row ${i}`, metadata: i % 2 ? `{"i":${i}}` : null }));
      await db.insertInto('logs').values(rows).execute();

      // 0006 and 0007 come first; later migrations (0008 does nothing on PostgreSQL) follow them.
      expect((await migrateToLatest(db)).applied.slice(0, 2)).toEqual(['0006_partition_logs', '0007_log_counts']);
      // 0007 filled the per-minute rollup from the logs already there.
      const rolled = await db.selectFrom('log_counts').select(['minute', 'level', 'n']).where('project_id', '=', 'proj_migrated').orderBy('minute').orderBy('level').execute();
      expect(rolled.map((r) => [Number(r.minute), Number(r.level), Number(r.n)])).toEqual(rows.map((r) => [r.ts - (r.ts % 60_000), r.level, 1]).sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!));
      expect(await isPartitioned(db)).toBe(true);
      expect(await db.selectFrom('logs').selectAll().orderBy('seq').execute()).toEqual(rows);
      const { rows: placed } = await sql<{ seq: number; part: string }>`select seq, tableoid::regclass::text as part from logs order by seq`.execute(db);
      expect(placed.map((r) => r.part)).toEqual([
        partitionName(dayOf(stamps[0]!)),
        partitionName(dayOf(stamps[1]!)),
        partitionName(dayOf(stamps[2]!)),
        partitionName(today),
        'logs_default',
        'logs_default', // older than the 400 days partitions ever reach back
      ]);
      expect((await listPartitions(db)).map((p) => p.name)).toEqual(expect.arrayContaining(days(today, today + 3)));
      const { rows: indexes } = await sql<{ indexname: string; indexdef: string }>`select indexname, indexdef from pg_indexes where tablename = 'logs' order by 1`.execute(db);
      expect(indexes.map((i) => i.indexname)).toEqual(['logs_project_level_ts', 'logs_project_seq', 'logs_project_ts']);
      expect(indexes.find((i) => i.indexname === 'logs_project_seq')!.indexdef).toMatch(/UNIQUE.*\(project_id, seq, ts\)/);

      // And back down: one plain table again, rows intact.
      await migrateTo(db, '0005_idempotency');
      expect(await isPartitioned(db)).toBe(false);
      expect(await db.selectFrom('logs').selectAll().orderBy('seq').execute()).toEqual(rows);
    } finally {
      await database.close();
      await testDb.drop();
    }
  });
});
