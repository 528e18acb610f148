/**
 * @loglane/pino the way applications use it: a separate Node process whose logger is
 * pino(pino.transport({ target: <absolute path of packages/pino/dist/index.js> })), logging and
 * exiting normally; the logs are then read back through the API of a real server on each engine.
 *
 * Most runs go through a small recording proxy in front of the server, so the tests can see each
 * request (its size in logs, gzip, Idempotency-Key, when it came) and can make the network misbehave
 * (lose a 202, answer 413 or 5xx) while the server itself stays real.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, describeEngines, signup, useServer } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PACKAGE = path.join(ROOT, 'packages/pino');
const TRANSPORT = path.join(PACKAGE, 'dist/index.js');
const PINO_URL = pathToFileURL(createRequire(import.meta.url).resolve('pino')).href;

/** Builds the package when dist is missing or older than its source, so `vitest run` alone works. */
async function ensureBuilt(): Promise<void> {
  const srcDir = path.join(PACKAGE, 'src');
  const newestSource = Math.max(...readdirSync(srcDir).map((f) => statSync(path.join(srcDir, f)).mtimeMs), statSync(path.join(PACKAGE, 'tsconfig.json')).mtimeMs);
  if (existsSync(TRANSPORT) && statSync(TRANSPORT).mtimeMs >= newestSource) return;
  await promisify(execFile)('npx', ['tsc', '-p', 'packages/pino/tsconfig.json'], { cwd: ROOT, timeout: 120_000 });
}

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(os.tmpdir(), 'loglane-pino-'));
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stderr: string;
  stdout: string;
  ms: number;
}

