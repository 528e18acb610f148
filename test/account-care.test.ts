/**
 * Account care (docs/teams.md, "Account care"; docs/api.md, "Account care"): password reset by mail,
 * password change, the sessions list and its revoke, and account deletion down to every row of
 * every table of the database. Real server, real database, a real SMTP server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { newId } from '../src/ids.js';
import { createProject, describeEngines, errorOf, ingest, ISSUED_SECRETS, setPlan, signup, uniqueEmail, useServer, waitFor, type Account } from './harness.js';
import { startPushReceiver, startSmtpSink } from './sinks.js';
import { addMember, invite, nextMail, scanDatabase, tokenInMail } from './teams-helpers.js';

const PUBLIC_URL = 'https://logs.example.com';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MAX_ATTEMPTS = 3;

describeEngines('account care', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let push: Awaited<ReturnType<typeof startPushReceiver>>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    push = await startPushReceiver();
  });
  // Declared before the server: afterAll hooks run in reverse, so the sinks close after it.
  afterAll(async () => {
    await smtp?.close();
    await push?.close();
  });
  const s = useServer(engine, () => ({
    env: {
      SMTP_URL: smtp.url, PUBLIC_URL, ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>', PUSH_ALLOWED_ORIGINS: push.origin,
      LOGIN_MAX_ATTEMPTS: String(MAX_ATTEMPTS), LOGIN_MAX_ATTEMPTS_PER_IP: '1000', LOGIN_WINDOW: '15m',
    },
  }));

  /** The refresh token an API login, signup or refresh answers in its body (the console's get a cookie instead). */
  const refreshTokenOf = (res: { status: number; body: { refreshToken?: string } }): string => {
    const { refreshToken } = res.body;
    if (typeof refreshToken !== 'string') throw new Error(`no refresh token in the body (status ${res.status})`);
    return refreshToken;
  };
  const login = async (email: string, password: string, headers: Record<string, string> = {}) => s.request('POST', '/v1/auth/login', { body: { email, password }, headers });
  /** A second login of the account: its own session and token pair. */
  const loginAgain = async (a: Account, headers: Record<string, string> = {}) => {
    const res = await login(a.email, a.password, headers);
    expect(res.status).toBe(200);
    const refreshToken = refreshTokenOf(res);
    ISSUED_SECRETS.add(res.body.accessToken);
    ISSUED_SECRETS.add(refreshToken);
    return { accessToken: res.body.accessToken, refreshToken };
  };
  const refresh = (refreshToken: string) => s.request('POST', '/v1/auth/refresh', { body: { refreshToken } });
  const expectRefreshRefused = async (refreshToken: string, what: string) => {
    const res = await refresh(refreshToken);
    expect(res.status, what).toBe(401);
    expect(errorOf(res).code, what).toBe('INVALID_REFRESH_TOKEN');
  };
  const requestReset = (email: string) => s.request('POST', '/v1/auth/password-reset', { body: { email } });
  const resetToken = async (email: string) => tokenInMail(await nextMail(smtp, email, (subject) => subject === 'Reset your Loglane password'), `${PUBLIC_URL}/reset-password`);
  const confirm = (token: string, newPassword: string) => s.request('POST', '/v1/auth/password-reset/confirm', { body: { token, newPassword } });
  const refusedAt = (res: { status: number }, path: string, what: string) => {
    expect(res.status, what).toBe(400);
    const err = errorOf(res as never);
    expect(err.code, what).toBe('VALIDATION_ERROR');
    expect(err.details, what).toEqual([expect.objectContaining({ path })]);
  };
  const sessions = async (token: string) => {
    const res = await s.request('GET', '/v1/auth/sessions', { token });
    expect(res.status).toBe(200);
    return res.body.data as { id: string; createdAt: string; lastUsedAt: string; userAgent: string | null; ip: string | null; current: boolean }[];
  };
  const newPassword = () => `new-pw-${newId('log').slice(-12)}`;

  describe('password reset', () => {
    it('mails a link to PUBLIC_URL/reset-password#token=…; the token sets the password once', async () => {
      const a = await signup(s);
      const res = await requestReset(a.email.toUpperCase());
      expect(res.status).toBe(202);
      expect(res.body).toEqual({});
      const token = await resetToken(a.email);
      const pw = newPassword();
      ISSUED_SECRETS.add(pw);
      expect((await confirm(token, pw)).status).toBe(204);
      expect((await login(a.email, pw)).status).toBe(200);
      const old = await login(a.email, a.password);
      expect(old.status).toBe(401);
      expect(errorOf(old).code).toBe('INVALID_CREDENTIALS');
      // Used: refused at /token, and the password stays the one it set.
      refusedAt(await confirm(token, 'another-password-1'), '/token', 'a used token');
      expect((await login(a.email, pw)).status).toBe(200);
      refusedAt(await confirm('not-a-token-at-all', 'another-password-1'), '/token', 'an unknown token');
    });

    it('the confirm revokes the refresh token of every session', async () => {
      const a = await signup(s);
      const second = await loginAgain(a);
      await requestReset(a.email);
      const pw = newPassword();
      ISSUED_SECRETS.add(pw);
      expect((await confirm(await resetToken(a.email), pw)).status).toBe(204);
      await expectRefreshRefused(a.refreshToken, 'the signup session');
      await expectRefreshRefused(second.refreshToken, 'the second session');
      const fresh = await login(a.email, pw);
      expect(fresh.status).toBe(200);
      expect((await sessions(fresh.body.accessToken)).map((x) => x.current)).toEqual([true]);
    });

    it('a confirm with a too-short newPassword is 400 at /newPassword and does not use the token', async () => {
      const a = await signup(s);
      await requestReset(a.email);
      const token = await resetToken(a.email);
      refusedAt(await confirm(token, 'short'), '/newPassword', 'a 5-character password');
      refusedAt(await confirm(token, 'x'.repeat(257)), '/newPassword', 'a 257-character password');
      expect((await login(a.email, a.password)).status).toBe(200);
      const pw = newPassword();
      ISSUED_SECRETS.add(pw);
      expect((await confirm(token, pw)).status).toBe(204);
      expect((await login(a.email, pw)).status).toBe(200);
    });

    it('a token lives 30 minutes; a later request does not cancel an earlier token', async () => {
      const a = await signup(s);
      const b = await signup(s);
      await requestReset(a.email);
      const first = await resetToken(a.email);
      await requestReset(a.email);
      await resetToken(a.email);
      await requestReset(b.email);
      const tokenB = await resetToken(b.email);

      s.clock.advance(29 * 60_000);
      const pw = newPassword();
      ISSUED_SECRETS.add(pw);
      expect((await confirm(first, pw)).status).toBe(204);
      expect((await login(a.email, pw)).status).toBe(200);

      s.clock.advance(60_000 + 1000);
      refusedAt(await confirm(tokenB, 'another-password-1'), '/token', 'a token older than 30 minutes');
      expect((await login(b.email, b.password)).status).toBe(200);
    });

    it('an unknown email gets the same 202 {} and no mail', async () => {
      const a = await signup(s);
      const ghost = uniqueEmail('ghost');
      const unknown = await requestReset(ghost);
      const known = await requestReset(a.email);
      for (const res of [unknown, known]) {
        expect(res.status).toBe(202);
        expect(res.headers.get('content-type')).toBe(known.headers.get('content-type'));
      }
      expect(unknown.text).toBe(known.text);
      expect(known.body).toEqual({});
      // The known address's mail has arrived; the unknown one's would have been sent no later.
      await resetToken(a.email);
      expect(smtp.mails.filter((m) => m.to.includes(ghost))).toEqual([]);
    });

    it(`after ${MAX_ATTEMPTS} requests for one email, 429 RATE_LIMITED with Retry-After, known or not; a counter of its own`, async () => {
      const a = await signup(s);
      const ghost = uniqueEmail('ghost');
      for (const email of [a.email, ghost]) {
        for (let i = 0; i < MAX_ATTEMPTS; i++) expect((await requestReset(email)).status, `${email} #${i + 1}`).toBe(202);
        const limited = await requestReset(email);
        expect(limited.status, email).toBe(429);
        expect(errorOf(limited).code).toBe('RATE_LIMITED');
        const retryAfter = Number(limited.headers.get('retry-after'));
        expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 15 * 60).toBe(true);
      }
      // Exactly the allowed requests sent a mail.
      for (let i = 0; i < MAX_ATTEMPTS; i++) await resetToken(a.email);
      expect(smtp.mails.filter((m) => m.to.includes(a.email))).toHaveLength(MAX_ATTEMPTS);
      // Reset requests do not cost logins, and failed logins do not cost resets.
      expect((await login(a.email, a.password)).status).toBe(200);
      const b = await signup(s);
      for (let i = 0; i < MAX_ATTEMPTS; i++) expect((await login(b.email, 'wrong password')).status).toBe(401);
      expect((await login(b.email, b.password)).status).toBe(429);
      expect((await requestReset(b.email)).status).toBe(202);
      await resetToken(b.email);
    });
  });

  describe('password change', () => {
    it('a wrong current password is 401 INVALID_CREDENTIALS and changes nothing; a short new one is 400', async () => {
      const a = await signup(s);
      const wrong = await s.request('POST', '/v1/auth/password', { token: a.accessToken, body: { currentPassword: 'not my password', newPassword: 'whatever-long-1' } });
      expect(wrong.status).toBe(401);
      expect(errorOf(wrong).code).toBe('INVALID_CREDENTIALS');
      refusedAt(await s.request('POST', '/v1/auth/password', { token: a.accessToken, body: { currentPassword: a.password, newPassword: 'short' } }), '/newPassword', 'a short new password');
      expect((await s.request('POST', '/v1/auth/password', { body: { currentPassword: a.password, newPassword: 'whatever-long-1' } })).status).toBe(401);
      expect((await login(a.email, a.password)).status).toBe(200);
      expect((await refresh(a.refreshToken)).status).toBe(200);
    });

    it('ends every other session (refresh refused), keeps the caller\'s; the new password logs in, the old does not', async () => {
      const a = await signup(s);
      const other = await loginAgain(a);
      const third = await loginAgain(a);
      const pw = newPassword();
      ISSUED_SECRETS.add(pw);
      const res = await s.request('POST', '/v1/auth/password', { token: a.accessToken, body: { currentPassword: a.password, newPassword: pw } });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      await expectRefreshRefused(other.refreshToken, 'another session');
      await expectRefreshRefused(third.refreshToken, 'a third session');
      const mine = await refresh(a.refreshToken);
      expect(mine.status).toBe(200);
      expect((await refresh(refreshTokenOf(mine))).status).toBe(200);
      // Access tokens already issued stay valid until they expire (docs/api.md, "Accounts and tokens").
      expect((await s.request('GET', '/v1/auth/me', { token: other.accessToken })).status).toBe(200);
      const old = await login(a.email, a.password);
      expect(old.status).toBe(401);
      expect(errorOf(old).code).toBe('INVALID_CREDENTIALS');
      expect((await login(a.email, pw)).status).toBe(200);
    });
  });

  describe('sessions', () => {
    it('one per login, newest first, the caller\'s marked current, with user agent and address; lastUsedAt moves on refresh', async () => {
      const email = uniqueEmail('sessions');
      const password = `pw-${newId('log').slice(-12)}`;
      ISSUED_SECRETS.add(password);
      const up = await s.request('POST', '/v1/auth/signup', { body: { email, password }, headers: { 'user-agent': 'Agent-One/1.0' } });
      expect(up.status).toBe(201);
      ISSUED_SECRETS.add(up.body.accessToken);
      ISSUED_SECRETS.add(refreshTokenOf(up));
      s.clock.advance(10);
      const second = await login(email, password, { 'user-agent': 'Agent-Two/2.0' });
      ISSUED_SECRETS.add(second.body.accessToken);
      ISSUED_SECRETS.add(refreshTokenOf(second));

      const list = await sessions(second.body.accessToken);
      expect(list).toEqual([
        { id: expect.stringMatching(/^ses_[0-9a-z]{26}$/), createdAt: expect.stringMatching(ISO), lastUsedAt: expect.stringMatching(ISO), userAgent: 'Agent-Two/2.0', ip: expect.stringMatching(/127\.0\.0\.1$/), current: true },
        { id: expect.stringMatching(/^ses_[0-9a-z]{26}$/), createdAt: expect.stringMatching(ISO), lastUsedAt: expect.stringMatching(ISO), userAgent: 'Agent-One/1.0', ip: expect.stringMatching(/127\.0\.0\.1$/), current: false },
      ]);
      for (const x of list) expect(x.lastUsedAt).toBe(x.createdAt);
      expect(Date.parse(list[0]!.createdAt)).toBeGreaterThan(Date.parse(list[1]!.createdAt));
      // Seen from the first login, the first is current.
      expect((await sessions(up.body.accessToken)).map((x) => [x.id, x.current])).toEqual([[list[0]!.id, false], [list[1]!.id, true]]);

      s.clock.advance(3000);
      const refreshed = await refresh(refreshTokenOf(up));
      expect(refreshed.status).toBe(200);
      ISSUED_SECRETS.add(refreshed.body.accessToken);
      ISSUED_SECRETS.add(refreshTokenOf(refreshed));
      const after = await sessions(refreshed.body.accessToken);
      expect(after.map((x) => x.id)).toEqual(list.map((x) => x.id));
      const [newer, older] = after;
      expect(older).toMatchObject({ createdAt: list[1]!.createdAt, current: true });
      expect(Date.parse(older!.lastUsedAt) - Date.parse(list[1]!.lastUsedAt)).toBeGreaterThanOrEqual(3000);
      expect(newer).toEqual({ ...list[0]!, current: false });
    });

    it('revoking a session makes its refresh token fail; another user\'s or an unknown session is 404', async () => {
      const a = await signup(s);
      const second = await loginAgain(a);
      const [newest, first] = await sessions(second.accessToken);
      const del = await s.request('DELETE', `/v1/auth/sessions/${first!.id}`, { token: second.accessToken });
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      await expectRefreshRefused(a.refreshToken, 'the revoked session');
      expect((await sessions(second.accessToken)).map((x) => x.id)).toEqual([newest!.id]);
      expect((await refresh(second.refreshToken)).status).toBe(200);

      const b = await signup(s);
      const [theirs] = await sessions(b.accessToken);
      const foreign = await s.request('DELETE', `/v1/auth/sessions/${theirs!.id}`, { token: second.accessToken });
      const unknown = await s.request('DELETE', `/v1/auth/sessions/${newId('ses')}`, { token: second.accessToken });
      expect(foreign.status).toBe(404);
      expect(errorOf(foreign).code).toBe('NOT_FOUND');
      expect({ ...errorOf(foreign), requestId: undefined }).toEqual({ ...errorOf(unknown), requestId: undefined });
      expect((await refresh(b.refreshToken)).status).toBe(200);
      expect((await s.request('DELETE', `/v1/auth/sessions/${theirs!.id}`)).status).toBe(401);
      // A logout ends its session too: it leaves the list.
      const third = await loginAgain(b);
      expect(await sessions(b.accessToken)).toHaveLength(2);
      expect((await s.request('POST', '/v1/auth/logout', { token: third.accessToken, body: { refreshToken: third.refreshToken } })).status).toBe(204);
      expect((await sessions(b.accessToken)).map((x) => x.id)).toEqual([theirs!.id]);
      expect((await s.request('GET', '/v1/auth/sessions')).status).toBe(401);
    });
  });

  describe('account deletion', () => {
    it('a wrong password is 401 INVALID_CREDENTIALS and deletes nothing', async () => {
      const a = await signup(s);
      const p = await createProject(s, a);
      const res = await s.request('DELETE', '/v1/account', { token: a.accessToken, body: { password: 'not my password' } });
      expect(res.status).toBe(401);
      expect(errorOf(res).code).toBe('INVALID_CREDENTIALS');
      expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).status).toBe(200);
      expect((await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken })).status).toBe(200);
    });

    it('leaves no row of any table holding the user id, the email or the id of one of its projects; the email can sign up again', async () => {
      const d = await signup(s);
      await setPlan(s, d.id, 'enterprise');
      const other = await loginAgain(d);
      const p1 = { ...(await createProject(s, d, 'Doomed one')), name: 'Doomed one' };
      const p2 = await createProject(s, d, 'Doomed two');
      expect((await ingest(s, p1.apiKey, [{ message: 'one', level: 'error' }, { message: 'two' }])).status).toBe(202);
      expect((await ingest(s, p2.apiKey, [{ message: 'three' }])).status).toBe(202);
      // A rule that fired (history and deliveries), a destination, a pending invitation, a push subscription, a reset token.
      const rule = await s.request('POST', '/v1/alerts', { token: d.accessToken, body: { projectId: p1.id, name: 'fires', condition: { level: 'error', threshold: 1, window: '5m' }, channels: ['email'], cooldown: '0s' } });
      expect(rule.status).toBe(201);
      expect((await ingest(s, p1.apiKey, [{ message: 'boom', level: 'error' }])).status).toBe(202);
      await waitFor(async () => {
        const h = (await s.request('GET', `/v1/alerts/${rule.body.id}/history`, { token: d.accessToken })).body.data as { deliveries: { status: string }[] }[];
        return h.length > 0 && h.every((e) => e.deliveries.every((x) => x.status !== 'pending'));
      }, 8000, 'the firing to be delivered');
      expect((await s.request('POST', `/v1/projects/${p1.id}/destinations`, { token: d.accessToken, body: { type: 'webhook', url: 'https://hooks.example.com/x' } })).status).toBe(201);
      expect((await s.request('POST', `/v1/projects/${p1.id}/invitations`, { token: d.accessToken, body: { email: uniqueEmail('pending'), role: 'member' } })).status).toBe(201);
      const sub = push.subscribe();
      expect((await s.request('POST', '/v1/push/subscriptions', { token: d.accessToken, body: { endpoint: sub.endpoint, keys: sub.keys } })).status).toBe(201);
      expect((await requestReset(d.email)).status).toBe(202);
      await resetToken(d.email);

      // A project of another user that d was invited to as an admin, made a rule in, and invited someone to.
      const b = await signup(s);
      await addMember(s, smtp, d, p1, b, 'member', PUBLIC_URL);
      expect((await s.request('GET', `/v1/projects/${p1.id}`, { token: b.accessToken })).status).toBe(200);
      const shared = { ...(await createProject(s, b, 'Survivor')), name: 'Survivor' };
      await ingest(s, shared.apiKey, [{ message: 'stays' }]);
      await addMember(s, smtp, b, shared, d, 'admin', PUBLIC_URL);
      expect((await s.request('POST', '/v1/alerts', { token: d.accessToken, body: { projectId: shared.id, name: 'by d', condition: { level: 'error', threshold: 9, window: '5m' }, channels: ['email'] } })).status).toBe(201);
      await invite(s, smtp, d, shared, uniqueEmail('invited-by-d'), 'member', PUBLIC_URL);
      const sharedBefore = (await s.request('GET', `/v1/projects/${shared.id}`, { token: b.accessToken })).body;

      const needles = [d.id, d.email, p1.id, p2.id];
      const holding = (cells: { table: string; column: string; text: string }[]) =>
        cells.flatMap((c) => needles.filter((n) => c.text.includes(n)).map((n) => `${c.table}.${c.column} holds ${n}`));
      // The scan finds each of them before (it can see what it looks for).
      const before = holding(await scanDatabase(s));
      for (const n of needles) expect(before.some((h) => h.endsWith(` holds ${n}`)), n).toBe(true);

      const res = await s.request('DELETE', '/v1/account', { token: d.accessToken, body: { password: d.password } });
      expect(res.status).toBe(204);

      for (const token of [d.accessToken, other.accessToken]) {
        const me = await s.request('GET', '/v1/auth/me', { token });
        expect(me.status).toBe(401);
        expect(errorOf(me).code).toBe('UNAUTHORIZED');
        expect((await s.request('GET', '/v1/projects', { token })).status).toBe(401);
      }
      await expectRefreshRefused(d.refreshToken, 'the signup session');
      await expectRefreshRefused(other.refreshToken, 'the second session');
      const ingestAfter = await ingest(s, p1.apiKey, [{ message: 'too late' }]);
      expect(ingestAfter.status).toBe(401);
      expect(errorOf(ingestAfter).code).toBe('INVALID_API_KEY');

      expect(holding(await scanDatabase(s))).toEqual([]);
      const logRows = await sql<{ n: number | string }>`select count(*) as n from logs where project_id in (${p1.id}, ${p2.id})`.execute(s.database.db);
      expect(Number(logRows.rows[0]!.n)).toBe(0);

      // A member of d's project lost it with d; the other user's own project is whole, without d.
      expect((await s.request('GET', `/v1/projects/${p1.id}`, { token: b.accessToken })).status).toBe(404);
      expect((await s.request('GET', '/v1/projects', { token: b.accessToken })).body.data.map((x: { id: string }) => x.id)).toEqual([shared.id]);
      const members = (await s.request('GET', `/v1/projects/${shared.id}/members`, { token: b.accessToken })).body.data as { userId: string }[];
      expect(members.map((m) => m.userId)).toEqual([b.id]);
      expect((await s.request('GET', `/v1/projects/${shared.id}`, { token: b.accessToken })).body).toEqual(sharedBefore);
      const logs = await s.request('GET', `/v1/projects/${shared.id}/logs`, { token: b.accessToken });
      expect(logs.body.data.map((l: { message: string }) => l.message)).toEqual(['stays']);

      // The email is free again, for a new account with nothing.
      const again = await s.request('POST', '/v1/auth/signup', { body: { email: d.email, password: d.password } });
      expect(again.status).toBe(201);
      ISSUED_SECRETS.add(again.body.accessToken);
      ISSUED_SECRETS.add(refreshTokenOf(again));
      expect(again.body.user.id).not.toBe(d.id);
      expect((await s.request('GET', '/v1/projects', { token: again.body.accessToken })).body.data).toEqual([]);
      expect((await s.request('GET', '/v1/alerts', { token: again.body.accessToken })).body.data).toEqual([]);
      expect((await s.request('GET', '/v1/push/subscriptions', { token: again.body.accessToken })).body.data).toEqual([]);
      expect((await s.request('GET', `/v1/projects/${shared.id}`, { token: again.body.accessToken })).status).toBe(404);
    });
  });
});
