/**
 * Log ids, search cursors and live-tail event ids carry a log's seq. It numbers the logs of one
 * project (1, 2, 3… in commit order) on both engines, so none of them tells a tenant anything about
 * another project's traffic (issue 14, finding 9: on SQLite the seq was the table's global rowid,
 * and a new project's first log had an id in the tens of thousands). Migration 0008 made the SQLite
 * table so without renumbering anything.
 */
import { afterEach, beforeAll, expect, it } from 'vitest';
import { CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely';
import Sqlite from 'better-sqlite3';
import type { DatabaseSchema } from '../src/db/types.js';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import { logId } from '../src/features/logs/present.js';
import * as repo from '../src/features/logs/store/repository.js';
import { sqliteSql } from '../src/features/logs/store/sqlite-sql.js';
import { createProject, describeEngines, ingest, openTail, setPlan, signup, startServer, useAccount, useProject, useServer, type TestServer } from './harness.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** The seq inside a log id (present.ts writes it in Crockford base32). */
function seqOf(id: string): number {
  expect(id).toMatch(/^log_[0-9a-hjkmnp-tv-z]{13}$/);
  return [...id.slice(4)].reduce((n, c) => n * 32 + ALPHABET.indexOf(c), 0);
}

async function ingestOk(s: TestServer, apiKey: string, body: unknown): Promise<void> {
  const res = await ingest(s, apiKey, body);
  expect(res.status, res.text).toBe(202);
}

describeEngines('log ids per project', (engine) => {
  const s = useServer(engine);
  const busy = useAccount(s, { plan: 'enterprise' });
  const busyProject = useProject(s, busy, 'busy');
  const BUSY_LOGS = 3000;

  beforeAll(async () => {
    for (let b = 0; b < BUSY_LOGS / 1000; b++) await ingestOk(s, busyProject.apiKey, Array.from({ length: 1000 }, (_, i) => ({ message: `busy ${b}-${i}` })));
  });

  it("a new tenant's first log is log_0000000000001, and its cursor and tail ids reveal only its own count", async () => {
    const busyNewest = await s.request('GET', `/v1/projects/${busyProject.id}/logs?limit=1`, { token: busy.accessToken });
    expect(seqOf(busyNewest.body.data[0]!.id)).toBe(BUSY_LOGS);

    const tenant = await signup(s);
    const p = await createProject(s, tenant, 'new');
    const tail = await openTail(s, tenant.accessToken, p.id);
    try {
      expect(tail.status).toBe(200);
      await tail.waitFor(() => tail.events.some((e) => e.comment === 'connected'));
      await ingestOk(s, p.apiKey, { message: 'first' });
      const first = await s.request('GET', `/v1/projects/${p.id}/logs`, { token: tenant.accessToken });
      expect(first.status).toBe(200);
      expect(first.body.data.map((l: { id: string }) => l.id)).toEqual(['log_0000000000001']);
      expect(first.body.nextCursor).toBeNull();

      await ingestOk(s, p.apiKey, [{ message: 'second' }, { message: 'third' }]);
      const page = await s.request('GET', `/v1/projects/${p.id}/logs?limit=1`, { token: tenant.accessToken });
      expect(page.body.data.map((l: { id: string; message: string }) => [l.id, l.message])).toEqual([['log_0000000000003', 'third']]);
      // The cursor is opaque to clients, but decodes: every number in it is the log's time or
      // at most this project's own count of logs.
      const cursor = page.body.nextCursor;
      if (cursor === null) throw new Error('the first of three logs at limit=1 came without a next cursor');
      const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
      const timeMs = String(Date.parse(page.body.data[0]!.timestamp));
      for (const n of decoded.match(/\d+/g) ?? []) expect(n === timeMs || Number(n) <= 3, `${n} in the cursor ${decoded}`).toBe(true);
      const rest = await s.request('GET', `/v1/projects/${p.id}/logs?cursor=${encodeURIComponent(cursor)}`, { token: tenant.accessToken });
      expect(rest.body.data.map((l: { id: string }) => l.id)).toEqual(['log_0000000000002', 'log_0000000000001']);

      await tail.waitFor(() => tail.logs().length === 3);
      expect(tail.logs().map((l) => [l.sseId, l.id, l.message])).toEqual([
        ['1', 'log_0000000000001', 'first'],
        ['2', 'log_0000000000002', 'second'],
        ['3', 'log_0000000000003', 'third'],
      ]);
    } finally {
      tail.close();
    }
    // The busy project's numbering went on untouched.
    await ingestOk(s, busyProject.apiKey, { message: 'busy again' });
    const busyAgain = await s.request('GET', `/v1/projects/${busyProject.id}/logs?limit=1`, { token: busy.accessToken });
    expect(seqOf(busyAgain.body.data[0]!.id)).toBe(BUSY_LOGS + 1);
  });

  it("a project's ids are consecutive, in commit order, while another project ingests beside it", async () => {
    const owner = await signup(s);
    await setPlan(s, owner.id, 'enterprise');
    const p = await createProject(s, owner, 'watched');
    const other = await createProject(s, owner, 'beside');
    const ROUNDS = 8;
    const REQUESTS = 5;
    const PER_REQUEST = 25;
    for (let r = 0; r < ROUNDS; r++) {
      // Requests of one round commit in some order (one group commit or several); the next round
      // starts once they are all acknowledged, so all its logs commit after them.
      await Promise.all(
        Array.from({ length: REQUESTS }, (_, k) => [
          ingestOk(s, p.apiKey, Array.from({ length: PER_REQUEST }, (_, i) => ({ message: `r${r} k${k} i${i}` }))),
          ingestOk(s, other.apiKey, Array.from({ length: 7 }, (_, i) => ({ message: `other ${r} ${k} ${i}` }))),
        ]).flat(),
      );
    }
    const total = ROUNDS * REQUESTS * PER_REQUEST;
    const res = await s.request('GET', `/v1/projects/${p.id}/logs?limit=1000`, { token: owner.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    const logs = res.body.data.map((l) => ({ seq: seqOf(l.id), message: l.message }));
    expect(logs.map((l) => l.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const seqByMessage = new Map(logs.map((l) => [l.message, l.seq]));
    let roundMax = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const round: number[] = [];
      for (let k = 0; k < REQUESTS; k++) {
        const seqs = Array.from({ length: PER_REQUEST }, (_, i) => seqByMessage.get(`r${r} k${k} i${i}`)!);
        // One request's logs: consecutive, in the order of its body.
        expect(seqs).toEqual(Array.from({ length: PER_REQUEST }, (_, i) => seqs[0]! + i));
        round.push(...seqs);
      }
      expect(Math.min(...round)).toBe(roundMax + 1);
      roundMax = Math.max(...round);
      expect(roundMax).toBe((r + 1) * REQUESTS * PER_REQUEST);
    }
    const beside = await s.request('GET', `/v1/projects/${other.id}/logs?limit=1000`, { token: owner.accessToken });
    expect(beside.body.data.map((l) => seqOf(l.id)).sort((a, b) => a - b)).toEqual(Array.from({ length: ROUNDS * REQUESTS * 7 }, (_, i) => i + 1));
  });

  it.skipIf(engine !== 'sqlite')('SQLite: newest-first pages, level pages, cursors and tail resumption are index walks within the project (skipped on PostgreSQL: it pins the query plans of SQLite, which PostgreSQL does not share)', async () => {
    // The repository's own queries, captured from a second connection to the same file.
    const captured: CompiledQuery[] = [];
    const conn = new Sqlite(s.database.sqliteFile!);
    const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: conn }), log: (e) => void captured.push(e.query) });
    try {
      const plan = async (run: () => Promise<unknown>) => {
        captured.length = 0;
        await run();
        const q = captured[captured.length - 1]!;
        const rows = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]));
        return rows.rows.map((r) => r.detail).join('; ');
      };
      const id = busyProject.id;
      const now = Date.now();
      expect(await plan(() => repo.findPage(db, id, {}, undefined, 101, sqliteSql))).toBe('SEARCH logs USING INDEX logs_project_ts (project_id=?)');
      expect(await plan(() => repo.findPage(db, id, {}, { ts: now, seq: 10 }, 101, sqliteSql))).toBe('SEARCH logs USING INDEX logs_project_ts (project_id=? AND ts<?)');
      expect(await plan(() => repo.findPage(db, id, { from: now - 60_000, to: now }, undefined, 101, sqliteSql))).toBe('SEARCH logs USING INDEX logs_project_ts (project_id=? AND ts>? AND ts<?)');
      expect(await plan(() => repo.findPage(db, id, { levels: [4] }, undefined, 101, sqliteSql))).toBe('SEARCH logs USING INDEX logs_project_level_ts (project_id=? AND level=?)');
      expect(await plan(() => repo.findPage(db, id, { levels: [4], source: 'api' }, { ts: now, seq: 10 }, 101, sqliteSql))).toBe('SEARCH logs USING INDEX logs_project_level_ts (project_id=? AND level=? AND ts<?)');
      expect(await plan(() => repo.findSince(db, id, 10, undefined, 1000))).toBe('SEARCH logs USING INDEX logs_project_seq (project_id=? AND seq>?)');
      expect(await plan(() => repo.findSince(db, id, 10, 20, 1000))).toBe('SEARCH logs USING INDEX logs_project_seq (project_id=? AND seq>? AND seq<?)');
    } finally {
      await db.destroy();
    }
  });
});