/** Writes an ES module to the temp dir and runs it with this Node, with only PATH and `env` in its environment. */
async function runApp(source: string, env: Record<string, string> = {}): Promise<Ran> {
  const file = path.join(dir, `app-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, source);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: dir });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, stdout, ms: Date.now() - started }));
  });
}

/** An application: `pinoOptions` and the transport's `options` are JS object literals (source text); `body` uses `logger`. */
const app = (options: Record<string, unknown>, body: string, pinoOptions = '{}') => `
import pino from ${JSON.stringify(PINO_URL)};
const transport = pino.transport({ target: ${JSON.stringify(TRANSPORT)}, options: ${JSON.stringify(options)} });
const logger = pino(${pinoOptions}, transport);
${body}
`;

interface Exchange {
  /** When the request arrived at the proxy. */
  at: number;
  key: string | undefined;
  encoding: string | undefined;
  apiKey: string | undefined;
  count: number;
  status: number;
  retryAfter: string | null;
  replayed: boolean;
  lost: boolean;
}
type Decision = 'forward' | 'forward-and-lose-answer' | { status: number; retryAfter?: string } | { holdMs: number };

/**
 * An HTTP proxy to `target` that records every POST /v1/logs and lets `decide` answer, delay or lose it.
 * An application can also wait on it: GET /wait-for-logs/<n> answers 200 once the proxy has received
 * n logs in all, or 504 after ten seconds.
 */
async function startProxy(target: string, decide: (n: number, count: number) => Decision = () => 'forward') {
  const seen: Exchange[] = [];
  const holds = new Set<() => void>();
  const waiters = new Set<{ check: () => void; cancel: () => void }>();
  const logsReceived = () => seen.reduce((n, x) => n + x.count, 0);
  const server = http.createServer(async (req, res) => {
    const wait = /^\/wait-for-logs\/(\d+)$/.exec(req.url ?? '');
    if (req.method === 'GET' && wait) {
      const want = Number(wait[1]);
      const answer = (status: number) => {
        waiter.cancel();
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ logsReceived: logsReceived() }));
      };
      const deadline = setTimeout(() => answer(504), 10_000);
      const waiter = {
        check: () => {
          if (logsReceived() >= want) answer(200);
        },
        cancel: () => {
          clearTimeout(deadline);
          waiters.delete(waiter);
        },
      };
      waiters.add(waiter);
      waiter.check();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const encoding = req.headers['content-encoding'];
    const logs = JSON.parse((encoding === 'gzip' ? gunzipSync(raw) : raw).toString()) as unknown[];
    const ex: Exchange = {
      at: Date.now(),
      key: req.headers['idempotency-key'] as string | undefined,
      encoding,
      apiKey: req.headers['x-api-key'] as string | undefined,
      count: logs.length,
      status: 0,
      retryAfter: null,
      replayed: false,
      lost: false,
    };
    const decided = decide(seen.length, logs.length);
    seen.push(ex);
    for (const waiter of [...waiters]) waiter.check();
    if (typeof decided === 'object' && 'holdMs' in decided) {
      await new Promise<void>((r) => {
        const release = () => {
          clearTimeout(timer);
          holds.delete(release);
          r();
        };
        const timer = setTimeout(release, decided.holdMs); // sleep: a slow receiver, holding the request this long is what it fakes
        holds.add(release);
      });
      if (req.socket.destroyed) return;
    }
    const decision = typeof decided === 'object' && 'holdMs' in decided ? 'forward' : decided;
    if (typeof decision === 'object') {
      ex.status = decision.status;
      ex.retryAfter = decision.retryAfter ?? null;
      res.writeHead(decision.status, { 'content-type': 'application/json', ...(decision.retryAfter ? { 'retry-after': decision.retryAfter } : {}) });
      res.end(JSON.stringify({ error: { code: 'FROM_TEST_PROXY', message: 'answered by the test proxy', requestId: 'req_proxy' } }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'content-encoding', 'x-api-key', 'idempotency-key']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
    const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: raw });
    const text = await upstream.text();
    ex.status = upstream.status;
    ex.retryAfter = upstream.headers.get('retry-after');
    ex.replayed = upstream.headers.get('idempotent-replayed') === 'true';
    if (decision === 'forward-and-lose-answer') {
      // The server committed the batch; the sender never hears so.
      ex.lost = true;
      req.socket.destroy();
      return;
    }
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json', ...(ex.retryAfter ? { 'retry-after': ex.retryAfter } : {}) });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        for (const release of [...holds]) release();
        for (const waiter of [...waiters]) waiter.cancel();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A port with nothing listening on it. */
async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describeEngines('pino transport', (engine) => {
  // The free plan's rate (its default, made explicit): a bucket of 10,000 logs refilled at 1,000 a
  // second, so a burst of 14,000 meets 429 with Retry-After.
  const s = useServer(engine, { env: { INGEST_RATE_FREE: '1000' } });

  /** A new account (free plan: one project each) and its project. */
  async function project() {
    const account = await signup(s);
    const p = await createProject(s, account, 'pino');
    return { ...p, account };
  }

  /** Every log of a project, oldest first (by id, which is commit order). */
  async function readAll(p: Awaited<ReturnType<typeof project>>): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | null = null;
    type Page = { status: number; body: { data: any[]; nextCursor: string | null } };
    do {
      const res: Page = await s.request('GET', `/v1/projects/${p.id}/logs?limit=1000&from=2000-01-01T00:00:00Z${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: p.account.accessToken });
      expect(res.status).toBe(200);
      out.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    // Ids sort in commit order.
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async function logCount(p: Awaited<ReturnType<typeof project>>): Promise<number> {
    const res = await s.request('GET', `/v1/projects/${p.id}`, { token: p.account.accessToken });
    return res.body.logCount;
  }

  it('2,000 lines arrive in gzipped batches of batchSize, in order, with pino fields mapped; the exit flushes the last partial batch', async () => {
    const p = await project();
    const proxy = await startProxy(s.url);
    const t0 = Date.now() - 3_600_000;
    const ran = await runApp(
      app({ url: proxy.url, apiKey: p.apiKey, source: 'checkout', batchSize: 300, flushIntervalMs: 60_000 }, `
const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
for (let i = 0; i < 2000; i++) {
  const fields = { i, order: { id: 'ord_' + i, total: i * 1.5 } };
  if (i % 500 === 7) fields.source = 'billing';
  globalThis.line = i;
  logger[levels[i % 6]](fields, 'line ' + i);
}
`,
      // Each line's time is t0 + its number, so the stored timestamps can be compared exactly.
      `{ level: 'trace', timestamp: () => ',"time":' + (${t0} + (globalThis.line ?? 0)) }`),
    );
    await proxy.close();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);

    // Six full batches while the app ran, and the partial one of 200 when it exited.
    expect(proxy.seen.map((x) => x.count)).toEqual([300, 300, 300, 300, 300, 300, 200]);
    expect(proxy.seen.every((x) => x.status === 202 && x.encoding === 'gzip' && x.apiKey === p.apiKey)).toBe(true);
    expect(new Set(proxy.seen.map((x) => x.key)).size).toBe(7);

    const stored = await readAll(p);
    expect(stored).toHaveLength(2000);
    expect(await logCount(p)).toBe(2000);
    // Commit order is the order pino wrote them in.
    expect(stored.map((l) => l.message)).toEqual(Array.from({ length: 2000 }, (_, i) => `line ${i}`));
    const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
    for (const i of [0, 1, 2, 3, 4, 5, 7, 299, 300, 1234, 1800, 1999]) {
      const log = stored[i];
      expect(log).toMatchObject({ message: `line ${i}`, level: levels[i % 6], source: i % 500 === 7 ? 'billing' : 'checkout' });
      expect(log.timestamp).toBe(new Date(t0 + i).toISOString());
      expect(log.metadata).toEqual({ i, order: { id: `ord_${i}`, total: i * 1.5 }, pid: expect.any(Number), hostname: os.hostname() });
    }
  });

  it('the exit sends a partial batch at once; a line without msg, a custom level, a child logger and an Error are kept; the key can come from LOGLANE_API_KEY', async () => {
    const p = await project();
    const proxy = await startProxy(s.url);
    const ran = await runApp(
      app({ url: proxy.url, flushIntervalMs: 60_000 }, `
for (let i = 0; i < 30; i++) logger.info('partial ' + i);
logger.info({ only: 'data' });
logger.notice('a custom level');
logger.child({ requestId: 'req_1' }).warn('from a child');
logger.error(new Error('boom'));
`, `{ customLevels: { notice: 35 }, base: { service: 'api' } }`),
      { LOGLANE_API_KEY: p.apiKey },
    );
    await proxy.close();
    expect(ran.stderr).toBe('');
    // Exiting at all shows the partial batch went at once: the 60 s flush interval is longer than the
    // test's timeout. How long it took depends on the machine, so it is not asserted.
    expect(ran.code).toBe(0);
    expect(proxy.seen.map((x) => x.count)).toEqual([34]);

    const stored = await readAll(p);
    expect(stored).toHaveLength(34);
    expect(stored.slice(0, 30).map((l) => l.message)).toEqual(Array.from({ length: 30 }, (_, i) => `partial ${i}`));
    expect(stored[0]).toMatchObject({ level: 'info', source: null, metadata: { service: 'api' } });
    expect(stored[30]).toMatchObject({ message: '', level: 'info', metadata: { only: 'data', service: 'api' } });
    expect(stored[31]).toMatchObject({ message: 'a custom level', level: 'info', metadata: { pinoLevel: 35 } });
    expect(stored[32]).toMatchObject({ message: 'from a child', level: 'warn', metadata: { requestId: 'req_1' } });
    expect(stored[33]).toMatchObject({ message: 'boom', level: 'error', metadata: { err: { type: 'Error', message: 'boom', stack: expect.stringContaining('Error: boom') } } });
  });

  it('a partial batch goes out every flushIntervalMs while the application runs', async () => {
    const p = await project();
    const proxy = await startProxy(s.url);
    // The batch size (500) is never reached: only the flush timer can send a round's five lines while
    // the application runs, and the application logs its next round only once they have arrived.
    const ran = await runApp(
      app({ url: proxy.url, apiKey: p.apiKey, flushIntervalMs: 100 }, `
for (let round = 0; round < 3; round++) {
  for (let i = 0; i < 5; i++) logger.info('round ' + round + ' line ' + i);
  const arrived = await fetch(${JSON.stringify(proxy.url)} + '/wait-for-logs/' + 5 * (round + 1));
  if (!arrived.ok) throw new Error('round ' + round + ' was not sent while the application ran: ' + (await arrived.text()));
}
`),
    );
    await proxy.close();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    // At least a request per round, sent while the application still ran (at exit, one would have
    // taken all 15); none carries lines of two rounds.
    expect(proxy.seen.length).toBeGreaterThanOrEqual(3);
    const received = proxy.seen.map((_, i) => proxy.seen.slice(0, i + 1).reduce((n, x) => n + x.count, 0));
    expect(received).toEqual(expect.arrayContaining([5, 10]));
    expect(received.at(-1)).toBe(15);
    expect(proxy.seen.every((x) => x.status === 202 && x.encoding === undefined)).toBe(true);
    expect(await readAll(p)).toHaveLength(15);
  });

  it('429 RATE_LIMITED: waits Retry-After, retries with the same Idempotency-Key, and every line arrives exactly once', async () => {
    const p = await project();
    const proxy = await startProxy(s.url);
    const ran = await runApp(app({ url: proxy.url, apiKey: p.apiKey, batchSize: 2000, maxBufferedLogs: 20_000 }, `
for (let i = 0; i < 14000; i++) logger.info({ i }, 'burst ' + i);
`));
    await proxy.close();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);

    const limited = proxy.seen.filter((x) => x.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const x of limited) {
      expect(Number(x.retryAfter)).toBeGreaterThanOrEqual(1);
      const next = proxy.seen[proxy.seen.indexOf(x) + 1]!;
      expect(next.key).toBe(x.key);
      expect(next.at - x.at).toBeGreaterThanOrEqual(Number(x.retryAfter) * 1000);
    }
    const delivered = proxy.seen.filter((x) => x.status === 202);
    expect(delivered).toHaveLength(7);
    expect(new Set(delivered.map((x) => x.key)).size).toBe(7);

    const stored = await readAll(p);
    expect(stored).toHaveLength(14_000);
    expect(await logCount(p)).toBe(14_000);
    expect(stored.map((l) => l.message)).toEqual(Array.from({ length: 14_000 }, (_, i) => `burst ${i}`));
  }, 60_000);

  it('a 202 lost on the way back: the retry carries the same Idempotency-Key and nothing is stored twice', async () => {
    const p = await project();
    const proxy = await startProxy(s.url, (n) => (n === 1 ? 'forward-and-lose-answer' : 'forward'));
    const ran = await runApp(app({ url: proxy.url, apiKey: p.apiKey, batchSize: 300 }, `
for (let i = 0; i < 900; i++) logger.info('once ' + i);
`));
    await proxy.close();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(proxy.seen.map((x) => x.count)).toEqual([300, 300, 300, 300]);
    expect(proxy.seen[1]).toMatchObject({ status: 202, lost: true, replayed: false });
    expect(proxy.seen[2]).toMatchObject({ key: proxy.seen[1]!.key, status: 202, replayed: true });
    expect(new Set(proxy.seen.map((x) => x.key)).size).toBe(3);
    const stored = await readAll(p);
    expect(stored.map((l) => l.message)).toEqual(Array.from({ length: 900 }, (_, i) => `once ${i}`));
    expect(await logCount(p)).toBe(900);
  });

  it('5xx is retried with backoff (and Retry-After when given), a 413 splits the batch in halves', async () => {
    const p = await project();
    const proxy = await startProxy(s.url, (n, count) => {
      if (n === 0) return { status: 500 };
      if (n === 1) return { status: 503, retryAfter: '1' };
      if (count > 100) return { status: 413 };
      return 'forward';
    });
    const ran = await runApp(app({ url: proxy.url, apiKey: p.apiKey, batchSize: 150, flushIntervalMs: 60_000 }, `
for (let i = 0; i < 300; i++) logger.info('split ' + i);
`));
    await proxy.close();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const [first, second, third] = proxy.seen;
    expect(second!.key).toBe(first!.key);
    expect(third!.key).toBe(first!.key);
    // The first backoff is 125 to 250 ms; Retry-After: 1 is a second.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(125);
    expect(third!.at - second!.at).toBeGreaterThanOrEqual(1000);
    expect(proxy.seen.map((x) => `${x.count}:${x.status}`)).toEqual(['150:500', '150:503', '150:413', '75:202', '75:202', '150:413', '75:202', '75:202']);
    const stored = await readAll(p);
    expect(stored.map((l) => l.message)).toEqual(Array.from({ length: 300 }, (_, i) => `split ${i}`));
  });

  it('a full buffer drops the oldest lines, counts them on stderr, and never holds the application', async () => {
    const p = await project();
    // The first request is held for a second, while the application logs 1,000 lines and exits.
    const proxy = await startProxy(s.url, (n) => (n === 0 ? { holdMs: 1000 } : 'forward'));
    const ran = await runApp(app({ url: proxy.url, apiKey: p.apiKey, batchSize: 10, maxBufferedLogs: 100 }, `
const started = Date.now();
for (let i = 0; i < 1000; i++) logger.info('line ' + i);
process.stdout.write(String(Date.now() - started));
`));
    await proxy.close();
    expect(ran.code).toBe(0);
    // The application was not held: had the logger waited for room in the buffer, nothing would have been
    // dropped. How long the 1,000 lines took depends on the machine, so it is printed, not asserted.
    console.log(`1,000 lines logged in ${ran.stdout} ms while the first request was held`);
    expect(ran.stderr).toContain('the buffer was full (maxBufferedLogs 100): dropped the 890 oldest logs');
    expect(ran.stderr).toContain('890 logs could not be delivered (110 delivered)');
    expect(ran.stderr).not.toContain(p.apiKey);
    const stored = await readAll(p);
    // The batch already in flight, then the newest 100.
    expect(stored.map((l) => l.message)).toEqual([...Array.from({ length: 10 }, (_, i) => `line ${i}`), ...Array.from({ length: 100 }, (_, i) => `line ${900 + i}`)]);
  });

  it('a batch over the server\'s 5 MiB is sent in parts that fit', async () => {
    const p = await project();
    const proxy = await startProxy(s.url);
    // 400 lines of 30,000 characters: about 12 MB as one batch.
    const ran = await runApp(app({ url: proxy.url, apiKey: p.apiKey, batchSize: 400, flushIntervalMs: 60_000 }, `
for (let i = 0; i < 400; i++) logger.info(String(i).padStart(4, '0') + 'x'.repeat(30_000));
`));
    await proxy.close();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(proxy.seen.map((x) => `${x.count}:${x.status}`)).toEqual(['100:202', '100:202', '100:202', '100:202']);
    const stored = await readAll(p);
    expect(stored.map((l) => l.message.slice(0, 4))).toEqual(Array.from({ length: 400 }, (_, i) => String(i).padStart(4, '0')));
    expect(stored.every((l) => l.message.length === 30_004)).toBe(true);
  });

  it('an invalid key is reported once on stderr, without the key, and the application still exits promptly', async () => {
    const badKey = 'llk_this_is_not_a_valid_key_000000000000';
    const ran = await runApp(app({ url: s.url, apiKey: badKey, batchSize: 10 }, `
for (let i = 0; i < 50; i++) logger.info('lost ' + i);
`));
    expect(ran.code).toBe(0);
    expect(ran.stderr.match(/refused the API key \(401 INVALID_API_KEY\)/g)).toHaveLength(1);
    expect(ran.stderr).toContain('50 logs could not be delivered (0 delivered)');
    expect(ran.stderr).not.toContain(badKey);
    expect(ran.stderr).not.toContain('this_is_not_a_valid_key');
    // "Promptly": the key is refused once and not retried (the single report above); the exit itself
    // happened within the test's timeout. The time depends on the machine and is not asserted.
  });
});

