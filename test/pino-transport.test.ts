/**
 * @loglane/pino the way applications use it: a separate Node process logging through
 * pino.transport({ target: '@loglane/pino' }), read back through the API.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProject, describeEngines, setPlan, signup, startServer, type Account, type TestServer } from './harness.js';

interface Ran {
  code: number | null;
  stderr: string;
  ms: number;
}

/** Runs an ES module (written to a temp dir inside the repository, so `@loglane/pino` and `pino` resolve) and waits for it to exit. */
async function runApp(dir: string, source: string, env: Record<string, string> = {}): Promise<Ran> {
  const file = path.join(dir, `app-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, source);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: dir });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, ms: Date.now() - started }));
  });
}

const app = (url: string, apiKey: string, body: string, options = '') => `
import pino from 'pino';
const transport = pino.transport({ target: '@loglane/pino', options: { url: ${JSON.stringify(url)}, apiKey: ${JSON.stringify(apiKey)}, source: 'checkout', ${options} } });
const logger = pino({ base: { pid: process.pid, service: 'checkout' } }, transport);
${body}
`;

describeEngines('pino transport', (engine) => {
  let s: TestServer;
  let account: Account;
  let dir: string;
  beforeAll(async () => {
    // A low ingest rate for the free plan, so a burst meets 429 with Retry-After.
    s = await startServer(engine, { env: { INGEST_RATE_FREE: '3000' } });
    account = await signup(s);
    // Scripts live inside the repository so that node_modules (with the workspace package) resolves.
    dir = await mkdtemp(path.join(path.resolve('node_modules'), '.pino-test-'));
  });
  afterAll(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function logs(projectId: string, query = ''): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | null = null;
    type Page = { status: number; body: { data: unknown[]; nextCursor: string | null } };
    do {
      const res: Page = await s.request('GET', `/v1/projects/${projectId}/logs?limit=1000&from=2000-01-01T00:00:00Z${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: account.accessToken });
      expect(res.status).toBe(200);
      out.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    return out;
  }

  it('ships 2,000 lines in batches, mapping pino fields, and flushes the last partial batch on exit', async () => {
    await setPlan(s, account.id, 'pro');
    const project = await createProject(s, account, 'pino');
    const t0 = Date.now();
    const ran = await runApp(dir, app(s.url, project.apiKey, `
for (let i = 0; i < 2000; i++) {
  if (i % 100 === 0) logger.error({ orderId: i, err: { type: 'PaymentError' } }, 'payment failed for ' + i);
  else logger.info({ i }, 'request ' + i);
}
logger.warn('last line');
`, 'batchSize: 300, flushIntervalMs: 60000'));
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe('');
    const stored = await logs(project.id);
    expect(stored).toHaveLength(2001);
    const last = stored[0];
    expect(last).toMatchObject({ level: 'warn', message: 'last line', source: 'checkout' });
    expect(last.metadata).toMatchObject({ service: 'checkout', pid: expect.any(Number) });
    const error = stored.find((l) => l.message === 'payment failed for 100');
    expect(error).toMatchObject({ level: 'error', source: 'checkout' });
    expect(error.metadata).toMatchObject({ orderId: 100, err: { type: 'PaymentError' } });
    expect(Date.parse(error.timestamp)).toBeGreaterThanOrEqual(t0 - 1000);
    expect(new Set(stored.map((l) => l.message)).size).toBe(2001);
  });

  it('honours 429 Retry-After and still delivers every line exactly once', async () => {
    const other = await signup(s);
    const project = await createProject(s, other, 'pino burst');
    const ran = await runApp(dir, app(s.url, project.apiKey, `
for (let i = 0; i < 14000; i++) logger.info({ i }, 'burst ' + i);
`, 'batchSize: 2000, maxBufferedLogs: 20000'));
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe('');
    const res = await s.request('GET', `/v1/projects/${project.id}`, { token: other.accessToken });
    expect(res.body.logCount).toBe(14000);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(Number(/loglane_ingest_requests_total\{endpoint="logs",status="429"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
  }, 60_000);

  it('an invalid key is reported on stderr without the key, and the application still exits promptly', async () => {
    const ran = await runApp(dir, app(s.url, 'llk_this_is_not_a_valid_key_000000000', `
for (let i = 0; i < 50; i++) logger.info('lost ' + i);
`, 'batchSize: 10'));
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain('refused the API key (401 INVALID_API_KEY)');
    expect(ran.stderr).toContain('50 logs could not be delivered');
    expect(ran.stderr).not.toContain('llk_this_is_not_a_valid_key');
    expect(ran.ms).toBeLessThan(10_000);
  });

  it('a server that is down does not hold the application: it exits within the close timeout', async () => {
    const ran = await runApp(dir, app('http://127.0.0.1:9', 'llk_whatever_key_123456789', `
logger.info('nobody is listening');
`, 'closeTimeoutMs: 1500, maxRetries: 50'));
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain('1 logs could not be delivered');
    expect(ran.ms).toBeLessThan(8000);
  });
});
