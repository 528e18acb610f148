/**
 * Issue 16: the skip index's builder killed with SIGKILL in the middle of building. The server runs
 * as a real process (`loglane serve`) on a real database; it is killed at random moments while its
 * builder is summarising, restarted, and must finish the index with every block summarised once
 * and whole (a summary and its filter are one transaction). Then searches and stats through the
 * index answer exactly what the logs hold (worked out here, by brute force) and what the same
 * server answers with the index off.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connect.js';
import { createTestDatabase, describeEngines, request, spawnServer, waitFor, type ServerProcess, type TestDatabase } from './harness.js';

const BLOCK = 64;
const BLOCKS = 120;
const LOGS = BLOCK * BLOCKS + 10; // and a tail of 10 that no summary covers
/** `npm run test:reliability` (LOGLANE_RELIABILITY=full) kills more often; each kill is a restart of a few seconds. */
const FULL = process.env.LOGLANE_RELIABILITY === 'full';
const KILLS = FULL ? 10 : 3;
/** Kills while packing. */
const PACK_KILLS = FULL ? 8 : 2;
const GRAM_PART_BUCKETS = 56;
/** Rows a filtered block keeps beside its filter's parts until it is packed: its 16 slices' filters and their common one (its format row is not counted). */
const SLICE_ROWS = 16 + 1;
/** The format row's part, which servers before migration 0022 wrote (since then the format is in log_blocks): not counted, so the check holds for either. */
const FORMAT_PART = 2_000_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Log i: a request id of its own, a user shared by every 97th log, and a word shared by every 13th. */
function logAt(i: number, t0: number) {
  return {
    timestamp: t0 + i * 1000,
    level: i % 11 === 0 ? 'error' : 'info',
    source: i % 3 === 0 ? 'api' : 'worker',
    message: `request r${i} handled for u${i % 97} with tag${i % 13}`,
    metadata: { reqId: `r${i}`, user: `u${i % 97}`, status: i % 11 === 0 ? 500 : 200 },
  };
}

