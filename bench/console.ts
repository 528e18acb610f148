/**
 * The console's log list under tens of thousands of lines, in a real browser (Debian's chromium
 * through playwright-core).
 *
 *   npm run bench:console -- [--engine sqlite|postgres|both] [--logs 50000] [--scroll-seconds 4] [--pg-url URL]
 *
 * For each engine: a fresh database, the built server (dist/cli.js) serving the built console, one
 * account and project holding `--logs` pino-http-shaped logs over the last hour (reqId, req.url,
 * res.statusCode, responseTime; every tenth an error with a multi-line err.stack). The browser
 * signs in, opens the log explorer with two columns (`@res.statusCode`, `@reqId`) and measures:
 *   - first rows: from navigation to the first page of logs on screen;
 *   - load all: scrolling to the end until every log is in the list (pages of 500, fetched as the
 *     reader nears the bottom);
 *   - scrolling: the whole list from top to bottom and back over `--scroll-seconds`, one step per
 *     animation frame; the report gives the frame intervals (p50/p95/max) and the long tasks (main
 *     thread busy ≥ 50 ms) seen meanwhile, and the rows in the page (virtualised: a few dozen);
 *   - live appends: 20 bursts of 50 logs arriving through the live tail while the reader is
 *     scrolled down; the report gives the frame intervals then, and whether the row being read
 *     stayed in place;
 *   - the page's JavaScript heap at the end.
 * Targets: p95 frame interval ≤ 20 ms while scrolling, no long task, and the row being read never
 * moves. A missed target is reported, not an error.
 *
 * Writes bench/results/console-<timestamp>.json and bench/results/latest-console.json. Exits 1 if
 * the server or browser fails; 2 on bad options.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import { chromium, type Page } from 'playwright-core';
import type { Engine } from '../src/config.js';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { fmt, percentile, round, table, writeResults } from './report.js';
import { call, createDatabase, send, startServer } from './server.js';

const USAGE = `Usage: npm run bench:console -- [options]

  --logs <n>             logs in the project (default 50000)
  --scroll-seconds <s>   length of the scroll pass (default 4)
${COMMON_USAGE}`;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TARGET_P95_FRAME_MS = 20;

const options = optionsOrExit((argv) => {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '50000' },
    'scroll-seconds': { type: 'string', default: '4' },
  });
  if (engineProblem) throw new Error(engineProblem);
  const logs = Number(values.logs);
  const scrollSeconds = Number(values['scroll-seconds']);
  if (!Number.isInteger(logs) || logs < 1000 || logs > 50_000) throw new Error('--logs must be an integer from 1000 to 50000 (the console keeps at most 50,000 lines)');
  if (!(scrollSeconds >= 1 && scrollSeconds <= 60)) throw new Error('--scroll-seconds must be from 1 to 60');
  return { engines: engines!, pgAdminUrl, logs, scrollSeconds };
}, USAGE);

interface FrameStats {
  frames: number;
  p50: number | null;
  p95: number | null;
  max: number | null;
  longTasks: number;
  longestTaskMs: number | null;
}

interface EngineResult {
  engine: Engine;
  logs: number;
  firstRowsMs: number;
  loadAllMs: number;
  rowsInDom: number;
  scroll: FrameStats;
  appends: FrameStats & { logsAppended: number; rowStayed: boolean };
  heapMb: number | null;
}

function frameStats(intervals: number[], longTasks: number[]): FrameStats {
  const sorted = [...intervals].sort((a, b) => a - b);
  return {
    frames: intervals.length,
    p50: round(percentile(sorted, 50), 1),
    p95: round(percentile(sorted, 95), 1),
    max: round(sorted.at(-1), 1),
    longTasks: longTasks.length,
    longestTaskMs: longTasks.length ? round(Math.max(...longTasks), 0) : null,
  };
}

/** Starts recording animation-frame intervals and long tasks in the page. */
async function startRecording(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = globalThis as unknown as { __rec: { frames: number[]; long: number[]; on: boolean }; requestAnimationFrame(cb: (t: number) => void): void; PerformanceObserver: new (cb: (list: { getEntries(): { duration: number }[] }) => void) => { observe(o: object): void } };
    w.__rec = { frames: [], long: [], on: true };
    let last = 0;
    const tick = (t: number) => {
      if (!w.__rec.on) return;
      if (last) w.__rec.frames.push(t - last);
      last = t;
      w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
    new w.PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__rec.long.push(e.duration);
    }).observe({ type: 'longtask' });
  });
}

async function stopRecording(page: Page): Promise<{ frames: number[]; long: number[] }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as { __rec: { frames: number[]; long: number[]; on: boolean } };
    w.__rec.on = false;
    return { frames: w.__rec.frames, long: w.__rec.long };
  });
}

