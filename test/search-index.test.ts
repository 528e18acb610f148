/**
 * Issue 16: the skip index may only make a search faster, never change its answer. Random logs go
 * into projects in several requests (blocks of 16 logs here, so a few hundred logs make many
 * blocks, with an unsummarised tail); random query trees and legacy `q` substrings are then walked
 * page by page with the index on, with every block forced to "maybe", and with the index off (the
 * scan): every page and cursor must be the same, and so must the stats of the same filter. Again after retention deleted logs under existing
 * summaries. Again over logs with generated metadata keys (empty, dots, NFC and NFD, paths past 512
 * characters) and queries over the paths they hold (issue 25: an empty key once made summarised
 * blocks miss logs). And a needle reads only the blocks that may hold it (counted, not timed).
 *
 * LOGLANE_PROPERTY_RUNS sets the runs per engine (default 40, 120 under LOGLANE_RELIABILITY=full, as
 * `npm run test:reliability` runs it; half of it after the deletes). Each run draws a fresh seed, so
 * runs add up across CI runs; a failure prints its seed, and LOGLANE_PROPERTY_SEED replays it.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { parseQuery } from '../src/features/logs/query/index.js';
import { addLogItems, type GramSet } from '../src/features/logs/store/blocks/items.js';
import { createProject, describeEngines, ingest, signup, startServer, useAccount, useServer } from './harness.js';
import { DAY, filters, keyedLog, keyedQueryText, queryText, randomLog, T0, T1, type Filters } from './query-arbitraries.js';

const RUNS = Number(process.env.LOGLANE_PROPERTY_RUNS ?? (process.env.LOGLANE_RELIABILITY === 'full' ? 120 : 40));
const SEED = process.env.LOGLANE_PROPERTY_SEED !== undefined ? Number(process.env.LOGLANE_PROPERTY_SEED) : undefined;
const BLOCK = 16;
const Q_TEXTS = ['alpha', 'connection reset', 'req-1007', '10.0.0.1', ' reset', 'tion res', 'a-b', 'http 500', ', alpha, ', '/v1/orders', 'kafka', 'straße', '🚀 launch', ': beta: ', 'req_c0ffee5eed42d00d', 'REQ_C0FFEE5EED42D00E', 'c0ffee5eed42d00dx', 'trace_0123456789abcdef', 'eq_c0ffee5eed42d00'];

type Mode = 'on' | 'forced' | 'all-maybe' | 'off';

describeEngines('the skip index never changes an answer (differential)', (engine) => {
  const s = useServer(engine, { env: { INDEX_BLOCK_LOGS: String(BLOCK), INDEX_INTERVAL: '1h', RETENTION_DAYS_ENTERPRISE: '3650' } });
  const owner = useAccount(s, { plan: 'enterprise' });
  const projects: { id: string }[] = [];
  /** Logs whose metadata keys are generated (empty, dots, NFC and NFD, very long): queried by keyedQueryText. */
  const keyed: { id: string }[] = [];
  let keyedQueries: fc.Arbitrary<string> | undefined;

  beforeAll(async () => {
    for (let k = 0; k < 2; k++) {
      const project = await createProject(s, owner, `index ${k}`);
      const drawn = fc.sample(randomLog, { numRuns: 200 + 37 * k, seed: 1600 + k });
      for (let i = 5; i < drawn.length; i += 7) drawn[i]!.timestamp = drawn[i - 3]!.timestamp;
      // Several requests: blocks then hold logs of different times, as from many shippers.
      for (let i = 0; i < drawn.length; i += 45) expect((await ingest(s, project.apiKey, drawn.slice(i, i + 45))).status).toBe(202);
      projects.push(project);
    }
    // Generated keys, without and with keys that make paths past 512 characters.
    const keyedLogs: { metadata: unknown }[] = [];
    for (const long of [false, true]) {
      const project = await createProject(s, owner, `generated keys${long ? ', long' : ''}`);
      const drawn = fc.sample(keyedLog(long), { numRuns: 150, seed: 2500 + Number(long) });
      keyedLogs.push(...drawn);
      for (let i = 0; i < drawn.length; i += 50) {
        const res = await ingest(s, project.apiKey, drawn.slice(i, i + 50));
        expect(res.status, res.text).toBe(202);
        expect(res.body.rejected).toEqual([]);
      }
      keyed.push(project);
    }
    keyedQueries = keyedQueryText(keyedLogs);
    const built = await s.app.services.logs.buildIndex();
    // 200, 237, 150 and 150 logs: 12 + 14 + 9 + 9 full blocks, and a tail of 8, 13, 6 and 6 logs left unsummarised.
    expect(built).toBe(12 + 14 + 9 + 9);
  });

  /** Every page of a search, with its cursor, under one mode of the index. */
  async function walk(mode: Mode, projectId: string, params: URLSearchParams): Promise<string[]> {
    s.app.services.logs.setSearchIndex(mode);
    const pages: string[] = [];
    const p = new URLSearchParams(params);
    for (let page = 0; page < 200; page++) {
      const res = await s.request('GET', `/v1/projects/${projectId}/logs?${p}`, { token: owner.accessToken });
      expect(res.status, `${mode} ${p}: ${res.text}`).toBe(200);
      pages.push(JSON.stringify({ ids: res.body.data.map((l: { id: string }) => l.id), next: res.body.nextCursor }));
      if (res.body.nextCursor === null) return pages;
      p.set('cursor', res.body.nextCursor);
    }
    throw new Error('too many pages');
  }

  /** Stats of the same search (no limit or cursor), under one mode of the index. */
  async function statsOf(mode: Mode, projectId: string, params: URLSearchParams, groupBy: string | undefined): Promise<unknown> {
    s.app.services.logs.setSearchIndex(mode);
    const p = new URLSearchParams(params);
    p.delete('limit');
    p.set('interval', '1h');
    if (groupBy !== undefined) p.set('groupBy', groupBy);
    const res = await s.request('GET', `/v1/projects/${projectId}/logs/stats?${p}`, { token: owner.accessToken });
    expect(res.status, `${mode} stats ${p}: ${res.text}`).toBe(200);
    // Compared as values: the order of the names in `levels` follows the order logs were read in.
    return res.body;
  }

  function paramsOf(query: string | undefined, q: string | undefined, f: Filters, limit: number): URLSearchParams {
    const params = new URLSearchParams({ limit: String(limit), from: String(f.from ?? T0 - DAY), to: String(f.to ?? T1 + 2 * DAY) });
    if (query !== undefined) params.set('query', query);
    if (q !== undefined) params.set('q', q);
    if (f.level) params.set('level', f.level.join(','));
    if (f.source !== undefined) params.set('source', f.source);
    return params;
  }

  async function compare(label: string, numRuns: number, over = projects, queries = queryText, legacy = true): Promise<{ runs: number; indexed: number }> {
    let runs = 0;
    let indexed = 0;
    const texts = queries.map((t) => ({ query: t as string | undefined, q: undefined as string | undefined }));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: over.length - 1 }),
        legacy ? fc.oneof({ weight: 4, arbitrary: texts }, { weight: 2, arbitrary: fc.constantFrom(...Q_TEXTS).map((q) => ({ query: undefined as string | undefined, q: q as string | undefined })) }) : texts,
        fc.option(filters, { freq: 3, nil: undefined }),
        fc.integer({ min: 2, max: 9 }),
        fc.constantFrom(undefined, 'source', '@status', 'level'),
        async (k, { query, q }, filter, limit, groupBy) => {
          if (query !== undefined) {
            try {
              parseQuery(query);
            } catch {
              return;
            }
          }
          runs++;
          const projectId = over[k]!.id;
          const params = paramsOf(query, q, filter ?? {}, limit);
          const scan = await walk('off', projectId, params);
          const on = await walk('on', projectId, params);
          const before = s.app.services.logs.lastIndexReport();
          const forced = await walk('forced', projectId, params);
          if (s.app.services.logs.lastIndexReport() !== before) indexed++;
          const maybe = await walk('all-maybe', projectId, params);
          const context = `[${engine} ${label}] ${params}`;
          expect(on, `${context}: index on`).toEqual(scan);
          expect(forced, `${context}: index forced`).toEqual(scan);
          expect(maybe, `${context}: every block "maybe"`).toEqual(scan);
          // Stats count every match: through the index, only the blocks that may hold one are read.
          const counted = await statsOf('off', projectId, params, groupBy);
          for (const mode of ['on', 'forced', 'all-maybe'] as const) expect(await statsOf(mode, projectId, params, groupBy), `${context}: stats, index ${mode}, groupBy ${groupBy}`).toEqual(counted);
        },
      ),
      { numRuns, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    return { runs, indexed };
  }

  it(`random queries and substrings: the same pages with the index on, all "maybe", and off (${RUNS} runs)`, async () => {
    const { runs, indexed } = await compare('fresh', RUNS);
    expect(runs).toBeGreaterThan(RUNS * 0.6);
    // Forced, the index must actually have been used, not skipped, in most of them (the rest: a
    // query with nothing to probe and no level or time to decide on).
    expect(indexed).toBeGreaterThan(runs * 0.5);
  }, 240_000);

  it(`generated metadata keys (empty, dots, NFC and NFD, past 512 characters): the same pages and stats with the index on, all "maybe", and off (${RUNS} runs)`, async () => {
    const { runs, indexed } = await compare('generated keys', RUNS, keyed, keyedQueries!, false);
    expect(runs).toBeGreaterThan(RUNS * 0.6);
    expect(indexed).toBeGreaterThan(runs * 0.5);
  }, 240_000);

  it('an empty metadata key: a summarised block holds its logs for @"":value, @"":*, @"".y:value and @"".y:* (issue 25)', async () => {
    const project = await createProject(s, owner, 'empty key');
    const t = T1 - DAY;
    // Two blocks and a tail of 4: each block holds one log of each kind, the tail one more.
    const kinds: Record<number, unknown> = { 2: { '': 'emptyval' }, 21: { '': 'emptyval' }, 33: { '': 'emptyval' }, 5: { '': { y: 'deepempty' } }, 26: { '': { y: 'deepempty' } }, 34: { '': { y: 'deepempty' } } };
    const logs = Array.from({ length: 2 * BLOCK + 4 }, (_, i) => ({ timestamp: t + i, message: `line ${i}`, metadata: kinds[i] ?? { y: 'deepempty', x: 'emptyval' } }));
    const res = await ingest(s, project.apiKey, logs);
    expect(res.status, res.text).toBe(202);
    expect(res.body.rejected).toEqual([]);
    expect(await s.app.services.logs.buildIndex()).toBe(2);
    for (const [query, n] of [['@"":emptyval', 3], ['@"":*', 6], ['@"".y:deepempty', 3], ['@"".y:*', 3]] as const) {
      const params = new URLSearchParams({ query, from: String(t - 1), limit: '50' });
      const scan = await walk('off', project.id, params);
      expect(JSON.parse(scan[0]!).ids, `${query}: the scan`).toHaveLength(n);
      for (const mode of ['on', 'forced'] as const) {
        const before = s.app.services.logs.lastIndexReport();
        expect(await walk(mode, project.id, params), `${query}: index ${mode}`).toEqual(scan);
        expect(s.app.services.logs.lastIndexReport(), `${query}: went through the index`).not.toBe(before);
      }
    }
    // A value no log holds there: both blocks are ruled out (only the tail is read).
    s.app.services.logs.setSearchIndex('forced');
    const absent = async () => {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent('@"".y:absent')}&from=${t - 1}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual([]);
      return s.app.services.logs.lastIndexReport()!;
    };
    expect((await absent()).seqsRead).toBe(4);
    // Blocks summarised before the empty key was named (format 1) cannot rule such a path out.
    await s.database.db.updateTable('log_blocks').set({ format: 1 }).where('project_id', '=', project.id).execute();
    expect((await absent()).seqsRead).toBe(2 * BLOCK + 4);
    for (const [query, n] of [['@"":emptyval', 3], ['@"".y:*', 3]] as const) {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t - 1}`, { token: owner.accessToken });
      expect(res.body.data.length, `${query}, format 1`).toBe(n);
    }
    // Other paths are named as before: format 1 still rules them out.
    const other = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent('@y:absent')}&from=${t - 1}`, { token: owner.accessToken });
    expect(other.body.data).toEqual([]);
    expect(s.app.services.logs.lastIndexReport()!.seqsRead).toBe(4);
  });

  it('a metadata path past 512 characters costs only its own items a hash: its block keeps its filter, and both paths are found (issue 25)', async () => {
    const project = await createProject(s, owner, 'long path');
    const t = T1 - DAY;
    const long = 'k'.repeat(400);
    // Log 3's path long.long (801 characters) once left its whole block without a filter; log 7 has it as one flat key.
    const metadataOf = (i: number) => (i === 3 ? { [long]: { [long]: 'deep-needle' } } : i === 7 ? { [`${long}.${long}`]: 'flat-needle' } : { reqId: `r${i}` });
    const logs = Array.from({ length: BLOCK }, (_, i) => ({ timestamp: t + i, message: `plain line ${i}`, metadata: metadataOf(i) }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(1);
    const block = await s.database.db.selectFrom('log_blocks').select('buckets').where('project_id', '=', project.id).executeTakeFirstOrThrow();
    expect(Number(block.buckets)).toBeGreaterThan(0);
    s.app.services.logs.setSearchIndex('forced');
    const path = `@"${long}"."${long}"`;
    const flat = `@"${long}.${long}"`;
    // The path as two keys matches the nested object and the flat key alike; as one key, only the flat
    // key (but both logs give its name, the same text: both slices are read).
    const cases = [['@reqId:r9', 1, 1], ['@reqId:absent', 0, 0], [`${path}:deep-needle`, 1, 1], [`${path}:flat-needle`, 1, 1], [`${path}:*`, 2, 2], [`${flat}:*`, 1, 2], [`${path}:absent`, 0, 0]] as const;
    for (const [query, n, slices] of cases) {
      const read = (slices * BLOCK) / 16;
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t - 1}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.length, query.slice(0, 40)).toBe(n);
      // The slices holding it, or nothing: the filter answered.
      expect(s.app.services.logs.lastIndexReport()!.seqsRead, query.slice(-30)).toBe(read);
    }
  });

  it('after logs were deleted under existing summaries, still the same pages', async () => {
    // As retention's batches do, with a cutoff inside the logs' range: blocks keep summaries of deleted logs.
    await s.database.db.deleteFrom('logs').where('project_id', '=', projects[0]!.id).where('ts', '<', T0 + DAY).execute();
    const { runs } = await compare('after deletes', Math.ceil(RUNS / 2));
    expect(runs).toBeGreaterThan(RUNS * 0.3);
  }, 240_000);

  it('a block holding a log past the item cap keeps no filter, and its logs are still found', async () => {
    const project = await createProject(s, owner, 'item cap');
    const t = T1 - DAY;
    const words = Array.from({ length: 2_100 }, (_, i) => `w${i}`).join(' ');
    const logs = Array.from({ length: BLOCK }, (_, i) => ({ timestamp: t + i, message: i === 3 ? words : `plain line ${i}`, ...(i === 9 ? { metadata: { reqId: 'capped-needle' } } : {}) }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(1);
    const block = await s.database.db.selectFrom('log_blocks').select(['buckets', 'logs']).where('project_id', '=', project.id).executeTakeFirstOrThrow();
    expect(Number(block.buckets)).toBe(0);
    expect(Number(block.logs)).toBe(BLOCK);
    s.app.services.logs.setSearchIndex('forced');
    for (const [query, n] of [['@reqId:capped-needle', 1], ['w2099', 1], ['nowhere', 0]] as const) {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t - 1}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.length, query).toBe(n);
      // Read, not ruled out: a block without a filter says "maybe" to every item.
      expect(s.app.services.logs.lastIndexReport()!.blocksRead, query).toBe(1);
    }
  });

  it('a filter of full 2 KiB parts is kept in its rows, not out of line (PostgreSQL: migration 0013)', async () => {
    const project = await createProject(s, owner, 'full parts');
    const t = T1 - DAY;
    // 16 logs of 120 distinct words: ~1,900 items, a filter of ~120 buckets, its first part full.
    const logs = Array.from({ length: BLOCK }, (_, i) => ({ timestamp: t + i, message: Array.from({ length: 120 }, (_, k) => `w${i}x${k}`).join(' ') }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(1);
    const block = await s.database.db.selectFrom('log_blocks').select('buckets').where('project_id', '=', project.id).executeTakeFirstOrThrow();
    expect(Number(block.buckets)).toBeGreaterThan(64);
    if (engine === 'postgres') {
      // A probe reads one part per block: out of line, each would cost a second lookup in the TOAST table.
      const { rows } = await sql<{ toast: string }>`select pg_relation_size(reltoastrelid) as toast from pg_class where relname = 'log_block_blooms'`.execute(s.database.db);
      expect(Number(rows[0]!.toast)).toBe(0);
    }
    s.app.services.logs.setSearchIndex('on');
    const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=w7x119&from=${t - 1}`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toHaveLength(1);
  });

  it('a needle reads only the blocks that may hold it', async () => {
    const project = await createProject(s, owner, 'needle');
    const t = T1 - DAY;
    const logs = Array.from({ length: 40 * BLOCK }, (_, i) => ({
      timestamp: t + i * 1000,
      level: 'info',
      message: `request ${i % 7 === 0 ? 'served' : 'done'} reqid=r${(i * 7919) % 100_000}`,
      metadata: { reqId: `r${(i * 7919) % 100_000}`, res: { statusCode: i % 50 === 0 ? 503 : 200 } },
    }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(40);
    s.app.services.logs.setSearchIndex('on');
    const needle = `r${(123 * 7919) % 100_000}`;
    for (const query of [`@reqId:${needle}`, needle, `@reqId:${needle} OR @reqId:nothere`, `@reqId:absent-value`]) {
      const before = s.app.services.logs.lastIndexReport();
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t - 1}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.length, query).toBe(query.includes('absent') ? 0 : 1);
      const report = s.app.services.logs.lastIndexReport()!;
      // A fresh report: the search went through the index (a fallback to the scan leaves the last one).
      expect(report, query).not.toBe(before);
      expect(report.blocksInRange, query).toBe(40);
      // The block holding it, and at most a false positive or two (16 bits per item); of those, only
      // the slices whose own filters may hold it.
      expect(report.blocksRead, query).toBeLessThanOrEqual(query.includes('absent') ? 2 : 3);
      expect(report.seqsRead, query).toBeLessThanOrEqual(3 * (BLOCK / 16));
      expect(report.rowsRead, query).toBeLessThanOrEqual(report.seqsRead);
    }
    // A block without slice filters (summarised before they existed) is read whole, and still answers.
    const query = `@reqId:${needle}`;
    const holding = await s.database.db.selectFrom('log_blocks').select('first_seq').where('project_id', '=', project.id).where('first_seq', '<=', 124).where('last_seq', '>=', 124).executeTakeFirstOrThrow();
    await s.database.db.deleteFrom('log_block_blooms').where('project_id', '=', project.id).where('first_seq', '=', holding.first_seq).where('part', '<', 0).execute();
    const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t - 1}`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((l) => l.metadata.reqId)).toEqual([needle]);
    expect(s.app.services.logs.lastIndexReport()!.seqsRead).toBeGreaterThanOrEqual(BLOCK);
  });

  it("a legacy q of part of an id reads only the blocks whose gram filter may hold it", async () => {
    const project = await createProject(s, owner, 'grams');
    const t = T1 - DAY;
    // Trace ids: 32 random hex digits.
    const idOf = (i: number) => createHash('sha256').update(`trace ${i}`).digest('hex').slice(0, 32);
    // With 40 more ids each, a block's gram filter takes more than one part.
    const logs = Array.from({ length: 40 * BLOCK }, (_, i) => ({
      timestamp: t + i * 1000,
      level: 'info',
      message: `GET /v1/orders 200 trace_id=${idOf(i)} done; spans ${Array.from({ length: 40 }, (_, k) => idOf(100_000 + 40 * i + k)).join(',')}`,
    }));
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(40);
    const gramBuckets = await s.database.db.selectFrom('log_blocks').select('gram_buckets').where('project_id', '=', project.id).execute();
    expect(gramBuckets.every((b) => b.gram_buckets > 56)).toBe(true);
    // Probed straight: every gram of a log is held by its block (in whichever part), and grams no
    // log gave are ruled out nearly everywhere (8 bits per gram).
    const given: GramSet = { items: new Set<string>(), complete: true };
    addLogItems({ source: null, message: logs[7]!.message, metadata: null }, new Set(), given);
    const held = [...(given.items as Set<string>)].slice(0, 16);
    expect(held.length).toBe(16);
    const blocks = await s.app.services.store.blocksInRange(project.id, undefined, undefined, held);
    expect(blocks.find((b) => b.firstSeq === 1)!.mayHold).toEqual(held.map(() => true));
    const absent = Array.from({ length: 16 }, (_, k) => `g:${createHash('sha256').update(`absent ${k}`).digest('hex').slice(0, 6)}`);
    let maybe = 0;
    for (const b of await s.app.services.store.blocksInRange(project.id, undefined, undefined, absent)) maybe += b.mayHold!.filter(Boolean).length;
    expect(maybe / (40 * absent.length)).toBeLessThan(0.1);
    s.app.services.logs.setSearchIndex('on');
    const target = 345;
    // A piece from inside the id (no word of the log is it), in upper case.
    const q = idOf(target).slice(3, 24).toUpperCase();
    const search = async () => {
      const before = s.app.services.logs.lastIndexReport();
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?q=${encodeURIComponent(q)}&from=${t - 1}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.map((l: { message: string }) => l.message.slice(0, 60))).toEqual([logs[target]!.message.slice(0, 60)]);
      const report = s.app.services.logs.lastIndexReport()!;
      expect(report).not.toBe(before);
      expect(report.blocksInRange).toBe(40);
      return report;
    };
    // Its block, and at most a false positive or two; each read whole (the slices keep no grams).
    const report = await search();
    expect(report.blocksRead).toBeLessThanOrEqual(3);
    expect(report.seqsRead).toBeLessThanOrEqual(3 * BLOCK);
    // A block summarised before gram filters existed keeps none: it is read, and still answers.
    const holding = await s.database.db.selectFrom('log_blocks').select('first_seq').where('project_id', '=', project.id).where('first_seq', '<=', target + 1).where('last_seq', '>=', target + 1).executeTakeFirstOrThrow();
    await s.database.db.updateTable('log_blocks').set({ gram_buckets: 0 }).where('project_id', '=', project.id).where('first_seq', '=', holding.first_seq).execute();
    await s.database.db.deleteFrom('log_block_blooms').where('project_id', '=', project.id).where('first_seq', '=', holding.first_seq).where('part', '>=', 1_000_000).execute();
    expect((await search()).blocksRead).toBeLessThanOrEqual(3);
  });

  // Last in this group: it leaves logs unsummarised, which the tests above count when they build.
  it('a needle search goes through the index while many logs are not summarised yet (after a burst): exact, the tail read a block at a time', async () => {
    const project = await createProject(s, owner, 'burst');
    const t = T1 - DAY;
    const logOf = (i: number) => ({ timestamp: t + i * 1000, level: 'info', message: `request done reqid=q${i}`, metadata: { reqId: `q${i % 97}`, ...(i >= 10 * BLOCK ? { burst: i } : {}) } });
    expect((await ingest(s, project.apiKey, Array.from({ length: 10 * BLOCK }, (_, i) => logOf(i)))).status).toBe(202);
    expect(await s.app.services.logs.buildIndex()).toBe(10);
    // The burst: 12 blocks' worth, more than the 4 a scan would otherwise be preferred past.
    expect((await ingest(s, project.apiKey, Array.from({ length: 12 * BLOCK }, (_, i) => logOf(10 * BLOCK + i)))).status).toBe(202);
    const tail = 12 * BLOCK;
    const page = async (mode: 'on' | 'off', query: string) => {
      s.app.services.logs.setSearchIndex(mode);
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}&from=${t - 1}&limit=100`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((l) => String(l.metadata.reqId));
    };
    for (const query of ['@reqId:q5', '@reqId:q96 OR @reqId:q7']) {
      const before = s.app.services.logs.lastIndexReport();
      const found = await page('on', query);
      const report = s.app.services.logs.lastIndexReport()!;
      expect(report, query).not.toBe(before);
      expect(found, query).toEqual(await page('off', query));
      expect(found.length, query).toBe(query.includes('OR') ? Math.ceil((22 * BLOCK - 96) / 97) + Math.ceil((22 * BLOCK - 7) / 97) : Math.ceil((22 * BLOCK - 5) / 97));
      // The whole tail, a block's seqs per read at most, and of the summarised blocks only the candidates.
      expect(report.seqsRead, query).toBeGreaterThanOrEqual(tail);
      expect(report.blocksRead, query).toBeGreaterThanOrEqual(12);
    }
    // Without a needle to test in SQL, a long tail is left to the scan (the last report stays), even
    // where every summarised block rules the query out.
    s.app.services.logs.setSearchIndex('on');
    const before = s.app.services.logs.lastIndexReport();
    const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent('@burst:*')}&from=${t - 1}&limit=5`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.length).toBe(5);
    expect(s.app.services.logs.lastIndexReport()).toBe(before);
    await s.app.services.logs.buildIndex();
  });
});