describeEngines('the skip index after SIGKILL in the middle of building', (engine) => {
  let db: TestDatabase;
  let token: string;
  let projectId: string;
  let t0: number;
  const base = () => ({ ...db.env, DEFAULT_PLAN: 'enterprise', INDEX_BLOCK_LOGS: String(BLOCK) });

  /** The project's summaries, read straight from the database: blocks, and blocks whose filter lacks a part, a slice or a gram part. */
  async function summaries(): Promise<{ blocks: number[]; torn: number[] }> {
    const database = openDatabase(loadConfig(db.env));
    try {
      const blocks = await database.db.selectFrom('log_blocks').select(['first_seq', 'buckets', 'gram_buckets', 'part_buckets', 'packed']).where('project_id', '=', projectId).orderBy('first_seq').execute();
      const parts = await database.db.selectFrom('log_block_blooms').select(['first_seq', (eb) => eb.fn.countAll<number>().as('n')]).where('project_id', '=', projectId).where('part', '<>', FORMAT_PART).groupBy('first_seq').execute();
      const partsOf = new Map(parts.map((p) => [Number(p.first_seq), Number(p.n)]));
      return {
        blocks: blocks.map((b) => Number(b.first_seq)),
        torn: blocks.filter((b) => (partsOf.get(Number(b.first_seq)) ?? 0) !== (Number(b.buckets) === 0 ? 0 : Math.ceil(Number(b.buckets) / Number(b.part_buckets)) + (Number(b.packed) > 0 ? 0 : SLICE_ROWS) + Math.ceil(Number(b.gram_buckets) / GRAM_PART_BUCKETS))).map((b) => Number(b.first_seq)),
      };
    } finally {
      await database.close();
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase(engine);
    // Loaded with the builder held off (it runs once an hour), then stopped cleanly.
    const server = await spawnServer({ ...base(), INDEX_INTERVAL: '1h' });
    try {
      const signup = await request(server.url, 'POST', '/v1/auth/signup', { body: { email: `index-crash-${Date.now()}@example.com`, password: 'long enough' } });
      token = signup.body.accessToken;
      const project = await request(server.url, 'POST', '/v1/projects', { token, body: { name: 'index crash' } });
      projectId = project.body.id;
      t0 = Date.now() - LOGS * 1000 - 60_000;
      for (let i = 0; i < LOGS; i += 500) {
        const res = await request(server.url, 'POST', '/v1/logs', { headers: { 'x-api-key': project.body.apiKey }, body: Array.from({ length: Math.min(500, LOGS - i) }, (_, k) => logAt(i + k, t0)) });
        expect(res.status, res.text).toBe(202);
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    expect((await summaries()).blocks).toEqual([]);
  }, 120_000);
  afterAll(async () => {
    await db?.drop();
  });

  const all = () => Array.from({ length: LOGS }, (_, i) => logAt(i, t0));
  const cases: [string, (log: ReturnType<typeof logAt>) => boolean][] = [
    ['@reqId:r4321', (l) => l.metadata.reqId === 'r4321'],
    ['r17', (l) => l.metadata.reqId === 'r17'],
    [`r${LOGS - 3}`, (l) => l.metadata.reqId === `r${LOGS - 3}`], // in the unsummarised tail
    ['@user:u42 tag5', (l) => l.metadata.user === 'u42' && l.message.endsWith(' tag5')],
    ['@reqId:absent-value', () => false],
    ['@status:500 @user:u7', (l) => l.metadata.status === 500 && l.metadata.user === 'u7'],
    ['@reqId:r100 OR @reqId:r7000', (l) => l.metadata.reqId === 'r100' || l.metadata.reqId === 'r7000'],
  ];
  const answers = async (url: string) => {
    const out: string[] = [];
    for (const [query] of cases) {
      const params = `query=${encodeURIComponent(query)}&from=${t0 - 1}&to=${t0 + LOGS * 1000}`;
      const page = await request(url, 'GET', `/v1/projects/${projectId}/logs?${params}&limit=100`, { token });
      const stats = await request(url, 'GET', `/v1/projects/${projectId}/logs/stats?${params}&interval=1h`, { token });
      expect(page.status, page.text).toBe(200);
      expect(stats.status, stats.text).toBe(200);
      out.push(JSON.stringify({ messages: page.body.data.map((l: { message: string }) => l.message), next: page.body.nextCursor, stats: stats.body }));
    }
    return out;
  };
  /** The answers of the scan and the index, once every block is summarised (the first test). */
  let indexed: string[] = [];

  it(`killed ${KILLS} times while building, it rebuilds every block once and whole, and answers as the scan does`, async () => {
    const killedMidway: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const before = (await summaries()).blocks.length;
      const server = await spawnServer({ ...base(), INDEX_INTERVAL: '1s' });
      try {
        // Wait for the builder to make progress (while there is building left), then kill it at a random moment of its work.
        if (before < BLOCKS) await waitFor(async () => (await summaries()).blocks.length > before, 10_000, `the builder to save a block past ${before}`, 5);
        // sleep: a random moment of the builder's work to kill it at (the jitter is the subject)
        await sleep(Math.random() * 40);
      } finally {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      const after = await summaries();
      expect(after.torn, 'a summary without all of its filter').toEqual([]);
      if (after.blocks.length < BLOCKS) killedMidway.push(after.blocks.length);
    }
    // The kills landed while there was still building to do (the builder had not finished).
    expect(killedMidway.length).toBeGreaterThan(0);

    let server: ServerProcess = await spawnServer({ ...base(), INDEX_INTERVAL: '1s' });
    try {
      await waitFor(async () => (await summaries()).blocks.length >= BLOCKS, 30_000, `all ${BLOCKS} blocks summarised`, 20);
      const done = await summaries();
      expect(done.blocks).toEqual(Array.from({ length: BLOCKS }, (_, b) => 1 + b * BLOCK));
      expect(done.torn).toEqual([]);

      indexed = await answers(server.url);
      cases.forEach(([query, wanted], n) => {
        const expected = all().filter(wanted).map((l) => l.message).reverse();
        const got = JSON.parse(indexed[n]!) as { messages: string[]; stats: { buckets: { total: number }[] } };
        expect(got.messages, query).toEqual(expected);
        expect(got.stats.buckets.reduce((sum, b) => sum + b.total, 0), `${query}: stats`).toBe(expected.length);
      });
      server.child.kill('SIGTERM');
      await server.exited;
      server = await spawnServer({ ...base(), INDEX_INTERVAL: '1h', SEARCH_INDEX: 'off' });
      expect(await answers(server.url)).toEqual(indexed);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 240_000);

  /** Where the project's packs stand, read straight from the database. */
  async function packs(): Promise<{ packed: number; logs: number; broken: number[] }> {
    const database = openDatabase(loadConfig(db.env));
    try {
      const blocks = await database.db.selectFrom('log_blocks').select(['first_seq', 'last_seq', 'packed', 'logs']).where('project_id', '=', projectId).execute();
      const stored = new Set((await database.db.selectFrom('log_packs').select('first_seq').where('project_id', '=', projectId).execute()).map((p) => Number(p.first_seq)));
      const rows = (await database.db.selectFrom('logs').select('seq').where('project_id', '=', projectId).execute()).map((r) => Number(r.seq));
      let logs = rows.length;
      const broken: number[] = [];
      for (const b of blocks) {
        const first = Number(b.first_seq);
        const isPacked = Number(b.packed) > 0;
        if (isPacked) logs += Number(b.logs);
        // A block's logs are in its pack or in rows, never both, never neither.
        const hasRows = rows.some((seq) => seq >= first && seq <= Number(b.last_seq));
        if (isPacked !== stored.has(first) || (isPacked && hasRows)) broken.push(first);
      }
      return { packed: blocks.filter((b) => Number(b.packed) > 0).length, logs, broken };
    } finally {
      await database.close();
    }
  }

  it(`killed ${PACK_KILLS} times while packing, it loses and duplicates nothing, and answers as before`, async () => {
    const env = { ...base(), INDEX_INTERVAL: '1s', COMPACT_AFTER: '0s' };
    const killedMidway: number[] = [];
    for (let k = 0; k < PACK_KILLS; k++) {
      const before = (await packs()).packed;
      const server = await spawnServer(env);
      try {
        if (before < BLOCKS) await waitFor(async () => (await packs()).packed > before, 20_000, `the compactor to pack a block past ${before}`, 5);
        // sleep: a random moment of the compactor's work to kill it at (the jitter is the subject)
        await sleep(Math.random() * 40);
      } finally {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      const after = await packs();
      expect(after.broken, 'a block both packed and in rows, or packed without its pack').toEqual([]);
      expect(after.logs, 'logs in rows and packs').toBe(LOGS);
      if (after.packed < BLOCKS) killedMidway.push(after.packed);
    }
    expect(killedMidway.length).toBeGreaterThan(0);
    const server = await spawnServer(env);
    try {
      await waitFor(async () => (await packs()).packed >= BLOCKS, 60_000, `all ${BLOCKS} blocks packed`, 20);
      const done = await packs();
      expect(done).toEqual({ packed: BLOCKS, logs: LOGS, broken: [] });
      expect(await answers(server.url)).toEqual(indexed);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 240_000);
});
