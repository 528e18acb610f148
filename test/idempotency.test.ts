import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, signup, useServer } from './harness.js';

describeEngines('Idempotency-Key on ingestion', (engine) => {
  const s = useServer(engine);

  const logCount = async (projectId: string) =>
    Number((await s.database.db.selectFrom('projects').select('log_count').where('id', '=', projectId).executeTakeFirstOrThrow()).log_count);

  it('a retry with the same key and body returns the first answer and stores nothing twice', async () => {
    const u = await signup(s);
    const p = await createProject(s, u);
    const body = [{ message: 'once' }, { message: 'twice?' }, { nope: true }];
    const first = await ingest(s, p.apiKey, body, { 'idempotency-key': 'batch-0001' });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let i = 0; i < 3; i++) {
      const again = await ingest(s, p.apiKey, body, { 'idempotency-key': 'batch-0001' });
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(await logCount(p.id)).toBe(2);
    // Another key is another batch; the same key in another project is independent.
    expect((await ingest(s, p.apiKey, body, { 'idempotency-key': 'batch-0002' })).headers.get('idempotent-replayed')).toBeNull();
    expect(await logCount(p.id)).toBe(4);
  });

  it('the same key with a different body is 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const u = await signup(s);
    const p = await createProject(s, u);
    await ingest(s, p.apiKey, { message: 'a' }, { 'idempotency-key': 'k1' });
    const res = await ingest(s, p.apiKey, { message: 'b' }, { 'idempotency-key': 'k1' });
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await logCount(p.id)).toBe(1);
  });

  it('while the first is in flight, a retry is 409 IDEMPOTENCY_KEY_IN_USE; parallel retries store one batch', async () => {
    const u = await signup(s);
    const p = await createProject(s, u);
    const body = Array.from({ length: 2000 }, (_, i) => ({ message: `parallel ${i}` }));
    const results = await Promise.all(Array.from({ length: 8 }, () => ingest(s, p.apiKey, body, { 'idempotency-key': 'same-batch' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((x) => x === 202 || x === 409)).toBe(true);
    expect(statuses.filter((x) => x === 202).length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(errorOf(r).code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    expect(await logCount(p.id)).toBe(2000);
  });

  it('a request that failed leaves the key free; a stale in-flight claim can be taken over; keys expire after 24 hours', async () => {
    const u = await signup(s);
    const p = await createProject(s, u);
    const bad = await ingest(s, p.apiKey, [{ nope: 1 }], { 'idempotency-key': 'retry-me' });
    expect(bad.status).toBe(400);
    expect((await ingest(s, p.apiKey, [{ nope: 1 }, { message: 'fixed' }], { 'idempotency-key': 'retry-me' })).status).toBe(202);

    // A node that claimed a key and died before committing: after the lease the key is usable.
    const hash = createHash('sha256').update(JSON.stringify({ message: 'o' })).digest('hex');
    await s.database.db.insertInto('idempotency_keys').values({ project_id: p.id, key: 'orphan', body_hash: hash, state: 'in_flight', response: null, created_at: s.clock.now() }).execute();
    expect((await ingest(s, p.apiKey, { message: 'o' }, { 'idempotency-key': 'orphan' })).status).toBe(409);
    s.clock.advance(61_000);
    expect((await ingest(s, p.apiKey, { message: 'o' }, { 'idempotency-key': 'orphan' })).status).toBe(202);

    s.clock.advance(24 * 3_600_000);
    const fresh = await ingest(s, p.apiKey, { message: 'new body, old key' }, { 'idempotency-key': 'orphan' });
    expect(fresh.status).toBe(202);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(await logCount(p.id)).toBe(3);
  });

  it('refuses a malformed key with 400', async () => {
    const u = await signup(s);
    const p = await createProject(s, u);
    for (const key of ['x'.repeat(256), 'with space']) {
      const res = await s.request('POST', '/v1/logs', { body: { message: 'm' }, headers: { 'x-api-key': p.apiKey, 'idempotency-key': key } });
      expect(res.status, key).toBe(400);
    }
    expect(await logCount(p.id)).toBe(0);
  });
});
