/**
 * A cluster: three `loglane serve` processes on one PostgreSQL database, sharing SECRET_KEY. Every
 * limit, rotation, fan-out and firing must hold exactly as on one node. (SQLite is one node by
 * design, so this runs on PostgreSQL only.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAlertMarker, type Node } from './alert-marker.js';
import { createTestDatabase, describeEngines, request, spawnServer, waitFor, type ServerProcess, type TestDatabase } from './harness.js';

const FULL = process.env.LOGLANE_RELIABILITY === 'full';
const ROTATION_REQUESTS = FULL ? 600 : 150;

describeEngines('cluster of three nodes', (engine) => {
  if (engine !== 'postgres') {
    it.skip('runs on PostgreSQL only (SQLite serves one node)', () => {});
    return;
  }
  let db: TestDatabase;
  let nodes: ServerProcess[] = [];
  const url = (i: number) => nodes[i % nodes.length]!.url;
  const node = (i: number): Node => ({ request: (method, path, options) => request(url(i), method, path, options) });

  beforeAll(async () => {
    db = await createTestDatabase(engine);
    const env = { ...db.env, LOGIN_MAX_ATTEMPTS: '4', DEFAULT_PLAN: 'free' };
    // Start one first so migrations run once, then the other two together.
    nodes = [await spawnServer(env)];
    // Each node that did start is kept, so that afterAll stops it even when the other did not.
    const started = await Promise.allSettled([spawnServer(env), spawnServer(env)]);
    for (const r of started) if (r.status === 'fulfilled') nodes.push(r.value);
    for (const r of started) if (r.status === 'rejected') throw r.reason;
  }, 60_000);
  afterAll(async () => {
    for (const n of nodes) n.child.kill('SIGTERM');
    const codes = await Promise.all(nodes.map((n) => n.exited));
    await db?.drop();
    // Every node that started (all three, unless the start itself failed) stopped cleanly.
    expect(codes).toEqual(nodes.map(() => 0));
  });

  async function account(i = 0) {
    const email = `cluster-${randomBytes(4).toString('hex')}@example.com`;
    const res = await request(url(i), 'POST', '/v1/auth/signup', { body: { email, password: 'long enough' } });
    return { email, password: 'long enough', token: res.body.accessToken as string, refresh: res.body.refreshToken as string };
  }

  it('login throttling counts failures from every node', async () => {
    const a = await account();
    for (let i = 0; i < 4; i++) expect((await request(url(i), 'POST', '/v1/auth/login', { body: { email: a.email, password: 'wrong password' } })).status).toBe(401);
    for (let i = 0; i < 3; i++) {
      const res = await request(url(i), 'POST', '/v1/auth/login', { body: { email: a.email, password: a.password } });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
  });

  it('ten parallel refreshes of one token over three nodes: exactly one success', async () => {
    const a = await account();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => request(url(i), 'POST', '/v1/auth/refresh', { body: { refreshToken: a.refresh } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(9);
  });

  it('plan caps hold: twenty parallel creates over three nodes at a cap of 1 make one project', async () => {
    const a = await account();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => request(url(i), 'POST', '/v1/projects', { token: a.token, body: { name: `p${i}` } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 403)).toHaveLength(19);
  });

  it('key rotation: during concurrent ingest every request is stored with 202 or refused with 401; afterwards the old key fails everywhere', async () => {
    const a = await account();
    const p = (await request(url(0), 'POST', '/v1/projects', { token: a.token, body: { name: 'rotating' } })).body;
    let rotated: string | undefined;
    const results = await Promise.all(
      Array.from({ length: ROTATION_REQUESTS }, async (_, i) => {
        if (i === Math.floor(ROTATION_REQUESTS / 3)) {
          rotated = (await request(url(i), 'POST', `/v1/projects/${p.id}/rotate-key`, { token: a.token })).body.apiKey;
        }
        const res = await request(url(i), 'POST', '/v1/logs', { headers: { 'x-api-key': p.apiKey }, body: [{ message: `r${i}` }] });
        return res.status;
      }),
    );
    expect(results.every((st) => st === 202 || st === 401)).toBe(true);
    const accepted = results.filter((st) => st === 202).length;
    const stored = (await request(url(1), 'GET', `/v1/projects/${p.id}`, { token: a.token })).body.logCount;
    expect(stored).toBe(accepted);
    for (let i = 0; i < 3; i++) {
      expect((await request(url(i), 'POST', '/v1/logs', { headers: { 'x-api-key': p.apiKey }, body: { message: 'old' } })).status).toBe(401);
      expect((await request(url(i), 'POST', '/v1/logs', { headers: { 'x-api-key': rotated! }, body: { message: 'new' } })).status).toBe(202);
    }
  });

  it('concurrent ingest into several projects through every node: no deadlock, every batch 202 and stored', async () => {
    // Each node commits many projects' batches in one transaction; if nodes locked the project rows
    // in arrival order, two of them could lock the same rows in opposite orders and deadlock.
    const projects = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const a = await account(i);
        return { token: a.token, ...(await request(url(i), 'POST', '/v1/projects', { token: a.token, body: { name: `mixed ${i}` } })).body };
      }),
    );
    const statuses = await Promise.all(
      Array.from({ length: 150 }, (_, i) => {
        const p = projects[(i * 7) % projects.length]!;
        return request(url(i), 'POST', '/v1/logs', { headers: { 'x-api-key': p.apiKey }, body: Array.from({ length: 10 }, (_, j) => ({ message: `m${i}-${j}` })) }).then((r) => r.status);
      }),
    );
    expect(statuses.filter((st) => st !== 202)).toEqual([]);
    const counts = await Promise.all(projects.map(async (p) => (await request(url(0), 'GET', `/v1/projects/${p.id}`, { token: p.token })).body.logCount));
    expect(counts).toEqual([300, 300, 300, 300, 300]);
  });

  it('tail fan-out: logs ingested on any node reach tails on every node, in order', async () => {
    const a = await account();
    const p = (await request(url(0), 'POST', '/v1/projects', { token: a.token, body: { name: 'fan-out' } })).body;
    const tails = await Promise.all(
      [1, 2].map(async (i) => {
        const controller = new AbortController();
        const res = await fetch(`${url(i)}/v1/projects/${p.id}/logs/tail`, { headers: { authorization: `Bearer ${a.token}` }, signal: controller.signal });
        const reader = res.body!.getReader();
        let text = '';
        const received: string[] = [];
        let connected!: () => void;
        const ready = new Promise<void>((resolve) => (connected = resolve));
        const pump = (async () => {
          try {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) return;
              text += new TextDecoder().decode(value);
              if (text.includes(': connected')) connected();
              for (const m of text.matchAll(/"message":"(fan \d+)"/g)) if (!received.includes(m[1]!)) received.push(m[1]!);
            }
          } catch {
            // aborted
          }
        })();
        // The server registers the tail before it writes this preamble: from here on, every commit reaches it.
        await ready;
        return { received, stop: () => controller.abort(), pump };
      }),
    );
    for (let i = 0; i < 9; i++) expect((await request(url(i), 'POST', '/v1/logs', { headers: { 'x-api-key': p.apiKey }, body: { message: `fan ${i}` } })).status).toBe(202);
    const want = Array.from({ length: 9 }, (_, i) => `fan ${i}`);
    // Each node hears of the others' commits a moment after their 202s: wait until both tails have nine.
    const arrived = await waitFor(() => tails.every((t) => t.received.length >= 9), 5000, 'nine logs on both tails').catch((err: Error) => err);
    for (const t of tails) t.stop();
    expect(arrived, tails.map((t) => JSON.stringify(t.received)).join(' / ')).toBe(true);
    for (const t of tails) expect(t.received).toEqual(want);
  });

  it('an alert fires exactly once for a burst split over the three nodes', async () => {
    const a = await account();
    const p = (await request(url(0), 'POST', '/v1/projects', { token: a.token, body: { name: 'burst' } })).body;
    const rule = (await request(url(1), 'POST', '/v1/alerts', { token: a.token, body: { projectId: p.id, name: 'burst', condition: { level: 'error', threshold: 10, window: '5m' }, channels: ['push'] } })).body;
    const marker = await createAlertMarker(node(0), a.token, p.id);
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => request(url(i), 'POST', '/v1/logs', { headers: { 'x-api-key': p.apiKey }, body: [{ message: `b${i}`, level: 'error' }] }).then((r) => r.status)));
    expect(statuses.filter((st) => st !== 202)).toEqual([]);
    // Every node has evaluated the logs it took (a marker sent through each has fired after them).
    for (let i = 0; i < nodes.length; i++) await marker.passThrough(node(i), p.apiKey, a.token);
    const entries = (await request(url(2), 'GET', `/v1/alerts/${rule.id}/history`, { token: a.token })).body.data;
    expect(entries).toHaveLength(1);
    expect(entries[0].matchedCount).toBeGreaterThanOrEqual(10);
  });
});
