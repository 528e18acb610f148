/**
 * Issue 25, finding 4: ordinary large reads stalled the server and pinned memory. With 2,100 logs
 * of ~124 KB (a 64 KB message and 60 KB of metadata, inside the limits), four concurrent
 * `limit=1000` searches froze /healthz for seconds and took the process to 2.8 GB; a client that
 * asked for a page and never read it pinned ~200 MB; five tails replaying from Last-Event-ID 0 with
 * a filter that matched nothing stalled everyone. Pages are now read from the database in chunks
 * bounded by bytes, serialised chunk by chunk and written with back-pressure, a user runs at most
 * two searches at once, and tail replay goes in byte-bounded slices with a turn of the event loop
 * between them (docs/reliability.md, "Hostile tenant").
 *
 * The attackers that read pages run in a child process: the memory measured is the server's (this
 * process's), not that of a client holding 124 MB answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { beforeAll, expect, it } from 'vitest';
import { describeEngines, openTail, signup, useAccount, useProject, useServer, waitFor } from './harness.js';
import { beside, expectUnharmed, ingestPatiently, SEARCH_SCRIPT, type PageRead } from './hostile.js';
import { PAGE_CHUNK_BYTES, SEARCHES_PER_USER } from '../src/features/logs/read/page-stream.js';
import { TAIL_SLICE_BYTES } from '../src/features/logs/live/tail.js';
import { SCAN_CHUNK_BYTES } from '../src/features/logs/read/reader.js';

const LOGS = 2100;
const MESSAGE_CHARS = 64 * 1000;
const METADATA_CHARS = 60 * 1000;
const MB = 1024 * 1024;
/** PAGE_STALL_TIMEOUT for this file's server (30 s by default): the stalled-pages test waits that long. */
const STALL_MS = 10_000;

function runChild(script: string, args: string[]): { child: ChildProcess; output: Promise<string> } {
  const child = spawn(process.execPath, ['-e', script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  const output = new Promise<string>((resolve, reject) => {
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`client exited with ${code}: ${out}`))));
  });
  return { child, output };
}

/**
 * Opens `count` raw connections that each ask for a page, read its first bytes (the status line
 * and the start of the body), and then never read again: the rest stays in the kernel's buffers,
 * which fill, and the server must stop producing. Prints `ready` once every one has its first
 * bytes (or its whole answer, for a refusal), and holds the sockets until stdin closes.
 */
const STALL_SCRIPT = `
const net = require('node:net');
const [host, port, path, tokens, count] = process.argv.slice(1);
const list = tokens.split(',');
const firsts = [];
let ready = 0;
for (let i = 0; i < Number(count); i++) {
  const socket = net.connect(Number(port), host, () => {
    socket.write('GET ' + path + ' HTTP/1.1\\r\\nhost: ' + host + '\\r\\nauthorization: Bearer ' + list[i % list.length] + '\\r\\n\\r\\n');
  });
  let got = '';
  const first = (c) => {
    got += c.toString('latin1');
    if (got.length < 16384 && !/^HTTP\\/1\\.1 [^2]/.test(got)) return;
    socket.off('data', first);
    socket.pause();
    firsts[i] = got.slice(0, 12);
    if (++ready === Number(count)) process.stdout.write('ready ' + JSON.stringify(firsts) + '\\n');
  };
  socket.on('data', first);
  socket.on('error', () => {});
}
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.exit(0));
`;

const rssMb = () => process.memoryUsage().rss / MB;

