/**
 * Issue 25, findings 6 and 7 (accounts and teams): sign-up had no throttle, so one address could
 * make accounts by the hundred and fill the server's live tails; a project created while its
 * account was being deleted left its logs, counters and idempotency keys behind; a password-reset
 * link still worked after a newer one was used or the password changed; an invitation outlived the
 * admin who sent it; and a user could mail invitations from every project they administer. Both
 * engines, a real SMTP server, and a bystander tenant beside the attacks on shared capacity.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, ISSUED_SECRETS, setPlan, uniqueEmail, useServer, waitFor, type Account, type Response, type TestServer } from './harness.js';
import { beside, expectUnharmed } from './hostile.js';
import { startSmtpSink } from './sinks.js';
import { invite, listTables, nextMail, tokenInMail } from './teams-helpers.js';

const PUBLIC_URL = 'https://logs.example.com';
const SIGNUPS_PER_IP = 4;
const TAILS = 12;
const TAILS_PER_IP = 6;

/** A fresh address for every account the tests make, so only the tests about sign-ups meet its throttle. */
const freshIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 250)}`;

describeEngines('hostile accounts, round two', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let bystanderKey: string;

  const env = () => ({
    SMTP_URL: smtp.url, PUBLIC_URL, ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>', TRUST_PROXY: 'true',
    SIGNUP_MAX_PER_IP: String(SIGNUPS_PER_IP), SIGNUP_WINDOW: '1h', MAX_TAILS: String(TAILS), MAX_TAILS_PER_IP: String(TAILS_PER_IP), MAX_TAILS_PER_USER: '5',
    LOGIN_MAX_ATTEMPTS_PER_IP: '100000',
  });

  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  // Declared before the servers: afterAll hooks run in reverse, so the mail sink closes after them.
  afterAll(async () => {
    await smtp?.close();
  });
  const s = useServer(engine, () => ({ env: env() }), 60_000);
  // A second node on the same database: the sign-up throttle is the cluster's, not a process's.
  const b = useServer(engine, () => ({ shareWith: s, env: env() }), 60_000);
  beforeAll(async () => {
    const other = await signupFrom(s, freshIp());
    bystanderKey = (await createProject(s, other, 'bystander')).apiKey;
  });

  const signupRaw = (node: TestServer, ip: string, email = uniqueEmail('su'), password = `pw-${randomBytes(8).toString('hex')}`) =>
    node.request('POST', '/v1/auth/signup', { body: { email, password }, headers: { 'x-forwarded-for': ip } }).then((res) => ({ res, email, password }));

  /** The refresh token an API sign-up or login answers in its body (the console's get a cookie instead). */
  const refreshTokenOf = (res: { status: number; body: { refreshToken?: string } }): string => {
    const { refreshToken } = res.body;
    if (typeof refreshToken !== 'string') throw new Error(`no refresh token in the body (status ${res.status})`);
    return refreshToken;
  };

  async function signupFrom(node: TestServer, ip: string): Promise<Account> {
    const { res, email, password } = await signupRaw(node, ip);
    if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
    const refreshToken = refreshTokenOf(res);
    for (const secret of [password, res.body.accessToken, refreshToken]) ISSUED_SECRETS.add(secret);
    return { id: res.body.user.id, email, password, accessToken: res.body.accessToken, refreshToken };
  }

  describe('sign-up (finding 6)', () => {
    it(`one address makes at most SIGNUP_MAX_PER_IP accounts a window, across nodes; then 429 with Retry-After, and other addresses are untouched`, async () => {
      const ip = freshIp();
      // A refused sign-up (a taken email, a bad address) costs the address nothing.
      const taken = await signupFrom(s, ip);
      expect((await s.request('POST', '/v1/auth/signup', { body: { email: taken.email, password: 'long enough password' }, headers: { 'x-forwarded-for': ip } })).status).toBe(409);
      expect((await s.request('POST', '/v1/auth/signup', { body: { email: 'not an email', password: 'long enough password' }, headers: { 'x-forwarded-for': ip } })).status).toBe(400);
      // 40 at once, over two nodes, as a script would.
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signupRaw(i % 2 ? b : s, ip)));
      const made = answers.filter((a) => a.res.status === 201);
      for (const a of made) ISSUED_SECRETS.add(a.res.body.accessToken), ISSUED_SECRETS.add(refreshTokenOf(a.res));
      expect(made.length).toBe(SIGNUPS_PER_IP - 1);
      const refused = answers.filter((a) => a.res.status !== 201);
      for (const { res } of refused) {
        expect(res.status).toBe(429);
        expect(errorOf(res).code).toBe('RATE_LIMITED');
        const wait = Number(res.headers.get('retry-after'));
        expect(wait).toBeGreaterThan(3000);
        expect(wait).toBeLessThanOrEqual(3600);
      }
      // Only the accounts that were answered 201 exist.
      const stored = await s.database.db.selectFrom('users').select('email').where('email', 'in', answers.map((a) => a.email)).execute();
      expect(stored.map((r) => r.email).sort()).toEqual(made.map((a) => a.email).sort());
      // Another address signs up as before.
      await signupFrom(b, freshIp());
      // An IPv6 client counts by its /64 (one subscriber's block), so changing the last bits does not help.
      const net = `2001:db8:${randomBytes(2).toString('hex')}:1`;
      for (let i = 0; i < SIGNUPS_PER_IP; i++) await signupFrom(s, `${net}::${i + 1}`);
      const sixth = await signupRaw(s, `${net}:ffff:ffff:ffff:ffff`);
      expect(sixth.res.status).toBe(429);
      expect((await signupRaw(s, `2001:db8:${randomBytes(2).toString('hex')}:2::1`)).res.status).toBe(201);
      // The window passes: the address may sign up again.
      s.clock.advance(3600_000 + 1000);
      expect((await signupRaw(b, ip)).res.status).toBe(201);
    });

    it('accounts made from one address cannot take the server\'s live tails: past MAX_TAILS_PER_IP they get 429, and a later tenant opens its tail', async () => {
      const attackerIp = freshIp();
      // Accounts made over days from other addresses (the sign-up throttle is not what stops this);
      // all their tails come from one address, five per account.
      const accounts = await Promise.all(Array.from({ length: 4 }, () => signupFrom(s, freshIp())));
      const projects = await Promise.all(accounts.map((a) => createProject(s, a, 'tails')));
      const open: AbortController[] = [];
      // The open tails' answers are kept: fetch cancels an unread body once its Response is garbage
      // collected, which would close a tail (and free its address's place) whenever the GC ran.
      const answers: globalThis.Response[] = [];
      const tail = async (token: string, projectId: string, ip: string) => {
        const controller = new AbortController();
        const res = await fetch(`${s.url}/v1/projects/${projectId}/logs/tail`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ip }, signal: controller.signal });
        if (res.status === 200) {
          open.push(controller);
          answers.push(res);
        } else await res.text();
        return res;
      };
      try {
        const { result: statuses, report } = await beside(s, bystanderKey, async () => {
          const out: number[] = [];
          for (const [i, a] of accounts.entries()) for (let k = 0; k < 5; k++) out.push((await tail(a.accessToken, projects[i]!.id, attackerIp)).status);
          return out;
        }, { label: 'tails from one address' });
        expectUnharmed(report);
        expect(statuses.filter((x) => x === 200).length).toBe(TAILS_PER_IP);
        expect(statuses.filter((x) => x !== 200).every((x) => x === 429)).toBe(true);
        const refused = await tail(accounts[3]!.accessToken, projects[3]!.id, attackerIp);
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        // The later tenant, from its own address.
        const victim = await signupFrom(s, freshIp());
        const vp = await createProject(s, victim, 'victim');
        const mine = await tail(victim.accessToken, vp.id, freshIp());
        expect(mine.status).toBe(200);
        // A closed tail gives its address's place back.
        open.shift()!.abort();
        await waitFor(async () => (await tail(accounts[0]!.accessToken, projects[0]!.id, attackerIp)).status === 200, 4000, 'the freed place');
      } finally {
        for (const c of open) c.abort();
        answers.length = 0;
      }
    });
  });

  describe('account deletion against project creation (finding 6)', () => {
    /** Puts `n` logs straight into the project, so that purging it takes a while. */
    async function load(projectId: string, n: number): Promise<void> {
      const db = s.database.db;
      const t = s.clock.now();
      if (engine === 'postgres') {
        await sql`insert into logs (project_id, seq, ts, received_at, level, source, message, metadata)
                  select ${projectId}, g, ${t}::bigint - g, ${t}::bigint - g, 2, 'api', 'order ' || g, null from generate_series(1, ${n}) g`.execute(db);
      } else {
        await sql`with recursive g(i) as (select 1 union all select i + 1 from g where i < ${n})
                  insert into logs (project_id, seq, ts, received_at, level, source, message, metadata)
                  select ${projectId}, i, ${t} - i, ${t} - i, 2, 'api', 'order ' || i, null from g`.execute(db);
      }
      await db.updateTable('projects').set({ last_seq: n, log_count: n }).where('id', '=', projectId).execute();
    }

    it('projects created and written to while their account is being deleted leave nothing behind, in any table', async () => {
      const a = await signupFrom(s, freshIp());
      await setPlan(s, a.id, 'enterprise');
      const big = await createProject(s, a, 'big');
      await load(big.id, 60_000);
      // The skip index summarises the big project first (14 full blocks), so what is tested here is
      // the account's deletion against project creation, not the index builder against a purge.
      const blocks = async () => Number((await sql<{ n: number }>`select count(*) as n from log_blocks where project_id = ${big.id}`.execute(s.database.db)).rows[0]!.n);
      await waitFor(async () => (await blocks()) >= Math.floor(60_000 / s.config.indexBlockLogs), 60_000, 'the big project\'s skip index');
      const created: string[] = [big.id];
      const answers: number[] = [];
      let deleting = true;
      // Creates projects and writes to them (with idempotency keys) for as long as the deletion runs.
      const racer = async () => {
        while (deleting) {
          const res = await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'racer' } });
          answers.push(res.status);
          if (res.status !== 201) {
            if (res.status >= 500) throw new Error(`project create: ${res.status} ${res.text}`);
            continue;
          }
          ISSUED_SECRETS.add(res.body.apiKey);
          created.push(res.body.id);
          const w = await ingest(s, res.body.apiKey, [{ message: 'written during deletion', level: 'error', source: 'racer' }], { 'idempotency-key': `k-${randomBytes(4).toString('hex')}` });
          if (w.status >= 500) throw new Error(`ingest: ${w.status} ${w.text}`);
        }
      };
      const { report } = await beside(s, bystanderKey, async () => {
        const racers = [racer(), racer(), racer()];
        // Let the racers get going, so creations land before, during and after the deletion starts.
        await waitFor(() => answers.length >= 3, 10_000, 'the first creations');
        const del = await s.request('DELETE', '/v1/account', { token: a.accessToken, body: { password: a.password } });
        deleting = false;
        await Promise.all(racers);
        return del;
      }, { label: 'project creation racing account deletion' }).then(({ result, report }) => {
        expect(result.status).toBe(204);
        return { report };
      });
      expectUnharmed(report);
      expect(answers.some((x) => x === 201)).toBe(true);
      // Every answer after the account was gone is a 401.
      expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'late' } })).status).toBe(401);

      // Nothing of the account or of any of its projects is left, in any table.
      const db = s.database.db;
      const leftovers: string[] = [];
      for (const table of await listTables(s)) {
        const columns = engine === 'postgres'
          ? (await sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table}`.execute(db)).rows.map((r) => r.name)
          : (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((r) => r.name);
        for (const column of columns.filter((c) => c === 'project_id' || c === 'user_id' || (table === 'projects' && c === 'id') || (table === 'users' && c === 'id'))) {
          const ids = column === 'user_id' || table === 'users' ? [a.id] : created;
          const n = (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} in (${sql.join(ids)})`.execute(db)).rows[0]!.n;
          if (Number(n) > 0) leftovers.push(`${table}.${column}: ${n}`);
        }
      }
      expect(leftovers).toEqual([]);
    }, 120_000);
    it('a deletion left midway (a node stopped) locks the account out at once, and housekeeping finishes it an hour on', async () => {
      const a = await signupFrom(s, freshIp());
      const p = await createProject(s, a, 'left midway');
      expect((await ingest(s, p.apiKey, [{ message: 'kept until the deletion is finished', level: 'info' }], { 'idempotency-key': 'midway' })).status).toBe(202);
      // As deleteAccount leaves it when its node stops right after marking the account.
      await s.database.db.updateTable('users').set({ deleting_since: s.clock.now() }).where('id', '=', a.id).execute();
      expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).status).toBe(401);
      expect((await s.request('POST', '/v1/projects', { token: a.accessToken, body: { name: 'more' } })).status).toBe(401);
      expect((await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: a.password } })).status).toBe(401);
      const services = (s.app as unknown as { services: { accounts: { housekeeping(): Promise<{ deletionsFinished: number }> } } }).services;
      expect((await services.accounts.housekeeping()).deletionsFinished).toBe(0);
      s.clock.advance(3600_000 + 1000);
      expect((await services.accounts.housekeeping()).deletionsFinished).toBeGreaterThanOrEqual(1);
      const db = s.database.db;
      expect(await db.selectFrom('users').select('id').where('id', '=', a.id).execute()).toEqual([]);
      for (const table of ['projects', 'logs', 'log_counts', 'idempotency_keys'] as const) {
        const column = table === 'projects' ? 'id' : 'project_id';
        const n = (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${p.id}`.execute(db)).rows[0]!.n;
        expect(Number(n), table).toBe(0);
      }
    });
  });

  describe('password reset links (finding 6)', () => {
    const requestReset = (email: string) => s.request('POST', '/v1/auth/password-reset', { body: { email }, headers: { 'x-forwarded-for': freshIp() } });
    const resetToken = async (email: string) => tokenInMail(await nextMail(smtp, email, (subject) => subject === 'Reset your Loglane password'), `${PUBLIC_URL}/reset-password`);
    const confirm = (token: string, newPassword: string) => s.request('POST', '/v1/auth/password-reset/confirm', { body: { token, newPassword } });
    const password = () => {
      const pw = `new-pw-${randomBytes(6).toString('hex')}`;
      ISSUED_SECRETS.add(pw);
      return pw;
    };
    const refusedAtToken = (res: Response) => {
      expect(res.status).toBe(400);
      expect(errorOf(res).details).toEqual([expect.objectContaining({ path: '/token' })]);
    };
    const login = (email: string, pw: string) => s.request('POST', '/v1/auth/login', { body: { email, password: pw } });

    it('an older link dies when a newer one is used', async () => {
      const a = await signupFrom(s, freshIp());
      await requestReset(a.email);
      const older = await resetToken(a.email);
      await requestReset(a.email);
      const newer = await resetToken(a.email);
      const pw = password();
      expect((await confirm(newer, pw)).status).toBe(204);
      refusedAtToken(await confirm(older, password()));
      expect((await login(a.email, pw)).status).toBe(200);
    });

    it('a link dies when the password is changed', async () => {
      const a = await signupFrom(s, freshIp());
      await requestReset(a.email);
      const link = await resetToken(a.email);
      const pw = password();
      expect((await s.request('POST', '/v1/auth/password', { token: a.accessToken, body: { currentPassword: a.password, newPassword: pw } })).status).toBe(204);
      refusedAtToken(await confirm(link, password()));
      expect((await login(a.email, pw)).status).toBe(200);
    });

    it('two links confirmed at once: exactly one sets the password, the other is refused, neither is a 5xx', async () => {
      const a = await signupFrom(s, freshIp());
      const tokens: string[] = [];
      for (let i = 0; i < 4; i++) {
        await requestReset(a.email);
        tokens.push(await resetToken(a.email));
      }
      const pws = tokens.map(() => password());
      const answers = await Promise.all(tokens.map((t, i) => confirm(t, pws[i]!)));
      expect(answers.map((r) => r.status).sort()).toEqual([204, 400, 400, 400]);
      const winner = answers.findIndex((r) => r.status === 204);
      expect((await login(a.email, pws[winner]!)).status).toBe(200);
    });
  });

  describe('invitations (finding 7)', () => {
    const accept = (who: Account, token: string) => s.request('POST', '/v1/invitations/accept', { token: who.accessToken, body: { token } });

    async function teamWithAdmin() {
      const owner = await signupFrom(s, freshIp());
      const admin = await signupFrom(s, freshIp());
      const project = { ...(await createProject(s, owner, `team-${randomBytes(3).toString('hex')}`)) };
      const named = (await s.request('GET', `/v1/projects/${project.id}`, { token: owner.accessToken })).body as { id: string; name: string };
      const { token } = await invite(s, smtp, owner, named, admin.email, 'admin', PUBLIC_URL);
      expect((await accept(admin, token)).status).toBe(200);
      return { owner, admin, project: named };
    }

    it('an invitation dies when the admin who sent it is removed from the project', async () => {
      const { owner, admin, project } = await teamWithAdmin();
      const guest = await signupFrom(s, freshIp());
      const { token } = await invite(s, smtp, admin, project, guest.email, 'member', PUBLIC_URL);
      expect((await s.request('DELETE', `/v1/projects/${project.id}/members/${admin.id}`, { token: owner.accessToken })).status).toBe(204);
      const res = await accept(guest, token);
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
      // Nor is it listed as pending any more.
      expect((await s.request('GET', `/v1/projects/${project.id}/invitations`, { token: owner.accessToken })).body.data).toEqual([]);
      expect((await s.request('GET', `/v1/projects/${project.id}`, { token: guest.accessToken })).status).toBe(404);
    });

    it('an invitation dies when the admin who sent it is made a member, and lives again only with a new one', async () => {
      const { owner, admin, project } = await teamWithAdmin();
      const guest = await signupFrom(s, freshIp());
      const { token } = await invite(s, smtp, admin, project, guest.email, 'member', PUBLIC_URL);
      expect((await s.request('PUT', `/v1/projects/${project.id}/members/${admin.id}`, { token: owner.accessToken, body: { role: 'member' } })).status).toBe(200);
      expect((await accept(guest, token)).status).toBe(404);
      const again = await invite(s, smtp, owner, project, guest.email, 'member', PUBLIC_URL);
      expect((await accept(guest, again.token)).status).toBe(200);
    });

    it('one sender mails at most 20 invitations an hour, whichever projects they come from', async () => {
      const sender = await signupFrom(s, freshIp());
      await setPlan(s, sender.id, 'enterprise');
      const p1 = await createProject(s, sender, 'one');
      const p2 = await createProject(s, sender, 'two');
      const p2named = (await s.request('GET', `/v1/projects/${p2.id}`, { token: sender.accessToken })).body as { id: string; name: string };
      // A colleague administers p2 too (that invitation is the sender's first of the hour).
      const colleague = await signupFrom(s, freshIp());
      expect((await accept(colleague, (await invite(s, smtp, sender, p2named, colleague.email, 'admin', PUBLIC_URL)).token)).status).toBe(200);
      const send = (p: { id: string }, who: Account) => s.request('POST', `/v1/projects/${p.id}/invitations`, { token: who.accessToken, body: { email: uniqueEmail('spam'), role: 'member' } });
      for (let i = 0; i < 11; i++) expect((await send(p1, sender)).status).toBe(201);
      for (let i = 0; i < 8; i++) expect((await send(p2, sender)).status).toBe(201);
      // Each project sent fewer than its own 20: the sender's 21st is refused, from either project.
      for (const p of [p1, p2]) {
        const over = await send(p, sender);
        expect(over.status).toBe(429);
        expect(errorOf(over).code).toBe('RATE_LIMITED');
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // The cap is the sender's: another admin of the project still invites.
      expect((await send(p2, colleague)).status).toBe(201);
      // An hour later the sender may again.
      s.clock.advance(3600_000 + 1000);
      const relog = await s.request('POST', '/v1/auth/login', { body: { email: sender.email, password: sender.password } });
      ISSUED_SECRETS.add(relog.body.accessToken), ISSUED_SECRETS.add(refreshTokenOf(relog));
      expect((await send(p1, { ...sender, accessToken: relog.body.accessToken })).status).toBe(201);
    });
  });
});
