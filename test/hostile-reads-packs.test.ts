/**
 * Large pages over packed logs. A pack (one block of the skip index, 4,096 logs by default) may hold
 * PACK_BYTES_PER_LOG × 4,096 = 32 MiB of text, so a tenant that mixes ~250 logs of 124 KB (a 64 KB
 * message and 60 KB of metadata, inside the limits) into each block of small ones has them packed,
 * a few KB of brotli each. Four concurrent `limit=1000` searches over 1,000 such logs in four packs
 * held the event loop 3.8 s on SQLite (0.8-1.1 s on PostgreSQL): each pack was decompressed and
 * decoded whole in one turn (110-380 ms each), zlib joined its output in one copy, a page's walk
 * sized the logs of all its packs in one go, and the cache of decoded packs (64 MiB) holds two, so
 * every page decoded each pack again. In rows the same searches stall nobody (hostile-reads.test.ts).
 *
 * Now a pack is decompressed on the thread pool, its pieces copied into place as they come, and
 * decoded at most DECODE_SLICE_BYTES of its body per turn (packs/format.ts); reads wanting a pack
 * another is decoding share that decoding; merges walk a pack's logs at most MERGE_SLICE_BYTES of
 * text per turn (packs/merge.ts). The tests count those slices, where the code counts them; the
 * bystander's figures are printed for `npm run bench:hostile`.
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEngines, useAccount, useProject, useServer, waitFor, type TestServer } from './harness.js';
import { beside, expectUnharmed, SEARCH_SCRIPT, type PageRead } from './hostile.js';
import { decodeBody, decodeBodySliced, decodeStats, DECODE_SLICE_BYTES, DECODE_STEP_BYTES, encodeBody, resetDecodeStats, type PackedLog } from '../src/features/logs/store/packs/format.js';
import { pack, unpack, unpackSliced } from '../src/features/logs/store/packs/codec.js';
import { MERGE_SLICE_BYTES, mergeStats } from '../src/features/logs/store/packs/merge.js';
import { PACK_BYTES_PER_LOG } from '../src/features/logs/store/packs/read.js';
import { SEARCHES_PER_USER } from '../src/features/logs/read/page-stream.js';

/** Logs per block: the default INDEX_BLOCK_LOGS, so that a pack may hold what it would in production. */
const BLOCK = 4096;
const BLOCKS = 4;
/** Large logs per block: 250 × 124 KB is ~31 MB, within what a block of 4,096 may pack (32 MiB). */
const LARGE_PER_BLOCK = 250;
const MESSAGE_CHARS = 64 * 1000;
const METADATA_CHARS = 60 * 1000;
const MB = 1024 * 1024;

/** The attacker's pages are read in a child process: the memory and the turns measured are the server's. */
function readPages(url: string, token: string, count: number): Promise<PageRead[]> {
  const child = spawn(process.execPath, ['-e', SEARCH_SCRIPT, url, token, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  return new Promise((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as PageRead[]) : reject(new Error(`client exited with ${code}: ${out}`)))));
}

/**
 * One block of BLOCK logs from `firstSeq`: every 16th of the first LARGE_PER_BLOCK × 16 is a large
 * log timed in the last second (the newest, so a newest-first page of 1,000 takes them from every
 * block), the rest small ones an hour older.
 */
function blockOfLogs(firstSeq: number, now: number): PackedLog[] {
  const filler = 'x'.repeat(MESSAGE_CHARS - 16);
  const metadata = { a: 'y'.repeat(METADATA_CHARS / 2), b: 'z'.repeat(METADATA_CHARS / 2 - 40) };
  return Array.from({ length: BLOCK }, (_, i) => {
    const seq = firstSeq + i;
    const large = i % 16 === 0 && i / 16 < LARGE_PER_BLOCK;
    return large
      ? { seq, ts: now - 1000 + seq, received_at: now, level: 2, source: 'large', message: `${seq} ${filler}`, metadata: JSON.stringify({ ...metadata, n: seq }) }
      : { seq, ts: now - 3_600_000 + seq, received_at: now, level: 2, source: 'small', message: `small ${seq}`, metadata: null };
  });
}