async function runEngine(engine: Engine): Promise<EngineResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const database = await createDatabase(engine, options.pgAdminUrl);
  const server = await startServer(database, agent);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const base = server.baseUrl;
    const email = `bench-${Date.now()}@example.com`;
    const password = 'bench password';
    const { accessToken } = await call<{ accessToken: string }>(agent, `${base}/v1/auth/signup`, 'POST', 201, undefined, { email, password });
    const project = await call<{ id: string; apiKey: string }>(agent, `${base}/v1/projects`, 'POST', 201, accessToken, { name: 'bench' });
    const levels = ['debug', 'info', 'info', 'info', 'warn', 'error'];
    const now = Date.now();
    for (let start = 0; start < options.logs; start += 5000) {
      const batch = [];
      for (let i = start; i < Math.min(options.logs, start + 5000); i++) {
        const failed = i % 10 === 0;
        const metadata: Record<string, unknown> = {
          reqId: `req-${i}`,
          req: { method: i % 4 ? 'GET' : 'POST', url: `/api/orders/${i % 500}`, headers: { host: 'shop.example', 'user-agent': 'curl/8.5.0' } },
          res: { statusCode: failed ? 503 : 200 },
          responseTime: i % 250,
          user: `u${i % 100}`,
        };
        if (failed) metadata.err = { type: 'Error', message: 'upstream timed out', stack: `Error: upstream timed out\n    at Timeout._onTimeout (/srv/shop/lib/upstream.js:41:17)\n    at listOnTimeout (node:internal/timers:573:17)` };
        batch.push({ timestamp: now - 3_500_000 + Math.floor((i / options.logs) * 3_400_000), level: failed ? 'error' : levels[i % 6], source: `svc-${i % 7}`, message: failed ? `request errored: GET /api/orders/${i % 500} answered 503 after the upstream call timed out` : `request completed GET /api/orders/${i % 500} 200 in ${i % 250}ms`, metadata });
      }
      const res = await send(agent, `${base}/v1/logs`, 'POST', { 'x-api-key': project.apiKey, 'content-type': 'application/json' }, Buffer.from(JSON.stringify(batch)));
      if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${res.body.slice(0, 200)}`);
      process.stdout.write(`\r  [${engine}] ingested ${fmt(Math.min(options.logs, start + 5000))} / ${fmt(options.logs)}`);
    }
    process.stdout.write('\n');

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: base });
    // tsx (esbuild) names functions with a `__name` helper, which callbacks passed to the page carry along.
    await context.addInitScript('globalThis.__name = (f) => f;');
    const page = await context.newPage();
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    const explorer = `/projects/${project.id}/logs?range=1h&columns=${encodeURIComponent('@res.statusCode,@reqId')}`;
    const t0 = Date.now();
    await page.goto(explorer);
    await page.locator('.log-line').first().waitFor();
    const firstRowsMs = Date.now() - t0;

    // The page is the list's only scroll.
    type Win = { scrollTo(x: number, y: number): void; scrollY: number; innerHeight: number; document: { documentElement: { scrollHeight: number } } };
    // Load everything by scrolling to the end until the list says it has reached it.
    const t1 = Date.now();
    for (;;) {
      await page.evaluate(() => {
        const w = globalThis as unknown as Win;
        w.scrollTo(0, w.document.documentElement.scrollHeight);
      });
      // Read without waiting: between pages there is no footer at all.
      const footer = await page.evaluate(() => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector('.log-footer')?.textContent ?? '');
      if (/End of results|Showing the newest/.test(footer)) break;
      if (Date.now() - t1 > 300_000) throw new Error('loading every page took over 5 minutes');
      await page.waitForTimeout(20);
    }
    const loadAllMs = Date.now() - t1;
    const shown = Number(/Showing ([\d,]+)/.exec(await page.locator('.result-count').innerText())?.[1]?.replace(/,/g, ''));
    if (shown !== options.logs) throw new Error(`the list shows ${shown} logs, expected ${options.logs}`);

    // Scroll top → bottom → top, one step per frame.
    await page.evaluate(() => (globalThis as unknown as Win).scrollTo(0, 0));
    await page.waitForTimeout(300);
    await startRecording(page);
    await page.evaluate(
      (ms) =>
        new Promise<void>((resolve) => {
          const w = globalThis as unknown as Win & { requestAnimationFrame(cb: (t: number) => void): void };
          const span = w.document.documentElement.scrollHeight - w.innerHeight;
          let start = 0;
          const step = (t: number) => {
            if (!start) start = t;
            const f = Math.min(1, (t - start) / ms);
            w.scrollTo(0, span * (f < 0.5 ? f * 2 : 2 - f * 2));
            if (f < 1) w.requestAnimationFrame(step);
            else resolve();
          };
          w.requestAnimationFrame(step);
        }),
      options.scrollSeconds * 1000,
    );
    const scrollRec = await stopRecording(page);
    const rowsInDom = await page.locator('.log-row').count();

    // Live appends while scrolled down: the reader's row must not move.
    await page.goto(explorer);
    await page.locator('.log-line').first().waitFor();
    await page.getByRole('button', { name: '▶ Live tail' }).click();
    await page.locator('.tail-status.status-live').waitFor();
    await page.evaluate(() => (globalThis as unknown as Win).scrollTo(0, 4000));
    await page.waitForTimeout(300);
    const rowAtTop = () =>
      page.evaluate(() => {
        type Doc = { querySelector(s: string): { getBoundingClientRect(): { left: number; bottom: number } }; elementFromPoint(x: number, y: number): { closest(s: string): { getAttribute(n: string): string | null } | null } | null };
        const doc = (globalThis as unknown as { document: Doc }).document;
        // Just under the list's sticky column header, at the top of the window.
        const head = doc.querySelector('.log-head').getBoundingClientRect();
        return doc.elementFromPoint(head.left + 600, head.bottom + 12)?.closest('.log-line')?.getAttribute('data-log-id');
      });
    const reading = await rowAtTop();
    await startRecording(page);
    let appended = 0;
    for (let burst = 0; burst < 20; burst++) {
      const batch = Array.from({ length: 50 }, (_, i) => ({ level: 'info', source: 'live', message: `live ${burst}-${i}` }));
      const res = await send(agent, `${base}/v1/logs`, 'POST', { 'x-api-key': project.apiKey, 'content-type': 'application/json' }, Buffer.from(JSON.stringify(batch)));
      if (res.status !== 202) throw new Error(`ingest answered ${res.status}`);
      appended += 50;
      await page.waitForTimeout(100);
    }
    await page.waitForFunction((n) => {
      const text = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector('.tail-status')?.textContent ?? '';
      return text.includes(`${n.toLocaleString()} new`) || text.includes(`${n} new`);
    }, appended, { timeout: 20_000 });
    const appendRec = await stopRecording(page);
    const rowStayed = (await rowAtTop()) === reading;
    const heap = await page.evaluate(() => (globalThis as unknown as { performance: { memory?: { usedJSHeapSize: number } } }).performance.memory?.usedJSHeapSize ?? null);
    await context.close();

    return {
      engine,
      logs: options.logs,
      firstRowsMs,
      loadAllMs,
      rowsInDom,
      scroll: frameStats(scrollRec.frames, scrollRec.long),
      appends: { ...frameStats(appendRec.frames, appendRec.long), logsAppended: appended, rowStayed },
      heapMb: heap === null ? null : round(heap / 1e6, 1),
    };
  } finally {
    await browser.close();
    const code = await server.stop();
    await database.drop();
    agent.destroy();
    if (code !== 0) throw new Error(`the server exited with ${String(code)}`);
  }
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  const results: EngineResult[] = [];
  for (const engine of options.engines) results.push(await runEngine(engine));
  const ms = (v: number | null) => (v === null ? '–' : `${fmt(v, 1)} ms`);
  console.log(`\nConsole log list, ${fmt(options.logs)} logs (target: p95 frame ≤ ${TARGET_P95_FRAME_MS} ms, no long task, the row being read stays put)\n`);
  console.log(
    table(
      ['engine', 'first rows', 'load all', 'rows in page', 'scroll p50/p95/max', 'long tasks', 'live appends p95', 'row stayed', 'heap'],
      results.map((r) => [
        r.engine,
        `${fmt(r.firstRowsMs)} ms`,
        `${fmt(r.loadAllMs / 1000, 1)} s`,
        String(r.rowsInDom),
        `${ms(r.scroll.p50)} / ${ms(r.scroll.p95)} / ${ms(r.scroll.max)}`,
        `${r.scroll.longTasks}${r.scroll.longestTaskMs ? ` (longest ${r.scroll.longestTaskMs} ms)` : ''}`,
        ms(r.appends.p95),
        r.appends.rowStayed ? 'yes' : 'NO',
        r.heapMb === null ? '–' : `${fmt(r.heapMb, 1)} MB`,
      ]),
      [1, 2, 3, 5],
    ),
  );
  for (const r of results) {
    const missed = [];
    if ((r.scroll.p95 ?? Infinity) > TARGET_P95_FRAME_MS) missed.push(`scroll p95 ${r.scroll.p95} ms`);
    if (r.scroll.longTasks > 0) missed.push(`${r.scroll.longTasks} long tasks while scrolling`);
    if (!r.appends.rowStayed) missed.push('the row being read moved');
    console.log(missed.length ? `[${r.engine}] target missed: ${missed.join(', ')}` : `[${r.engine}] targets met`);
  }
  const files = writeResults('console', { logs: options.logs, scrollSeconds: options.scrollSeconds, results });
  console.log(`\nresults: ${files.run}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exit(1);
});
