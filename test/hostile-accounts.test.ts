/**
 * Issue 14, findings 5, 8 and 11 (accounts): the login throttle under concurrent bursts, email
 * addresses that could redirect mail, passwords with lone surrogates; and hostile input to every
 * /v1/auth route answering 4xx, never 5xx. Both engines; a real SMTP server receives the mail.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, setPlan, signup, uniqueEmail, useServer, waitFor, type Response, type TestServer } from './harness.js';
import { startSmtpSink } from './sinks.js';

const until = <T>(probe: () => Promise<T | undefined>, timeoutMs = 8000): Promise<T> => waitFor(probe, timeoutMs);

const LIMIT = 5;
const PER_IP = 12;
const BURST = 40;

describeEngines('hostile accounts: login throttle under bursts (finding 5)', (engine) => {
  const s = useServer(engine, { env: { LOGIN_MAX_ATTEMPTS: String(LIMIT), LOGIN_MAX_ATTEMPTS_PER_IP: String(PER_IP), LOGIN_WINDOW: '10m' } });
  // A second node on the same database: the limits are the cluster's, not a process's.
  const b = useServer(engine, () => ({ shareWith: s, env: { LOGIN_MAX_ATTEMPTS: String(LIMIT), LOGIN_MAX_ATTEMPTS_PER_IP: String(PER_IP), LOGIN_WINDOW: '10m' } }));

  /** A fresh window for every key, so each test starts from zero (the two nodes share one clock). */
  const freshWindow = () => s.clock.advance(11 * 60_000);
  const login = (node: TestServer, email: string, password: string) => node.request('POST', '/v1/auth/login', { body: { email, password } });

  /**
   * Fires `attempts` logins at once (alternating nodes), and once the burst is past its limit —
   * one of them answered 429 — the right password of `account` as well. Returns every answer.
   */
  async function burst(attempts: (() => Promise<Response>)[], right: () => Promise<Response>) {
    let sawLimit!: () => void;
    const limited = new Promise<void>((resolve) => (sawLimit = resolve));
    const answers = attempts.map((attempt) =>
      attempt().then((res) => {
        if (res.status === 429) sawLimit();
        return res;
      }),
    );
    // Either a 429 arrived, or every attempt was answered without one (the limit did not hold).
    await Promise.race([limited, Promise.all(answers)]);
    const rightAnswer = await right();
    return { answers: await Promise.all(answers), rightAnswer };
  }

  it(`${BURST} parallel wrong passwords for one email check at most LOGIN_MAX_ATTEMPTS of them, and the right one in the burst answers 429`, async () => {
    freshWindow();
    const a = await signup(s);
    const attempts = Array.from({ length: BURST }, (_, i) => () => login(i % 2 ? b : s, a.email, `wrong-${i}-password`));
    const { answers, rightAnswer } = await burst(attempts, () => login(s, a.email, a.password));

    // Every answer other than 429 is a password that was checked.
    const checked = answers.filter((r) => r.status !== 429);
    expect(checked.length).toBe(LIMIT);
    for (const r of checked) expect(errorOf(r).code).toBe('INVALID_CREDENTIALS');
    for (const r of answers.filter((x) => x.status === 429)) {
      expect(errorOf(r).code).toBe('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(rightAnswer.status).toBe(429);
    expect(Number(rightAnswer.headers.get('retry-after'))).toBeGreaterThan(500);

    // Nothing was left reserved: the window passes and the right password works on either node.
    s.clock.advance(10 * 60_000 + 1000);
    expect((await login(b, a.email, a.password)).status).toBe(200);
  });

  it(`${BURST} parallel logins for ${BURST} different emails from one address check at most LOGIN_MAX_ATTEMPTS_PER_IP`, async () => {
    freshWindow();
    const a = await signup(s);
    const attempts = Array.from({ length: BURST }, (_, i) => () => login(i % 2 ? b : s, uniqueEmail(`spray${i}`), 'some password'));
    const { answers, rightAnswer } = await burst(attempts, () => login(b, a.email, a.password));
    const checked = answers.filter((r) => r.status !== 429);
    expect(checked.length).toBe(PER_IP);
    for (const r of checked) expect(errorOf(r).code).toBe('INVALID_CREDENTIALS');
    // The address is out of attempts, whatever the email and however right the password.
    expect(rightAnswer.status).toBe(429);
    expect(errorOf(rightAnswer).code).toBe('RATE_LIMITED');
  });

  it('a success gives its reservation back, never anyone else\'s, and never the address\'s failures', async () => {
    freshWindow();
    const a = await signup(s);
    // The address has PER_IP - 1 failures; a success on top of them does not clear the address.
    for (let i = 0; i < PER_IP - 1; i++) expect((await login(s, uniqueEmail('ip'), 'x-password')).status).toBe(401);
    expect((await login(s, a.email, a.password)).status).toBe(200);
    expect((await login(s, uniqueEmail('ip'), 'x-password')).status).toBe(401);
    expect((await login(s, a.email, a.password)).status).toBe(429);
  });
});