describeEngines('four limit=1000 searches over 124 KB logs that were packed', (engine) => {
  // Packing is done here, when the test asks (compact()), not by the compactor's timer.
  const s = useServer(engine, { env: { COMPACT_AFTER: 'off' } });
  const owner = useAccount(s);
  const project = useProject(s, owner, 'large logs, packed');
  const bystander = useProject(s, useAccount(s), 'bystander');

  beforeAll(async () => {
    // 16,384 logs, 1,000 of them of 124 KB (~124 MB), through the service in batches of 40 (no
    // HTTP: the setup is not the attack), without the plan's ingest rate.
    const now = s.clock.now();
    for (let b = 0; b < BLOCKS; b++) {
      const logs = blockOfLogs(b * BLOCK + 1, now);
      for (let at = 0; at < logs.length; at += 40) {
        const items = logs.slice(at, at + 40).map((l) => ({ value: { message: l.message, level: 'info', source: l.source, timestamp: l.ts, ...(l.metadata === null ? {} : { metadata: JSON.parse(l.metadata) as object }) } }));
        await ingested(s, project.id, items, `logs ${b * BLOCK + at + 1} to ${b * BLOCK + at + items.length}`);
      }
    }
    await s.app.services.logs.drain();
    // Summarised now, as a server that has run a while would have them.
    while ((await s.app.services.logs.buildIndex()) > 0);
  }, 600_000);

  /** The attack: four searches of one user at once, beside the bystander. */
  async function fourPages(label: string): Promise<PageRead[]> {
    const url = `${s.url}/v1/projects/${project.id}/logs?limit=1000`;
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const { result, report } = await beside(s, bystander.apiKey, () => readPages(url, owner.accessToken, 4), { label });
    delay.disable();
    console.log(`[reads-packs ${engine}] ${label}: event loop delay max ${(delay.max / 1e6).toFixed(1)} ms, peak RSS ${report.peakRssMb} MB, answers ${JSON.stringify(result.map((r) => [r.status, r.logs, Math.round(r.bytes / MB)]))}`);
    expectUnharmed(report);
    // Every search read its full page of 1,000 large logs, or was told to come back (its user had
    // SEARCHES_PER_USER running and the wait ran out).
    for (const r of result) {
      if (r.status === 429) expect(Number(r.retryAfter)).toBeGreaterThan(0);
      else {
        expect(r.status).toBe(200);
        expect(r.logs).toBe(1000);
        expect(r.bytes).toBeGreaterThan(1000 * 120_000);
      }
    }
    expect(result.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(SEARCHES_PER_USER);
    return result;
  }

  it('in rows (before packing): the bystander is unharmed', async () => {
    await fourPages('four limit=1000 searches of 124 KB logs in rows, mixed into blocks of small ones');
  }, 300_000);

  it('packed: every pack decoded a bounded slice per turn, every walk of a pack a bounded slice of text per turn, and the bystander is unharmed', async () => {
    const packed = await s.app.services.logs.compact();
    expect(packed).toBe(BLOCKS);
    const packs = await s.database.db.selectFrom('log_blocks').select(['logs', 'packed']).where('project_id', '=', project.id).where('packed', '>', 0).execute();
    expect(packs.map((p) => Number(p.logs))).toEqual(Array.from({ length: BLOCKS }, () => BLOCK));
    // A few KB of pack each, for ~31 MB of text each (within BLOCK × PACK_BYTES_PER_LOG).
    for (const p of packs) expect(Number(p.packed)).toBeLessThan(BLOCK * PACK_BYTES_PER_LOG);
    resetDecodeStats();
    const mergesBefore = mergeStats();
    await fourPages('four limit=1000 searches of 124 KB logs in four packs of ~31 MB of text');
    const decodes = decodeStats();
    const merges = mergeStats();
    console.log(`[reads-packs ${engine}] decodes ${JSON.stringify(decodes)}, merges ${JSON.stringify({ slices: merges.slices - mergesBefore.slices, maxSliceBytes: merges.maxSliceBytes })}`);
    // The pages read the packs: each of the four at least once, ~31 MB of body each.
    const decoded = decodes.packs;
    expect(decoded).toBeGreaterThanOrEqual(BLOCKS);
    // Before, each was decoded in one turn: maxTurnBytes was a whole body (~31 MB). Now at most
    // DECODE_SLICE_BYTES a turn, so each pack takes ~30 turns.
    expect(decodes.maxTurnBytes).toBeLessThanOrEqual(DECODE_SLICE_BYTES);
    expect(decodes.turns).toBeGreaterThanOrEqual(decoded * Math.floor((LARGE_PER_BLOCK * 124_000) / DECODE_SLICE_BYTES));
    // Pages walked the packs' logs (sizing the 1,000 large ones they keep) a slice at a time: at
    // most MERGE_SLICE_BYTES of text each (every log here is smaller than a slice).
    expect(merges.maxSliceBytes).toBeLessThanOrEqual(MERGE_SLICE_BYTES);
    expect(merges.slices - mergesBefore.slices).toBeGreaterThanOrEqual(Math.floor((1000 * 124_000) / MERGE_SLICE_BYTES));
  }, 300_000);
});

/** Ingests `items` through the service, offered again while it is refused for load (429/503). */
async function ingested(s: TestServer, projectId: string, items: { value: unknown }[], what: string): Promise<void> {
  await waitFor(
    async () => {
      try {
        await s.app.services.logs.ingest(projectId, 'enterprise', items as never);
        return true;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code !== 'RATE_LIMITED' && code !== 'OVERLOADED') throw err;
        return false;
      }
    },
    60_000,
    `the server to take ${what}`,
    200,
  );
}

