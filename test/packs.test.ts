/**
 * Issue 27: packed blocks change no answer. The query language's table (query-cases.ts) is
 * ingested several times over, in small blocks (INDEX_BLOCK_LOGS=16), and every case is asked of
 * search (paged through its cursors, newest first), stats and a live tail replayed from the start,
 * with every block still in rows; then the blocks are packed and the same is asked again, and the
 * answers must be identical. Then retention takes the oldest logs (some packs wholly, one in part)
 * and a project is deleted, and the answers are compared once more with a store that never packed.
 * The pack format itself is checked on random logs (round trip, exact to the byte).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { LEVELS } from '../src/features/logs/levels.js';
import { decodeBody, encodeBody, type PackedLog } from '../src/features/logs/store/packs/format.js';
import { pack, unpack } from '../src/features/logs/store/packs/codec.js';
import { sql } from 'kysely';
import { createProject, describeEngines, ingest, openTail, useAccount, useProject, useServer, waitFor, type TestServer } from './harness.js';
import { PACK_BYTES_PER_LOG } from '../src/features/logs/store/packs/read.js';
import { QUERY_CASES, QUERY_LOGS } from './query-cases.js';

describe('the pack format', () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  const metadata = fc.oneof(
    fc.constant(null),
    fc.dictionary(fc.string(), json).map((o) => JSON.stringify(o)),
    // What is not JSON.stringify's output of an object is kept as it is.
    json.map((v) => JSON.stringify(v)),
    fc.string(),
    fc.dictionary(fc.string(), json).map((o) => JSON.stringify(o, null, 1)),
  );
  const log = fc.record({
    seq: fc.integer({ min: 1, max: 2 ** 40 }),
    ts: fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
    received_at: fc.integer({ min: 0, max: 2 ** 45 }),
    level: fc.integer({ min: 0, max: 5 }),
    source: fc.option(fc.string(), { nil: null }),
    // Stored text never holds a lone surrogate (the engines store UTF-8).
    message: fc.string({ unit: 'binary' }).map((s) => s.toWellFormed()),
    metadata,
  });

  it('gives back every log exactly, in order', () => {
    fc.assert(
      fc.property(fc.array(log, { maxLength: 60 }), (logs: PackedLog[]) => {
        expect(decodeBody(encodeBody(logs))).toEqual(logs);
      }),
      { numRuns: 300 },
    );
  });

  it('round trips through the codec, and refuses a damaged pack instead of answering wrong', async () => {
    const logs: PackedLog[] = Array.from({ length: 500 }, (_, i) => ({ seq: i + 1, ts: 1_700_000_000_000 + i * 7, received_at: 1_700_000_000_500 + i * 7, level: i % 6, source: i % 3 === 0 ? null : `svc-${i % 5}`, message: `request ${i} completed`, metadata: JSON.stringify({ reqId: `req-${i}`, res: { statusCode: 200 + (i % 3) * 100 }, t: i / 7 }) }));
    const bytes = await pack(logs);
    expect(unpack(bytes)).toEqual(logs);
    expect(bytes.length).toBeLessThan(JSON.stringify(logs).length / 5);
    expect(() => unpack(bytes.subarray(0, bytes.length - 10))).toThrow();
  });
});

/** Copies of the table per project: enough logs for several 16-log blocks. */
const COPIES = 5;
const DAY = 86_400_000;
const MINUTE = 60_000;
/** Retention of the enterprise plan in both servers: the cutoff falls in the middle of copy 2. */
const RETENTION_DAYS = 5;