describeEngines('hostile accounts: email addresses and passwords (findings 8, 11)', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  // Declared before the server: afterAll hooks run in reverse, so the mail sink closes after it.
  afterAll(async () => {
    await smtp?.close();
  });
  const s = useServer(engine, () => ({ env: { SMTP_URL: smtp.url, ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>', DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2', LOGIN_MAX_ATTEMPTS_PER_IP: '10000' } }));

  const HOSTILE_EMAILS = [
    'attacker<victim@corp.example>',
    '"x"<victim2@corp.example>',
    'g:victim3@corp.example;',
    'Victim <victim4@corp.example>',
    'a@corp.example, victim5@corp.example',
    'a@corp.example;victim6@corp.example',
    'victim7@corp.example (comment)',
    '(comment)victim8@corp.example',
    '"quoted local"@corp.example',
    '"a@b"@corp.example',
    'a@[127.0.0.1]',
    'a..b@corp.example',
    '.a@corp.example',
    'a.@corp.example',
    'a@-corp.example',
    'a@corp-.example',
    'a@corp.example.',
    'a@corp..example',
    'a@localhost',
    'a@1.2.3.4',
    'a\\@b@corp.example',
    'a\tb@corp.example',
    'a b@corp.example',
    'ann@bücher.example',
    `${'a'.repeat(65)}@corp.example`,
    `a@${'b'.repeat(64)}.example`,
    `a@${Array.from({ length: 64 }, () => 'abc').join('.')}.example`,
  ];

  it('signup accepts only a plain addr-spec: display names, groups, lists, comments and quotes are a 400 at /email', async () => {
    for (const email of HOSTILE_EMAILS) {
      const res = await s.request('POST', '/v1/auth/signup', { body: { email, password: 'long enough password' } });
      expect(res.status, email).toBe(400);
      const err = errorOf(res);
      expect(err.code).toBe('VALIDATION_ERROR');
      expect((err.details as { path: string }[])[0]!.path).toBe('/email');
    }
    // None of them became an account.
    const stored = await s.database.db.selectFrom('users').select('email').where('email', 'like', '%corp.example%').execute();
    expect(stored).toEqual([]);

    for (const email of [`o'brien+alerts-${randomBytes(3).toString('hex')}@mail.corp.example`, `x${randomBytes(3).toString('hex')}@xn--bcher-kva.example`, ` Mixed.Case${randomBytes(3).toString('hex')}@Corp.Example `]) {
      const res = await s.request('POST', '/v1/auth/signup', { body: { email, password: 'long enough password' } });
      expect(res.status, email).toBe(201);
      expect(res.body.user.email).toBe(email.trim().toLowerCase());
    }
  });

  async function alertMailTo(owner: { id: string; accessToken: string }) {
    await setPlan(s, owner.id, 'enterprise');
    const p = await createProject(s, owner as never);
    const rule = await s.request('POST', '/v1/alerts', { token: owner.accessToken, body: { projectId: p.id, name: `mail-${randomBytes(3).toString('hex')}`, condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['email'], cooldown: '0s' } });
    expect(rule.status).toBe(201);
    expect((await ingest(s, p.apiKey, { level: 'error', message: 'boom' })).status).toBe(202);
    // Settled: the firing's one email delivery is sent or failed.
    const entry = await until(async () => {
      const h = (await s.request('GET', `/v1/alerts/${rule.body.id}/history`, { token: owner.accessToken })).body.data as { deliveries: { status: string; error?: string }[] }[];
      return h[0] && h[0].deliveries.every((d) => d.status !== 'pending') ? h[0] : undefined;
    });
    return { entry, subject: rule.body.name as string };
  }

  it('alert mail goes to the stored address exactly: the SMTP envelope and the To header hold it and nothing else', async () => {
    const email = `o'brien+${randomBytes(3).toString('hex')}@mail.corp.example`;
    const owner = await signup(s, { email });
    const { entry, subject } = await alertMailTo(owner);
    expect(entry.deliveries).toEqual([{ channel: 'email', status: 'sent' }]);
    const mail = smtp.mails.find((m) => m.subject.includes(subject))!;
    expect(mail.to).toEqual([email]);
    const to = /^To: (.*)$/im.exec(mail.headers)![1]!.trim();
    expect(to).toBe(email);
  });

  it('an address stored before the rule (in display-name form) is never parsed into another recipient', async () => {
    const owner = await signup(s);
    // As a signup before this fix could store it.
    await s.database.db.updateTable('users').set({ email: `attacker<victim-${owner.id}@corp.example>` }).where('id', '=', owner.id).execute();
    const { entry, subject } = await alertMailTo(owner);
    expect(entry.deliveries[0]!.status).toBe('failed');
    expect(entry.deliveries[0]!.error).toMatch(/not a plain email address/);
    // The delivery is over (failed, every attempt made): no mail went anywhere for it.
    expect(smtp.mails.filter((m) => m.subject.includes(subject) || m.to.some((t) => t.includes('victim')))).toEqual([]);
  });

  it('a password with a lone surrogate is refused, so no other password can ever match it (finding 11)', async () => {
    const email = uniqueEmail('lone');
    for (const password of ['longpassword\\ud800', 'longpassword\\udfff', '\\udbff\\udbfflongpassword']) {
      const res = await s.request('POST', '/v1/auth/signup', { raw: `{"email":"${email}","password":"${password}"}`, headers: { 'content-type': 'application/json' } });
      expect(res.status, password).toBe(400);
      expect((errorOf(res).details as { path: string }[])[0]!.path).toBe('/password');
    }
    // U+FFFD itself is an ordinary character: it signs up, and only it logs in.
    const a = await signup(s, { email, password: 'longpassword\ufffd' });
    expect((await s.request('POST', '/v1/auth/login', { body: { email, password: 'longpassword\ufffd' } })).status).toBe(200);
    const lone = await s.request('POST', '/v1/auth/login', { raw: `{"email":"${a.email}","password":"longpassword\\ud800"}`, headers: { 'content-type': 'application/json' } });
    expect(lone.status).toBe(400);
  });
});

