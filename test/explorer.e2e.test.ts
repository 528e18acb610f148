/**
 * The log explorer people live in (issue 29), in a real browser (Debian's chromium driven by
 * playwright-core) against the real server on each engine. A pino-http app's logs are sent, then:
 * a request is found by clicking its reqId; `@res.statusCode` becomes a column; the sidebar's facet
 * counts over the range equal what stats' groupBy counts; a saved view opens from its shared link
 * for another member with the same query and columns; the logs around a row are shown; the search
 * is exported as NDJSON and CSV from the page and compared with the API's export; "Create alert
 * from this search" opens the alert form with the query; the rule, saved, fires on a new log, and
 * the "View matching logs" link of its mail opens the explorer on the rule's query and window. The
 * logs are sent by pino through Loglane's pino transport, as a pino-http app sends them. On the way: the query bar's warnings
 * and their one-click fixes, typed time ranges, the UTC/local switch, the keyboard, and screenshots
 * at 1440 × 900 and 390 × 844 in which every row's message is readable.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createProject, ISSUED_SECRETS, signup, useServer, type Account } from './harness.js';
import { startSmtpSink, type Mail } from './sinks.js';
import { assertLabelled, captureErrors, describeInChromium, ROOT, launchChromium, openContext, postLogs, printedErrors, requireChromium, screenshotsHere, SHOTS, until } from './browser.js';

requireChromium('explorer journey');

const PUBLIC_URL = 'http://console.loglane.test';
const SIZES = [
  { name: '1440', width: 1440, height: 900 },
  { name: '390', width: 390, height: 844 },
] as const;

/** A mail's text with quoted-printable soft breaks and escapes decoded. */
function mailText(mail: Mail): string {
  return mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

interface PinoLog {
  timestamp: string;
  level: string;
  source: string;
  message: string;
  metadata: Record<string, unknown>;
}

/** What pino-http writes for `n` requests: "request completed" (or "request errored" with err.stack), with reqId, req and res. */
function pinoLogs(n: number, end: number): PinoLog[] {
  const urls = ['/api/orders', '/api/orders/42', '/api/users', '/health'];
  const codes = [200, 200, 201, 404, 500, 503];
  const out: PinoLog[] = [];
  for (let i = 0; i < n; i++) {
    const statusCode = codes[i % codes.length]!;
    const url = urls[i % urls.length]!;
    const failed = statusCode >= 500;
    const meta: Record<string, unknown> = {
      pid: 4242,
      hostname: 'shop-1',
      reqId: `req-${1000 + i}`,
      req: { id: `req-${1000 + i}`, method: i % 5 === 0 ? 'POST' : 'GET', url, headers: { host: 'shop.example', 'user-agent': 'curl/8.5.0', accept: '*/*' }, remoteAddress: '10.0.0.7' },
      res: { statusCode, headers: { 'content-type': 'application/json' } },
      responseTime: 5 + ((i * 37) % 400),
    };
    if (failed) {
      meta.err = {
        type: 'Error',
        message: `upstream timed out after ${1000 + i} ms`,
        stack: `Error: upstream timed out after ${1000 + i} ms\n    at Timeout._onTimeout (/srv/shop/lib/upstream.js:41:17)\n    at listOnTimeout (node:internal/timers:573:17)\n    at process.processTimers (node:internal/timers:514:7)`,
      };
    }
    out.push({
      timestamp: new Date(end - (n - i) * 5_000).toISOString(),
      level: failed ? 'error' : statusCode >= 400 ? 'warn' : 'info',
      source: i % 3 === 0 ? 'shop-worker' : 'shop-api',
      message: failed ? `request errored: ${url} answered ${statusCode} after the upstream call timed out` : `request completed ${meta.req && (meta.req as { method: string }).method} ${url}`,
      metadata: meta,
    });
  }
  return out;
}

const PINO_URL = pathToFileURL(createRequire(import.meta.url).resolve('pino')).href;
const TRANSPORT = path.join(ROOT, 'packages', 'pino', 'dist', 'index.js');

/**
 * Sends `logs` the way a pino-http app does: a Node process whose pino logger writes through
 * Loglane's pino transport (packages/pino) to the server, each line at its log's time (pino's
 * `timestamp` option), with `err` serialised by pino itself. Resolves once the process has exited
 * (pino flushes the transport on exit).
 */
async function sendWithPino(url: string, apiKey: string, logs: PinoLog[]): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loglane-pino-app-'));
  try {
    await writeFile(path.join(dir, 'logs.json'), JSON.stringify(logs));
    await writeFile(
      path.join(dir, 'app.mjs'),
      `import fs from 'node:fs';
import pino from ${JSON.stringify(PINO_URL)};
const logs = JSON.parse(fs.readFileSync(new URL('./logs.json', import.meta.url), 'utf8'));
let time = 0;
const logger = pino({ base: { pid: 4242, hostname: 'shop-1' }, timestamp: () => ',"time":' + time }, pino.transport({ target: ${JSON.stringify(TRANSPORT)}, options: { url: process.env.LOGLANE_URL, apiKey: process.env.LOGLANE_API_KEY, flushIntervalMs: 100 } }));
for (const log of logs) {
  time = Date.parse(log.timestamp);
  const { err, pid, hostname, ...fields } = log.metadata;
  const line = { source: log.source, ...fields };
  if (err) line.err = Object.assign(new Error(err.message), { stack: err.stack });
  logger[log.level](line, log.message);
}
`,
    );
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(dir, 'app.mjs')], { env: { PATH: process.env.PATH ?? '', LOGLANE_URL: url, LOGLANE_API_KEY: apiKey }, stdio: ['ignore', 'inherit', 'inherit'] });
      child.on('error', reject);
      child.on('exit', resolve);
    });
    expect(code, 'the pino app exits cleanly').toBe(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describeInChromium('log explorer journey in chromium', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const consoleErrors: string[] = [];
  const serverErrors: string[] = [];
  let owner: Account;
  let teammate: Account;
  let project: { id: string; apiKey: string };
  const end = Date.now() - 60_000;
  const logs = pinoLogs(180, end);
  const from = new Date(end - 181 * 5_000).toISOString();
  const to = new Date(end + 1000).toISOString();

  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  afterAll(async () => {
    await smtp?.close();
  });
  const server = useServer(engine, () => ({ env: { SMTP_URL: smtp.url, ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>', PUBLIC_URL } }));

  beforeAll(async () => {
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
    owner = await signup(server);
    teammate = await signup(server);
    project = await createProject(server, owner, 'Pino shop');
    // Sent by pino through Loglane's transport, as the app would.
    await sendWithPino(server.url, project.apiKey, logs);
    await until('every pino log stored', async () => (await server.request('GET', `/v1/projects/${project.id}/logs?limit=1000&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { token: owner.accessToken })).body.data?.length === logs.length, 30_000);
    // The teammate joins as a member through the mailed invitation.
    const invited = await server.request('POST', `/v1/projects/${project.id}/invitations`, { token: owner.accessToken, body: { email: teammate.email, role: 'member' } });
    expect(invited.status, invited.text).toBe(201);
    const mail = await until('the invitation mail', () => smtp.mails.find((m) => m.to.includes(teammate.email)), 20_000);
    const token = /invitations#token=([A-Za-z0-9_-]+)/.exec(mailText(mail))?.[1];
    expect(token).toBeTruthy();
    ISSUED_SECRETS.add(token!);
    const accepted = await server.request('POST', '/v1/invitations/accept', { token: teammate.accessToken, body: { token } });
    expect(accepted.status, accepted.text).toBe(200);
  });

  afterAll(async () => {
    await browser?.close();
  });

  async function signedIn(account: Account): Promise<Page> {
    const context = await openContext(browser, server);
    contexts.push(context);
    const page = await context.newPage();
    captureErrors(page, consoleErrors, serverErrors);
    await page.goto('/login');
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  }

  const api = async <T = any>(p: string, token = owner.accessToken): Promise<T> => {
    const res = await server.request('GET', p as '/v1/projects/:id/logs', { token });
    expect(res.status, `${p}: ${res.text.slice(0, 300)}`).toBe(200);
    return res.body as T;
  };
  const apiText = async (p: string): Promise<string> => {
    const res = await fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${owner.accessToken}` } });
    expect(res.status, p).toBe(200);
    return res.text();
  };

  /** Every row on screen: its message box's width and whether its text fits or is cut with room to read. */
  async function messageWidths(page: Page): Promise<Array<{ width: number; text: string }>> {
    return page.locator('.log-line .log-message').evaluateAll((els) =>
      els.map((el) => ({ width: Math.round((el as unknown as { getBoundingClientRect(): { width: number } }).getBoundingClientRect().width), text: (el as unknown as { textContent: string }).textContent })),
    );
  }

  /** Screenshots at 1440 × 900 and 390 × 844 (docs/screenshots/explorer-<name>-<width>.png), each checked for readable messages. */
  async function shots(page: Page, name: string): Promise<void> {
    await assertLabelled(page, `explorer ${name}`);
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.waitForFunction((w) => (globalThis as unknown as { innerWidth: number }).innerWidth === w, size.width);
      await page.evaluate(() => new Promise<void>((done) => (globalThis as unknown as { requestAnimationFrame(cb: () => void): void }).requestAnimationFrame(() => (globalThis as unknown as { requestAnimationFrame(cb: () => void): void }).requestAnimationFrame(() => done()))));
      const rows = await messageWidths(page);
      // The message keeps its room in every row: at least 120 px (about 15 characters) on a phone, 300 on a laptop.
      for (const r of rows) expect(r.width, `a message cut to ${r.width} px at ${size.width} px: ${r.text}`).toBeGreaterThanOrEqual(Math.min(size.width < 500 ? 120 : 300, r.text.length * 6));
      // On a phone the list comes first under the chart: the shot shows it.
      if (size.width < 500 && name !== 'context') await page.locator('.log-list').first().evaluate((el) => (el as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start' }));
      if (screenshotsHere()) await page.screenshot({ path: path.join(SHOTS, `explorer-${name}-${size.name}.png`) });
      await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  }

  it('finds a request, adds a column, counts facets, saves and shares a view, shows context, exports, creates an alert and opens its mailed link', async () => {
    const a = await signedIn(owner);
    await a.setViewportSize({ width: 1440, height: 900 });
    const range = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    await a.goto(`/projects/${project.id}/logs?${range}`);
    const search = a.getByLabel('Search', { exact: true });
    const url = () => new URL(a.url()).searchParams;
    const count = async () => Number(/Showing ([\d,]+)/.exec(await a.locator('.result-count').innerText())?.[1]?.replace(/,/g, '') ?? -1);
    await until('every log listed', async () => (await count()) === logs.length);
    // The page is the only scroll: no box around the list scrolls on its own.
    expect(await a.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { scrollHeight: number; clientHeight: number } | null } }).document;
      const list = doc.querySelector('.log-list')!;
      return list.scrollHeight <= list.clientHeight + 1;
    })).toBe(true);
    // Project tabs under the header.
    expect(await a.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Logs' }).getAttribute('aria-current')).toBe('page');
    // Multi-line messages are not in play here, but stack traces are: a 5xx row's details show err.stack preformatted.
    await shots(a, 'list');

    // A fling (over a screen a frame) draws the rows light, without their chips; once it stops,
    // every row on screen is whole again.
    type FlingWin = { scrollTo(x: number, y: number): void; requestAnimationFrame(cb: () => void): void; document: { querySelectorAll(s: string): ArrayLike<{ querySelector(s: string): unknown; getAttribute(n: string): string | null; focus(): void }>; activeElement: { getAttribute(n: string): string | null; className: string } | null } };
    const lightFrames = await a.evaluate(
      () =>
        new Promise<number>((done) => {
          const w = globalThis as unknown as FlingWin;
          let frame = 0;
          let light = 0;
          const step = () => {
            const rows = Array.from(w.document.querySelectorAll('.log-line'));
            if (rows.length > 0 && rows.every((r) => !r.querySelector('.log-chips'))) light++;
            if (++frame > 16) return done(light);
            w.scrollTo(0, frame % 8 < 4 ? (frame % 4) * 1500 : (4 - (frame % 4)) * 1500);
            w.requestAnimationFrame(step);
          };
          w.requestAnimationFrame(step);
        }),
    );
    expect(lightFrames, 'frames drawn light during the fling').toBeGreaterThan(0);
    await a.evaluate(() => (globalThis as unknown as FlingWin).scrollTo(0, 0));
    await until('every row whole once the fling stops', () =>
      a.locator('.log-line').evaluateAll((rows) => rows.length > 0 && rows.every((r) => (r as unknown as { querySelector(s: string): unknown }).querySelector('.log-chips') && (r as unknown as { querySelector(s: string): unknown }).querySelector('.log-source'))),
    );
    // Rows are reused as they scroll past: a focused row that now shows another log lets the focus go.
    const focusedId = await a.evaluate(() => {
      const first = (globalThis as unknown as FlingWin).document.querySelectorAll('.log-line')[0]!;
      first.focus();
      return first.getAttribute('data-log-id');
    });
    for (const y of [600, 1200, 1800, 2400]) {
      await a.evaluate((top) => (globalThis as unknown as FlingWin).scrollTo(0, top), y);
      await a.evaluate(() => new Promise<void>((done) => (globalThis as unknown as FlingWin).requestAnimationFrame(() => (globalThis as unknown as FlingWin).requestAnimationFrame(done))));
      const active = await a.evaluate(() => {
        const el = (globalThis as unknown as FlingWin).document.activeElement;
        return el && /\blog-line\b/.test(el.className) ? el.getAttribute('data-log-id') : null;
      });
      expect(active === null || active === focusedId, `the focus moved with a reused row to ${active}`).toBe(true);
    }
    await a.evaluate(() => (globalThis as unknown as FlingWin).scrollTo(0, 0));

    // Find by clicking a reqId: open an errored request, click its reqId value.
    // The newest errored request: the first row with its message.
    const errored = [...logs].reverse().find((l) => l.message.startsWith('request errored'))!;
    const reqId = String(errored.metadata.reqId);
    await a.locator('.log-line', { hasText: errored.message }).first().click();
    const fields = a.getByRole('table', { name: 'Fields' }).first();
    const stack = fields.locator('pre.multiline-value');
    await expect.poll(() => stack.first().innerText()).toContain('at listOnTimeout (node:internal/timers:573:17)');
    expect((await stack.first().innerText()).split('\n')).toHaveLength(4);
    await shots(a, 'details');
    await fields.getByRole('button', { name: reqId, exact: true }).first().click();
    await until('filtered by the reqId', async () => url().get('query') === `@reqId:${reqId}` && (await count()) === 1);
    expect(await search.inputValue()).toBe(`@reqId:${reqId}`);

    // Details in Raw and JSON (the row stays open across the search), and Escape closes them.
    expect(await a.locator('.log-line').first().getAttribute('aria-expanded')).toBe('true');
    await a.getByRole('tab', { name: 'JSON' }).click();
    expect(JSON.parse(await a.getByLabel('The log as JSON').innerText())).toMatchObject({ message: errored.message, metadata: { reqId } });
    await a.getByRole('tab', { name: 'Raw' }).click();
    expect(JSON.parse(await a.getByLabel('The log as one line of JSON').innerText()).metadata.res.statusCode).toBe(errored.metadata.res && (errored.metadata.res as { statusCode: number }).statusCode);
    await a.getByRole('tab', { name: 'Pretty' }).click();

    // Add @res.statusCode as a column from the details: in the URL, in every row.
    await a.getByRole('button', { name: 'Add @res.statusCode as a column' }).first().click();
    await until('the column in the URL', async () => url().get('columns') === '@res.statusCode');
    await a.keyboard.press('Escape');
    await until('details closed by Escape', async () => (await a.locator('.log-detail').count()) === 0);
    await expect.poll(() => a.locator('.log-cell[data-column="@res.statusCode"]').allInnerTexts()).toEqual([String((errored.metadata.res as { statusCode: number }).statusCode)]);

    // Back to every log: "/" goes to the search box; Enter runs.
    await a.locator('h1').click();
    await a.keyboard.press('/');
    expect(await a.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }).document.activeElement.getAttribute('role'))).toBe('combobox');
    await search.fill('');
    await search.press('Enter');
    await until('every log again', async () => (await count()) === logs.length && url().get('query') === null);
    const cells = await a.locator('.log-cell[data-column="@res.statusCode"]').allInnerTexts();
    expect(cells.length).toBeGreaterThan(5);
    // Sortable on the loaded page.
    await a.getByRole('button', { name: /^Sort by @res\.statusCode/ }).click();
    await expect.poll(async () => (await a.locator('.log-cell[data-column="@res.statusCode"]').first().innerText())).toBe('200');
    await a.getByRole('button', { name: /^Sort by @res\.statusCode/ }).click();
    await expect.poll(async () => (await a.locator('.log-cell[data-column="@res.statusCode"]').first().innerText())).toBe('503');
    await a.getByRole('button', { name: /^Sort by @res\.statusCode/ }).click();

    // Facets over the range: the sidebar's counts for @res.statusCode are stats' groupBy sums.
    const sidebar = a.getByRole('complementary', { name: 'Fields' });
    await sidebar.getByRole('button', { name: /^@res\.statusCode\b/ }).click();
    const values = sidebar.getByRole('group', { name: 'Values of @res.statusCode' });
    await until('facet values', async () => (await values.locator('.facet-values li').count()) > 0);
    const shown = Object.fromEntries(
      (await values.locator('.facet-values li').allInnerTexts()).map((t) => {
        const m = /^(\S+)\s+([\d,]+)/.exec(t.trim())!;
        return [m[1]!, Number(m[2]!.replace(/,/g, ''))];
      }),
    );
    const stats = await api<{ buckets: Array<{ groups?: Record<string, number> }> }>(`/v1/projects/${project.id}/logs/stats?${range}&interval=1h&groupBy=${encodeURIComponent('@res.statusCode')}`);
    const sums: Record<string, number> = {};
    for (const b of stats.buckets) for (const [g, n] of Object.entries(b.groups ?? {})) if (g !== '(other)' && g !== '(none)') sums[g] = (sums[g] ?? 0) + n;
    expect(shown).toEqual(sums);
    expect(shown['500']).toBe(logs.filter((l) => (l.metadata.res as { statusCode: number }).statusCode === 500).length);
    // Numeric fields: min/max/p50/p95 and a range filter.
    await expect.poll(() => values.locator('.numeric-stats').innerText()).toMatch(/min\s+200[\s\S]*max\s+503/);
    await values.getByLabel('Minimum @res.statusCode').fill('500');
    await values.getByLabel('Maximum @res.statusCode').fill('599');
    await shots(a, 'facets');
    await values.getByRole('button', { name: 'Filter' }).click();
    const fiveHundreds = logs.filter((l) => (l.metadata.res as { statusCode: number }).statusCode >= 500).length;
    await until('range filter', async () => url().get('query') === '@res.statusCode:[500 TO 599]' && (await count()) === fiveHundreds);

    // The query bar's warnings, each fixed in one click.
    await search.fill('@req.url:/api/orders');
    await a.getByRole('button', { name: 'Use @req.url:"/api/orders"' }).waitFor();
    expect(await count()).toBe(fiveHundreds); // typing ran nothing
    await a.getByRole('button', { name: 'Use @req.url:"/api/orders"' }).click();
    const ordersExact = logs.filter((l) => (l.metadata.req as { url: string }).url === '/api/orders').length;
    await until('the quoted path', async () => url().get('query') === '@req.url:"/api/orders"' && (await count()) === ordersExact);
    await search.fill('@res.statusCode >= 500');
    await a.getByRole('button', { name: 'Use @res.statusCode:>=500' }).click();
    await until('the comparison', async () => url().get('query') === '@res.statusCode:>=500' && (await count()) === fiveHundreds);
    await search.fill('status:error');
    await a.getByRole('button', { name: 'Use level:error' }).click();
    await until('the level', async () => url().get('query') === 'level:error' && (await count()) === fiveHundreds);
    // Autocomplete: a field name, then one of its values.
    await search.fill('');
    await search.pressSequentially('@req.ur');
    await a.getByRole('option', { name: '@req.url' }).click();
    expect(await search.inputValue()).toBe('@req.url:');
    await search.pressSequentially('/h');
    await a.getByRole('option', { name: /^\/health/ }).click();
    expect(await search.inputValue()).toBe('@req.url:"/health" ');
    await search.fill('@res.statusCode:>=500');
    await search.press('Enter');
    await until('5xx again', async () => url().get('query') === '@res.statusCode:>=500' && (await count()) === fiveHundreds);

    // Add @reqId from the sidebar, then save the view.
    await sidebar.getByLabel('Search fields').fill('reqid');
    await sidebar.getByRole('button', { name: 'Add @reqId as a column' }).click();
    await until('two columns', async () => url().get('columns') === '@res.statusCode,@reqId');
    await a.getByRole('button', { name: 'Views' }).click();
    await a.getByLabel('Save the current search as').fill('Server errors');
    await a.getByRole('button', { name: 'Save view' }).click();
    await until('the view in the URL', async () => /^viw_/.test(url().get('view') ?? ''));
    const viewId = url().get('view')!;
    const view = await api<{ query: string; columns: string[]; range: unknown; createdBy: { email: string } }>(`/v1/projects/${project.id}/views/${viewId}`);
    expect(view).toMatchObject({ query: '@res.statusCode:>=500', columns: ['@res.statusCode', '@reqId'], range: { from: new Date(Date.parse(from)).toISOString(), to: new Date(Date.parse(to)).toISOString() }, createdBy: { email: owner.email } });

    // Another member opens the view's shared link: the same query and columns.
    const b = await signedIn(teammate);
    await b.setViewportSize({ width: 1440, height: 900 });
    await b.goto(`/projects/${project.id}/logs?view=${viewId}`);
    await until('the view opened', async () => new URL(b.url()).searchParams.get('query') === '@res.statusCode:>=500');
    expect(await b.getByLabel('Search', { exact: true }).inputValue()).toBe('@res.statusCode:>=500');
    expect(new URL(b.url()).searchParams.get('columns')).toBe('@res.statusCode,@reqId');
    await expect.poll(() => b.locator('.log-head .head-sort').allInnerTexts()).toEqual(['@res.statusCode', '@reqId']);
    await until('the same logs', async () => Number(/Showing ([\d,]+)/.exec(await b.locator('.result-count').innerText())?.[1]) === fiveHundreds);
    await expect.poll(() => b.getByRole('button', { name: 'View: Server errors' }).count()).toBe(1);
    // A member may not change the owner's view.
    await b.getByRole('button', { name: 'View: Server errors' }).click();
    expect(await b.getByRole('button', { name: 'Update “Server errors”' }).isDisabled()).toBe(true);
    await b.context().close();

    // Context around a row: every log, then the same reqId.
    const first = a.locator('.log-line').first();
    const firstId = (await first.getAttribute('data-log-id'))!;
    await first.click();
    await a.getByRole('button', { name: 'Show surrounding logs' }).first().click();
    const dialog = a.getByRole('dialog', { name: 'Surrounding logs' });
    const ctx = await api<{ before: Array<{ id: string }>; log: { id: string }; after: Array<{ id: string }> }>(`/v1/projects/${project.id}/logs/${firstId}/context?before=20&after=20`);
    const expectedIds = [...ctx.before].reverse().map((l) => l.id).concat([ctx.log.id], ctx.after.map((l) => l.id));
    await until('context rows', async () => (await dialog.locator('.log-line').count()) > 0);
    const dialogIds = async () => dialog.locator('.log-line').evaluateAll((els) => els.map((e) => (e as unknown as { getAttribute(n: string): string }).getAttribute('data-log-id')));
    // The dialog's list is virtualised too: compare what it shows with the start of the API's answer.
    await expect.poll(async () => {
      const ids = await dialogIds();
      return ids.length > 0 && ids.every((id, i) => id === expectedIds[i]);
    }).toBe(true);
    expect(await dialog.locator('.log-row.marked .log-line').getAttribute('data-log-id')).toBe(firstId);
    await shots(a, 'context');
    await dialog.getByLabel('Show').selectOption('@reqId');
    const reqOfFirst = (await api<{ log: { metadata: { reqId: string } } }>(`/v1/projects/${project.id}/logs/${firstId}/context?before=0&after=0`)).log.metadata.reqId;
    await until('only the same reqId', async () => {
      const ids = await dialogIds();
      return ids.length === 1 && ids[0] === firstId;
    });
    const sameReq = await api<{ before: unknown[]; after: unknown[] }>(`/v1/projects/${project.id}/logs/${firstId}/context?before=20&after=20&query=${encodeURIComponent(`@reqId:${reqOfFirst}`)}`);
    expect(sameReq.before.length + sameReq.after.length).toBe(0);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Export NDJSON and CSV from the page: the same bytes as the API's export of the same search.
    const filters = `${range}&query=${encodeURIComponent('@res.statusCode:>=500')}`;
    await a.getByRole('button', { name: 'Export', exact: true }).click();
    const [ndjsonDownload] = await Promise.all([a.waitForEvent('download'), a.getByRole('button', { name: 'Export NDJSON' }).click()]);
    const ndjson = await readFile((await ndjsonDownload.path())!, 'utf8');
    const apiNdjson = await apiText(`/v1/projects/${project.id}/logs/export?format=ndjson&${filters}`);
    expect(ndjson).toBe(apiNdjson);
    expect(ndjson.trim().split('\n')).toHaveLength(fiveHundreds);
    expect(ndjsonDownload.suggestedFilename()).toMatch(/\.ndjson$/);
    await a.getByRole('button', { name: 'Export', exact: true }).click();
    const [csvDownload] = await Promise.all([a.waitForEvent('download'), a.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = await readFile((await csvDownload.path())!, 'utf8');
    const apiCsv = await apiText(`/v1/projects/${project.id}/logs/export?format=csv&${filters}&columns=${encodeURIComponent('timestamp,level,source,@res.statusCode,@reqId,message')}`);
    expect(csv).toBe(apiCsv);
    expect(csv.split(/\r?\n/)[0]).toBe('timestamp,level,source,@res.statusCode,@reqId,message');
    // No token in any URL the page asked for.
    expect(await a.evaluate(() => (globalThis as unknown as { performance: { getEntriesByType(t: string): Array<{ name: string }> } }).performance.getEntriesByType('resource').some((e) => /token|eyJ/.test(e.name)))).toBe(false);

    // Time: a typed range with seconds, the UTC/local switch, zoom out.
    const rangeBox = a.getByLabel(/^Time range/);
    await rangeBox.fill('2h');
    await rangeBox.press('Enter');
    await until('last 2h', async () => url().get('range') === '2h' && url().get('from') === null);
    await rangeBox.fill(`${from.slice(0, 10)} ${from.slice(11, 19)} to ${to.slice(0, 10)} ${to.slice(11, 19)}`);
    await rangeBox.press('Enter');
    await until('absolute range (the browser runs in UTC)', async () => url().get('from') === new Date(Math.floor(Date.parse(from) / 1000) * 1000).toISOString());
    await a.getByLabel('Time zone').selectOption('utc');
    await expect.poll(() => a.locator('.log-line .log-time').first().innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    expect(await a.locator('.result-count').innerText()).toContain('times in UTC');
    expect(await a.evaluate(() => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem('loglane.timeZone'))).toBe('utc');
    await a.getByRole('button', { name: 'Zoom out' }).click();
    await until('zoomed out', async () => Date.parse(url().get('to') ?? '') - Date.parse(url().get('from') ?? '') > Date.parse(to) - Date.parse(from) + 1000 || url().get('range') !== null);

    // Create an alert from this search: the alerts page with the query (and levels) in its URL.
    await a.getByRole('search', { name: 'Filter logs' }).getByRole('button', { name: 'error', exact: true }).click();
    await until('level chosen', async () => url().get('level') === 'error');
    await a.getByRole('link', { name: 'Create alert from this search' }).click();
    await until('on the alerts page', async () => new URL(a.url()).pathname === `/projects/${project.id}/alerts`);
    const alertParams = new URL(a.url()).searchParams;
    expect([alertParams.get('create'), alertParams.get('query'), alertParams.get('level')]).toEqual(['1', '@res.statusCode:>=500', 'error']);

    // The form opens prefilled with the search; saved with a threshold of 1, by email.
    const form = a.getByRole('dialog', { name: 'New alert rule' });
    expect(await form.getByLabel('Query (optional)').inputValue()).toBe('@res.statusCode:>=500');
    expect(await form.getByLabel('Level').inputValue()).toBe('error');
    await form.getByLabel('Name').fill('Checkout 5xx');
    await form.getByLabel('Threshold').fill('1');
    const email = form.getByRole('checkbox', { name: 'Email' });
    if (!(await email.isChecked())) await email.check();
    await form.getByRole('button', { name: 'Create alert' }).click();
    await a.getByText('Alert Checkout 5xx saved.').waitFor();
    // A new 503 fires it; the mail to the project's members links to the logs it counted.
    const firedAt = Date.now();
    await postLogs(server, project.apiKey, [{ timestamp: new Date(firedAt).toISOString(), level: 'error', source: 'shop-api', message: 'request errored: /api/orders answered 503 after the upstream call timed out', metadata: { reqId: 'req-9999', res: { statusCode: 503 } } }]);
    const alertMail = await until('the alert mail', () => smtp.mails.find((m) => m.to.includes(owner.email) && /Checkout 5xx/.test(mailText(m))), 30_000);
    const link = /View matching logs: (\S+)/.exec(mailText(alertMail))?.[1];
    expect(link, 'the mail links to the matching logs').toBeTruthy();
    const fromMail = new URL(link!);
    expect(fromMail.origin).toBe(PUBLIC_URL);
    expect(fromMail.pathname).toBe(`/projects/${project.id}/logs`);
    expect(fromMail.searchParams.get('query')).toContain('@res.statusCode:>=500');
    // Opened in the console (served here instead of at PUBLIC_URL): the rule's query and the firing's window.
    await a.goto(fromMail.pathname + fromMail.search);
    await until('the linked search', async () => (await a.getByLabel('Search', { exact: true }).inputValue()) === fromMail.searchParams.get('query'));
    expect(url().get('from')).toBe(fromMail.searchParams.get('from'));
    expect(url().get('to')).toBe(fromMail.searchParams.get('to'));
    const linked = await api<{ data: Array<{ id: string; message: string }> }>(`/v1/projects/${project.id}/logs?${new URLSearchParams({ from: fromMail.searchParams.get('from')!, to: fromMail.searchParams.get('to')!, query: fromMail.searchParams.get('query')!, limit: '1000' })}`);
    expect(linked.data.map((l) => l.message)).toContain('request errored: /api/orders answered 503 after the upstream call timed out');
    await until('the counted log on the page', async () => (await a.locator('.log-line', { hasText: 'req-9999' }).count()) > 0 || (await count()) === linked.data.length);
    // The list says how many it holds (only the rows near the screen are in the page).
    await expect.poll(count).toBe(linked.data.length);

    // A permalink opens the explorer on that log.
    await a.goto(`/projects/${project.id}/logs?${range}&log=${firstId}`);
    await a.getByRole('region', { name: 'Linked log' }).getByText(firstId).waitFor();

    expect(serverErrors).toEqual([]);
    expect(printedErrors(consoleErrors)).toEqual([]);
  }, 240_000);
});
