import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEngines, request, runCli, signup, spawnServer, useServer, waitFor, type TestDatabase } from './harness.js';

if (!fs.existsSync(path.resolve('dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');

const run = (args: string[], env: Record<string, string>) => runCli(args, env);

it('loglane --help lists the commands', async () => {
  const res = await run(['--help'], {});
  expect(res.code).toBe(0);
  for (const word of ['serve', 'migrate', 'users']) expect(res.stdout).toContain(word);
  const sub = await run(['users', 'set-plan', '--help'], {});
  expect(sub.stdout).toContain('<email>');
  expect(sub.stdout).toContain('free, starter, pro, enterprise');
});

it('invalid settings are all listed at once and stop the start', async () => {
  const res = await run(['serve'], { DATABASE_URL: 'postgres://127.0.0.1:1/x', PORT: 'eighty', ACCESS_TOKEN_EXPIRY: 'soon', DEFAULT_PLAN: 'gold' });
  expect(res.code).toBe(1);
  for (const name of ['SECRET_KEY', 'PORT', 'ACCESS_TOKEN_EXPIRY', 'DEFAULT_PLAN']) expect(res.stderr).toContain(name);
  expect(res.stderr).toContain('4 problem(s)');
});

describeEngines('loglane CLI', (engine) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(engine);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('migrate applies the migrations once, then reports the schema is up to date', async () => {
    const first = await run(['migrate'], db.env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Applied \d+ migration\(s\).*0001_accounts/);
    const second = await run(['migrate'], db.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('up to date');
  });

  it('serve starts, serves requests, and stops cleanly with exit 0 on SIGTERM, finishing in-flight requests', async () => {
    const server = await spawnServer(db.env);
    expect((await request(server.url, 'GET', '/readyz')).status).toBe(200);
    const pending = Array.from({ length: 4 }, (_, i) =>
      request(server.url, 'POST', '/v1/auth/signup', { body: { email: `inflight-${i}-${Date.now()}@example.com`, password: 'long enough' } }),
    );
    // Wait until the server has received all four, then ask it to stop.
    await waitFor(() => (server.output().match(/"url":"\/v1\/auth\/signup"/g) ?? []).length >= 4, 10_000, 'the server to log all four signups as received', 10).catch((err: unknown) => {
      server.child.kill('SIGKILL');
      throw err;
    });
    server.child.kill('SIGTERM');
    const results = await Promise.all(pending);
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('stopped cleanly');
  });

  if (engine === 'sqlite') {
    it('on first start without SECRET_KEY, generates one into DATA_DIR with mode 0600, and reuses it', async () => {
      const server = await spawnServer(db.env);
      const file = path.join(db.env.DATA_DIR!, 'secret.key');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const key = fs.readFileSync(file, 'utf8');
      expect(key.trim()).toMatch(/^[0-9a-f]{64}$/);
      const body = { email: `keep-${Date.now()}@example.com`, password: 'long enough' };
      const { body: session } = await request(server.url, 'POST', '/v1/auth/signup', { body });
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);

      // After a restart the same key signs, so the earlier access token still works.
      const again = await spawnServer(db.env);
      expect(fs.readFileSync(file, 'utf8')).toBe(key);
      expect((await request(again.url, 'GET', '/v1/auth/me', { token: session.accessToken })).status).toBe(200);
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    });
  }
});

describeEngines('loglane users set-plan', (engine) => {
  const s = useServer(engine);

  it('changes the plan /me shows, on the next request', async () => {
    const a = await signup(s);
    expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).body.subscription.plan).toBe('free');
    const res = await run(['users', 'set-plan', a.email.toUpperCase(), 'Pro'], s.env);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('pro');
    expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).body.subscription.plan).toBe('pro');
  });

  it('refuses an unknown plan (exit 2) and an unknown email (exit 1), changing nothing', async () => {
    const a = await signup(s);
    const badPlan = await run(['users', 'set-plan', a.email, 'platinum'], s.env);
    expect(badPlan.code).toBe(2);
    expect(badPlan.stderr).toContain('Unknown plan');
    const badEmail = await run(['users', 'set-plan', 'nobody@example.com', 'pro'], s.env);
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toContain('No user');
    expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).body.subscription.plan).toBe('free');
  });
});
