/**
 * Teams: the role matrix of every project-scoped route (the role table of docs/teams.md, "Roles"),
 * and what roles mean beyond one request: plan caps counted against the owner, listings of shared
 * projects and rules, leaving, inviting, transfer, invitations, tails of removed members and
 * alert notifications to every member.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { newId } from '../src/ids.js';
import { createProject, describeEngines, errorOf, ingest, openTail, setPlan, signup, uniqueEmail, useServer, waitFor, type Account } from './harness.js';
import { startSmtpSink } from './sinks.js';
import { addMember, invite, rawRequest, withoutRequestId, type RawResponse } from './teams-helpers.js';

const PUBLIC_URL = 'https://logs.example.com';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Role = 'owner' | 'admin' | 'member';
const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

/** The ids a route's request is made of. */
interface Ids {
  projectId: string;
  ruleId: string;
  destId: string;
  invId: string;
  /** An address to invite, new for each case. */
  email: string;
}

/** A project a case acts on, with its owner and the resources the case's setup made in it. */
interface Target {
  project: { id: string; name: string };
  owner: Account;
  ruleId: string;
}

interface RouteRow {
  label: string;
  /** The least role allowed (the role table of docs/teams.md, "Roles"). */
  least: Role;
  /** The status of a success. */
  ok: number;
  /** Whether the route's resource id is a project's (default) or an alert rule's: what a random id replaces. */
  idOf?: 'project' | 'rule';
  /** Destructive: each case on the matrix project gets a fresh project with the same admin, member and spare member. */
  fresh?: boolean;
  /** Makes what one case needs in the target project, as its owner (a destination, an invitation, a rule to delete). */
  setup?: (t: Target) => Promise<Partial<Ids>>;
  req: (ids: Ids) => { method: string; path: string; body?: unknown };
  /** After a refused call: the resource is as it was. */
  intact?: (t: Target, ids: Ids) => Promise<void>;
}

