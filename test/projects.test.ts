import { describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { PLANS } from '../src/features/plans/plans.js';
import { createProject, describeEngines, errorOf, setPlan, signup, useServer } from './harness.js';
import { authAndTenancySuite } from './tenancy.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FULL_KEY = /^llk_[0-9A-Za-z]{38}$/;
const MASKED_KEY = /^llk_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/;
const mask = (key: string) => `${key.slice(0, 8)}…${key.slice(-4)}`;

describeEngines('projects', (engine) => {
  const s = useServer(engine);

  it('create answers 201 with exactly the project fields, the full key, logCount 0 and storedBytes 0', async () => {
    const a = await signup(s);
    const res = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: '  Checkout API ' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['apiKey', 'createdAt', 'id', 'logCount', 'name', 'role', 'storedBytes', 'updatedAt']);
    expect(res.body).toEqual({ id: expect.stringMatching(/^proj_[0-9a-z]{26}$/), name: 'Checkout API', apiKey: expect.stringMatching(FULL_KEY), logCount: 0, storedBytes: 0, role: 'owner', createdAt: expect.stringMatching(ISO), updatedAt: res.body.createdAt });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('never takes server-owned fields from the client', async () => {
    const a = await signup(s);
    const b = await signup(s);
    const res = await s.request('POST', '/v1/projects', {
      token: a.accessToken,
      body: { name: 'Mine', id: 'proj_chosen', apiKey: 'llk_chosen', logCount: 99, createdAt: '2000-01-01T00:00:00.000Z', userId: b.id, ownerId: b.id },
    });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe('proj_chosen');
    expect(res.body.apiKey).not.toBe('llk_chosen');
    expect(res.body.logCount).toBe(0);
    expect(res.body.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    expect((await s.request('GET', '/v1/projects', { token: b.accessToken })).body.data).toEqual([]);
    expect((await s.request('GET', `/v1/projects/${res.body.id}`, { token: a.accessToken })).status).toBe(200);
  });

  it('names are 1 to 100 characters: 0, blank and 101 are refused, 100 is accepted', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'enterprise');
    for (const name of ['', '   ', 'x'.repeat(101), 'tab\there', 'nul\u0000', 42, null]) {
      const res = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name } });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
      expect(errorOf(res).details).toEqual([expect.objectContaining({ path: '/name' })]);
    }
    expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: {} })).status).toBe(400);
    const hundred = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'x'.repeat(100) } });
    expect(hundred.status).toBe(201);
    expect(hundred.body.name).toHaveLength(100);
    const emoji = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: '🚀'.repeat(100) } });
    expect(emoji.status).toBe(201);
  });

  it('list answers {data} with every project of the caller, keys masked', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'starter');
    const created = [await createProject(s, a, 'one'), await createProject(s, a, 'two')];
    const res = await s.request('GET', '/v1/projects', { token: a.accessToken });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(created.map((p) => p.id));
    for (const [i, p] of res.body.data.entries()) {
      expect(p.apiKey).toMatch(MASKED_KEY);
      expect(p.apiKey).toBe(mask(created[i]!.apiKey));
      // No 8-character run of the secret part appears anywhere in the answer.
      const secret = created[i]!.apiKey.slice(4);
      for (let j = 4; j + 8 <= secret.length - 4; j++) expect(res.text).not.toContain(secret.slice(j, j + 8));
    }
  });

  it('get answers the project with the full key', async () => {
    const a = await signup(s);
    const p = await createProject(s, a, 'full');
    const res = await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...p, name: 'full' });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('update renames, masks the key, keeps createdAt and moves updatedAt', async () => {
    const a = await signup(s);
    const p = await createProject(s, a, 'before');
    s.clock.advance(1500);
    const res = await s.request('PUT', `/v1/projects/${p.id}`, { token: a.accessToken, body: { name: 'after', apiKey: 'llk_x', logCount: 7 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...p, name: 'after', apiKey: mask(p.apiKey), updatedAt: expect.stringMatching(ISO) });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(res.body.createdAt));
    expect((await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).body).toMatchObject({ name: 'after', apiKey: p.apiKey, logCount: 0 });
    const bad = await s.request('PUT', `/v1/projects/${p.id}`, { token: a.accessToken, body: { name: 'y'.repeat(101) } });
    expect(bad.status).toBe(400);
  });

  it('delete answers 204, and the project is gone for good', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const res = await s.request('DELETE', `/v1/projects/${p.id}`, { token: a.accessToken });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).status).toBe(404);
    expect((await s.request('DELETE', `/v1/projects/${p.id}`, { token: a.accessToken })).status).toBe(404);
    expect((await s.request('GET', '/v1/projects', { token: a.accessToken })).body.data).toEqual([]);
    expect(await s.app.services.projects.verifyApiKey(p.apiKey)).toEqual({ ok: false, reason: 'unknown' });
    // The free plan's one slot is free again.
    expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'again' } })).status).toBe(201);
  });

  it('rotate answers a new full key; the old key is refused and the new one accepted at once', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    expect(await s.app.services.projects.verifyApiKey(p.apiKey)).toEqual({ ok: true, projectId: p.id, userId: a.id, plan: 'free' });
    const res = await s.request('POST', `/v1/projects/${p.id}/rotate-key`, { token: a.accessToken });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['apiKey']);
    expect(res.body.apiKey).toMatch(FULL_KEY);
    expect(res.body.apiKey).not.toBe(p.apiKey);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await s.app.services.projects.verifyApiKey(p.apiKey)).toEqual({ ok: false, reason: 'unknown' });
    expect(await s.app.services.projects.verifyApiKey(res.body.apiKey)).toEqual({ ok: true, projectId: p.id, userId: a.id, plan: 'free' });
    expect((await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).body.apiKey).toBe(res.body.apiKey);
  });

  it('a key with a broken checksum or shape is refused without a lookup', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const flipped = p.apiKey.slice(0, 10) + (p.apiKey[10] === 'a' ? 'b' : 'a') + p.apiKey.slice(11);
    for (const key of [flipped, 'llk_short', `${p.apiKey}x`, p.apiKey.toLowerCase() === p.apiKey ? 'x' : p.apiKey.toLowerCase(), '']) {
      const res = await s.app.services.projects.verifyApiKey(key);
      expect(res.ok, key).toBe(false);
    }
    expect(await s.app.services.projects.verifyApiKey(flipped)).toEqual({ ok: false, reason: 'malformed' });
  });

  describe('plan caps', () => {
    for (const plan of ['free', 'starter', 'pro'] as const) {
      it(`${plan}: ${PLANS[plan].maxProjects} project(s), then 403 PLAN_LIMIT_EXCEEDED with details`, async () => {
        const a = await signup(s);
        await setPlan(s, a.id, plan);
        const cap = PLANS[plan].maxProjects;
        for (let i = 0; i < cap; i++) await createProject(s, a, `p${i}`);
        const res = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'one too many' } });
        expect(res.status).toBe(403);
        const err = errorOf(res);
        expect(err.code).toBe('PLAN_LIMIT_EXCEEDED');
        expect(err.details).toEqual({ resource: 'projects', limit: cap, plan });
        expect(err.message).toMatch(new RegExp(`${plan} plan allows ${cap} project`));
        expect((await s.request('GET', '/v1/projects', { token: a.accessToken })).body.data).toHaveLength(cap);
      });
    }

    it('enterprise: no cap', async () => {
      const a = await signup(s);
      await setPlan(s, a.id, 'enterprise');
      const results = [];
      for (let i = 0; i < 25; i++) results.push((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: `e${i}` } })).status);
      expect(results.every((x) => x === 201)).toBe(true);
    });

    it('twenty parallel creates at a cap of 1 make exactly one project', async () => {
      const a = await signup(s);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: `race ${i}` } })));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((x) => x === 201)).toHaveLength(1);
      expect(statuses.filter((x) => x === 403)).toHaveLength(19);
      expect((await s.request('GET', '/v1/projects', { token: a.accessToken })).body.data).toHaveLength(1);
    });

    it('a plan change takes effect on the next request; a downgrade keeps what exists and blocks creation', async () => {
      const a = await signup(s);
      expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'p1' } })).status).toBe(201);
      expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'p2' } })).status).toBe(403);
      await setPlan(s, a.id, 'pro');
      for (const name of ['p2', 'p3']) expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name } })).status).toBe(201);
      await setPlan(s, a.id, 'free');
      expect((await s.request('GET', '/v1/projects', { token: a.accessToken })).body.data).toHaveLength(3);
      const res = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'p4' } });
      expect(res.status).toBe(403);
      expect(errorOf(res).details).toEqual({ resource: 'projects', limit: 1, plan: 'free' });
    });
  });

  describe('two nodes on one database', () => {
    const b = useServer(engine, () => ({ shareWith: s }));

    it('a key rotated on one node is refused by the other at once', async () => {
      const a = await signup(s);
      const p = await createProject(s, a);
      expect((await b.app.services.projects.verifyApiKey(p.apiKey)).ok).toBe(true);
      const rotated = await s.request('POST', `/v1/projects/${p.id}/rotate-key`, { token: a.accessToken });
      expect(await b.app.services.projects.verifyApiKey(p.apiKey)).toEqual({ ok: false, reason: 'unknown' });
      expect((await b.app.services.projects.verifyApiKey(rotated.body.apiKey)).ok).toBe(true);
    });

    it('parallel creates split over both nodes still make exactly one project at a cap of 1', async () => {
      const a = await signup(s);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? b : s).request('POST', '/v1/projects', { token: a.accessToken, body: { name: `race ${i}` } })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 403)).toHaveLength(19);
    });
  });

  describe('auth and tenancy', () => {
    authAndTenancySuite({
      server: () => s,
      routes: [
        { method: 'GET', path: () => '/v1/projects', scoped: false },
        { method: 'POST', path: () => '/v1/projects', body: { name: 'x' }, scoped: false },
        { method: 'GET', path: (id) => `/v1/projects/${id}` },
        { method: 'PUT', path: (id) => `/v1/projects/${id}`, body: { name: 'stolen' } },
        { method: 'POST', path: (id) => `/v1/projects/${id}/rotate-key` },
        { method: 'DELETE', path: (id) => `/v1/projects/${id}` },
      ],
      create: async (server, owner) => (await createProject(server, owner, 'owned')).id,
      randomId: () => newId('proj'),
      read: (server, owner, id) => server.request('GET', `/v1/projects/${id}`, { token: owner.accessToken }),
    });

    it('ids of the wrong shape are simply not found', async () => {
      const a = await signup(s);
      for (const id of ['nope', 'proj_', 'usr_01m80hn9cs45n80hpthxyczene', '%00', 'proj_%E2%80%AE']) {
        const res = await s.request('GET', `/v1/projects/${id}`, { token: a.accessToken });
        expect(res.status, id).toBe(404);
        expect(errorOf(res).code).toBe('NOT_FOUND');
      }
    });
  });
});