describe('decoding a pack in slices', () => {
  const log = fc.record({
    seq: fc.integer({ min: 1, max: 2 ** 40 }),
    ts: fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
    received_at: fc.integer({ min: 0, max: 2 ** 45 }),
    level: fc.integer({ min: 0, max: 5 }),
    source: fc.option(fc.string(), { nil: null }),
    // Texts that start with U+FEFF (once read as a byte-order mark and dropped) and cross the
    // decoder's steps at any character, surrogate pairs included.
    message: fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }).map((t) => `\uFEFF${t}`), fc.integer({ min: 0, max: 3 * DECODE_STEP_BYTES }).map((n) => '€😀a'.repeat(Math.ceil(n / 4)))).map((s) => s.toWellFormed()),
    metadata: fc.oneof(fc.constant(null), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })).map((o) => JSON.stringify(o)), fc.string().map((t) => `\uFEFF${t}`)),
  });

  it('gives back exactly what the whole decoding gives, and what was packed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(log, { maxLength: 12 }), fc.integer({ min: 1, max: 3 * DECODE_STEP_BYTES }), async (logs: PackedLog[], slice) => {
        const body = encodeBody(logs);
        expect(decodeBody(body)).toEqual(logs);
        expect(await decodeBodySliced(body, slice)).toEqual(logs);
      }),
      { numRuns: 40 },
    );
  });

  it(`a 31 MB pack of a few KB is decoded at most ${DECODE_SLICE_BYTES / MB} MiB per turn of the event loop, off the loop's thread for the codec`, async () => {
    const logs = blockOfLogs(1, Date.now());
    const bytes = await pack(logs);
    // What makes it an attack: the pack is small, what it gives back is not.
    expect(bytes.length).toBeLessThan(64 * 1024);
    resetDecodeStats();
    const turns = { n: 0 };
    const ticking = setInterval(() => turns.n++, 0);
    const decoded = await unpackSliced(bytes);
    clearInterval(ticking);
    const after = decodeStats();
    const text = logs.reduce((n, l) => n + l.message.length + (l.metadata?.length ?? 0), 0);
    expect(text).toBeGreaterThan(30_000_000);
    expect(after.packs).toBe(1);
    // The body, a slice at a time: at least a turn per DECODE_SLICE_BYTES of its text.
    expect(after.turns).toBeGreaterThanOrEqual(Math.floor(text / DECODE_SLICE_BYTES));
    expect(after.maxTurnBytes).toBeLessThanOrEqual(DECODE_SLICE_BYTES);
    // Timers ran while it decoded: the event loop went round in between.
    expect(turns.n).toBeGreaterThan(1);
    // The same logs as the decoding in one go (which counts its whole body as one turn).
    expect(decoded).toEqual(unpack(bytes));
    expect(decodeStats().maxTurnBytes).toBeGreaterThan(30_000_000);
  });

  it('a block of 1,000,000 small logs (the largest INDEX_BLOCK_LOGS): its columns of numbers go in steps too', async () => {
    const logs: PackedLog[] = Array.from({ length: 1_000_000 }, (_, i) => ({ seq: i + 1, ts: 1_700_000_000_000 + i, received_at: 1_700_000_000_000 + i, level: i % 6, source: i % 2 ? 'api' : null, message: 'ok', metadata: null }));
    const body = encodeBody(logs);
    resetDecodeStats();
    expect(await decodeBodySliced(body)).toEqual(logs);
    expect(decodeStats().maxTurnBytes).toBeLessThanOrEqual(DECODE_SLICE_BYTES);
  }, 120_000);
});
