/**
 * Issue 40: the shipper intakes (Elasticsearch bulk, Loki push, Splunk HEC) as a hostile tenant
 * uses them. Every protocol item costs before it costs the server: whatever its kind (a document,
 * a delete or update action, a stream with no entries), an item counts against the request's item
 * cap (10,000) and a token of the plan's rate; a snappy body is claimed at the size it states it
 * decodes to before it is decoded, and a push is read in slices with event-loop turns between them;
 * an answer is bounded by the item cap and held in the request's in-flight claim until it is read.
 * And no JSON a protocol takes, nested however deep, is a 500.
 */
import { gzipSync } from 'node:zlib';
import snappy from 'snappy';
import { expect, it } from 'vitest';
import { beside, expectUnharmed } from './hostile.js';
import { createProject, describeEngines, holdCommits, ingest, setPlan, signup, useServer, waitFor, type Account, type TestServer } from './harness.js';
import { IngestAdmission } from '../src/features/logs/ingest/admission.js';
import { inflation } from '../src/features/logs/ingest/body.js';
import { IngestRateLimiter, ItemCharge } from '../src/features/logs/ingest/rate-limit.js';
import { PUSH_SLICE_ITEMS, pushReading, PushRequest } from '../src/features/logs/ingest/loki.js';

/** The bulk answer of one item is a couple of hundred bytes: an answer is at most the item cap times this. */
const MOST_BYTES_PER_ITEM = 300;
const MAX_ITEMS = 10_000;

async function logCount(s: TestServer, account: Account, projectId: string): Promise<number> {
  const res = await s.request('GET', `/v1/projects/${projectId}`, { token: account.accessToken });
  expect(res.status).toBe(200);
  return res.body.logCount as number;
}

interface Answer {
  status: number;
  retryAfter: string | null;
  bytes: number;
  text: string;
}

async function post(s: TestServer, path: string, apiKey: string, body: string | Buffer, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'x-api-key': apiKey, ...headers }, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, retryAfter: res.headers.get('retry-after'), bytes: bytes.length, text: bytes.subarray(0, 2000).toString('utf8') };
}