describeEngines('hostile accounts: no 5xx from /v1/auth/*', (engine) => {
  const s = useServer(engine, { env: { LOGIN_MAX_ATTEMPTS_PER_IP: '100000', LOGIN_MAX_ATTEMPTS: '100000' } });

  it('hostile bodies, headers and cookies never answer 5xx; every error is in the error body', async () => {
    const a = await signup(s);
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const bodies = [
      `{"email":${deep(200_000)},"password":"long enough"}`,
      `{"email":"a@b.co","password":"long enough","x":${deep(300_000)}}`,
      `{"email":"a@b.co","password":"long enough",${Array.from({ length: 20_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
      `{"email":"${'\\ud800'.repeat(50_000)}","password":"x"}`,
      `{"refreshToken":"${'\\u0000'.repeat(500)}"}`,
      '{"email":"a@b.co","password":"long enough","constructor":{"prototype":{"x":1}}}',
      '{"email":"\\u0061@b.co","password":"\\u0000"}',
    ];
    const routes: [string, string, boolean][] = [
      ['POST', '/v1/auth/signup', false],
      ['POST', '/v1/auth/login', false],
      ['POST', '/v1/auth/refresh', false],
      ['POST', '/v1/auth/logout', true],
    ];
    const problems: string[] = [];
    for (const [method, path, auth] of routes) {
      for (const raw of bodies) {
        const res = await s.request(method, path, { raw, token: auth ? a.accessToken : undefined, headers: { 'content-type': 'application/json' } });
        if (res.status >= 500) problems.push(`${method} ${path} ${raw.slice(0, 40)}: ${res.status} ${res.text.slice(0, 200)}`);
        else if (res.status >= 400) errorOf(res);
      }
      for (const cookie of ['loglane_refresh=%00%ff', 'loglane_refresh=%ED%A0%80', `loglane_refresh=${'%'.repeat(400)}`, 'loglane_refresh="', 'loglane_refresh=a; loglane_refresh=b', '=;=;;']) {
        const res = await s.request(method, path, { raw: '{}', token: auth ? a.accessToken : undefined, headers: { 'content-type': 'application/json', cookie } });
        if (res.status >= 500) problems.push(`${method} ${path} cookie ${cookie}: ${res.status} ${res.text.slice(0, 200)}`);
      }
      for (const transport of ['cookie', 'COOKIE ', 'body', 'x'.repeat(5000)]) {
        const res = await s.request(method, path, { body: { email: a.email, password: a.password }, token: auth ? a.accessToken : undefined, headers: { 'x-refresh-token-transport': transport } });
        if (res.status >= 500) problems.push(`${method} ${path} transport ${transport.slice(0, 10)}: ${res.status}`);
      }
      for (const xff of ['\u00ff', '1.2.3.4, '.repeat(1000), '::ffff:127.0.0.1']) {
        const res = await s.request(method, path, { body: { email: 'nobody@example.com', password: 'long enough' }, headers: { 'x-forwarded-for': xff } });
        if (res.status >= 500) problems.push(`${method} ${path} x-forwarded-for: ${res.status}`);
      }
    }
    expect(problems).toEqual([]);
    expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).status).toBe(200);
  });
});