describeEngines('log ids across the migration to per-project seqs', (engine) => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('keeps every log with its id, and new logs continue after each project\'s last seq', async () => {
    s = await startServer(engine);
    const owner = await signup(s);
    await setPlan(s, owner.id, 'enterprise');
    const a = await createProject(s, owner, 'a');
    const b = await createProject(s, owner, 'b');
    // Made before the schema goes back: today's code writes tables 0007 did not have.
    const c = engine === 'sqlite' ? await createProject(s, owner, 'c') : undefined;
    const db = s.database.db;
    await migrateTo(db, '0007_log_counts');

    // Logs as the writer before 0008 numbered them: on SQLite global rowids shared by both projects
    // (a's and b's interleaved, and a gap where a deleted project's logs were); on PostgreSQL per project.
    const t0 = Date.now() - 3_600_000;
    const plan: [string, number][] = [];
    if (engine === 'sqlite') {
      for (let seq = 1; seq <= 1200; seq++) {
        if (seq > 900 && seq <= 1000) continue; // a deleted project's
        plan.push([seq % 3 === 0 ? b.id : a.id, seq]);
      }
    } else {
      for (let i = 1; i <= 800; i++) plan.push([a.id, i]);
      for (let i = 1; i <= 400; i++) plan.push([b.id, i]);
    }
    const rows = plan.map(([project_id, seq], i) => ({ project_id, seq, ts: t0 + i, received_at: t0 + i, level: i % 6, source: i % 2 ? 'api' : null, message: `old ${project_id === a.id ? 'a' : 'b'} ${seq}`, metadata: i % 5 ? null : `{"i":${i}}` }));
    for (let i = 0; i < rows.length; i += 100) await db.insertInto('logs').values(rows.slice(i, i + 100)).execute();
    const oldSeqs = (projectId: string) => rows.filter((r) => r.project_id === projectId).map((r) => r.seq);
    for (const p of [a, b]) {
      const seqs = oldSeqs(p.id);
      await db.updateTable('projects').set({ last_seq: Math.max(...seqs), log_count: seqs.length }).where('id', '=', p.id).execute();
    }
    const lastA = Math.max(...oldSeqs(a.id));
    const lastB = Math.max(...oldSeqs(b.id));

    // SQLite: a project whose row says less than its newest log (a hand-made load) is raised to it, so
    // its next log cannot collide with the unique (project_id, seq) index.
    if (c) await db.insertInto('logs').values([5001, 5002].map((seq) => ({ project_id: c.id, seq, ts: t0, received_at: t0, level: 2, source: null, message: `old c ${seq}`, metadata: null }))).execute();

    expect((await migrateTo(db, '0008_log_seq_per_project')).applied).toEqual(['0008_log_seq_per_project']);
    await migrateToLatest(db); // and whatever came after, which the server's code expects
    if (c) {
      await db.deleteFrom('logs').where('project_id', '=', c.id).where('seq', '=', 5002).execute();
      expect(Number((await db.selectFrom('projects').select('last_seq').where('id', '=', c.id).executeTakeFirstOrThrow()).last_seq)).toBe(5002);
      await ingestOk(s, c.apiKey, { message: 'new c' });
      const newestC = await s.request('GET', `/v1/projects/${c.id}/logs`, { token: owner.accessToken });
      expect(newestC.body.data.map((l: { id: string }) => l.id)).toEqual([logId(5003), logId(5001)]);
    }
    const stored = await db.selectFrom('logs').select(['project_id', 'seq', 'ts', 'received_at', 'level', 'source', 'message', 'metadata']).where('project_id', 'in', [a.id, b.id]).orderBy('ts').execute();
    expect(stored.map((r) => ({ ...r, seq: Number(r.seq), ts: Number(r.ts), received_at: Number(r.received_at), level: Number(r.level) }))).toEqual(rows);
    if (engine === 'sqlite') {
      const { rows: columns } = await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info('logs')`.execute(db);
      expect(columns.find((c) => c.name === 'seq')!.pk).toBe(0);
      const { rows: indexes } = await sql<{ name: string; unique: number }>`select name, "unique" from pragma_index_list('logs') order by name`.execute(db);
      expect(indexes.map((i) => [i.name, i.unique])).toEqual([['logs_project_level_ts', 0], ['logs_project_seq', 1], ['logs_project_ts', 0]]);
    }

    // Every old log is found with the id it had.
    for (const p of [a, b]) {
      const res = await s.request('GET', `/v1/projects/${p.id}/logs?limit=1000`, { token: owner.accessToken });
      expect(res.status).toBe(200);
      const expected = rows.filter((r) => r.project_id === p.id).reverse();
      expect((res.body.data as { id: string; message: string }[]).map((l) => [l.id, l.message])).toEqual(expected.map((r) => [logId(r.seq), r.message]));
    }

    // New logs continue after each project's last seq, and a tail resumes across the migration.
    const tail = await openTail(s, owner.accessToken, a.id, { lastEventId: String(oldSeqs(a.id).at(-2)) });
    try {
      expect(tail.status).toBe(200);
      await ingestOk(s, a.apiKey, [{ message: 'new a 1' }, { message: 'new a 2' }]);
      await ingestOk(s, b.apiKey, { message: 'new b 1' });
      await tail.waitFor(() => tail.logs().length === 3);
      expect(tail.logs().map((l) => [l.sseId, l.message])).toEqual([
        [String(lastA), `old a ${lastA}`],
        [String(lastA + 1), 'new a 1'],
        [String(lastA + 2), 'new a 2'],
      ]);
    } finally {
      tail.close();
    }
    const newestA = await s.request('GET', `/v1/projects/${a.id}/logs?limit=2`, { token: owner.accessToken });
    expect(newestA.body.data.map((l: { id: string }) => l.id)).toEqual([logId(lastA + 2), logId(lastA + 1)]);
    const newestB = await s.request('GET', `/v1/projects/${b.id}/logs?limit=1`, { token: owner.accessToken });
    expect(newestB.body.data.map((l: { id: string }) => l.id)).toEqual([logId(lastB + 1)]);
    const counts = await db.selectFrom('projects').select(['id', 'last_seq', 'log_count']).where('id', 'in', [a.id, b.id]).orderBy('name').execute();
    expect(counts.map((c) => [Number(c.last_seq), Number(c.log_count)])).toEqual([
      [lastA + 2, oldSeqs(a.id).length + 2],
      [lastB + 1, oldSeqs(b.id).length + 1],
    ]);
  });
});
