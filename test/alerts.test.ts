import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { RULE_CACHE_MS } from '../src/features/alerts/service.js';
import { newId } from '../src/ids.js';
import { createAlertMarker } from './alert-marker.js';
import { createProject, describeEngines, errorOf, ingest, setPlan, signup, startServer, type Account, type TestServer, useServer, waitFor } from './harness.js';
import { startPushReceiver, startSmtpSink } from './sinks.js';
import { authAndTenancySuite } from './tenancy.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const until = <T>(probe: () => Promise<T | undefined>, timeoutMs = 4000): Promise<T> => waitFor(probe, timeoutMs);

describeEngines('alert rules', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let pushSvc: Awaited<ReturnType<typeof startPushReceiver>>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    pushSvc = await startPushReceiver();
  });
  // Declared before the server: afterAll hooks run in reverse, so the sinks close after it.
  afterAll(async () => {
    await smtp?.close();
    await pushSvc?.close();
  });
  const s = useServer(engine, () => ({
    env: { SMTP_URL: smtp.url, ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>', PUSH_ALLOWED_ORIGINS: pushSvc.origin, PUBLIC_URL: 'https://logs.example.com', DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2' },
  }));
  // A plain variable, not useAccount: the cooldown test moves the clock ten minutes on and gives
  // this account a fresh access token, which the tests after it use.
  let a: Account;
  beforeAll(async () => {
    pushSvc.expectPublicKey((await s.request('GET', '/v1/push/vapid-public-key')).body.publicKey);
    a = await signup(s);
    await setPlan(s, a.id, 'enterprise');
  });

  const rule = (projectId: string, overrides: Record<string, unknown> = {}) => ({
    projectId,
    name: 'Errors from api',
    condition: { level: 'error', threshold: 3, window: '5m', source: 'api' },
    channels: ['email'],
    cooldown: '10m',
    ...overrides,
  });
  const create = async (account: Account, body: unknown) => {
    const res = await s.request('POST', '/v1/alerts', { token: account.accessToken, body });
    if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
    return res.body;
  };
  const history = async (account: Account, id: string) => (await s.request('GET', `/v1/alerts/${id}/history`, { token: account.accessToken })).body.data as any[];
  /** Resolves once no delivery of any firing in the project is pending (every notification is sent, skipped or failed). */
  const deliveriesSettled = (server: TestServer, projectId: string) =>
    until(async () => {
      const pending = await server.database.db
        .selectFrom('alert_deliveries')
        .innerJoin('alert_history', 'alert_history.id', 'alert_deliveries.history_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('alert_history.project_id', '=', projectId)
        .where('alert_deliveries.status', '=', 'pending')
        .executeTakeFirstOrThrow();
      return Number(pending.n) === 0 ? true : undefined;
    }, 8000);
  /** The history once every delivery of its newest entry is settled. */
  const settled = (account: Account, id: string, entries = 1) =>
    until(async () => {
      const h = await history(account, id);
      return h.length >= entries && h.every((e) => e.deliveries.every((d: { status: string }) => d.status !== 'pending')) ? h : undefined;
    }, 8000);

  describe('CRUD', () => {
    it('create answers 201 with the whole rule', async () => {
      const p = await createProject(s, a);
      const res = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { ...rule(p.id), condition: { level: 'ERROR', threshold: 10, window: '5m', source: 'api', pattern: 'time(d )?out' }, channels: ['push', 'email', 'push'], cooldown: undefined } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^alt_[0-9a-z]{26}$/), projectId: p.id, name: 'Errors from api',
        condition: { level: 'error', threshold: 10, window: '5m', source: 'api', pattern: 'time(d )?out', comparison: 'above' },
        channels: ['email', 'push'], cooldown: '15m', enabled: true, state: 'ok', stateSince: null, mutedUntil: null, lastTriggeredAt: null,
        createdAt: expect.stringMatching(ISO), updatedAt: res.body.createdAt,
      });
    });

    it('get, list (per project and all), update and delete', async () => {
      const p1 = await createProject(s, a);
      const p2 = await createProject(s, a);
      const r1 = await create(a, rule(p1.id));
      const r2 = await create(a, rule(p2.id, { name: 'second' }));
      expect((await s.request('GET', `/v1/alerts/${r1.id}`, { token: a.accessToken })).body).toEqual(r1);
      expect((await s.request('GET', `/v1/alerts?projectId=${p1.id}`, { token: a.accessToken })).body).toEqual({ data: [r1] });
      const all = (await s.request('GET', '/v1/alerts', { token: a.accessToken })).body.data.map((r: { id: string }) => r.id);
      expect(all).toEqual(expect.arrayContaining([r1.id, r2.id]));

      s.clock.advance(1000);
      const upd = await s.request('PUT', `/v1/alerts/${r1.id}`, { token: a.accessToken, body: { name: 'renamed', condition: { level: 'fatal', threshold: 1, window: '1h' }, channels: ['push'], cooldown: '0s', enabled: false } });
      expect(upd.status).toBe(200);
      expect(upd.body).toMatchObject({ name: 'renamed', condition: { level: 'fatal', threshold: 1, window: '1h' }, channels: ['push'], cooldown: '0s', enabled: false });
      expect(upd.body.condition.source).toBeUndefined();
      expect(Date.parse(upd.body.updatedAt)).toBeGreaterThan(Date.parse(upd.body.createdAt));
      const moved = await s.request('PUT', `/v1/alerts/${r1.id}`, { token: a.accessToken, body: { projectId: p2.id } });
      expect(moved.status).toBe(400);

      expect((await s.request('DELETE', `/v1/alerts/${r1.id}`, { token: a.accessToken })).status).toBe(204);
      expect((await s.request('GET', `/v1/alerts/${r1.id}`, { token: a.accessToken })).status).toBe(404);
      expect((await s.request('GET', `/v1/alerts/${r1.id}/history`, { token: a.accessToken })).status).toBe(404);
      // Deleting the project deletes its rules.
      expect((await s.request('DELETE', `/v1/projects/${p2.id}`, { token: a.accessToken })).status).toBe(204);
      expect((await s.request('GET', `/v1/alerts/${r2.id}`, { token: a.accessToken })).status).toBe(404);
    });

    it('refuses every invalid field with 400 VALIDATION_ERROR naming it', async () => {
      const p = await createProject(s, a);
      const bad: [Record<string, unknown>, string][] = [
        [{ name: '' }, '/name'],
        [{ name: 'line\r\nBcc: evil@example.com' }, '/name'],
        [{ name: undefined }, '/name'],
        [{ channels: [] }, '/channels'],
        [{ channels: ['sms'] }, '/channels/0'],
        [{ channels: 'email' }, '/channels'],
        [{ cooldown: '15' }, '/cooldown'],
        [{ cooldown: '8d' }, '/cooldown'],
        [{ condition: { level: 'loud', threshold: 1, window: '5m' } }, '/condition/level'],
        [{ condition: { level: 'error', threshold: 0, window: '5m' } }, '/condition/threshold'],
        [{ condition: { level: 'error', threshold: 1.5, window: '5m' } }, '/condition/threshold'],
        [{ condition: { level: 'error', threshold: '3', window: '5m' } }, '/condition/threshold'],
        [{ condition: { level: 'error', threshold: 1, window: '0s' } }, '/condition/window'],
        [{ condition: { level: 'error', threshold: 1, window: '8d' } }, '/condition/window'],
        [{ condition: { level: 'error', threshold: 1, window: '5 minutes' } }, '/condition/window'],
        [{ condition: { level: 'error', threshold: 1 } }, '/condition/window'],
        [{ condition: { level: 'error', threshold: 1, window: '5m', pattern: '(a)\\1' } }, '/condition/pattern'],
        [{ condition: { level: 'error', threshold: 1, window: '5m', pattern: '(?=x)' } }, '/condition/pattern'],
        [{ condition: { level: 'error', threshold: 1, window: '5m', pattern: 'x'.repeat(1001) } }, '/condition/pattern'],
        [{ projectId: undefined }, '/projectId'],
      ];
      for (const [overrides, path] of bad) {
        const res = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: rule(p.id, overrides) });
        expect(res.status, JSON.stringify(overrides)).toBe(400);
        const err = errorOf(res);
        expect(err.code).toBe('VALIDATION_ERROR');
        expect(JSON.stringify(err.details), JSON.stringify(overrides)).toContain(path);
      }
      // A project that is not the caller's (or does not exist) is 404.
      const other = await signup(s);
      const theirs = await createProject(s, other);
      expect((await s.request('POST', '/v1/alerts', { token: a.accessToken, body: rule(theirs.id) })).status).toBe(404);
      expect((await s.request('POST', '/v1/alerts', { token: a.accessToken, body: rule(newId('proj')) })).status).toBe(404);
      expect((await s.request('GET', `/v1/alerts?projectId=${theirs.id}`, { token: a.accessToken })).status).toBe(404);
    });
  });

  describe('plan caps', () => {
    for (const [plan, cap] of [['free', 2], ['starter', 10]] as const) {
      it(`${plan}: ${cap} rules per project, then 403 PLAN_LIMIT_EXCEEDED`, async () => {
        const u = await signup(s);
        await setPlan(s, u.id, plan);
        const p = await createProject(s, u);
        for (let i = 0; i < cap; i++) await create(u, rule(p.id, { name: `r${i}` }));
        const res = await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id) });
        expect(res.status).toBe(403);
        const err = errorOf(res);
        expect(err.code).toBe('PLAN_LIMIT_EXCEEDED');
        expect(err.details).toEqual({ resource: 'alerts', limit: cap, plan });
      });
    }

    it('twenty parallel creates at a cap of 2 make exactly two rules', async () => {
      const u = await signup(s);
      const p = await createProject(s, u);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { name: `race ${i}` }) })));
      expect(results.filter((r) => r.status === 201)).toHaveLength(2);
      expect(results.filter((r) => r.status === 403)).toHaveLength(18);
      expect((await s.request('GET', `/v1/alerts?projectId=${p.id}`, { token: u.accessToken })).body.data).toHaveLength(2);
    });

    it('pro allows 50 and enterprise has no cap', async () => {
      const u = await signup(s);
      await setPlan(s, u.id, 'pro');
      const p = await createProject(s, u);
      await Promise.all(Array.from({ length: 50 }, (_, i) => create(u, rule(p.id, { name: `p${i}` }))));
      expect((await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id) })).status).toBe(403);
      await setPlan(s, u.id, 'enterprise');
      expect((await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id) })).status).toBe(201);
    });
  });

  describe('firing', () => {
    it('fires on the threshold-th matching log, not before; other levels, sources and messages do not count', async () => {
      const p = await createProject(s, a);
      const marker = await createAlertMarker(s, a.accessToken, p.id);
      const r = await create(a, rule(p.id, { condition: { level: 'error', threshold: 3, window: '5m', source: 'api', pattern: 'timeout' } }));
      await ingest(s, p.apiKey, [
        { message: 'db timeout', level: 'error', source: 'api' },
        { message: 'db timeout', level: 'warn', source: 'api' },
        { message: 'db timeout', level: 'error', source: 'worker' },
        { message: 'all good', level: 'error', source: 'api' },
        { message: 'db timeout', level: 'error', source: 'api', timestamp: Date.now() - 10 * 60_000 },
        { message: 'db timeout', level: 'error', source: 'api' },
      ]);
      // Two of those count: once the batch is evaluated (the marker fired after it), nothing has fired.
      await marker.passThrough(s, p.apiKey, a.accessToken);
      expect(await history(a, r.id)).toEqual([]);
      const before = smtp.mails.length;
      await ingest(s, p.apiKey, { message: 'upstream timeout again', level: 'error', source: 'api' });
      // The third match fires it (settled waits for the entry, failing at its timeout otherwise).
      const [entry] = await settled(a, r.id);
      expect(entry).toMatchObject({ alertId: r.id, matchedCount: 3, threshold: 3, window: '5m', deliveries: [{ channel: 'email', status: 'sent' }] });
      expect(entry.id).toMatch(/^alh_/);
      expect(entry.sample.map((l: { message: string }) => l.message)).toContain('upstream timeout again');
      expect((await s.request('GET', `/v1/alerts/${r.id}`, { token: a.accessToken })).body.lastTriggeredAt).toMatch(ISO);

      const mail = await until(async () => smtp.mails[before]);
      expect(mail.to).toEqual([a.email]);
      expect(mail.from).toBe('alerts@loglane.test');
      expect(mail.subject).toBe('[Loglane] Errors from api fired on Test project');
      expect(mail.raw).toContain('upstream timeout again');
      expect(mail.raw).toContain('https://logs.example.com/projects/');
      expect(mail.headers).toMatch(/multipart\/alternative/);
    });

    it('the cooldown suppresses firing, then allows it', async () => {
      const p = await createProject(s, a);
      const marker = await createAlertMarker(s, a.accessToken, p.id);
      const r = await create(a, rule(p.id, { condition: { level: 'error', threshold: 1, window: '5m' }, cooldown: '10m' }));
      await ingest(s, p.apiKey, { message: 'one', level: 'error' });
      await settled(a, r.id, 1);
      await ingest(s, p.apiKey, { message: 'two', level: 'error' });
      await marker.passThrough(s, p.apiKey, a.accessToken);
      expect(await history(a, r.id)).toHaveLength(1);
      s.clock.advance(10 * 60_000 + 1000);
      const fresh = await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: a.password } });
      a.accessToken = fresh.body.accessToken;
      await ingest(s, p.apiKey, { message: 'three', level: 'error' });
      const h = await settled(a, r.id, 2);
      expect(h).toHaveLength(2);
      expect(h[0].sample[0].message).toBe('three');
    });

    it('disabled and deleted rules stay silent; an edit applies to the next batch', async () => {
      const p = await createProject(s, a);
      const marker = await createAlertMarker(s, a.accessToken, p.id);
      const tag = randomBytes(4).toString('hex');
      const disabled = await create(a, rule(p.id, { name: `disabled ${tag}`, condition: { level: 'fatal', threshold: 1, window: '5m' } }));
      expect((await s.request('PUT', `/v1/alerts/${disabled.id}`, { token: a.accessToken, body: { enabled: false } })).status).toBe(200);
      const deleted = await create(a, rule(p.id, { name: `deleted ${tag}`, condition: { level: 'fatal', threshold: 1, window: '5m' } }));
      expect((await s.request('DELETE', `/v1/alerts/${deleted.id}`, { token: a.accessToken })).status).toBe(204);
      const edited = await create(a, rule(p.id, { name: `edited ${tag}`, condition: { level: 'warn', threshold: 1, window: '5m' } }));
      await s.request('PUT', `/v1/alerts/${edited.id}`, { token: a.accessToken, body: { condition: { level: 'fatal', threshold: 1, window: '5m' } } });
      await ingest(s, p.apiKey, [{ message: 'boom', level: 'fatal' }, { message: 'meh', level: 'warn' }]);
      // Once the batch is evaluated and every notification it caused has gone out, only the edited rule has spoken.
      await marker.passThrough(s, p.apiKey, a.accessToken);
      await deliveriesSettled(s, p.id);
      const h = await history(a, edited.id);
      expect(h).toHaveLength(1);
      expect(h[0].sample.map((l: { level: string }) => l.level)).toEqual(['fatal']);
      expect(h[0].deliveries).toEqual([{ channel: 'email', status: 'sent' }]);
      expect(await history(a, disabled.id)).toEqual([]);
      // What the owner would notice: mail. Only the edited rule's arrived (the deleted rule has no history to ask for).
      const mailed = smtp.mails.filter((m) => m.subject.includes(tag)).map((m) => m.subject);
      expect(mailed).toEqual([`[Loglane] edited ${tag} fired on Test project`]);
    });

    it('history is newest first and paginates with a cursor', async () => {
      const p = await createProject(s, a);
      const r = await create(a, rule(p.id, { condition: { level: 'info', threshold: 1, window: '5m' }, cooldown: '0s', channels: ['push'] }));
      for (let i = 0; i < 3; i++) {
        await ingest(s, p.apiKey, { message: `tick ${i}` });
        await until(async () => ((await history(a, r.id)).length === i + 1 ? true : undefined));
        s.clock.advance(5);
      }
      const first = await s.request('GET', `/v1/alerts/${r.id}/history?limit=2`, { token: a.accessToken });
      expect(first.body.data.map((e: any) => e.sample[0].message)).toEqual(['tick 2', 'tick 1']);
      const second = await s.request('GET', `/v1/alerts/${r.id}/history?limit=2&cursor=${first.body.nextCursor}`, { token: a.accessToken });
      expect(second.body.data.map((e: any) => e.sample[0].message)).toEqual(['tick 0']);
      expect(second.body.nextCursor).toBeNull();
      expect((await s.request('GET', `/v1/alerts/${r.id}/history?cursor=nonsense`, { token: a.accessToken })).status).toBe(400);
    });
  });

  describe('email', () => {
    it('a header-injection attempt in the name adds no header and no recipient', async () => {
      const p = await createProject(s, a);
      const r = await create(a, rule(p.id, { name: 'x Bcc: evil@example.com\u2028To: evil2@example.com\u2029Subject: hi', condition: { level: 'error', threshold: 1, window: '1m' } }));
      const before = smtp.mails.length;
      await ingest(s, p.apiKey, { message: 'trigger', level: 'error' });
      await settled(a, r.id);
      const mail = await until(async () => smtp.mails[before]);
      expect(mail.to).toEqual([a.email]);
      expect(mail.headers).not.toMatch(/^Bcc:/im);
      expect(mail.headers.match(/^To:/gim)).toHaveLength(1);
      expect(mail.headers.match(/^Subject:/gim)).toHaveLength(1);
      expect(mail.subject).not.toMatch(/[\r\n\u2028\u2029]/);
    });

    it('with SMTP down, delivery is retried and then recorded as failed', async () => {
      const down = await startServer(engine, { env: { SMTP_URL: 'smtp://127.0.0.1:1?tls=off', DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2' } });
      try {
        const u = await signup(down);
        const p = await createProject(down, u);
        const res = await down.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { condition: { level: 'error', threshold: 1, window: '1m' } }) });
        await ingest(down, p.apiKey, { message: 'x', level: 'error' });
        const entry = await until(async () => {
          const h = (await down.request('GET', `/v1/alerts/${res.body.id}/history`, { token: u.accessToken })).body.data;
          return h[0]?.deliveries[0]?.status === 'failed' ? h[0] : undefined;
        }, 10_000);
        expect(entry.deliveries[0]!.error).toMatch(/gave up after 2 attempts/);
        const row = await down.database.db.selectFrom('alert_deliveries').select(['attempts']).where('history_id', '=', entry.id).executeTakeFirstOrThrow();
        expect(row.attempts).toBe(2);
      } finally {
        await down.close();
      }
    });

    it('without SMTP_URL, email deliveries are skipped with the reason', async () => {
      const none = await startServer(engine);
      try {
        expect(none.logs.join('')).toContain('SMTP_URL is not set');
        const u = await signup(none);
        const p = await createProject(none, u);
        const res = await none.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { condition: { level: 'error', threshold: 1, window: '1m' } }) });
        await ingest(none, p.apiKey, { message: 'x', level: 'error' });
        const entry = await until(async () => {
          const h = (await none.request('GET', `/v1/alerts/${res.body.id}/history`, { token: u.accessToken })).body.data;
          return h[0]?.deliveries[0]?.status === 'skipped' ? h[0] : undefined;
        });
        expect(entry.deliveries[0]!.error).toContain('SMTP_URL');
      } finally {
        await none.close();
      }
    });
  });

  describe('push', () => {
    it('subscriptions: create, list, delete; the endpoint must be an allowed push service', async () => {
      const u = await signup(s);
      const browser = pushSvc.subscribe();
      const res = await s.request('POST', '/v1/push/subscriptions', { token: u.accessToken, body: { endpoint: browser.endpoint, expirationTime: null, keys: browser.keys } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.stringMatching(/^psub_/), endpoint: browser.endpoint, createdAt: expect.stringMatching(ISO) });
      expect((await s.request('GET', '/v1/push/subscriptions', { token: u.accessToken })).body).toEqual({ data: [res.body] });
      const requestsBefore = pushSvc.requests.length;
      for (const endpoint of ['http://127.0.0.1:9/push', 'https://169.254.169.254/latest', 'https://localhost/push', 'https://10.0.0.1/push', 'http://[::1]:8080/push', 'https://evil.example.com/push', 'https://user:pw@fcm.googleapis.com/x', 'not a url', `${pushSvc.origin.replace('http:', 'https:')}/push/x`]) {
        const bad = await s.request('POST', '/v1/push/subscriptions', { token: u.accessToken, body: { endpoint, keys: browser.keys } });
        expect(bad.status, endpoint).toBe(400);
        expect(errorOf(bad).code).toBe('VALIDATION_ERROR');
      }
      const badKeys = await s.request('POST', '/v1/push/subscriptions', { token: u.accessToken, body: { endpoint: browser.endpoint, keys: { p256dh: 'abc', auth: 'def' } } });
      expect(badKeys.status).toBe(400);
      expect(pushSvc.requests.length).toBe(requestsBefore);
      // Another user cannot see or delete it: 404 exactly like an id that does not exist.
      const stranger = await signup(s);
      const theirs = await s.request('DELETE', `/v1/push/subscriptions/${res.body.id}`, { token: stranger.accessToken });
      const missing = await s.request('DELETE', `/v1/push/subscriptions/${newId('psub')}`, { token: stranger.accessToken });
      expect(theirs.status).toBe(404);
      expect({ ...errorOf(theirs), requestId: 0 }).toEqual({ ...errorOf(missing), requestId: 0 });
      expect((await s.request('GET', '/v1/push/subscriptions', { token: stranger.accessToken })).body.data).toEqual([]);
      expect((await s.request('DELETE', `/v1/push/subscriptions/${res.body.id}`, { token: u.accessToken })).status).toBe(204);
      expect((await s.request('DELETE', `/v1/push/subscriptions/${res.body.id}`, { token: u.accessToken })).status).toBe(404);
      expect((await s.request('GET', '/v1/push/subscriptions', { token: u.accessToken })).body.data).toEqual([]);
    });

    it('a firing reaches every subscribed browser, signed with VAPID and decryptable', async () => {
      const u = await signup(s);
      const browsers = [pushSvc.subscribe(), pushSvc.subscribe()];
      for (const b of browsers) await s.request('POST', '/v1/push/subscriptions', { token: u.accessToken, body: { endpoint: b.endpoint, keys: b.keys } });
      const p = await createProject(s, u, 'Payments');
      const r = (await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { name: 'Card errors', channels: ['push'], condition: { level: 'error', threshold: 2, window: '5m' } }) })).body;
      await ingest(s, p.apiKey, [{ message: 'card declined', level: 'error' }, { message: 'card declined', level: 'error' }]);
      const [entry] = await settled(u, r.id);
      expect(entry.deliveries).toEqual([{ channel: 'push', status: 'sent' }]);
      for (const b of browsers) {
        const got = pushSvc.deliveries.find((d) => b.endpoint.endsWith(d.path));
        expect(got?.vapidOk).toBe(true);
        expect(got?.payload).toMatchObject({ title: 'Card errors fired', ruleId: r.id, projectId: p.id, url: `https://logs.example.com/projects/${p.id}/alerts/${r.id}` });
        expect(String(got?.payload.body)).toContain('2 error logs within 5m in Payments');
      }
    });

    it('a subscription the push service says is gone (410) is removed', async () => {
      const u = await signup(s);
      const live = pushSvc.subscribe();
      const gone = pushSvc.subscribe();
      pushSvc.statusFor.set(new URL(gone.endpoint).pathname, 410);
      for (const b of [live, gone]) await s.request('POST', '/v1/push/subscriptions', { token: u.accessToken, body: { endpoint: b.endpoint, keys: b.keys } });
      const p = await createProject(s, u);
      const r = (await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { channels: ['push'], condition: { level: 'error', threshold: 1, window: '5m' } }) })).body;
      await ingest(s, p.apiKey, { message: 'x', level: 'error' });
      const [entry] = await settled(u, r.id);
      expect(entry.deliveries[0].status).toBe('sent');
      const left = (await s.request('GET', '/v1/push/subscriptions', { token: u.accessToken })).body.data.map((x: { endpoint: string }) => x.endpoint);
      expect(left).toEqual([live.endpoint]);
    });

    it('with no subscription, push is skipped with the reason', async () => {
      const u = await signup(s);
      const p = await createProject(s, u);
      const r = (await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { channels: ['push'], condition: { level: 'error', threshold: 1, window: '5m' } }) })).body;
      await ingest(s, p.apiKey, { message: 'x', level: 'error' });
      const [entry] = await settled(u, r.id);
      expect(entry.deliveries).toEqual([{ channel: 'push', status: 'skipped', error: 'no push subscriptions' }]);
    });
  });

  describe('auth and tenancy', () => {
    authAndTenancySuite({
      server: () => s,
      routes: [
        { method: 'GET', path: () => '/v1/alerts', scoped: false },
        { method: 'GET', path: (id) => `/v1/alerts/${id}` },
        { method: 'PUT', path: (id) => `/v1/alerts/${id}`, body: { name: 'stolen' } },
        { method: 'DELETE', path: (id) => `/v1/alerts/${id}` },
        { method: 'GET', path: (id) => `/v1/alerts/${id}/history` },
        { method: 'GET', path: () => '/v1/push/subscriptions', scoped: false },
      ],
      create: async (server, owner) => {
        const p = await createProject(server, owner, 'owned');
        return (await server.request('POST', '/v1/alerts', { token: owner.accessToken, body: rule(p.id) })).body.id;
      },
      randomId: () => newId('alt'),
      read: (server, owner, id) => server.request('GET', `/v1/alerts/${id}`, { token: owner.accessToken }),
    });
  });

  if (engine === 'postgres') {
    describe('two nodes', () => {
      const b = useServer(engine, () => ({ shareWith: s, env: { SMTP_URL: smtp.url, PUSH_ALLOWED_ORIGINS: pushSvc.origin } }));

      it('a burst split across both fires exactly once', async () => {
        const u = await signup(s);
        const p = await createProject(s, u, 'burst');
        const r = (await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { name: 'burst rule', condition: { level: 'error', threshold: 5, window: '5m' } }) })).body;
        const marker = await createAlertMarker(s, u.accessToken, p.id);
        const before = smtp.mails.filter((m) => m.to.includes(u.email)).length;
        await Promise.all(Array.from({ length: 20 }, (_, i) => ingest(i % 2 ? b : s, p.apiKey, [{ message: `e${i}a`, level: 'error' }, { message: `e${i}b`, level: 'error' }])));
        // Each node has evaluated what it took (a marker through each fired after it), and every notification has gone out.
        await marker.passThrough(s, p.apiKey, u.accessToken);
        await marker.passThrough(b, p.apiKey, u.accessToken);
        await deliveriesSettled(s, p.id);
        const h = await history(u, r.id);
        expect(h).toHaveLength(1);
        expect(h[0].deliveries).toEqual([{ channel: 'email', status: 'sent' }]);
        expect(smtp.mails.filter((m) => m.to.includes(u.email)).length - before).toBe(1);
      });

      it('rule edits made through one node apply on the other within a second (its cached rule set expires)', async () => {
        const u = await signup(s);
        const p = await createProject(s, u, 'edits');
        const r = (await s.request('POST', '/v1/alerts', { token: u.accessToken, body: rule(p.id, { name: 'edited elsewhere', condition: { level: 'error', threshold: 3, window: '5m' } }) })).body;
        const marker = await createAlertMarker(s, u.accessToken, p.id);
        // The rule cache ages on the service's clock, which both nodes share here: moving it past
        // RULE_CACHE_MS expires node B's cached rule set without waiting.
        const cacheExpired = () => s.clock.advance(RULE_CACHE_MS + 1);
        // Node B reads (and caches) the project's rules: one match counted, below the threshold.
        await ingest(b, p.apiKey, [{ message: 'first', level: 'error' }]);
        await marker.passThrough(b, p.apiKey, u.accessToken);
        expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: u.accessToken, body: { enabled: false } })).status).toBe(200);
        cacheExpired();
        await ingest(b, p.apiKey, Array.from({ length: 5 }, (_, i) => ({ message: `while disabled ${i}`, level: 'error' })));
        await marker.passThrough(b, p.apiKey, u.accessToken);
        expect(await history(u, r.id)).toHaveLength(0);
        // Enabled again through node A: node B counts (and fires) once its cache has expired.
        expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: u.accessToken, body: { enabled: true } })).status).toBe(200);
        cacheExpired();
        await ingest(b, p.apiKey, Array.from({ length: 3 }, (_, i) => ({ message: `enabled again ${i}`, level: 'error' })));
        const [entry] = await settled(u, r.id);
        expect(entry!.sample.map((l: { message: string }) => l.message).sort()).toEqual(['enabled again 0', 'enabled again 1', 'enabled again 2']);
        // 'first' and these three: node B no longer counted for the rule while it was disabled.
        expect(entry!.matchedCount).toBe(4);
      });
    });
  }
});