describeEngines('the skip index under retention and project deletion', (engine) => {
  it('retention forgets the summaries of blocks it emptied, keeps the others, and search still finds what is left; deleting the project forgets them all', async () => {
    const s = await startServer(engine, { env: { INDEX_BLOCK_LOGS: String(BLOCK), INDEX_INTERVAL: '1h', RETENTION_DAYS_FREE: '2' } });
    try {
      const owner = await signup(s);
      const project = await createProject(s, owner, 'retention');
      const now = s.clock.now();
      // Seqs 1..40 old (past retention), then 41..72 recent: blocks 1-16 and 17-32 old, 33-48 mixed, 49-64 recent.
      const old = Array.from({ length: 40 }, (_, i) => ({ message: `old needle${i}`, timestamp: now - 3 * DAY + i }));
      const recent = Array.from({ length: 32 }, (_, i) => ({ message: `recent item${i}`, timestamp: now - 3_600_000 + i }));
      expect((await ingest(s, project.apiKey, old)).status).toBe(202);
      expect((await ingest(s, project.apiKey, recent)).status).toBe(202);
      expect(await s.app.services.logs.buildIndex()).toBe(4);
      const blocks = async () =>
        (await s.database.db.selectFrom('log_blocks').select('first_seq').where('project_id', '=', project.id).orderBy('first_seq').execute()).map((b) => Number(b.first_seq));
      const blooms = async () => Number((await s.database.db.selectFrom('log_block_blooms').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', project.id).executeTakeFirstOrThrow()).n);
      expect(await blocks()).toEqual([1, 17, 33, 49]);
      expect(await s.app.services.logs.runRetention()).toBe(40);
      expect(await blocks()).toEqual([33, 49]);
      // The two blocks left: each its filter (one part), its 16 slices' filters, their common filter,
      // and its gram filter (one bucket, empty: these messages have no long words); its format is in log_blocks.
      expect(await blooms()).toBe(2 * (1 + 16 + 1 + 1));
      s.app.services.logs.setSearchIndex('forced');
      for (const [word, want] of [['needle3', []], ['needle35', []], ['item5', ['recent item5']], ['item31', ['recent item31']]] as const) {
        const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${word}&from=0`, { token: owner.accessToken });
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.map((l: { message: string }) => l.message), word).toEqual(want);
      }
      expect((await s.request('DELETE', `/v1/projects/${project.id}`, { token: owner.accessToken })).status).toBe(204);
      expect(await blocks()).toEqual([]);
      expect(await blooms()).toBe(0);
    } finally {
      await s.close();
    }
  });

  it('a block summarised while its project was being deleted is not saved after the deletion (issue 25)', async () => {
    const s = await startServer(engine, { env: { INDEX_BLOCK_LOGS: String(BLOCK), INDEX_INTERVAL: '1h' } });
    try {
      const owner = await signup(s);
      const project = await createProject(s, owner, 'deleted mid-build');
      expect((await ingest(s, project.apiKey, Array.from({ length: BLOCK }, (_, i) => ({ message: `log ${i}` })))).status).toBe(202);
      expect((await s.request('DELETE', `/v1/projects/${project.id}`, { token: owner.accessToken })).status).toBe(204);
      // The builder had read the block before the deletion, and saves it after.
      await s.app.services.store.buildBlock(project.id, 1, BLOCK);
      const left = async (table: 'log_blocks' | 'log_block_blooms') =>
        Number((await s.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', project.id).executeTakeFirstOrThrow()).n);
      expect(await left('log_blocks')).toBe(0);
      expect(await left('log_block_blooms')).toBe(0);
    } finally {
      await s.close();
    }
  });
});