/** `n` bulk delete actions, gzipped: 374,484 of them are ~10 KB. */
const deletes = (n: number) => gzipSync(Buffer.from('{"delete":{}}\n'.repeat(n)));
const bulk = (s: TestServer, apiKey: string, body: Buffer) => post(s, '/es/_bulk', apiKey, body, { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' });

/** A Loki PushRequest of `n` streams with no entries (two bytes each), snappy-compressed: 2.6 million are ~245 KB. */
function emptyStreams(n: number): Buffer {
  return snappy.compressSync(Buffer.alloc(n * 2, Buffer.from([0x0a, 0x00])));
}
const push = (s: TestServer, apiKey: string, body: Buffer) => post(s, '/loki/api/v1/push', apiKey, body, { 'content-type': 'application/x-protobuf' });

describeEngines('hostile shippers', (engine) => {
  // A project's share of in-flight bytes is 4 MiB here, so that a body claimed at its decoded size
  // (5 MiB) is refused beside another request of the project, where its compressed size was not.
  const s = useServer(engine, { env: { INGEST_PROJECT_INFLIGHT_BYTES: String(4 * 1024 * 1024) } });

  it('/es/_bulk delete actions: 374,484 gzipped to ~10 KB are 413 at the item cap (a 67 MB answer before); a flood of 10,000 each is charged to the rate, answered within the item cap\'s bytes, then 429 with Retry-After; the bystander is unharmed', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'deleter');
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    const bomb = deletes(374_484);
    expect(bomb.length).toBeLessThan(12 * 1024);
    const flood = deletes(MAX_ITEMS);

    const { result, report } = await beside(s, vp.apiKey, async () => {
      const big = await Promise.all([bulk(s, ap.apiKey, bomb), bulk(s, ap.apiKey, bomb), bulk(s, ap.apiKey, bomb)]);
      const floods: Answer[] = [];
      for (let i = 0; i < 6; i++) floods.push(await bulk(s, ap.apiKey, flood));
      return { big, floods };
    }, { label: 'ES bulk delete actions', minMs: 2000 });
    console.log(`[hostile ${engine}] ES bulk deletes: bomb ${result.big.map((a) => `${a.status}/${a.bytes} B`).join(', ')}; flood ${result.floods.map((a) => `${a.status}/${a.bytes} B`).join(', ')}`);

    for (const answer of result.big) {
      // Past the item cap: refused whole, in Elasticsearch's error body, in a few hundred bytes; or,
      // beside another of them, refused for the 5 MiB it decodes to (the project's in-flight share).
      expect([413, 429]).toContain(answer.status);
      if (answer.status === 429) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { type: answer.status === 413 ? 'content_too_long_exception' : 'es_rejected_execution_exception' }, status: answer.status });
      expect(answer.bytes).toBeLessThan(1024);
    }
    expect(result.big.some((a) => a.status === 413)).toBe(true);
    const answered = result.floods.filter((a) => a.status === 200);
    const refused = result.floods.filter((a) => a.status === 429);
    expect(answered.length + refused.length).toBe(result.floods.length);
    // The free plan's bucket holds 10,000 tokens and refills 1,000 a second: each flood takes all of
    // it, so most of six back-to-back floods are refused.
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of answered) {
      // An answer of 10,000 items, each failed alone: a couple of megabytes, never more than the cap allows.
      expect(answer.text).toMatch(/^\{"took":\d+,"errors":true,"items":\[\{"delete":\{"_index":"","status":400,"error":\{"type":"illegal_argument_exception"/);
      expect(answer.bytes).toBeGreaterThan(MAX_ITEMS * 100);
      expect(answer.bytes).toBeLessThanOrEqual(MAX_ITEMS * MOST_BYTES_PER_ITEM);
    }
    for (const answer of refused) {
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { type: 'es_rejected_execution_exception' }, status: 429 });
      expect(answer.bytes).toBeLessThan(1024);
    }
    expectUnharmed(report);
    expect(await logCount(s, victim, vp.id)).toBe(report.acknowledgedLogs);
    expect(await logCount(s, attacker, ap.id)).toBe(0);

    // The delete actions took the rate: a body with a document among them waits for it like any
    // other, answered item by item as the clients retry (429 each, Retry-After), within the same bytes.
    const mixed = gzipSync(Buffer.from('{"index":{}}\n{"message":"among the deletes"}\n' + '{"delete":{}}\n'.repeat(MAX_ITEMS - 1)));
    const answer = await bulk(s, ap.apiKey, mixed);
    expect(answer.status).toBe(200);
    expect(answer.bytes).toBeLessThanOrEqual(MAX_ITEMS * MOST_BYTES_PER_ITEM);
    if (answer.text.startsWith('{"took":') && answer.text.includes('"status":429')) {
      expect(answer.text).toMatch(/^\{"took":\d+,"errors":true,"items":\[\{"index":\{"_index":"","status":429,"error":\{"type":"es_rejected_execution_exception"/);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(await logCount(s, attacker, ap.id)).toBe(0);
    } else {
      // The bucket had refilled (a slow machine): the document was stored.
      expect(answer.text).toMatch(/"status":201/);
    }
  }, 120_000);

  it('an answer held past the point of refusal (a bulk answer until it is read) counts in its project\'s in-flight bytes: the project\'s next request is refused while it is held', () => {
    const admission = new IngestAdmission({ perProjectBytes: 1000, totalBytes: 100_000 });
    const claim = admission.admit('p', 100);
    // Held whatever the share: the work it answers for is done.
    claim.hold(5000);
    expect(claim.bytes).toBe(5100);
    expect(admission.inFlightBytes).toBe(5100);
    expect(() => admission.admit('p', 10)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED' }));
    claim.release();
    expect(admission.inFlightBytes).toBe(0);
    expect(admission.admit('p', 10).bytes).toBe(10);
  });

  it('a request\'s items that are no logs take a token each, the bucket must hold its logs too, and a refused request gets back what it took', () => {
    const rate = new IngestRateLimiter({ free: 1000 }, () => 0);
    // 10,000 tokens: 4,000 actions and room for 6,000 documents pass, taking the 4,000 only.
    const first = new ItemCharge(rate, 'p', 'free');
    first.take(4000, 6000);
    expect(first.taken).toBe(4000);
    // 6,000 left: 3,000 more actions pass, but then there is no room for 4,000 documents: refused, and given back.
    const second = new ItemCharge(rate, 'p', 'free');
    expect(() => second.take(3000, 4000)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED' }));
    expect(second.taken).toBe(0);
    // The ingest path's own take of the first request's documents.
    rate.take('p', 'free', 6000);
    expect(() => rate.check('p', 'free', 1)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', retryAfter: 1 }));
  });

  it('Loki push of 2.6 million empty streams (~245 KB of snappy): 413 at the item cap after reading 10,001 of them in slices; 10,000 empty streams are charged to the rate (204, then 429 with Retry-After); the bystander is unharmed', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'empty streams');
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    const bomb = emptyStreams(2_600_000);
    expect(bomb.length).toBeLessThan(260 * 1024);
    const tenThousand = emptyStreams(MAX_ITEMS);

    const read0 = { ...pushReading };
    const { result, report } = await beside(s, vp.apiKey, async () => {
      const bombs = [await push(s, ap.apiKey, bomb), await push(s, ap.apiKey, bomb)];
      const afterBombs = { ...pushReading };
      const pushes: Answer[] = [];
      for (let i = 0; i < 3; i++) pushes.push(await push(s, ap.apiKey, tenThousand));
      return { bombs, afterBombs, pushes };
    }, { label: 'Loki push of 2.6 M empty streams', minMs: 2000 });
    console.log(`[hostile ${engine}] Loki empty streams: bombs ${result.bombs.map((a) => a.status).join(', ')}; pushes ${result.pushes.map((a) => a.status).join(', ')}; slices ${pushReading.slices - read0.slices}, items read ${pushReading.items - read0.items}, most items in a slice ${pushReading.mostItemsInASlice}`);

    for (const answer of result.bombs) {
      expect(answer.status).toBe(413);
      expect(answer.text).toMatch(/at most 10,000 entries/);
    }
    // Each bomb was read to its 10,001st item and no further, a slice of at most PUSH_SLICE_ITEMS at a time.
    expect(result.afterBombs.items - read0.items).toBe(2 * (MAX_ITEMS + 1));
    expect(result.afterBombs.slices - read0.slices).toBeGreaterThanOrEqual(2 * Math.ceil((MAX_ITEMS + 1) / PUSH_SLICE_ITEMS));
    expect(pushReading.mostItemsInASlice).toBeLessThanOrEqual(PUSH_SLICE_ITEMS);

    // 10,000 empty streams fill the free plan's bucket: the first is taken (204), then 429s.
    expect(result.pushes[0]!.status).toBe(204);
    const refused = result.pushes.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of result.pushes) expect([204, 429]).toContain(answer.status);
    for (const answer of refused) expect(Number(answer.retryAfter)).toBeGreaterThan(0);

    expectUnharmed(report);
    expect(await logCount(s, victim, vp.id)).toBe(report.acknowledgedLogs);
    expect(await logCount(s, attacker, ap.id)).toBe(0);
  }, 120_000);

  it('items read and then refused cost their tokens too: 10,000 bulk documents that are not JSON, or 10,000 Loki entries the checks refuse, answered once, then 429 with Retry-After', async () => {
    const attacker = await signup(s);
    const es = await createProject(s, attacker, 'unreadable documents');
    const garbage = gzipSync(Buffer.from('{"index":{}}\nnot a document\n'.repeat(MAX_ITEMS)));
    const first = await bulk(s, es.apiKey, garbage);
    expect(first.status).toBe(200);
    expect(first.text).toMatch(/^\{"took":\d+,"errors":true,"items":\[\{"index":\{"_index":"","status":400,"error":\{"type":"mapper_parsing_exception"/);
    expect(first.bytes).toBeLessThanOrEqual(MAX_ITEMS * MOST_BYTES_PER_ITEM);
    const second = await bulk(s, es.apiKey, garbage);
    expect(second.status).toBe(200);
    expect(second.text).toMatch(/^\{"took":\d+,"errors":true,"items":\[\{"index":\{"_index":"","status":429,"error":\{"type":"es_rejected_execution_exception"/);
    expect(Number(second.retryAfter)).toBeGreaterThan(0);

    const victim = await signup(s);
    const lp = await createProject(s, victim, 'refused entries');
    // Entries a year ahead: each refused by the checks ("more than 24 hours in the future").
    const ahead = `${BigInt(Date.now() + 365 * 86_400_000) * 1_000_000n}`;
    const refused = JSON.stringify({ streams: [{ stream: { job: 'ahead' }, values: Array.from({ length: MAX_ITEMS }, () => [ahead, 'from the future']) }] });
    const once = await post(s, '/loki/api/v1/push', lp.apiKey, refused, { 'content-type': 'application/json' });
    expect(once.status).toBe(400);
    expect(once.text).toMatch(/^10000 of 10000 entries were refused/);
    const again = await post(s, '/loki/api/v1/push', lp.apiKey, refused, { 'content-type': 'application/json' });
    expect(again.status).toBe(429);
    expect(Number(again.retryAfter)).toBeGreaterThan(0);
  }, 60_000);

  it('a JSON push of 10,000 streams with no entries is charged to the rate as 10,000 items: 204, then 429 with Retry-After', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'empty JSON streams');
    const body = JSON.stringify({ streams: Array.from({ length: MAX_ITEMS }, (_, i) => ({ stream: { job: `j${i}` }, values: [] })) });
    const read0 = pushReading.items;
    const first = await post(s, '/loki/api/v1/push', ap.apiKey, body, { 'content-type': 'application/json' });
    const second = await post(s, '/loki/api/v1/push', ap.apiKey, body, { 'content-type': 'application/json' });
    expect(first.status).toBe(204);
    expect(second.status).toBe(429);
    expect(Number(second.retryAfter)).toBeGreaterThan(0);
    // The second was read only until the rate refused a slice of it.
    expect(pushReading.items - read0).toBeLessThan(2 * MAX_ITEMS);
  }, 60_000);

  /**
   * Runs `fn` while one log of the project waits for its commit (its commits held), so the
   * project's in-flight claim is in use; that log is stored once they are let go.
   */
  async function whileClaimHeld(project: { id: string; apiKey: string }, fn: () => Promise<void>): Promise<void> {
    const held = await holdCommits(s.env, [project.id]);
    let waiting: Promise<{ status: number }> | undefined;
    try {
      const queue = s.app.services.logs.queue;
      const before = queue.inFlightBytes;
      waiting = ingest(s, project.apiKey, [{ message: 'waits for its commit' }]);
      await waitFor(() => queue.inFlightBytes > before, 5000, 'the first request to be admitted');
      await fn();
    } finally {
      await held.release();
    }
    expect((await waiting).status).toBe(202);
  }

  it('a snappy push is claimed at the size it decodes to before it is decoded: beside another request of its project, 2.6 million empty streams (5.2 MB decoded, 245 KB sent) are refused 429 with nothing read', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'claimed');
    const bomb = emptyStreams(2_600_000);
    await whileClaimHeld(ap, async () => {
      const read0 = pushReading.items;
      const answer = await push(s, ap.apiKey, bomb);
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(pushReading.items - read0).toBe(0);
    });
  }, 60_000);

  it('a gzipped body is claimed as it is inflated: beside another request of its project, a bulk body of 5 MiB gzipped is refused 429 once its inflated bytes pass the project\'s share, not after all 5 MiB', async () => {
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'inflated');
    const body = gzipSync(Buffer.alloc(5 * 1024 * 1024 - 1, ' '));
    await whileClaimHeld(ap, async () => {
      const inflated0 = inflation.bytes;
      const answer = await bulk(s, ap.apiKey, body);
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      // The project's share is 4 MiB: inflation stopped within a chunk of it.
      expect(inflation.bytes - inflated0).toBeLessThan(4.25 * 1024 * 1024);
    });
  }, 60_000);

  it('JSON nested 10,000 deep in every place the shipper protocols take it is refused with 400 (the item alone where the protocol says so), never a 500', async () => {
    const owner = await signup(s);
    const p = await createProject(s, owner, 'deep');
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    const deepArray = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);
    const N = 10_000;
    const ns = `${BigInt(Date.now()) * 1_000_000n}`;
    const json = { 'content-type': 'application/json' };
    const cases: [string, string, string, Record<string, string>][] = [
      ['HEC event as an object', '/services/collector/event', `{"event":${deep(N)}}`, json],
      ['HEC event as an array', '/services/collector/event', `{"event":${deepArray(N)}}`, json],
      ['HEC fields', '/services/collector/event', `{"event":"x","fields":${deep(N)}}`, json],
      ['HEC host', '/services/collector/event', `{"event":"x","host":${deep(N)}}`, json],
      ['HEC time', '/services/collector/event', `{"event":"x","time":${deep(N)}}`, json],
      ['Loki label', '/loki/api/v1/push', `{"streams":[{"stream":{"job":${deep(N)}},"values":[["${ns}","x"]]}]}`, json],
      ['Loki structured metadata', '/loki/api/v1/push', `{"streams":[{"stream":{"job":"j"},"values":[["${ns}","x",{"m":${deepArray(N)}}]]}]}`, json],
      ['Loki line that is JSON', '/loki/api/v1/push', `{"streams":[{"stream":{"job":"j"},"values":[["${ns}",${JSON.stringify(`{"b":${deep(N)}}`)}]]}]}`, json],
      ['ES document', '/es/_bulk', `{"index":{}}\n${deep(N)}\n`, { 'content-type': 'application/x-ndjson' }],
      ['ES action metadata', '/es/_bulk', `{"index":${deep(N)}}\n{"message":"m"}\n`, { 'content-type': 'application/x-ndjson' }],
    ];
    const statuses: Record<string, number> = {};
    for (const [name, path, body] of cases) {
      const answer = await post(s, path, p.apiKey, body, cases.find((c) => c[0] === name)![3]);
      statuses[name] = answer.status;
      if (path === '/es/_bulk' && answer.status === 200) {
        // Elasticsearch's dialect: the document fails alone (400), or the action's odd metadata is ignored.
        const item = (JSON.parse(answer.text) as { items: { index: { status: number } }[] }).items[0]!.index;
        statuses[name] = item.status;
      }
    }
    console.log(`[hostile ${engine}] deep nesting: ${JSON.stringify(statuses)}`);
    expect(statuses).toEqual({
      'HEC event as an object': 400,
      'HEC event as an array': 400,
      'HEC fields': 400,
      'HEC host': 400,
      'HEC time': 400,
      'Loki label': 400,
      'Loki structured metadata': 400,
      'Loki line that is JSON': 400,
      'ES document': 400,
      'ES action metadata': 201,
    });
    // The one log stored is the last case's document: every deep one was refused.
    expect(await logCount(s, owner, p.id)).toBe(1);
  }, 60_000);

  it('a protobuf push with 10,001 entries in one stream, or 10,000 entries and an empty stream, is 413; 10,000 entries are stored', async () => {
    const owner = await signup(s);
    // Pro: its bucket holds the three pushes' items.
    await setPlan(s, owner.id, 'pro');
    const p = await createProject(s, owner, 'cap');
    const sec = Math.floor(Date.now() / 1000);
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ timestamp: { seconds: sec, nanos: i }, line: `l${i}` }));
    const encode = (streams: unknown[]) => snappy.compressSync(Buffer.from(PushRequest.encode(PushRequest.fromObject({ streams })).finish()));
    expect((await push(s, p.apiKey, encode([{ labels: '{job="a"}', entries: entries(MAX_ITEMS + 1) }]))).status).toBe(413);
    expect((await push(s, p.apiKey, encode([{ labels: '{job="a"}', entries: entries(MAX_ITEMS) }, { labels: '{job="b"}' }]))).status).toBe(413);
    expect((await push(s, p.apiKey, encode([{ labels: '{job="a"}', entries: entries(MAX_ITEMS) }]))).status).toBe(204);
    expect(await logCount(s, owner, p.id)).toBe(MAX_ITEMS);
  }, 60_000);
});