describeEngines('packed blocks change no answer', (engine) => {
  const env = { INDEX_BLOCK_LOGS: '16', COMPACT_AFTER: 'off', MAX_TAILS_PER_USER: '20', RETENTION_DAYS_ENTERPRISE: String(RETENTION_DAYS), METRICS_TOKEN: 'scrape-packs' };
  // Two stores given the same logs: `s` packs them (its compact() hook), `plain` never does.
  const s = useServer(engine, { env });
  const plain = useServer(engine, { env });
  const owner = useAccount(s, { plan: 'enterprise' });
  const plainOwner = useAccount(plain, { plan: 'enterprise' });
  const packed = useProject(s, owner, 'packed');
  const other = useProject(s, owner, 'deleted later');
  const reference = useProject(plain, plainOwner, 'never packed');

  // The copies are placed in the recent past so that, 10 minutes after they are sent, the
  // retention cutoff (now - RETENTION_DAYS) falls between two of copy 2's logs: retention then
  // takes copies 0 and 1 whole (whole packs) and part of copy 2 (packs rewritten).
  const times = [...new Set(QUERY_LOGS.map((l) => l.ts))].sort((a, b) => a - b);
  const mid = (times[Math.floor(times.length / 2) - 1]! + times[Math.floor(times.length / 2)]!) / 2;
  const sentAt = Date.now();
  const retentionAt = sentAt + 10 * MINUTE;
  const shift = Math.round(retentionAt - RETENTION_DAYS * DAY - 2 * DAY - mid);
  const from = times[0]! + shift;
  const to = times[times.length - 1]! + shift + (COPIES - 1) * DAY;
  const range = `from=${from}&to=${to}`;

  /**
   * Copy c is the table moved `shift` + c days on, shuffled (seeded, per copy): logs then reach a
   * block out of time order, as from many shippers, and a pack's seq order is not its time order.
   */
  const shuffled = <T>(items: readonly T[], seed: number): T[] => {
    const out = [...items];
    let state = seed;
    for (let i = out.length - 1; i > 0; i--) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      const j = state % (i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  const copies = () =>
    Array.from({ length: COPIES }, (_, c) =>
      shuffled(QUERY_LOGS, 17 + c).map((l) => ({
        message: l.message,
        level: LEVELS[l.level],
        timestamp: l.ts + shift + c * DAY,
        ...(l.source !== null ? { source: l.source } : {}),
        ...(l.metadata !== null ? { metadata: JSON.parse(l.metadata) as object } : {}),
      })),
    ).flat();

  beforeAll(async () => {
    for (const [server, project] of [[s, packed], [s, other], [plain, reference]] as const) {
      const res = await ingest(server, project.apiKey, copies());
      expect(res.status, res.text).toBe(202);
    }
    for (const server of [s, plain]) {
      // PostgreSQL: the partitions of the enterprise plan's days are made now that it has projects
      // (the rows already in the default partition move into them), as the hourly round would.
      await server.app.services.store.maintain();
      await server.app.services.logs.drain();
      await server.app.services.logs.buildIndex();
    }
  });

  /** Every answer a case gets: search pages (10 logs each, through the cursors), stats per level, and a tail replay. */
  async function answers(server: TestServer, token: string, projectId: string, cases = QUERY_CASES): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const c of cases) {
      const q = encodeURIComponent(c.query);
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const res = await server.request('GET', `/v1/projects/${projectId}/logs?${range}&limit=10&query=${q}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
        expect(res.status, `${c.query}: ${res.text}`).toBe(200);
        ids.push(...res.body.data.map((l) => `${l.id} ${l.timestamp} ${l.message} ${JSON.stringify(l.metadata)}`));
        cursor = res.body.nextCursor ?? undefined;
        if (!cursor) break;
      }
      const stats = await server.request('GET', `/v1/projects/${projectId}/logs/stats?${range}&interval=1h&query=${q}`, { token });
      expect(stats.status, `${c.query}: ${stats.text}`).toBe(200);
      out[c.query] = { ids, stats: stats.body.buckets };
    }
    // Plain stats over the range (rollups and the logs at its edges), by source and by metadata paths.
    for (const extra of ['', '&source=api', '&level=error', '&q=REQUEST', '&groupBy=source', '&groupBy=@res.statusCode', '&groupBy=@service.name&level=error']) {
      const res = await server.request('GET', `/v1/projects/${projectId}/logs/stats?from=${from + 30_000}&to=${to - 30_000}&interval=1h${extra}`, { token });
      expect(res.status, res.text).toBe(200);
      out[`stats${extra}`] = res.body;
    }
    const project = await server.request('GET', `/v1/projects/${projectId}`, { token });
    out.logCount = project.body.logCount;
    const tail = await openTail(server, token, projectId, { lastEventId: '0' });
    expect(tail.status).toBe(200);
    await tail.waitFor(() => tail.logs().length >= project.body.logCount, 10_000);
    out.tail = tail.logs().map((l) => `${l.id} ${l.message}`);
    tail.close();
    return out;
  }

  /** JSON with every object's keys sorted: the order of keys in an answer's object is not part of it. */
  const canonical = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : 1))) : x));
  const same = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    for (const key of Object.keys(b)) expect(canonical(a[key]), key).toBe(canonical(b[key]));
    expect(Object.keys(a)).toEqual(Object.keys(b));
  };
  const packedAnswers = (cases = QUERY_CASES) => answers(s, owner.accessToken, packed.id, cases);
  const plainAnswers = () => answers(plain, plainOwner.accessToken, reference.id);

  it('search, stats and the tail answer the same with the blocks packed as in rows, before and after retention and a deletion', async () => {
    // Every summary holds its whole block: on PostgreSQL the builder once read a block while the
    // enterprise plan's partitions were being made (beforeAll's maintain), and summarised what it saw.
    for (const [server, project] of [[s, packed], [plain, reference]] as const) {
      const sums = await server.database.db.selectFrom('log_blocks').select(['first_seq', 'logs']).where('project_id', '=', project.id).orderBy('first_seq').execute();
      expect(sums.map((b) => [Number(b.first_seq), Number(b.logs)])).toEqual(sums.map((b) => [Number(b.first_seq), 16]));
    }
    const before = await packedAnswers();
    same(before, await plainAnswers());
    const partitionSizes = async () =>
      (
        await sql<{ name: string; rows: string; bytes: string }>`select c.relname as name, (select count(*) from logs l where l.tableoid = c.oid) as rows, pg_total_relation_size(c.oid) as bytes
          from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'logs'::regclass order by 1`.execute(s.database.db)
      ).rows.map((r) => ({ name: r.name, rows: Number(r.rows), bytes: Number(r.bytes) }));
    const heldRows = engine === 'postgres' ? (await partitionSizes()).filter((p) => p.rows > 0).map((p) => p.name) : [];
    const packedBlocks = await s.app.services.logs.compact();
    expect(packedBlocks).toBe(2 * Math.floor((QUERY_LOGS.length * COPIES) / 16));
    same(await packedAnswers(), before);
    if (engine === 'postgres') {
      // Partitions packing emptied are truncated, indexes and all: each ends the size of one that
      // never held a row (a partition of the days ahead), where VACUUM alone leaves its indexes' pages.
      const fresh = (await partitionSizes()).find((p) => p.rows === 0 && !heldRows.includes(p.name))!;
      const emptied = await waitFor(async () => {
        const now = (await partitionSizes()).filter((p) => heldRows.includes(p.name) && p.rows === 0);
        return now.length > 0 && now.every((p) => p.bytes === fresh.bytes) && now;
      }, 30_000, 'the emptied partitions to be truncated');
      // The copies' days but the last (whose partition keeps the rows past the last whole block).
      expect(emptied.length).toBeGreaterThanOrEqual(2);
    }

    // What the packs take is told: on the project (get and list) and by part in /metrics.
    const project = await s.request('GET', `/v1/projects/${packed.id}`, { token: owner.accessToken });
    const listed = await s.request('GET', '/v1/projects', { token: owner.accessToken });
    expect(project.body.storedBytes).toBeGreaterThan(0);
    expect(listed.body.data.find((p) => p.id === packed.id)?.storedBytes).toBe(project.body.storedBytes);
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer scrape-packs' } })).text();
    const part = (name: string) => Number(new RegExp(`^loglane_store_bytes\\{part="${name}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect(part('packs')).toBeGreaterThan(0);
    expect(part('index')).toBeGreaterThan(0);
    // The logs past the last whole block are still rows.
    expect(part('rows') > 0).toBe((QUERY_LOGS.length * COPIES) % 16 !== 0);

    // Retention at the same moment on both: copies 0 and 1 go, and the older half of copy 2. The
    // servers' clocks are set to that moment (forward by the minutes the test has not used yet).
    for (const server of [s, plain]) server.clock.advance(retentionAt - server.clock.now());
    // `s` holds two projects with the same logs, `plain` one.
    const taken = (await s.app.services.logs.runRetention(7)) / 2;
    expect(taken).toBe(await plain.app.services.logs.runRetention(7));
    expect(taken).toBeGreaterThan(2 * QUERY_LOGS.length);
    expect(taken).toBeLessThan(3 * QUERY_LOGS.length);
    const retained = await packedAnswers();
    same(retained, await plainAnswers());
    expect(retained.logCount).toBe(COPIES * QUERY_LOGS.length - taken);

    // Another project's deletion, packs and all, changes nothing here; nothing of it is left.
    const deleted = await s.request('DELETE', `/v1/projects/${other.id}`, { token: owner.accessToken });
    expect(deleted.status, deleted.text).toBe(204);
    // (A tenth of the cases: the deletion touched another project; the counts and the tail say the rest.)
    const some = QUERY_CASES.filter((_, i) => i % 10 === 0);
    const caseNames = new Set(QUERY_CASES.map((c) => c.query));
    const kept = new Set(some.map((c) => c.query));
    same(await packedAnswers(some), Object.fromEntries(Object.entries(retained).filter(([key]) => !caseNames.has(key) || kept.has(key))));
    const left = await Promise.all(['logs', 'log_blocks', 'log_packs', 'log_block_blooms'].map(async (table) => (await s.database.db.selectFrom(table as 'logs').select('project_id').where('project_id', '=', other.id).execute()).length));
    expect(left).toEqual([0, 0, 0, 0]);
  }, 600_000);

  it("a block of huge logs is left in rows, not packed whole in memory, and is not tried again; the next block packs", async () => {
    // What the other projects here have due is packed first (when this test runs alone).
    await s.app.services.logs.compact();
    const project = await createProject(s, owner, 'huge logs');
    const t = s.clock.now() - 60_000;
    // Block 1: 16 logs of more text than a pack may hold per log; block 2: small ones.
    const big = 'x'.repeat(PACK_BYTES_PER_LOG + 1024);
    const logs = Array.from({ length: 32 }, (_, i) => ({ timestamp: t + i * 10, message: i < 16 ? `huge ${i} ${big}` : `small ${i}` }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    await s.app.services.logs.drain();
    await s.app.services.logs.buildIndex();
    expect(await s.app.services.logs.compact()).toBe(1);
    const blocks = await s.database.db.selectFrom('log_blocks').select(['first_seq', 'packed']).where('project_id', '=', project.id).orderBy('first_seq').execute();
    expect(blocks.map((b) => [Number(b.first_seq), Number(b.packed) > 0 ? 'packed' : Number(b.packed)])).toEqual([[1, -1], [17, 'packed']]);
    expect(await s.app.services.logs.compact()).toBe(0);
    const res = await s.request('GET', `/v1/projects/${project.id}/logs?limit=100&from=${t - 1}`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((l) => l.message.split(' ').slice(0, 2).join(' '))).toEqual(logs.map((l) => l.message.split(' ').slice(0, 2).join(' ')).reverse());
    const found = await s.request('GET', `/v1/projects/${project.id}/logs?query=huge&from=${t - 1}`, { token: owner.accessToken });
    expect(found.body.data.length).toBe(16);
  });
});
