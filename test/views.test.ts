/**
 * Saved views on both engines: every member sees and saves them, the creator or an admin changes
 * or deletes one, names are unique ignoring case (also under a race), the cap of 100, bad input
 * answered 400 at its path, and another user's project or view answered like one that does not exist.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { createProject, describeEngines, errorOf, signup, useServer, type Account } from './harness.js';
import { startSmtpSink } from './sinks.js';
import { addMember } from './teams-helpers.js';
import { authAndTenancySuite } from './tenancy.js';

const PUBLIC_URL = 'https://logs.example.com';

const body = (overrides: Record<string, unknown> = {}) => ({
  name: `Errors ${randomBytes(3).toString('hex')}`,
  query: 'level:error @res.statusCode:>=500',
  range: { last: '15m' },
  columns: ['@res.statusCode', 'source'],
  groupBy: 'source',
  ...overrides,
});

describeEngines('saved views', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  afterAll(async () => {
    await smtp?.close();
  });
  const s = useServer(engine, () => ({ env: { SMTP_URL: smtp.url, PUBLIC_URL, SIGNUP_MAX_PER_IP: '100000', INVITATIONS_PER_SENDER_PER_HOUR: '100000' } }));

  /** A project with an owner, an admin and two members. */
  async function team() {
    const [owner, admin, member, other] = await Promise.all([signup(s), signup(s), signup(s), signup(s)]);
    const name = `Team ${randomBytes(3).toString('hex')}`;
    const project = { ...(await createProject(s, owner, name)), name };
    await addMember(s, smtp, owner, project, admin, 'admin', PUBLIC_URL);
    await addMember(s, smtp, owner, project, member, 'member', PUBLIC_URL);
    await addMember(s, smtp, owner, project, other, 'member', PUBLIC_URL);
    return { project, owner, admin, member, other };
  }

  const create = (a: Account, projectId: string, b: unknown = body()) => s.request('POST', `/v1/projects/${projectId}/views`, { token: a.accessToken, body: b });

  it('a member saves a view every member sees, with its creator, and reads it back as saved', async () => {
    const { project, owner, member } = await team();
    const made = await create(member, project.id, body({ name: 'Slow checkout', range: { from: '2026-11-28T10:00:00Z', to: '2026-11-28T11:00:00.5Z' } }));
    expect(made.status).toBe(201);
    expect(made.body.id).toMatch(/^viw_[0-9a-z]{26}$/);
    expect(made.body).toMatchObject({
      projectId: project.id,
      name: 'Slow checkout',
      query: 'level:error @res.statusCode:>=500',
      range: { from: '2026-11-28T10:00:00.000Z', to: '2026-11-28T11:00:00.500Z' },
      columns: ['@res.statusCode', 'source'],
      groupBy: 'source',
      createdBy: { id: member.id, email: member.email },
    });
    const seen = await s.request('GET', `/v1/projects/${project.id}/views`, { token: owner.accessToken });
    expect(seen.status).toBe(200);
    expect(seen.body.data.map((v) => v.id)).toEqual([made.body.id]);
    const one = await s.request('GET', `/v1/projects/${project.id}/views/${made.body.id}`, { token: owner.accessToken });
    expect(one.body).toEqual(made.body);
  });

  it('the creator and admins change or delete a view; another member gets 403 and the view is unchanged', async () => {
    const { project, owner, admin, member, other } = await team();
    const made = (await create(member, project.id)).body;
    const changed = body({ name: 'Renamed', query: 'source:api', range: { last: '24h' }, columns: [], groupBy: null });
    const refused = await s.request('PUT', `/v1/projects/${project.id}/views/${made.id}`, { token: other.accessToken, body: changed });
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe('FORBIDDEN_ROLE');
    expect((await s.request('DELETE', `/v1/projects/${project.id}/views/${made.id}`, { token: other.accessToken })).status).toBe(403);
    expect((await s.request('GET', `/v1/projects/${project.id}/views/${made.id}`, { token: owner.accessToken })).body).toEqual(made);

    const byCreator = await s.request('PUT', `/v1/projects/${project.id}/views/${made.id}`, { token: member.accessToken, body: changed });
    expect(byCreator.status).toBe(200);
    expect(byCreator.body).toMatchObject({ name: 'Renamed', query: 'source:api', range: { last: '24h' }, columns: [], groupBy: null, createdBy: { id: member.id } });
    const byAdmin = await s.request('PUT', `/v1/projects/${project.id}/views/${made.id}`, { token: admin.accessToken, body: { ...changed, name: 'By admin' } });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.createdBy.id).toBe(member.id);
    expect((await s.request('DELETE', `/v1/projects/${project.id}/views/${made.id}`, { token: owner.accessToken })).status).toBe(204);
    expect((await s.request('GET', `/v1/projects/${project.id}/views/${made.id}`, { token: owner.accessToken })).status).toBe(404);
  });

  it('names are unique in a project ignoring case, also when two members save at once; other projects may reuse them', async () => {
    const { project, owner, member } = await team();
    expect((await create(owner, project.id, body({ name: 'Checkout errors' }))).status).toBe(201);
    const again = await create(member, project.id, body({ name: 'CHECKOUT ERRORS' }));
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe('VIEW_NAME_TAKEN');
    const race = await Promise.all([create(owner, project.id, body({ name: 'Race' })), create(member, project.id, body({ name: 'race' }))]);
    expect(race.map((r) => r.status).sort()).toEqual([201, 409]);
    const elsewhere = await signup(s);
    const second = await createProject(s, elsewhere, 'Second');
    expect((await create(elsewhere, second.id, body({ name: 'Checkout errors' }))).status).toBe(201);
    // Renaming onto a taken name is refused too.
    const other = (await create(owner, project.id, body({ name: 'Other' }))).body;
    const rename = await s.request('PUT', `/v1/projects/${project.id}/views/${other.id}`, { token: owner.accessToken, body: body({ name: 'checkout ERRORS' }) });
    expect(rename.status).toBe(409);
  });

  it('bad input is a 400 at its path', async () => {
    const owner = await signup(s);
    const project = await createProject(s, owner);
    const cases: Array<[unknown, string]> = [
      [body({ query: '@res.statusCode:>=' }), '/query'],
      [body({ query: '(unclosed' }), '/query'],
      [body({ range: { last: 'soon' } }), '/range/last'],
      [body({ range: { last: '0s' } }), '/range/last'],
      [body({ range: { from: 'yesterday', to: '2026-11-28T00:00:00Z' } }), '/range/from'],
      [body({ range: { from: '2026-11-28T02:00:00Z', to: '2026-11-28T01:00:00Z' } }), '/range/from'],
      [body({ range: { last: '1h', from: '2026-11-28T00:00:00Z' } }), '/range'],
      [body({ columns: ['@a', '@a'] }), '/columns'],
      [body({ columns: ['@'] }), '/columns/0'],
      [body({ columns: Array.from({ length: 21 }, (_, i) => `@f${i}`) }), '/columns'],
      [body({ groupBy: '@' }), '/groupBy'],
      [body({ name: '' }), '/name'],
      [body({ name: '   ' }), '/name'],
      [body({ name: 'x'.repeat(101) }), '/name'],
      [{ name: 'No range' }, '/range'],
    ];
    for (const [b, path] of cases) {
      const res = await create(owner, project.id, b);
      expect(res.status, JSON.stringify(b)).toBe(400);
      const error = errorOf(res);
      expect(error.code).toBe('VALIDATION_ERROR');
      if (path) expect(JSON.stringify(error.details), JSON.stringify(b)).toContain(path);
    }
    expect((await s.request('GET', `/v1/projects/${project.id}/views`, { token: owner.accessToken })).body.data).toEqual([]);
  });

  it('a name is counted in characters, not UTF-16 units, and bidirectional controls are refused (in every typed name)', async () => {
    const owner = await signup(s);
    const project = await createProject(s, owner);
    // 100 emoji are 200 UTF-16 units: the name is 100 characters, so it is taken (it was a 400).
    const emoji = '\u{1F600}'.repeat(100);
    const made = await create(owner, project.id, body({ name: emoji }));
    expect(made.status).toBe(201);
    expect(made.body.name).toBe(emoji);
    expect((await create(owner, project.id, body({ name: '\u{1F600}'.repeat(101) }))).status).toBe(400);
    // A right-to-left override makes "txt.exe" read as "exe.txt" to the other members: refused, as
    // are the other bidirectional controls, with a message in words.
    for (const control of ['\u202e', '\u202a', '\u2066', '\u2069', '\u200f', '\u061c']) {
      const res = await create(owner, project.id, body({ name: `invoice${control}txt.exe` }));
      expect(res.status, JSON.stringify(control)).toBe(400);
      const error = errorOf(res);
      expect(error.details).toEqual([{ path: '/name', message: 'must not contain control characters or bidirectional controls' }]);
    }
    // The same rule holds for the other names people type (projects, alert rules).
    const renamed = await s.request('PUT', `/v1/projects/${project.id}`, { token: owner.accessToken, body: { name: 'shop\u202egnp.exe' } });
    expect(renamed.status).toBe(400);
    expect((await s.request('GET', `/v1/projects/${project.id}/views`, { token: owner.accessToken })).body.data.map((v) => v.name)).toEqual([emoji]);
  });

  it('a project holds at most 100 views (403 PLAN_LIMIT_EXCEEDED, resource views)', async () => {
    const owner = await signup(s);
    const project = await createProject(s, owner);
    for (let i = 0; i < 100; i += 20) {
      const made = await Promise.all(Array.from({ length: 20 }, (_, j) => create(owner, project.id, body({ name: `View ${i + j}` }))));
      expect(made.every((r) => r.status === 201)).toBe(true);
    }
    const over = await create(owner, project.id, body({ name: 'One too many' }));
    expect(over.status).toBe(403);
    expect(errorOf(over)).toMatchObject({ code: 'PLAN_LIMIT_EXCEEDED', details: { resource: 'views', limit: 100 } });
  });

  authAndTenancySuite({
    server: () => s,
    routes: [
      { method: 'GET', path: (id) => `/v1/projects/${id.split('/')[0]}/views` },
      { method: 'POST', path: (id) => `/v1/projects/${id.split('/')[0]}/views`, body: body() },
      { method: 'GET', path: (id) => `/v1/projects/${id.split('/')[0]}/views/${id.split('/')[1]}` },
      { method: 'PUT', path: (id) => `/v1/projects/${id.split('/')[0]}/views/${id.split('/')[1]}`, body: body({ name: 'Taken over' }) },
      { method: 'DELETE', path: (id) => `/v1/projects/${id.split('/')[0]}/views/${id.split('/')[1]}` },
    ],
    create: async (server, owner) => {
      const project = await createProject(server, owner);
      const made = await server.request('POST', `/v1/projects/${project.id}/views`, { token: owner.accessToken, body: body() });
      return `${project.id}/${made.body.id}`;
    },
    randomId: () => `${newId('proj')}/${newId('viw')}`,
    read: (server, owner, id) => server.request('GET', `/v1/projects/${id.split('/')[0]}/views/${id.split('/')[1]}`, { token: owner.accessToken }),
  });
});