describeEngines('teams and roles', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  // Declared before the server: afterAll hooks run in reverse, so the mail sink closes after it.
  afterAll(async () => {
    await smtp?.close();
  });
  // Every account here signs up from 127.0.0.1, over a hundred of them, and the role matrix's owner
  // sends dozens of invitations: past the sign-up throttle's and the per-sender cap's defaults.
  const s = useServer(engine, () => ({
    env: { SMTP_URL: smtp.url, PUBLIC_URL, ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>', DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2', SIGNUP_MAX_PER_IP: '100000', INVITATIONS_PER_SENDER_PER_HOUR: '100000' },
  }));

  /** `n` fresh accounts, signed up in parallel (destructure at most `n` of them). */
  const users = async (n: 2 | 3 | 4 | 5) => (await Promise.all(Array.from({ length: n }, () => signup(s)))) as [Account, Account, Account, Account, Account];
  const named = (prefix: string) => `${prefix} ${randomBytes(4).toString('hex')}`;
  const newProject = async (owner: Account, name = named('Project')) => ({ ...(await createProject(s, owner, name)), name });
  const member = (project: { id: string; name: string }, inviter: Account, user: Account, role: 'admin' | 'member') => addMember(s, smtp, inviter, project, user, role, PUBLIC_URL);
  const ruleBody = (projectId: string, overrides: Record<string, unknown> = {}) => ({
    projectId,
    name: 'Errors',
    condition: { level: 'error', threshold: 5, window: '5m' },
    channels: ['email'],
    ...overrides,
  });
  const createRule = async (account: Account, projectId: string, overrides: Record<string, unknown> = {}) => {
    const res = await s.request('POST', '/v1/alerts', { token: account.accessToken, body: ruleBody(projectId, overrides) });
    if (res.status !== 201) throw new Error(`rule create failed: ${res.status} ${res.text}`);
    return res.body as { id: string };
  };
  const members = async (account: Account, projectId: string) => (await s.request('GET', `/v1/projects/${projectId}/members`, { token: account.accessToken })).body.data as { userId: string; email: string; role: string; joinedAt: string }[];
  const roleIn = async (account: Account, projectId: string) => (await s.request('GET', `/v1/projects/${projectId}`, { token: account.accessToken })).body.role as string | undefined;
  const forbidden = (res: { status: number }, role: Role, required: Role, what: string) => {
    expect(res.status, what).toBe(403);
    const err = errorOf(res as never);
    expect(err.code, what).toBe('FORBIDDEN_ROLE');
    expect(err.details, what).toEqual([{ role, required }]);
  };
  const refusedAt = (res: { status: number }, status: number, path: string, what: string) => {
    expect(res.status, what).toBe(status);
    const err = errorOf(res as never);
    expect(err.code, what).toBe('VALIDATION_ERROR');
    expect(err.details, what).toEqual([expect.objectContaining({ path })]);
  };

  describe('role matrix', () => {
    // O owns P and Q; A is P's admin, M P's member, T P's spare member (a target); X is an outsider who owns Z.
    let O: Account, A: Account, M: Account, T: Account, X: Account;
    let P: Target, Q: Target, Z: Target;

    beforeAll(async () => {
      [O, A, M, T, X] = await Promise.all([signup(s), signup(s), signup(s), signup(s), signup(s)]);
      await setPlan(s, O.id, 'enterprise');
      const p = await newProject(O, 'Matrix P');
      const q = await newProject(O, 'Matrix Q');
      const z = await newProject(X, 'Matrix Z');
      await Promise.all([member(p, O, A, 'admin'), member(p, O, M, 'member'), member(p, O, T, 'member')]);
      await ingest(s, p.apiKey, [{ message: 'hello', level: 'error' }]);
      P = { project: p, owner: O, ruleId: (await createRule(O, p.id)).id };
      Q = { project: q, owner: O, ruleId: (await createRule(O, q.id)).id };
      Z = { project: z, owner: X, ruleId: (await createRule(X, z.id)).id };
    });

    /** A fresh project of O with A as admin and M and T as members. */
    const freshP = async (): Promise<Target> => {
      const p = await newProject(O, named('Fresh'));
      await Promise.all([member(p, O, A, 'admin'), member(p, O, M, 'member'), member(p, O, T, 'member')]);
      return { project: p, owner: O, ruleId: (await createRule(O, p.id)).id };
    };

    const ROUTES: RouteRow[] = [
      { label: 'GET /projects/:id', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}` }) },
      { label: 'PUT /projects/:id', least: 'admin', ok: 200, req: (i) => ({ method: 'PUT', path: `/v1/projects/${i.projectId}`, body: { name: 'Matrix P' } }) },
      {
        label: 'DELETE /projects/:id', least: 'owner', ok: 204, fresh: true,
        req: (i) => ({ method: 'DELETE', path: `/v1/projects/${i.projectId}` }),
        intact: async (t) => expect((await s.request('GET', `/v1/projects/${t.project.id}`, { token: t.owner.accessToken })).status).toBe(200),
      },
      { label: 'POST /projects/:id/rotate-key', least: 'admin', ok: 200, req: (i) => ({ method: 'POST', path: `/v1/projects/${i.projectId}/rotate-key` }) },
      { label: 'GET /projects/:id/logs', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/logs` }) },
      { label: 'GET /projects/:id/logs/stats', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/logs/stats` }) },
      { label: 'GET /projects/:id/logs/tail', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/logs/tail` }) },
      { label: 'POST /projects/:id/destinations', least: 'admin', ok: 201, req: (i) => ({ method: 'POST', path: `/v1/projects/${i.projectId}/destinations`, body: { type: 'webhook', name: 'hook', url: 'https://hooks.example.com/loglane' } }) },
      { label: 'GET /projects/:id/destinations', least: 'admin', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/destinations` }) },
      {
        label: 'DELETE /projects/:id/destinations/:destId', least: 'admin', ok: 204,
        setup: async (t) => {
          const res = await s.request('POST', `/v1/projects/${t.project.id}/destinations`, { token: t.owner.accessToken, body: { type: 'slack', url: 'https://hooks.slack.example.com/services/x' } });
          if (res.status !== 201) throw new Error(`destination: ${res.status} ${res.text}`);
          return { destId: res.body.id };
        },
        req: (i) => ({ method: 'DELETE', path: `/v1/projects/${i.projectId}/destinations/${i.destId}` }),
        intact: async (t, i) => {
          const list = await s.request('GET', `/v1/projects/${t.project.id}/destinations`, { token: t.owner.accessToken });
          expect(list.body.data.map((d: { id: string }) => d.id)).toContain(i.destId);
        },
      },
      { label: 'GET /projects/:id/members', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/members` }) },
      {
        label: 'PUT /projects/:id/members/:userId', least: 'owner', ok: 200,
        req: (i) => ({ method: 'PUT', path: `/v1/projects/${i.projectId}/members/${T.id}`, body: { role: 'member' } }),
      },
      {
        label: 'DELETE /projects/:id/members/:userId (a member)', least: 'admin', ok: 204, fresh: true,
        req: (i) => ({ method: 'DELETE', path: `/v1/projects/${i.projectId}/members/${T.id}` }),
        intact: async (t) => {
          if (t.project.id === Q.project.id || t.project.id === Z.project.id) return; // T was never in them
          expect((await members(t.owner, t.project.id)).map((m) => m.userId)).toContain(T.id);
        },
      },
      {
        label: 'POST /projects/:id/transfer', least: 'owner', ok: 200, fresh: true,
        req: (i) => ({ method: 'POST', path: `/v1/projects/${i.projectId}/transfer`, body: { userId: A.id } }),
        intact: async (t) => expect(await roleIn(t.owner, t.project.id)).toBe('owner'),
      },
      { label: 'POST /projects/:id/invitations', least: 'admin', ok: 201, req: (i) => ({ method: 'POST', path: `/v1/projects/${i.projectId}/invitations`, body: { email: i.email, role: 'member' } }) },
      { label: 'GET /projects/:id/invitations', least: 'admin', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/invitations` }) },
      {
        label: 'DELETE /projects/:id/invitations/:invId', least: 'admin', ok: 204,
        setup: async (t) => {
          const res = await s.request('POST', `/v1/projects/${t.project.id}/invitations`, { token: t.owner.accessToken, body: { email: uniqueEmail('revoked'), role: 'member' } });
          if (res.status !== 201) throw new Error(`invitation: ${res.status} ${res.text}`);
          return { invId: res.body.id };
        },
        req: (i) => ({ method: 'DELETE', path: `/v1/projects/${i.projectId}/invitations/${i.invId}` }),
        intact: async (t, i) => {
          const list = await s.request('GET', `/v1/projects/${t.project.id}/invitations`, { token: t.owner.accessToken });
          expect(list.body.data.map((d: { id: string }) => d.id)).toContain(i.invId);
        },
      },
      { label: 'GET /projects/:id/notifications', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/projects/${i.projectId}/notifications` }) },
      { label: 'PUT /projects/:id/notifications', least: 'member', ok: 200, req: (i) => ({ method: 'PUT', path: `/v1/projects/${i.projectId}/notifications`, body: { muted: false } }) },
      { label: 'GET /alerts/:id', least: 'member', ok: 200, idOf: 'rule', req: (i) => ({ method: 'GET', path: `/v1/alerts/${i.ruleId}` }) },
      { label: 'PUT /alerts/:id', least: 'member', ok: 200, idOf: 'rule', req: (i) => ({ method: 'PUT', path: `/v1/alerts/${i.ruleId}`, body: { name: 'Renamed' } }) },
      {
        label: 'DELETE /alerts/:id', least: 'member', ok: 204, idOf: 'rule',
        setup: async (t) => ({ ruleId: (await createRule(t.owner, t.project.id, { name: 'to delete' })).id }),
        req: (i) => ({ method: 'DELETE', path: `/v1/alerts/${i.ruleId}` }),
        intact: async (t, i) => expect((await s.request('GET', `/v1/alerts/${i.ruleId}`, { token: t.owner.accessToken })).status).toBe(200),
      },
      { label: 'GET /alerts/:id/history', least: 'member', ok: 200, idOf: 'rule', req: (i) => ({ method: 'GET', path: `/v1/alerts/${i.ruleId}/history` }) },
      { label: 'POST /alerts/:id/test', least: 'member', ok: 200, idOf: 'rule', req: (i) => ({ method: 'POST', path: `/v1/alerts/${i.ruleId}/test` }) },
      { label: 'POST /alerts {projectId}', least: 'member', ok: 201, req: (i) => ({ method: 'POST', path: '/v1/alerts', body: ruleBody(i.projectId, { name: 'matrix rule' }) }) },
      { label: 'GET /alerts?projectId=', least: 'member', ok: 200, req: (i) => ({ method: 'GET', path: `/v1/alerts?projectId=${i.projectId}` }) },
    ];

    type Actor = 'owner' | 'admin' | 'member' | 'outsider' | 'no token';

    for (const route of ROUTES) {
      it(`${route.label}: ${route.least}+ → ${route.ok}; below → 403 FORBIDDEN_ROLE; outsiders 404 as for a random id; no token 401`, async () => {
        const problems: string[] = [];
        const token = (actor: Actor) => ({ owner: O, admin: A, member: M, outsider: X, 'no token': undefined })[actor]?.accessToken;
        const idsFor = async (t: Target): Promise<Ids> => ({ projectId: t.project.id, ruleId: t.ruleId, destId: newId('dst'), invId: newId('inv'), email: uniqueEmail('matrix'), ...(await route.setup?.(t)) });
        const call = (actor: Actor, ids: Ids): Promise<RawResponse> => {
          const r = route.req(ids);
          return rawRequest(s, r.method, r.path, { token: token(actor), body: r.body });
        };
        const randomized = (ids: Ids): Ids => (route.idOf === 'rule' ? { ...ids, ruleId: newId('alt') } : { ...ids, projectId: newId('proj') });
        const parse = (res: RawResponse) => (res.contentType?.includes('json') && res.text ? JSON.parse(res.text) : undefined);

        // Members of the project, each in their own project or the one shared with them.
        const roles = ['owner', 'admin', 'member'] as const;
        const targets = route.fresh ? await Promise.all(roles.map(() => freshP())) : roles.map(() => P);
        for (const [n, role] of roles.entries()) {
          const t = targets[n]!;
          const ids = await idsFor(t);
          const res = await call(role, ids);
          const allowed = RANK[role] >= RANK[route.least];
          const where = `${role} of the ${role === 'owner' ? 'own' : 'shared'} project`;
          if (allowed) {
            if (res.status !== route.ok) problems.push(`${where}: expected ${route.ok}, got ${res.status} ${res.text.slice(0, 300)}`);
          } else {
            const err = parse(res)?.error;
            if (res.status !== 403 || err?.code !== 'FORBIDDEN_ROLE' || JSON.stringify(err?.details) !== JSON.stringify([{ role, required: route.least }])) {
              problems.push(`${where}: expected 403 FORBIDDEN_ROLE [{role:${role},required:${route.least}}], got ${res.status} ${res.text.slice(0, 300)}`);
            } else if (res.requestId !== err.requestId) problems.push(`${where}: the error's requestId is not the x-request-id header`);
            await route.intact?.(t, ids);
          }
        }

        // Foreign projects: O in X's project; A and M in O's other project; X in P. Each as a random id.
        const foreign: [Actor, Target][] = [['owner', Z], ['admin', Q], ['member', Q], ['outsider', P]];
        for (const [actor, t] of foreign) {
          const ids = await idsFor(t);
          const theirs = await call(actor, ids);
          const random = await call(actor, randomized(ids));
          const where = `${actor} in a foreign project`;
          if (theirs.status !== 404 || parse(theirs)?.error?.code !== 'NOT_FOUND') problems.push(`${where}: expected 404 NOT_FOUND, got ${theirs.status} ${theirs.text.slice(0, 300)}`);
          if (JSON.stringify(withoutRequestId(theirs)) !== JSON.stringify(withoutRequestId(random))) {
            problems.push(`${where}: differs from a random id's answer: ${JSON.stringify(withoutRequestId(theirs))} vs ${JSON.stringify(withoutRequestId(random))}`);
          }
          await route.intact?.(t, ids);
        }

        // No token: 401 UNAUTHORIZED, the same for an own, a shared or a random id.
        const ids = await idsFor(P);
        const none = await call('no token', ids);
        const noneRandom = await call('no token', randomized(ids));
        if (none.status !== 401 || parse(none)?.error?.code !== 'UNAUTHORIZED') problems.push(`no token: expected 401 UNAUTHORIZED, got ${none.status} ${none.text.slice(0, 300)}`);
        if (JSON.stringify(withoutRequestId(none)) !== JSON.stringify(withoutRequestId(noneRandom))) problems.push('no token: the answer differs from a random id\'s');
        await route.intact?.(P, ids);

        expect(problems).toEqual([]);
      });
    }
  });

  it('a destination or invitation of another project is 404 through a project the caller administers, and stays', async () => {
    const [o, a, other] = await users(3);
    const mine = await newProject(o);
    const theirs = await newProject(other);
    await member(mine, o, a, 'admin');
    const dest = await s.request('POST', `/v1/projects/${theirs.id}/destinations`, { token: other.accessToken, body: { type: 'webhook', url: 'https://hooks.example.com/theirs' } });
    const inv = await s.request('POST', `/v1/projects/${theirs.id}/invitations`, { token: other.accessToken, body: { email: uniqueEmail('theirs'), role: 'member' } });
    expect([dest.status, inv.status]).toEqual([201, 201]);
    for (const who of [o, a]) {
      const d = await s.request('DELETE', `/v1/projects/${mine.id}/destinations/${dest.body.id}`, { token: who.accessToken });
      expect(d.status).toBe(404);
      expect(errorOf(d).code).toBe('NOT_FOUND');
      const i = await s.request('DELETE', `/v1/projects/${mine.id}/invitations/${inv.body.id}`, { token: who.accessToken });
      expect(i.status).toBe(404);
      expect(errorOf(i).code).toBe('NOT_FOUND');
    }
    expect((await s.request('GET', `/v1/projects/${theirs.id}/destinations`, { token: other.accessToken })).body.data.map((x: { id: string }) => x.id)).toEqual([dest.body.id]);
    expect((await s.request('GET', `/v1/projects/${theirs.id}/invitations`, { token: other.accessToken })).body.data.map((x: { id: string }) => x.id)).toEqual([inv.body.id]);
  });

  describe('plan caps', () => {
    it('alert rules count against the project owner\'s plan, whoever creates them', async () => {
      // The owner is on the free plan: 2 rules per project; rich on enterprise, poor on free.
      const [owner, admin, rich, poor] = await users(4);
      await setPlan(s, admin.id, 'enterprise');
      const p = await newProject(owner);
      await member(p, owner, admin, 'admin');
      await createRule(admin, p.id, { name: 'one' });
      await createRule(admin, p.id, { name: 'two' });
      for (const who of [admin, owner]) {
        const res = await s.request('POST', '/v1/alerts', { token: who.accessToken, body: ruleBody(p.id, { name: 'three' }) });
        expect(res.status).toBe(403);
        expect(errorOf(res).code).toBe('PLAN_LIMIT_EXCEEDED');
        expect(errorOf(res).details).toEqual({ resource: 'alerts', limit: 2, plan: 'free' });
      }
      // The other way round: a free member in an enterprise owner's project is not held to 2.
      await setPlan(s, rich.id, 'enterprise');
      const q = await newProject(rich);
      await member(q, rich, poor, 'member');
      for (let i = 0; i < 3; i++) await createRule(poor, q.id, { name: `r${i}` });
      expect((await s.request('GET', `/v1/alerts?projectId=${q.id}`, { token: rich.accessToken })).body.data).toHaveLength(3);
    });

    it('a shared project does not count against the member\'s own project cap', async () => {
      const [owner, free] = await users(2);
      const p = await newProject(owner);
      await member(p, owner, free, 'admin');
      const own = await s.request('POST', '/v1/projects', { token: free.accessToken, body: { name: 'mine' } });
      expect(own.status).toBe(201);
      const second = await s.request('POST', '/v1/projects', { token: free.accessToken, body: { name: 'one too many' } });
      expect(second.status).toBe(403);
      expect(errorOf(second).details).toEqual({ resource: 'projects', limit: 1, plan: 'free' });
    });
  });

  describe('listings', () => {
    it('GET /v1/projects lists owned and shared projects with the caller\'s role; a member reads the full key', async () => {
      const [u, v, w] = await users(3);
      await setPlan(s, v.id, 'starter');
      const own = await newProject(u, 'U own');
      const asAdmin = await newProject(v, 'V shared');
      const notShared = await newProject(v, 'V private');
      const asMember = await newProject(w, 'W shared');
      await member(asAdmin, v, u, 'admin');
      await member(asMember, w, u, 'member');
      const res = await s.request('GET', '/v1/projects', { token: u.accessToken });
      expect(res.status).toBe(200);
      const byId = new Map((res.body.data as { id: string; role: string; apiKey: string; name: string }[]).map((p) => [p.id, p]));
      expect([...byId.keys()].sort()).toEqual([own.id, asAdmin.id, asMember.id].sort());
      expect(byId.has(notShared.id)).toBe(false);
      expect(byId.get(own.id)).toMatchObject({ role: 'owner', name: 'U own' });
      expect(byId.get(asAdmin.id)).toMatchObject({ role: 'admin', name: 'V shared' });
      expect(byId.get(asMember.id)).toMatchObject({ role: 'member', name: 'W shared' });
      for (const p of byId.values()) expect(p.apiKey).toMatch(/^llk_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
      // The owner's own listing says owner.
      expect((await s.request('GET', '/v1/projects', { token: w.accessToken })).body.data).toEqual([expect.objectContaining({ id: asMember.id, role: 'owner' })]);
      const one = await s.request('GET', `/v1/projects/${asMember.id}`, { token: u.accessToken });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: asMember.id, role: 'member', apiKey: asMember.apiKey });
    });

    it('GET /v1/alerts without projectId lists the rules of every project the caller is a member of, and no others', async () => {
      const [u, v] = await users(2);
      await setPlan(s, v.id, 'starter');
      const own = await newProject(u);
      const shared = await newProject(v);
      const other = await newProject(v);
      await member(shared, v, u, 'member');
      const rOwn = await createRule(u, own.id, { name: 'own rule' });
      const rShared = await createRule(v, shared.id, { name: 'shared rule' });
      const rOther = await createRule(v, other.id, { name: 'other rule' });
      const mine = (await s.request('GET', '/v1/alerts', { token: u.accessToken })).body.data.map((r: { id: string }) => r.id);
      expect(mine.sort()).toEqual([rOwn.id, rShared.id].sort());
      const theirs = (await s.request('GET', '/v1/alerts', { token: v.accessToken })).body.data.map((r: { id: string }) => r.id);
      expect(theirs.sort()).toEqual([rShared.id, rOther.id].sort());
      expect((await s.request('GET', `/v1/alerts?projectId=${shared.id}`, { token: u.accessToken })).body.data.map((r: { id: string }) => r.id)).toEqual([rShared.id]);
    });

    it('GET members lists the owner first, then by joinedAt, with emails and roles', async () => {
      const [o, a, m] = await users(3);
      const p = await newProject(o);
      await member(p, o, m, 'member');
      s.clock.advance(5);
      await member(p, o, a, 'admin');
      const list = await members(m, p.id);
      expect(list).toEqual([
        { userId: o.id, email: o.email, role: 'owner', joinedAt: expect.stringMatching(ISO) },
        { userId: m.id, email: m.email, role: 'member', joinedAt: expect.stringMatching(ISO) },
        { userId: a.id, email: a.email, role: 'admin', joinedAt: expect.stringMatching(ISO) },
      ]);
      expect(Date.parse(list[1]!.joinedAt)).toBeLessThanOrEqual(Date.parse(list[2]!.joinedAt));
    });
  });

  describe('membership', () => {
    it('the owner cannot leave (400 at /userId); an admin and a member leave and lose access', async () => {
      const [o, a, m] = await users(3);
      const p = await newProject(o);
      await member(p, o, a, 'admin');
      await member(p, o, m, 'member');
      const rule = await createRule(m, p.id);
      refusedAt(await s.request('DELETE', `/v1/projects/${p.id}/members/${o.id}`, { token: o.accessToken }), 400, '/userId', 'owner leaving');
      expect(await roleIn(o, p.id)).toBe('owner');
      for (const who of [m, a]) {
        expect((await s.request('GET', `/v1/alerts/${rule.id}`, { token: who.accessToken })).status).toBe(200);
        const res = await s.request('DELETE', `/v1/projects/${p.id}/members/${who.id}`, { token: who.accessToken });
        expect(res.status).toBe(204);
        expect((await s.request('GET', `/v1/projects/${p.id}`, { token: who.accessToken })).status).toBe(404);
        expect((await s.request('GET', '/v1/projects', { token: who.accessToken })).body.data).toEqual([]);
        expect((await s.request('GET', `/v1/alerts/${rule.id}`, { token: who.accessToken })).status).toBe(404);
        expect((await s.request('GET', '/v1/alerts', { token: who.accessToken })).body.data).toEqual([]);
      }
      // The rule a leaver made stays with the project.
      expect((await s.request('GET', `/v1/alerts/${rule.id}`, { token: o.accessToken })).status).toBe(200);
      expect((await members(o, p.id)).map((x) => x.userId)).toEqual([o.id]);
    });

    it('an admin invites and removes members but not admins (403 required owner); the owner does both; nobody removes the owner', async () => {
      const [o, a, a2, m] = await users(4);
      const p = await newProject(o);
      await member(p, o, a, 'admin');
      await member(p, o, a2, 'admin');
      await member(p, o, m, 'member');

      const adminInvite = await s.request('POST', `/v1/projects/${p.id}/invitations`, { token: a.accessToken, body: { email: uniqueEmail('would-be-admin'), role: 'admin' } });
      forbidden(adminInvite, 'admin', 'owner', 'an admin inviting an admin');
      const pending = async () => (await s.request('GET', `/v1/projects/${p.id}/invitations`, { token: o.accessToken })).body.data as { id: string; role: string }[];
      expect(await pending()).toEqual([]);
      const memberInvite = await s.request('POST', `/v1/projects/${p.id}/invitations`, { token: a.accessToken, body: { email: uniqueEmail('newbie'), role: 'member' } });
      expect(memberInvite.status).toBe(201);

      // An admin invitation made by the owner: an admin may not revoke it, the owner may.
      const ownerInvite = await s.request('POST', `/v1/projects/${p.id}/invitations`, { token: o.accessToken, body: { email: uniqueEmail('deputy'), role: 'admin' } });
      expect(ownerInvite.status).toBe(201);
      forbidden(await s.request('DELETE', `/v1/projects/${p.id}/invitations/${ownerInvite.body.id}`, { token: a.accessToken }), 'admin', 'owner', 'an admin revoking an admin invitation');
      expect((await pending()).map((i) => i.id).sort()).toEqual([memberInvite.body.id, ownerInvite.body.id].sort());
      expect((await s.request('DELETE', `/v1/projects/${p.id}/invitations/${ownerInvite.body.id}`, { token: o.accessToken })).status).toBe(204);
      expect((await s.request('DELETE', `/v1/projects/${p.id}/invitations/${memberInvite.body.id}`, { token: a.accessToken })).status).toBe(204);
      expect(await pending()).toEqual([]);

      forbidden(await s.request('DELETE', `/v1/projects/${p.id}/members/${a2.id}`, { token: a.accessToken }), 'admin', 'owner', 'an admin removing an admin');
      forbidden(await s.request('PUT', `/v1/projects/${p.id}/members/${m.id}`, { token: a.accessToken, body: { role: 'admin' } }), 'admin', 'owner', 'an admin promoting');
      refusedAt(await s.request('DELETE', `/v1/projects/${p.id}/members/${o.id}`, { token: a.accessToken }), 400, '/userId', 'an admin removing the owner');
      expect((await members(o, p.id)).map((x) => [x.userId, x.role])).toEqual([[o.id, 'owner'], [a.id, 'admin'], [a2.id, 'admin'], [m.id, 'member']]);

      expect((await s.request('DELETE', `/v1/projects/${p.id}/members/${m.id}`, { token: a.accessToken })).status).toBe(204);
      expect((await s.request('DELETE', `/v1/projects/${p.id}/members/${a2.id}`, { token: o.accessToken })).status).toBe(204);
      expect((await members(o, p.id)).map((x) => x.userId)).toEqual([o.id, a.id]);
      // A user who is not a member: 404.
      expect((await s.request('DELETE', `/v1/projects/${p.id}/members/${m.id}`, { token: o.accessToken })).status).toBe(404);
    });

    it('the owner changes roles; the owner\'s own role cannot change (400 at /userId) and a non-member is 404', async () => {
      const [o, m, stranger] = await users(3);
      const p = await newProject(o);
      await member(p, o, m, 'member');
      const up = await s.request('PUT', `/v1/projects/${p.id}/members/${m.id}`, { token: o.accessToken, body: { role: 'admin' } });
      expect(up.status).toBe(200);
      expect(up.body).toEqual({ userId: m.id, email: m.email, role: 'admin', joinedAt: expect.stringMatching(ISO) });
      expect(await roleIn(m, p.id)).toBe('admin');
      // Now an admin, m may do admin things.
      expect((await s.request('GET', `/v1/projects/${p.id}/invitations`, { token: m.accessToken })).status).toBe(200);
      const down = await s.request('PUT', `/v1/projects/${p.id}/members/${m.id}`, { token: o.accessToken, body: { role: 'member' } });
      expect(down.body.role).toBe('member');
      forbidden(await s.request('GET', `/v1/projects/${p.id}/invitations`, { token: m.accessToken }), 'member', 'admin', 'a demoted admin');
      refusedAt(await s.request('PUT', `/v1/projects/${p.id}/members/${o.id}`, { token: o.accessToken, body: { role: 'admin' } }), 400, '/userId', 'the owner\'s own role');
      expect((await s.request('PUT', `/v1/projects/${p.id}/members/${stranger.id}`, { token: o.accessToken, body: { role: 'member' } })).status).toBe(404);
      expect((await s.request('PUT', `/v1/projects/${p.id}/members/${m.id}`, { token: o.accessToken, body: { role: 'owner' } })).status).toBe(400);
    });

    it('transfer: to an admin (even past their project cap), the old owner becomes an admin; a plain member is 400 at /userId, a non-member 404', async () => {
      // o on enterprise; a on the free plan, with its one project already.
      const [o, a, m, outsider] = await users(4);
      await setPlan(s, o.id, 'enterprise');
      await newProject(a, 'A own');
      const p = await newProject(o, 'Handed over');
      await member(p, o, a, 'admin');
      await member(p, o, m, 'member');
      for (let i = 0; i < 3; i++) await createRule(o, p.id, { name: `r${i}` });

      refusedAt(await s.request('POST', `/v1/projects/${p.id}/transfer`, { token: o.accessToken, body: { userId: m.id } }), 400, '/userId', 'transfer to a member');
      const notMember = await s.request('POST', `/v1/projects/${p.id}/transfer`, { token: o.accessToken, body: { userId: outsider.id } });
      expect(notMember.status).toBe(404);
      expect(errorOf(notMember).code).toBe('NOT_FOUND');
      expect((await s.request('POST', `/v1/projects/${p.id}/transfer`, { token: o.accessToken, body: { userId: newId('usr') } })).status).toBe(404);
      expect(await roleIn(o, p.id)).toBe('owner');

      const res = await s.request('POST', `/v1/projects/${p.id}/transfer`, { token: o.accessToken, body: { userId: a.id } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: p.id, name: 'Handed over', role: 'admin' });
      expect(await roleIn(a, p.id)).toBe('owner');
      expect(await roleIn(o, p.id)).toBe('admin');
      expect((await members(m, p.id)).map((x) => [x.userId, x.role])).toEqual([[a.id, 'owner'], [o.id, 'admin'], [m.id, 'member']]);
      // The old owner is an admin now: owner-only things are refused.
      forbidden(await s.request('DELETE', `/v1/projects/${p.id}`, { token: o.accessToken }), 'admin', 'owner', 'the old owner deleting');
      forbidden(await s.request('POST', `/v1/projects/${p.id}/transfer`, { token: o.accessToken, body: { userId: o.id } }), 'admin', 'owner', 'the old owner transferring back');
      // Caps now count against the new owner (free): two projects owned, no third; the rules past 2 stay, no new one.
      const third = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'no room' } });
      expect(third.status).toBe(403);
      expect(errorOf(third).details).toEqual({ resource: 'projects', limit: 1, plan: 'free' });
      const rule = await s.request('POST', '/v1/alerts', { token: o.accessToken, body: ruleBody(p.id, { name: 'r3' }) });
      expect(rule.status).toBe(403);
      expect(errorOf(rule).details).toEqual({ resource: 'alerts', limit: 2, plan: 'free' });
      expect((await s.request('GET', `/v1/alerts?projectId=${p.id}`, { token: a.accessToken })).body.data).toHaveLength(3);
    });
  });

  describe('invitations', () => {
    it('an invitation: 201 with its fields and a mail; a wrong email cannot accept it (404, still pending); it is accepted once', async () => {
      const [o, invitee, wrong] = await users(3);
      const p = await newProject(o, named('Invited to'));
      const { invitation, token } = await invite(s, smtp, o, p, invitee.email.toUpperCase(), 'member', PUBLIC_URL);
      expect(invitation).toEqual({ id: expect.stringMatching(/^inv_[0-9a-z]{26}$/), email: invitee.email, role: 'member', createdAt: expect.stringMatching(ISO), expiresAt: expect.stringMatching(ISO) });
      expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(7 * 86_400_000);
      const pending = async () => (await s.request('GET', `/v1/projects/${p.id}/invitations`, { token: o.accessToken })).body.data as { id: string }[];
      expect(await pending()).toEqual([invitation]);

      const byWrong = await s.request('POST', '/v1/invitations/accept', { token: wrong.accessToken, body: { token } });
      expect(byWrong.status).toBe(404);
      expect(errorOf(byWrong).code).toBe('NOT_FOUND');
      const unknown = await s.request('POST', '/v1/invitations/accept', { token: wrong.accessToken, body: { token: `${token.slice(0, -4)}AAAA` } });
      expect({ ...errorOf(unknown), requestId: undefined }).toEqual({ ...errorOf(byWrong), requestId: undefined });
      expect((await s.request('GET', `/v1/projects/${p.id}`, { token: wrong.accessToken })).status).toBe(404);
      expect(await pending()).toEqual([invitation]);

      const accepted = await s.request('POST', '/v1/invitations/accept', { token: invitee.accessToken, body: { token } });
      expect(accepted.status).toBe(200);
      expect(accepted.body.project).toMatchObject({ id: p.id, name: p.name, role: 'member' });
      expect(await roleIn(invitee, p.id)).toBe('member');
      expect(await pending()).toEqual([]);
      const again = await s.request('POST', '/v1/invitations/accept', { token: invitee.accessToken, body: { token } });
      expect(again.status).toBe(404);
      expect(errorOf(again).code).toBe('NOT_FOUND');
      expect((await s.request('POST', '/v1/invitations/accept', { body: { token } })).status).toBe(401);
    });

    it('a revoked invitation, or one to a project since deleted, cannot be accepted (404)', async () => {
      const [o, x, y] = await users(3);
      await setPlan(s, o.id, 'starter');
      const p = await newProject(o);
      const doomed = await newProject(o);
      const revoked = await invite(s, smtp, o, p, x.email, 'member', PUBLIC_URL);
      const orphaned = await invite(s, smtp, o, doomed, y.email, 'admin', PUBLIC_URL);
      expect((await s.request('DELETE', `/v1/projects/${p.id}/invitations/${revoked.invitation.id}`, { token: o.accessToken })).status).toBe(204);
      expect((await s.request('DELETE', `/v1/projects/${doomed.id}`, { token: o.accessToken })).status).toBe(204);
      for (const [who, token] of [[x, revoked.token], [y, orphaned.token]] as const) {
        const res = await s.request('POST', '/v1/invitations/accept', { token: who.accessToken, body: { token } });
        expect(res.status).toBe(404);
        expect(errorOf(res).code).toBe('NOT_FOUND');
        expect((await s.request('GET', '/v1/projects', { token: who.accessToken })).body.data).toEqual([]);
      }
    });

    it('accepting as someone already a member keeps their role', async () => {
      const [o, a] = await users(2);
      const p = await newProject(o);
      await member(p, o, a, 'admin');
      const { token } = await invite(s, smtp, o, p, a.email, 'member', PUBLIC_URL);
      const res = await s.request('POST', '/v1/invitations/accept', { token: a.accessToken, body: { token } });
      expect(res.status).toBe(200);
      expect(res.body.project.role).toBe('admin');
      expect(await roleIn(a, p.id)).toBe('admin');
    });
  });

  describe('effects on members', () => {
    it('removing a member, or leaving, ends that user\'s open live tail at once; other tails go on', async () => {
      const [o, a, m] = await users(3);
      const p = await newProject(o);
      await member(p, o, a, 'admin');
      await member(p, o, m, 'member');
      const tailM = await openTail(s, m.accessToken, p.id);
      const tailA = await openTail(s, a.accessToken, p.id);
      const tailO = await openTail(s, o.accessToken, p.id);
      try {
        expect([tailM.status, tailA.status, tailO.status]).toEqual([200, 200, 200]);
        await ingest(s, p.apiKey, { message: 'before' });
        for (const t of [tailM, tailA, tailO]) await t.waitFor(() => t.logs().some((l) => l.message === 'before'));

        expect((await s.request('DELETE', `/v1/projects/${p.id}/members/${m.id}`, { token: o.accessToken })).status).toBe(204);
        await waitFor(() => tailM.ended, 1500, 'the removed member\'s tail to end');
        expect((await s.request('DELETE', `/v1/projects/${p.id}/members/${a.id}`, { token: a.accessToken })).status).toBe(204);
        await waitFor(() => tailA.ended, 1500, 'the leaving admin\'s tail to end');

        await ingest(s, p.apiKey, { message: 'after' });
        await tailO.waitFor(() => tailO.logs().some((l) => l.message === 'after'));
        expect(tailO.ended).toBe(false);
        expect(tailM.logs().map((l) => l.message)).toEqual(['before']);
        const again = await openTail(s, m.accessToken, p.id);
        expect(again.status).toBe(404);
      } finally {
        for (const t of [tailM, tailA, tailO]) t.close();
      }
    });

    it('alert mail goes to every member who has not muted the project', async () => {
      const [o, a, m, muted, outsider] = await users(5);
      const p = await newProject(o, named('Team'));
      await member(p, o, a, 'admin');
      await member(p, o, m, 'member');
      await member(p, o, muted, 'member');

      expect((await s.request('GET', `/v1/projects/${p.id}/notifications`, { token: muted.accessToken })).body).toEqual({ muted: false });
      const mute = await s.request('PUT', `/v1/projects/${p.id}/notifications`, { token: muted.accessToken, body: { muted: true } });
      expect(mute.status).toBe(200);
      expect(mute.body).toEqual({ muted: true });
      expect((await s.request('GET', `/v1/projects/${p.id}/notifications`, { token: muted.accessToken })).body).toEqual({ muted: true });
      expect((await s.request('GET', `/v1/projects/${p.id}/notifications`, { token: m.accessToken })).body).toEqual({ muted: false });

      const tag = randomBytes(4).toString('hex');
      const rule = await createRule(m, p.id, { name: `team ${tag}`, condition: { level: 'error', threshold: 1, window: '5m' }, cooldown: '0s' });
      const mailsTo = (email: string) => smtp.mails.filter((x) => x.to.includes(email) && x.subject.includes(tag));
      const settledEntries = (n: number) =>
        waitFor(async () => {
          const h = (await s.request('GET', `/v1/alerts/${rule.id}/history`, { token: o.accessToken })).body.data as { kind: string; deliveries: { channel: string; status: string }[] }[];
          const fired = h.filter((e) => e.kind === 'triggered');
          return fired.length >= n && fired.every((e) => e.deliveries.every((d) => d.status !== 'pending')) ? fired : undefined;
        }, 8000, `${n} settled firing(s)`);

      await ingest(s, p.apiKey, { message: 'it broke', level: 'error' });
      const [first] = await settledEntries(1);
      expect(first!.deliveries).toEqual([{ channel: 'email', status: 'sent' }]);
      for (const who of [o, a, m]) await waitFor(() => mailsTo(who.email).length === 1, 4000, `the alert mail to ${who.email}`);
      expect(mailsTo(muted.email)).toEqual([]);
      expect(mailsTo(outsider.email)).toEqual([]);
      expect(mailsTo(o.email)[0]!.subject).toBe(`[Loglane] team ${tag} fired on ${p.name}`);

      // Unmuted, the same member gets the next one.
      expect((await s.request('PUT', `/v1/projects/${p.id}/notifications`, { token: muted.accessToken, body: { muted: false } })).body).toEqual({ muted: false });
      await ingest(s, p.apiKey, { message: 'it broke again', level: 'error' });
      await settledEntries(2);
      for (const who of [o, a, m, muted]) await waitFor(() => mailsTo(who.email).length === (who === muted ? 1 : 2), 4000, `the second alert mail to ${who.email}`);
      expect(mailsTo(outsider.email)).toEqual([]);
    });
  });

  // Last: these move the server's clock on, past every token issued before.
  describe('invitation expiry', () => {
    it('a project sends at most 20 invitations an hour (429 with Retry-After), revoked ones counted; an hour later it sends again', async () => {
      const [o] = await users(2);
      const p = await newProject(o);
      const sent = await Promise.all(
        Array.from({ length: 21 }, (_, i) => s.request('POST', `/v1/projects/${p.id}/invitations`, { token: o.accessToken, body: { email: `cap-${i}-${randomBytes(3).toString('hex')}@example.com`, role: 'member' } })),
      );
      expect(sent.map((r) => r.status).sort()).toEqual([...Array(20).fill(201), 429]);
      const refused = sent.find((r) => r.status === 429)!;
      expect(errorOf(refused).code).toBe('RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // Revoking does not give a mail back.
      const first = sent.find((r) => r.status === 201)!.body.id as string;
      expect((await s.request('DELETE', `/v1/projects/${p.id}/invitations/${first}`, { token: o.accessToken })).status).toBe(204);
      expect((await s.request('GET', `/v1/projects/${p.id}/invitations`, { token: o.accessToken })).body.data).toHaveLength(19);
      const again = await s.request('POST', `/v1/projects/${p.id}/invitations`, { token: o.accessToken, body: { email: uniqueEmail('cap'), role: 'member' } });
      expect(again.status).toBe(429);
      s.clock.advance(3_600_000 + 1_000);
      const login = await s.request('POST', '/v1/auth/login', { body: { email: o.email, password: o.password } });
      const later = await s.request('POST', `/v1/projects/${p.id}/invitations`, { token: login.body.accessToken, body: { email: uniqueEmail('cap'), role: 'member' } });
      expect(later.status, later.text).toBe(201);
    });

    it('an invitation is accepted within 7 days, and not after (404)', async () => {
      const [o, early, late] = await users(3);
      const p = await newProject(o);
      const first = await invite(s, smtp, o, p, early.email, 'member', PUBLIC_URL);
      const second = await invite(s, smtp, o, p, late.email, 'member', PUBLIC_URL);
      const relogin = async (who: Account) => {
        const res = await s.request('POST', '/v1/auth/login', { body: { email: who.email, password: who.password } });
        expect(res.status).toBe(200);
        return res.body.accessToken as string;
      };
      s.clock.advance(7 * 86_400_000 - 60_000);
      const ok = await s.request('POST', '/v1/invitations/accept', { token: await relogin(early), body: { token: first.token } });
      expect(ok.status).toBe(200);
      s.clock.advance(86_400_000);
      const lateToken = await relogin(late);
      const res = await s.request('POST', '/v1/invitations/accept', { token: lateToken, body: { token: second.token } });
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
      expect((await s.request('GET', `/v1/projects/${p.id}`, { token: lateToken })).status).toBe(404);
    });
  });
});