describe('pino transport without a server', () => {
  it('a server that is down does not hold the application: it exits within closeTimeoutMs and says what was lost', async () => {
    const port = await freePort();
    const ran = await runApp(app({ url: `http://127.0.0.1:${port}`, apiKey: 'llk_whatever_key_1234567890', closeTimeoutMs: 1500, maxRetries: 50 }, `
logger.info('nobody is listening');
`));
    expect(ran.code).toBe(0);
    // It gave up because of closeTimeoutMs, well before its 50 retries ran out, not after them.
    const dropped = ran.stderr.match(/dropped a batch of 1 log after (\d+) tr(?:y|ies) \((.*)\)\./);
    expect(dropped).not.toBeNull();
    expect(Number(dropped![1])).toBeLessThan(51);
    expect(dropped![2]).toContain('ECONNREFUSED');
    expect(dropped![2]).toMatch(/the close deadline (passed|would pass before the next try)/);
    expect(ran.stderr).toContain('1 log could not be delivered (0 delivered)');
    expect(ran.stderr).not.toContain('llk_whatever_key');
  });

  it('a server that never answers does not hold the application: the request in flight is abandoned at closeTimeoutMs', async () => {
    const proxy = await startProxy('http://127.0.0.1:1', () => ({ holdMs: 60_000 }));
    const ran = await runApp(app({ url: proxy.url, apiKey: 'llk_whatever_key_1234567890', closeTimeoutMs: 1000 }, `
for (let i = 0; i < 5; i++) logger.info('stuck ' + i);
`));
    await proxy.close();
    expect(ran.code).toBe(0);
    expect(proxy.seen.map((x) => x.count)).toEqual([5]);
    expect(ran.stderr).toContain('dropped a batch of 5 logs after 1 try (the close deadline passed)');
    expect(ran.stderr).toContain('5 logs could not be delivered (0 delivered)');
    // Exiting at all shows the request was abandoned: the proxy holds it for 60 s, longer than the
    // test's timeout. How long it took depends on the machine and is not asserted.
  });

  it('a bad option stops the logger with a message that names it', async () => {
    const badUrl = await runApp(app({ url: 'localhost:8080', apiKey: 'k' }, `logger.info('x');`));
    expect(badUrl.code).not.toBe(0);
    expect(badUrl.stderr).toContain('@loglane/pino: option url must be the http(s) address of the Loglane server');
    const noKey = await runApp(app({ url: 'http://127.0.0.1:8080' }, `logger.info('x');`));
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toContain('@loglane/pino: option apiKey is required (or set LOGLANE_API_KEY in the environment)');
    const badBatch = await runApp(app({ url: 'http://127.0.0.1:8080', apiKey: 'k', batchSize: 20_000 }, `logger.info('x');`));
    expect(badBatch.code).not.toBe(0);
    expect(badBatch.stderr).toContain('@loglane/pino: option batchSize must be a whole number from 1 to 10,000 (got 20000)');
  });

  it('options, defaults and Retry-After parsing', async () => {
    // Imported by path at run time, so the root type check does not need dist to exist.
    const mod = await import(pathToFileURL(TRANSPORT).href);
    expect(mod.resolveOptions({ url: 'http://logs.example.com/', apiKey: 'k' }, {})).toEqual({
      url: 'http://logs.example.com',
      apiKey: 'k',
      source: undefined,
      batchSize: 500,
      flushIntervalMs: 1000,
      maxBufferedLogs: 10_000,
      maxRetries: 8,
      timeoutMs: 10_000,
      closeTimeoutMs: 8000,
    });
    expect(mod.resolveOptions({ url: 'https://x.example' }, { LOGLANE_API_KEY: 'from-env' }).apiKey).toBe('from-env');
    for (const [options, message] of [
      [{ url: 'ftp://x', apiKey: 'k' }, 'option url'],
      [{ url: 'http://x', apiKey: 'k', maxRetries: -1 }, 'option maxRetries'],
      [{ url: 'http://x', apiKey: 'k', flushIntervalMs: 1.5 }, 'option flushIntervalMs'],
      [{ url: 'http://x', apiKey: 'k', source: 'x'.repeat(201) }, 'option source'],
      [{ url: 'http://x', apiKey: 'k', closeTimeoutMs: 20_000 }, 'option closeTimeoutMs'],
    ] as const) {
      expect(() => mod.resolveOptions(options, {})).toThrow(message);
    }
    expect(mod.unknownOptions({ url: 'x', batchsize: 1, $context: {}, pinoWillSendConfig: true })).toEqual(['batchsize']);
    expect(mod.retryAfterMs(null)).toBeUndefined();
    expect(mod.retryAfterMs('')).toBeUndefined();
    expect(mod.retryAfterMs('soon')).toBeUndefined();
    expect(mod.retryAfterMs('2')).toBe(2000);
    expect(mod.retryAfterMs('86400')).toBe(300_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(mod.retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(mod.retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
  });
});