describeEngines('large reads are bounded, streamed and back-pressured', (engine) => {
  const s = useServer(engine, { env: { PAGE_STALL_TIMEOUT: `${STALL_MS / 1000}s` } });
  const owner = useAccount(s);
  const project = useProject(s, owner, 'large logs');
  const bystander = useProject(s, useAccount(s), 'bystander');

  beforeAll(async () => {
    // 2,100 logs of ~124 KB each (~260 MB), through the service in batches of 40 (no HTTP: the
    // setup is not the attack), without the plan's ingest rate.
    const filler = 'x'.repeat(MESSAGE_CHARS - 16);
    const metadata = { a: 'y'.repeat(METADATA_CHARS / 2), b: 'z'.repeat(METADATA_CHARS / 2 - 40) };
    for (let sent = 0; sent < LOGS; ) {
      const n = Math.min(40, LOGS - sent);
      const items = Array.from({ length: n }, (_, i) => ({ value: { message: `${sent + i} ${filler}`, level: 'info', source: 'big', metadata: { ...metadata, n: sent + i } } }));
      // Refused (429/503) while the work that follows earlier commits (alert evaluation) is behind:
      // offered again until the server takes it.
      await ingestPatiently(s, project.id, items, `the server to take logs ${sent} to ${sent + n - 1}`, 200);
      sent += n;
    }
    await s.app.services.logs.drain();
    // The skip index summarises them now, as a server that has run a while would have: its build
    // is not the attack measured here.
    while ((await s.app.services.logs.buildIndex()) > 0);
  }, 600_000);

  it('four concurrent limit=1000 searches: the bystander is unharmed and memory grows by at most 256 MB', async () => {
    const url = `${s.url}/v1/projects/${project.id}/logs?limit=1000`;
    const before = rssMb();
    const { result, report } = await beside(s, bystander.apiKey, async () => JSON.parse(await runChild(SEARCH_SCRIPT, [url, owner.accessToken, '4']).output) as PageRead[], { label: 'four limit=1000 searches of 124 KB logs' });
    expectUnharmed(report);
    const growth = report.peakRssMb - before;
    console.log(`[reads ${engine}] RSS before ${Math.round(before)} MB, peak ${report.peakRssMb} MB, answers ${JSON.stringify(result.map((r) => [r.status, r.logs, r.bytes]))}`);
    // Each full page is ~124 MB of JSON: before the fix every one was built whole in memory (+1.5 GB
    // for the four). What remains is garbage the collector has not taken back yet.
    expect(growth).toBeLessThan(256);
    // Every search either read its full page (the same JSON shape, a cursor to continue) or was
    // told to come back (its user had SEARCHES_PER_USER running and the wait ran out).
    for (const r of result) {
      if (r.status === 429) expect(Number(r.retryAfter)).toBeGreaterThan(0);
      else {
        expect(r.status).toBe(200);
        expect(r.logs).toBe(1000);
        expect(r.end).toMatch(/\}\],"nextCursor":"[A-Za-z0-9_-]+"\}$/);
      }
    }
    expect(result.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(SEARCHES_PER_USER);
  }, 300_000);

  it('groupBy over every one of the 124 KB logs reads them a bounded chunk at a time: the bystander is unharmed and memory grows by at most 256 MB', async () => {
    const url = `/v1/projects/${project.id}/logs/stats?from=0&groupBy=${encodeURIComponent('@a')}`;
    const scansBefore = s.app.services.logs.scanStats();
    const before = rssMb();
    const { result, report } = await beside(s, bystander.apiKey, () => s.request('GET', url, { token: owner.accessToken }), { label: 'groupBy over 2,100 logs of 124 KB' });
    expectUnharmed(report);
    expect(result.status, result.text).toBe(200);
    const groups: Record<string, number> = {};
    for (const b of result.body.buckets as { groups: Record<string, number> }[]) for (const [name, n] of Object.entries(b.groups)) groups[name] = (groups[name] ?? 0) + n;
    // Every log holds the same 30,000-character value: one group, named by its first 200 characters and a hash.
    expect(Object.values(groups)).toEqual([LOGS]);
    expect(Object.keys(groups)[0]!.length).toBeLessThan(256);
    const growth = report.peakRssMb - before;
    const scans = s.app.services.logs.scanStats();
    console.log(`[reads ${engine}] groupBy: RSS before ${Math.round(before)} MB, peak ${report.peakRssMb} MB, ${scans.chunks - scansBefore.chunks} chunks of at most ${Math.round(scans.maxChunkBytes / 1024)} KiB`);
    // Before, the scan read 2,000 logs a round: ~250 MB of rows at once. Now each chunk holds at
    // most SCAN_CHUNK_BYTES of text (or one log more), so the ~260 MB take dozens of chunks.
    expect(scans.maxChunkBytes).toBeLessThanOrEqual(SCAN_CHUNK_BYTES + 130 * 1024);
    expect(scans.chunks - scansBefore.chunks).toBeGreaterThanOrEqual(Math.floor((LOGS * 124_000) / (SCAN_CHUNK_BYTES + 130 * 1024)));
    // The whole process's RSS, with the collector left to its own pace (94 to 146 MB measured: the
    // chunks already decided are garbage not yet collected): a loose bound, where all 260 MB held at
    // once would go over it. The chunks above are the mechanism's own measure.
    expect(growth).toBeLessThan(256);
  }, 300_000);

  it('three exports of every 124 KB log at once: two stream (the third is refused while they run), the bystander is unharmed and memory grows by at most 256 MB', async () => {
    const url = `${s.url}/v1/projects/${project.id}/logs/export?format=ndjson&from=0`;
    const before = rssMb();
    const { result, report } = await beside(s, bystander.apiKey, async () => JSON.parse(await runChild(SEARCH_SCRIPT, [url, owner.accessToken, '3']).output) as PageRead[], { label: 'three exports of 2,100 logs of 124 KB' });
    expectUnharmed(report);
    const growth = report.peakRssMb - before;
    console.log(`[reads ${engine}] exports: RSS before ${Math.round(before)} MB, peak ${report.peakRssMb} MB, ${result.map((r) => (r.status === 200 ? `${Math.round(r.bytes / MB)} MB` : String(r.status))).join(', ')}`);
    // Every log, whole, in each export that ran: ~260 MB each, streamed a chunk of at most 1 MiB at
    // a time. A third of the same user while two run is 429 (unless one had already finished).
    for (const r of result) {
      if (r.status === 429) expect(Number(r.retryAfter)).toBeGreaterThan(0);
      else {
        expect(r.status).toBe(200);
        expect(r.logs).toBe(LOGS);
        expect(r.bytes).toBeGreaterThan(LOGS * 120_000);
      }
    }
    expect(result.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2);
    expect(growth).toBeLessThan(256);
  }, 300_000);

  it('12 clients that ask for a page and never read it hold at most 64 MB, and their pages are ended after PAGE_STALL_TIMEOUT', async () => {
    // Six users of the project (members added directly), two searches each: every one streams.
    const tokens: string[] = [owner.accessToken];
    for (let i = 1; i < 6; i++) {
      const member = await signup(s);
      await s.database.db.insertInto('project_members').values({ project_id: project.id, user_id: member.id, role: 'member', joined_at: Date.now(), notifications_muted: 0 }).execute();
      tokens.push(member.accessToken);
    }
    const { hostname, port } = new URL(s.url);
    const before = rssMb();
    let peak = before;
    const watch = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
    const { child, output } = runChild(STALL_SCRIPT, [hostname, port, `/v1/projects/${project.id}/logs?limit=1000`, tokens.join(','), '12']);
    const firsts = await new Promise<string[]>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c;
        const m = /ready (.*)\n/.exec(out);
        if (m) resolve(JSON.parse(m[1]!) as string[]);
      });
      output.catch(reject);
    });
    expect(firsts.filter((f) => !f.startsWith('HTTP/1.1 200'))).toEqual([]);
    // The server has gone as far as the back-pressure lets it: every page waits for its reader.
    const reads = s.app.services.logs.pageReads;
    // (Before the fix there was nothing to ask: the pages were built whole, and memory tells.)
    await waitFor(() => reads?.stats().stalled === 12 || Math.max(peak, rssMb()) - before >= 64, 60_000, 'all 12 pages to wait for their readers');
    clearInterval(watch);
    const produced = reads?.stats().bytesProduced ?? 0;
    peak = Math.max(peak, rssMb());
    console.log(`[reads ${engine}] 12 stalled pages: RSS before ${Math.round(before)} MB, peak ${Math.round(peak)} MB, produced ${Math.round(produced / MB)} MB of 12 × ~124 MB`);
    // 12 pages of ~124 MB: before the fix each was held whole (~200 MB each).
    expect(peak - before).toBeLessThan(64);
    // What the server produced for them is what the kernel's buffers took plus a few chunks each.
    expect(reads.stats().maxChunkBytes).toBeLessThanOrEqual(PAGE_CHUNK_BYTES + 130 * 1024);
    // A page whose client reads nothing for PAGE_STALL_TIMEOUT is ended, and its user's slot comes back.
    await waitFor(() => reads.stats().running === 0, STALL_MS + 30_000, 'the stalled pages to be ended');
    expect(reads.stats().stalled).toBe(0);
    child.stdin!.end();
    await output;
  }, 300_000);

  it('five tails replaying from Last-Event-ID 0 with a filter that matches nothing: the bystander is unharmed, and replay goes in bounded slices', async () => {
    const hub = s.app.services.logs.hub;
    const { report } = await beside(s, bystander.apiKey, async () => {
      const tails = await Promise.all(Array.from({ length: 5 }, () => openTail(s, owner.accessToken, project.id, { query: 'level=fatal', lastEventId: '0' })));
      for (const t of tails) expect(t.status).toBe(200);
      // A fatal log after the replay: each tail gets it once it has been through all 2,100.
      await waitFor(() => hub.replayStats?.slices > 0, 60_000, 'replay to begin');
      const res = await s.request('POST', '/v1/logs', { body: [{ message: 'the end', level: 'fatal' }], headers: { 'x-api-key': project.apiKey } });
      expect(res.status).toBe(202);
      for (const t of tails) await t.waitFor(() => t.logs().some((l) => l.message === 'the end'), 240_000);
      for (const t of tails) {
        expect(t.logs().map((l) => l.message)).toEqual(['the end']);
        t.close();
      }
    }, { label: 'five tails replaying 2,100 logs of 124 KB, matching nothing' });
    expectUnharmed(report);
    const stats = hub.replayStats;
    console.log(`[reads ${engine}] tail replay ${JSON.stringify(stats)}`);
    // Each slice read and tested at most TAIL_SLICE_BYTES (or one log larger than that).
    expect(stats.maxSliceBytes).toBeLessThanOrEqual(Math.max(TAIL_SLICE_BYTES, 130 * 1024));
    expect(stats.slices).toBeGreaterThanOrEqual((5 * LOGS * 124_000) / TAIL_SLICE_BYTES / 2);
  }, 300_000);
});
