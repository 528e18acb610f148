/**
 * The console in a real browser (Debian's chromium driven by playwright-core) against the real
 * server on each engine: the whole journey a new user takes, with screenshots of every screen at
 * 1280 px and 390 px (docs/screenshots, linked from the README).
 */
import { createHmac } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ISSUED_SECRETS, uniqueEmail, useServer } from './harness.js';
import { startPushReceiver, startSmtpSink } from './sinks.js';
import { captureErrors, createFirstProject, describeInChromium, launchChromium, openContext, postLogs, printedErrors, readableStorage, requireChromium, shoot, SHOTS, until } from './browser.js';

requireChromium('console journey');

interface Hook {
  path: string;
  signature: string;
  raw: string;
  body: { type?: string; state?: string; alert?: { name?: string }; matchedCount?: number } | null;
}

/** A webhook receiver on 127.0.0.1, admitted through WEBHOOK_ALLOWED_ORIGINS: it keeps every request. */
async function startWebhookReceiver() {
  const got: Hook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Hook['body'] = null;
      try {
        body = JSON.parse(raw) as Hook['body'];
      } catch {
        body = null;
      }
      got.push({ path: req.url ?? '', signature: String(req.headers['loglane-signature'] ?? ''), raw, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    got,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Whether a webhook's Loglane-Signature is the HMAC of `<t>.<raw body>` keyed with `secret` (docs/alerts.md). */
function signedWith(secret: string, hook: Hook): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(hook.signature);
  return !!m && createHmac('sha256', secret).update(`${m[1]}.${hook.raw}`).digest('hex') === m[2];
}

describeInChromium('console journey in chromium', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let push: Awaited<ReturnType<typeof startPushReceiver>>;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];
  const serverErrors: string[] = [];
  /** Non-2xx answers the journey provokes on purpose; the browser prints one console line for each. */
  const expectedFailures: string[] = [];

  // Hooks run in the order declared (and after-hooks in reverse): the sinks are up before the server
  // that sends to them, and close after it; the browser closes first.
  beforeAll(async () => {
    smtp = await startSmtpSink();
    push = await startPushReceiver();
    hooks = await startWebhookReceiver();
  });
  afterAll(async () => {
    await smtp?.close();
    await push?.close();
    await hooks?.close();
  });
  const server = useServer(engine, () => ({
    env: {
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>',
      PUSH_ALLOWED_ORIGINS: push.origin,
      WEBHOOK_ALLOWED_ORIGINS: hooks.origin,
      DELIVERY_RETRY_BASE: '1s',
      DELIVERY_MAX_ATTEMPTS: '2',
    },
  }));
  beforeAll(async () => {
    browser = await launchChromium();
    context = await openContext(browser, server);
    await context.grantPermissions(['clipboard-read', 'clipboard-write', 'notifications'], { origin: server.url });
    page = await context.newPage();
    // Time in the page flows as usual, but the test can jump it forward (an idle session).
    await page.clock.install();
    captureErrors(page, consoleErrors, serverErrors);
    await mkdir(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
  });

  const visibleMessages = () => page.locator('.log-message').allInnerTexts();
  /** Clicks an alert page's "Refresh" and returns once the history it asks for has come back (the list keeps what it had meanwhile). */
  async function refreshHistory(): Promise<void> {
    const answered = page.waitForResponse((r) => /^\/v1\/alerts\/[^/]+\/history$/.test(new URL(r.url()).pathname));
    await page.getByRole('button', { name: 'Refresh' }).click();
    await (await answered).finished();
  }
  const visibleLevels = () => page.locator('.log-line .level-badge').allInnerTexts();

  it('signs up, creates a project, searches, tails, alerts, rotates the key and signs out', async () => {
    const email = uniqueEmail('console');
    const password = 'correct horse battery';
    ISSUED_SECRETS.add(password);

    // Sign in and sign up.
    await page.goto('/');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shoot(page, 'sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // Said under the field before anything is sent (test/console-a11y.e2e.test.ts covers the rest).
    await expect.poll(() => page.locator('.field-error').first().innerText()).toMatch(/8/);
    await shoot(page, 'sign-up');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    await shoot(page, 'projects-empty');

    // The refresh token is an HttpOnly cookie: page scripts cannot see it.
    const cookies = await context.cookies();
    const refresh = cookies.find((c) => c.name === 'loglane_refresh');
    expect(refresh?.httpOnly).toBe(true);
    expect(refresh?.sameSite).toBe('Strict');
    expect(refresh?.path).toBe('/v1/auth');
    expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).not.toContain(refresh!.value);

    // A reload keeps the session.
    await page.reload();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();

    // Idle past the access token's lifetime (both clocks jump 16 minutes): the next action
    // refreshes silently first, with no 401 on the way (the console-error check below covers it).
    const refreshes: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/auth/refresh') refreshes.push(r.method());
    });
    server.clock.advance(16 * 60_000);
    await page.clock.fastForward('16:00');

    // Create a project; the key is shown once created.
    const { apiKey, projectId } = await createFirstProject(page, 'Checkout API');
    await expect.poll(() => page.locator('.snippet pre').innerText()).toContain(apiKey);
    await shoot(page, 'project-settings');
    // The shippers teams already run are offered too, with this server's address and the key filled in.
    await page.getByRole('tab', { name: 'Promtail / Loki' }).click();
    await expect.poll(() => page.locator('.snippet pre').innerText()).toContain(`/loki/api/v1/push`);
    expect(await page.locator('.snippet pre').innerText()).toContain(apiKey);
    await page.getByRole('tab', { name: 'curl' }).click();
    expect(refreshes).toEqual(['POST']);

    // A second project is over the free plan: the message names the plan that allows more.
    await page.getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Project name').fill('Second');
    await page.getByRole('button', { name: 'Create project' }).click();
    expectedFailures.push('403 /v1/projects');
    await expect.poll(() => page.locator('.plan-limit').innerText()).toMatch(/starter plan allows 5/i);
    await shoot(page, 'plan-limit');
    await page.getByRole('button', { name: 'Cancel' }).click();

    // Logs arrive through the API with the project's key.
    const now = Date.now();
    const logs = [];
    for (let i = 0; i < 300; i++) {
      const level = ['debug', 'info', 'info', 'info', 'warn', 'error'][i % 6];
      logs.push({ timestamp: now - (300 - i) * 1000, level, source: i % 2 ? 'web' : 'worker', message: `request ${i} served in ${i % 97}ms`, metadata: { requestId: `r-${i}`, http: { status: 200 + (i % 3) } } });
    }
    logs.push({ timestamp: now - 500, level: 'error', source: 'billing', message: 'payment failed for order 4242', metadata: { order: { id: 4242, total: 99.5 }, retry: false } });
    await postLogs(server, apiKey, logs);

    await page.goto(`/projects/${projectId}/logs`);
    await until('logs listed', async () => (await visibleMessages()).some((m) => m.includes('payment failed')));
    await expect.poll(() => page.locator('.histogram rect.lvl-fill-error').count()).toBeGreaterThan(0);
    // Virtualised: far fewer rows in the page than logs loaded.
    expect(await page.locator('.log-row').count()).toBeLessThan(80);
    await expect.poll(() => page.locator('.result-count').innerText()).toContain('301');
    await shoot(page, 'explorer');

    // Filter by level, then search with the query language: a field, a phrase, a regex.
    const search = page.getByLabel('Search', { exact: true });
    const queryInUrl = () => new URL(page.url()).searchParams.get('query');
    const listed = async () => Number(/Showing ([\d,]+)/.exec(await page.locator('.result-count').innerText())![1]!.replace(/,/g, ''));
    const filters = page.getByRole('search', { name: 'Filter logs' });
    await filters.getByRole('button', { name: 'error', exact: true }).click();
    await until('only errors', async () => {
      const levels = await visibleLevels();
      return levels.length > 0 && levels.every((l) => l.toLowerCase() === 'error') && levels.length <= 51;
    });
    await search.fill('source:billing');
    await search.press('Enter');
    await until('billing only', async () => {
      const messages = await visibleMessages();
      return messages.length === 1 && messages[0]!.includes('payment failed');
    });
    await filters.getByRole('button', { name: 'All levels' }).click();
    await search.fill('"ORDER 4242"');
    await search.press('Enter');
    await until('phrase search', async () => {
      const messages = await visibleMessages();
      return messages.length === 1 && messages[0]!.includes('order 4242');
    });
    await search.fill('/served in 9[0-6]ms$/');
    await search.press('Enter');
    await until('regex search', async () => {
      const messages = await visibleMessages();
      return messages.length > 0 && messages.every((m) => /served in 9[0-6]ms$/.test(m));
    });
    expect(queryInUrl()).toBe('/served in 9[0-6]ms$/');

    // Search by a metadata field: every row shows it inline as a chip.
    await search.fill('@http.status:201');
    await search.press('Enter');
    await until('status 201 only', async () => (await page.locator('.result-count').innerText().catch(() => '')).includes('Showing 100 logs'));
    const chips = await page.locator('.log-line').first().locator('.log-chip').allInnerTexts();
    expect(chips).toEqual(['http.status=201', 'requestId=r-298']);
    // The page URL keeps the query: a reload shows the same search.
    await page.reload();
    await until('query kept across a reload', async () => (await search.inputValue()) === '@http.status:201' && (await listed().catch(() => 0)) === 100);

    // Click a value in an expanded row to filter by it, then exclude another.
    await page.locator('.log-line').first().click();
    await page.getByRole('table', { name: 'Fields' }).getByRole('button', { name: 'worker', exact: true }).click();
    await until('filtered by the clicked value', async () => queryInUrl() === '@http.status:201 source:worker' && (await listed().catch(() => 0)) === 50);
    expect(new Set(await page.locator('.log-line .log-source').allInnerTexts())).toEqual(new Set(['worker']));
    // The first row's details stay open across the filter (a second click would close them).
    if ((await page.getByRole('table', { name: 'Fields' }).count()) === 0) await page.locator('.log-line').first().click();
    await page.getByRole('table', { name: 'Fields' }).getByRole('button', { name: 'Exclude @requestId:r-298' }).click();
    await until('excluded value', async () => queryInUrl() === '@http.status:201 source:worker -@requestId:r-298' && (await listed().catch(() => 0)) === 49);
    expect(await search.inputValue()).toBe('@http.status:201 source:worker -@requestId:r-298');
    expect((await visibleMessages())[0]).toBe('request 292 served in 1ms');

    // A query that does not parse: the server's message under the box, its column marked.
    await page.getByRole('button', { name: 'Syntax' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Search syntax' }).innerText()).toContain('@res.statusCode:>=500');
    // The whole reference, docs/search.md, comes with the console.
    await page.getByRole('button', { name: 'Full reference (docs/search.md)' }).click();
    await expect.poll(() => page.getByLabel('Search language reference').innerText()).toContain('Datadog');
    await page.getByRole('button', { name: 'Hide the full reference' }).click();
    const bad = '@http.status:>=abc source:web';
    await search.fill(bad);
    // Refused by the check as you type (a search of one instant, half a second after the last
    // keystroke: waited for, as Enter before it would cancel it) and by the run itself: the page,
    // the histogram, and the sidebar's fields and facets.
    await until('the check as you type refused', async () => (await page.locator('.query-error .field-error').count()) > 0);
    // Each of the run's four requests answered before the next query (which would abort the slower ones).
    const refused = ['logs', 'logs/stats', 'logs/fields', 'logs/facets'].map((p) => page.waitForResponse((r) => new URL(r.url()).pathname === `/v1/projects/${projectId}/${p}` && r.status() === 400));
    await search.press('Enter');
    await Promise.all(refused);
    expectedFailures.push(`400 /v1/projects/${projectId}/logs`, `400 /v1/projects/${projectId}/logs`, `400 /v1/projects/${projectId}/logs/stats`, `400 /v1/projects/${projectId}/logs/fields`, `400 /v1/projects/${projectId}/logs/facets`);
    const syntax = await until('syntax error shown', async () => (await page.locator('.query-error .field-error').innerText().catch(() => '')) || undefined);
    const column = Number(/^at column (\d+): expected /.exec(syntax)?.[1]);
    expect(column).toBeGreaterThan(1);
    const echo = (await page.locator('.query-echo').innerText()).split('\n');
    expect(echo[0]).toBe(bad);
    expect(echo[1]!.indexOf('^')).toBe(column - 1);
    expect(await page.locator('.query-echo mark').innerText()).toBe(Array.from(bad)[column - 1]);
    expect(await search.getAttribute('aria-invalid')).toBe('true');
    await shoot(page, 'search-error');
    await page.getByRole('button', { name: 'Syntax' }).click();

    await search.fill('payment');

    await search.press('Enter');
    await until('payment row', async () => (await visibleMessages()).length === 1);
    expect(await page.locator('.query-error').count()).toBe(0);
    expect(await page.locator('.log-line .log-chip').allInnerTexts()).toEqual(['order.id=4242', 'order.total=99.5']);
    await page.locator('.log-line').first().click();
    await page.getByRole('tab', { name: 'JSON' }).click();
    await expect.poll(() => page.getByLabel('The log as JSON').innerText()).toContain('"total": 99.5');
    await shoot(page, 'log-expanded');

    // Split the histogram by source, then by a metadata field.
    await search.fill('');
    await search.press('Enter');
    await until('every log listed', async () => (await listed().catch(() => 0)) === 301);
    const splitBy = page.getByLabel('Split by');
    await splitBy.fill('source');
    await splitBy.press('Enter');
    await until('split by source', async () => {
      const caption = await page.locator('.histogram-caption').innerText();
      return new URL(page.url()).searchParams.get('groupBy') === 'source' && ['billing', 'web', 'worker'].every((s) => caption.includes(s)) && !caption.includes('debug');
    });
    expect(await page.locator('.histogram rect.group-fill-0').count()).toBeGreaterThan(0);
    await splitBy.fill('@http.status');
    await splitBy.press('Enter');
    await until('split by a field', async () => {
      const caption = await page.locator('.histogram-caption').innerText();
      return ['200', '201', '202', '(none)'].every((s) => caption.includes(s));
    });
    expect(await page.locator('.histogram rect.group-fill-none').count()).toBeGreaterThan(0);
    await shoot(page, 'histogram-split');

    // The field sidebar: the fields of the whole range with their top values (counted by the
    // server); click one to filter, or exclude one.
    const sidebar = page.getByRole('complementary', { name: 'Fields' });
    await sidebar.getByRole('button', { name: /^source\b/ }).click();
    await expect.poll(() => sidebar.getByRole('group', { name: 'Values of source' }).innerText()).toMatch(/^web\s+150\s+−\s+worker\s+150\s+−\s+billing\s+1\s+−/);
    await sidebar.getByRole('button', { name: /^@http\.status\b/ }).click();
    await shoot(page, 'field-sidebar');
    await sidebar.getByRole('group', { name: 'Values of source' }).getByRole('button', { name: 'billing', exact: true }).click();
    await until('filtered from the sidebar', async () => queryInUrl() === 'source:billing' && (await listed().catch(() => 0)) === 1);
    await sidebar.getByRole('button', { name: /^@order\.id\b/ }).click();
    await sidebar.getByRole('button', { name: 'Exclude @order.id:4242' }).click();
    await until('excluded from the sidebar', async () => queryInUrl() === 'source:billing -@order.id:4242' && (await page.locator('.empty h3').innerText().catch(() => '')) === 'No logs match');

    // Live tail shows a log sent after the page opened; pausing holds new logs until resumed.
    await page.goto(`/projects/${projectId}/logs`);
    await until('logs listed', async () => (await visibleMessages()).length > 0);
    const openTails = () => server.app.services.logs.openTails();
    const tailsBefore = openTails();
    await page.getByRole('button', { name: '▶ Live tail' }).click();
    await until('tail live', async () => (await page.locator('.tail-status').innerText()).startsWith('Live'));
    await postLogs(server, apiKey, { level: 'warn', source: 'web', message: 'tail check one' });
    await until('tailed log shown', async () => (await visibleMessages())[0] === 'tail check one');
    await shoot(page, 'live-tail');
    await page.getByRole('button', { name: 'Pause' }).click();
    await until('paused', async () => (await page.locator('.tail-status').innerText()).startsWith('Paused'));
    // Paused means the stream is closed and the server holds what arrives: once the server has no
    // tail open for the page, nothing sent now can reach it before Resume.
    await until('the paused stream closed on the server', () => openTails() === tailsBefore, 5000);
    await postLogs(server, apiKey, { level: 'info', source: 'web', message: 'sent while paused' });
    expect(await visibleMessages()).not.toContain('sent while paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await until('resumed log shown', async () => (await visibleMessages())[0] === 'sent while paused');
    expect((await visibleMessages()).filter((m) => m === 'tail check one')).toHaveLength(1);

    // Reading further down: logs arriving above do not move the lines in view.
    const rowAtTop = () =>
      page.evaluate(() => {
        type Box = { getBoundingClientRect(): { left: number; top: number }; scrollTop: number };
        type Doc = { querySelector(s: string): Box; elementFromPoint(x: number, y: number): { closest(s: string): { textContent: string | null } | null } | null };
        const doc = (globalThis as unknown as { document: Doc }).document;
        // The page itself scrolls; the list's header row stays at the top of the view, the rows pass under it.
        const r = (doc.querySelector('.log-head') as unknown as { getBoundingClientRect(): { left: number; bottom: number } }).getBoundingClientRect();
        return doc.elementFromPoint(r.left + 400, r.bottom + 12)?.closest('.log-line')?.textContent;
      });
    await page.evaluate(() => {
      type El = { getBoundingClientRect(): { top: number } };
      const g = globalThis as unknown as { scrollY: number; scrollTo(x: number, y: number): void; document: { querySelector(s: string): El } };
      g.scrollTo(0, g.scrollY + g.document.querySelector('.log-head').getBoundingClientRect().top + 1500);
    });
    // The rows for the new scroll position are rendered once a log line is at the top of the view.
    const reading = await until('rows at the new scroll position', async () => {
      const row = await rowAtTop();
      return row && /request \d+ served/.test(row) ? row : undefined;
    });
    const countBefore = await listed();
    await postLogs(server, apiKey, [{ message: 'arrives above one' }, { message: 'arrives above two' }]);
    // The count and the rows render in one commit, and the list keeps the reader's place in a layout
    // effect of that same commit: once both are counted, the view has been adjusted (or not).
    await until('two more listed', async () => (await listed()) === countBefore + 2);
    expect(await rowAtTop()).toBe(reading);
    await page.getByRole('button', { name: 'Stop' }).click();

    // Alerts: create one (the API's validation message is shown at the field), then trigger it.
    const apiLogin = await server.request('POST', '/v1/auth/login', { body: { email, password } });
    expect(apiLogin.status).toBe(200);
    const token = apiLogin.body.accessToken;
    ISSUED_SECRETS.add(token);
    expect(apiLogin.body.refreshToken).toEqual(expect.any(String));
    ISSUED_SECRETS.add(apiLogin.body.refreshToken!);
    const sub = push.subscribe();
    expect((await server.request('POST', '/v1/push/subscriptions', { token, body: { endpoint: sub.endpoint, keys: sub.keys } })).status).toBe(201);

    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'No alert rules' }).waitFor();
    await shoot(page, 'alerts-empty');
    await page.getByRole('button', { name: 'New alert' }).click();
    await page.getByLabel('Name').fill('Billing errors');
    await page.getByLabel('Threshold').fill('0');
    await page.getByLabel('Source (optional)').fill('billing');
    await page.getByLabel('Push notification').check();
    await page.getByRole('button', { name: 'Create alert' }).click();
    expectedFailures.push('400 /v1/alerts');
    await expect.poll(() => page.locator('.field.has-error .field-error').first().innerText()).toMatch(/1|threshold/i);
    await shoot(page, 'alert-form');
    await page.getByLabel('Threshold').fill('3');
    await page.getByRole('button', { name: 'Create alert' }).click();
    await page.getByRole('link', { name: 'Billing errors' }).waitFor();
    await expect.poll(() => page.locator('.alerts-table').innerText()).toContain('3 error logs from billing within 5 minutes');
    await shoot(page, 'alerts');

    const mailsBefore = smtp.mails.length;
    await postLogs(server, apiKey, [1, 2, 3].map((n) => ({ level: 'error', source: 'billing', message: `card declined ${n}` })));
    await until('alert email', async () => smtp.mails.length > mailsBefore, 20_000);
    await until('push delivery', async () => push.deliveries.length > 0, 20_000);

    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    await until('history entry with deliveries', async () => {
      await refreshHistory();
      const text = await page.locator('.history').innerText().catch(() => '');
      return text.includes('email: sent') && text.includes('push: sent');
    }, 20_000);
    await page.locator('.history summary').first().click();
    await expect.poll(() => page.locator('.sample').first().innerText()).toContain('card declined');
    expect(await page.locator('.state').first().innerText()).toBe('Firing');
    expect(await page.locator('.history-entry .state').first().innerText()).toBe('Triggered');
    await shoot(page, 'alert-history');

    // Destinations: a URL on a private address is refused at the field; a webhook to the local
    // receiver shows its signing secret once; a Slack one is listed, then deleted after a confirmation.
    await page.goto(`/projects/${projectId}/settings`);
    const destinations = page.getByRole('region', { name: 'Destinations' });
    await destinations.getByRole('heading', { name: 'No destinations yet' }).waitFor();
    await destinations.getByLabel('Name (optional)').fill('on-call');
    await destinations.getByLabel('URL', { exact: true }).fill('https://10.0.0.5/hook');
    await destinations.getByRole('button', { name: 'Add destination' }).click();
    expectedFailures.push(`400 /v1/projects/${projectId}/destinations`);
    await expect.poll(() => destinations.locator('.field.has-error .field-error').innerText()).not.toBe('');
    await destinations.getByLabel('URL', { exact: true }).fill(`${hooks.origin}/loglane`);
    await destinations.getByRole('button', { name: 'Add destination' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Webhook signing secret' });
    const secret = (await secretDialog.getByTestId('webhook-secret').innerText()).trim();
    expect(secret).toMatch(/^whsec_[\w-]{20,}$/);
    ISSUED_SECRETS.add(secret);
    await secretDialog.getByText('it will not be shown again').waitFor();
    await secretDialog.getByRole('button', { name: 'Copy secret' }).click();
    expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe(secret);
    await shoot(page, 'destination-secret');
    await secretDialog.getByRole('button', { name: 'I have copied it' }).click();
    await destinations.getByLabel('Type').selectOption('slack');
    await destinations.getByLabel('Name (optional)').fill('team channel');
    await destinations.getByLabel('URL', { exact: true }).fill('https://hooks.slack.com/services/T0000/B0000/console-test');
    await destinations.getByRole('button', { name: 'Add destination' }).click();
    await expect.poll(() => destinations.locator('tbody tr').count()).toBe(2);
    // Once the dialog is closed, the secret is nowhere: not in the list, nor after a reload.
    await page.reload();
    await expect.poll(() => destinations.locator('tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/^Webhook\s+on-call\s+http:\/\/127\.0\.0\.1:\d+\/loglane\s/), expect.stringMatching(/^Slack\s+team channel\s+https:\/\/hooks\.slack\.com\//)]);
    expect(await page.content()).not.toContain(secret);
    await destinations.scrollIntoViewIfNeeded();
    await shoot(page, 'destinations');
    await destinations.getByRole('button', { name: 'Delete destination team channel' }).click();
    await page.getByRole('dialog', { name: 'Delete this destination?' }).getByRole('button', { name: 'Delete destination' }).click();
    await expect.poll(() => destinations.locator('tbody tr').count()).toBe(1);
    const listedDestinations = (await server.request('GET', `/v1/projects/${projectId}/destinations`, { token })).body.data;
    expect(listedDestinations.map((d) => [d.type, d.name, 'secret' in d])).toEqual([['webhook', 'on-call', false]]);

    // A rule on the webhook channel with a short window (the form's comparison and channel choices).
    await page.goto(`/projects/${projectId}/alerts`);
    await page.getByRole('button', { name: 'New alert' }).click();
    const form = page.getByRole('dialog', { name: 'New alert rule' });
    await form.getByLabel('Name', { exact: true }).fill('Checkout errors');
    await form.getByLabel('Threshold').fill('1');
    await form.getByLabel('Within').fill('10');
    await form.getByLabel('Window unit').selectOption('s');
    await form.getByLabel('Source (optional)').fill('checkout');
    expect(await form.getByRole('radio', { name: 'At least 1 log' }).isChecked()).toBe(true);
    await form.getByRole('radio', { name: 'Fewer than 1 log — fires when logs stop' }).check();
    await form.getByText('A silence alert.').waitFor();
    await form.getByRole('radio', { name: 'At least 1 log' }).check();
    await form.getByLabel('Email').uncheck();
    await form.getByLabel('Webhook').check();
    await form.getByRole('button', { name: 'Create alert' }).click();
    const checkoutRow = page.locator('.alerts-table tbody tr', { hasText: 'Checkout errors' });
    const billingRow = page.locator('.alerts-table tbody tr', { hasText: 'Billing errors' });
    const badge = (row: typeof checkoutRow) => row.locator('.rule-state .state').first().innerText();
    await expect.poll(() => badge(checkoutRow)).toBe('OK');
    expect(await checkoutRow.innerText()).toContain('1 error log from checkout within 10 seconds');
    expect(await badge(billingRow)).toBe('Firing');
    const rules = (await server.request('GET', `/v1/alerts?projectId=${projectId}`, { token })).body.data;
    const checkout = rules.find((r) => r.name === 'Checkout errors')!;
    const billing = rules.find((r) => r.name === 'Billing errors')!;
    expect([checkout.channels, checkout.condition.comparison]).toEqual([['webhook'], 'above']);

    // Send test: the outcome per channel on the page, and an alert.test at the receiver.
    await checkoutRow.getByRole('button', { name: 'Send test for Checkout errors' }).click();
    await expect.poll(() => page.locator('.test-outcome').innerText()).toContain('Webhook: sent');
    const tested = hooks.got.find((h) => h.body?.type === 'alert.test');
    expect(tested?.path).toBe('/loglane');
    expect(signedWith(secret, tested!)).toBe(true);
    await page.locator('.test-outcome').getByRole('button', { name: 'Dismiss' }).click();

    // Mute until a chosen time (the browser runs in UTC), unmute, then mute for an hour.
    const ruleOf = async (id: string) => (await server.request('GET', `/v1/alerts/${id}`, { token })).body;
    await billingRow.getByRole('button', { name: 'Mute Billing errors' }).click();
    await billingRow.getByRole('button', { name: 'Until a time…' }).click();
    const muteUntil = Math.floor(((await page.evaluate(() => Date.now())) + 2 * 86_400_000) / 60_000) * 60_000;
    await billingRow.getByLabel('Mute until').fill(new Date(muteUntil).toISOString().slice(0, 16));
    await shoot(page, 'alert-mute');
    await billingRow.getByRole('button', { name: 'Mute', exact: true }).click();
    await expect.poll(() => billingRow.locator('.state-muted').innerText().catch(() => '')).toMatch(/^Muted until \d+ \w+( \d{4})?, \d\d:\d\d$/);
    expect((await ruleOf(billing.id)).mutedUntil).toBe(new Date(muteUntil).toISOString());
    await billingRow.getByRole('button', { name: 'Mute Billing errors' }).click();
    await billingRow.getByRole('button', { name: 'Unmute' }).click();
    await expect.poll(() => billingRow.locator('.state-muted').count()).toBe(0);
    expect((await ruleOf(billing.id)).mutedUntil).toBeNull();
    await billingRow.getByRole('button', { name: 'Mute Billing errors' }).click();
    await billingRow.getByRole('button', { name: 'For 1 hour' }).click();
    await expect.poll(() => billingRow.locator('.state-muted').innerText().catch(() => '')).toMatch(/^Muted until (\d+ \w+, )?\d\d:\d\d$/);
    expect(Date.parse((await ruleOf(billing.id)).mutedUntil!)).toBeGreaterThan(Date.now());

    // An error log from checkout fires the rule: Firing on the page, alert.triggered at the receiver.
    await postLogs(server, apiKey, { level: 'error', source: 'checkout', message: 'checkout failed: card processor timeout' });
    const triggered = await until('alert.triggered webhook', () => hooks.got.find((h) => h.body?.type === 'alert.triggered'), 20_000);
    expect(triggered.body).toMatchObject({ type: 'alert.triggered', state: 'firing', matchedCount: 1, alert: { name: 'Checkout errors' } });
    expect(signedWith(secret, triggered)).toBe(true);
    await page.reload();
    await expect.poll(() => badge(checkoutRow)).toBe('Firing');
    expect(await checkoutRow.locator('.rule-state time').innerText()).toMatch(/^since /);

    // Quiet for a whole window: the server's clock moves on and the rules are evaluated (the first
    // evaluation starts the quiet window, the second ends it). OK on the page, alert.resolved sent.
    for (let i = 0; i < 2; i++) {
      server.clock.advance(11_000);
      await server.app.services.alerts.tick();
    }
    expect((await ruleOf(checkout.id)).state).toBe('ok');
    const resolved = await until('alert.resolved webhook', () => hooks.got.find((h) => h.body?.type === 'alert.resolved'), 20_000);
    expect(resolved.body).toMatchObject({ type: 'alert.resolved', state: 'ok', alert: { name: 'Checkout errors' } });
    expect(signedWith(secret, resolved)).toBe(true);
    await page.reload();
    await expect.poll(() => badge(checkoutRow)).toBe('OK');
    await expect.poll(() => billingRow.locator('.state-muted').count()).toBe(1);
    await shoot(page, 'alert-states');

    // The rule's history: a Resolved entry (no sample) above the Triggered one, both delivered.
    await checkoutRow.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'Checkout errors' }).waitFor();
    await until('resolved entry delivered', async () => {
      await refreshHistory();
      const kinds = await page.locator('.history-entry .history-head .state').allInnerTexts();
      const delivered = await page.locator('.history-entry .deliveries').allInnerTexts();
      return kinds.join() === 'Resolved,Triggered' && delivered.every((d) => d.includes('webhook: sent'));
    }, 20_000);
    expect(await page.locator('.rule-state .state').first().innerText()).toBe('OK');
    const [resolvedEntry, triggeredEntry] = [page.locator('.history-entry').nth(0), page.locator('.history-entry').nth(1)];
    expect(await resolvedEntry.locator('details').count()).toBe(0);
    await triggeredEntry.locator('summary').click();
    await expect.poll(() => triggeredEntry.locator('.sample').innerText()).toContain('card processor timeout');
    await shoot(page, 'alert-history-resolved');

    // Account: plan and usage.
    await page.getByRole('link', { name: 'Account' }).click();
    await expect.poll(() => page.getByTestId('account-email').innerText()).toBe(email);
    await expect.poll(() => page.getByTestId('plan').textContent()).toBe('free');
    await expect.poll(() => page.locator('.meter').first().innerText()).toContain('1 of 1');
    await shoot(page, 'account');
    // This machine has no route to a browser vendor's push service, so the subscription itself is
    // refused; the console must say so plainly (the server's push delivery is tested with a receiver).
    await page.getByRole('button', { name: 'Enable push in this browser' }).click();
    // Playwright's browser contexts are incognito, where Chromium itself prints that it has no Push API.
    expectedFailures.push('chromium: no Push API in incognito');
    const pushOutcome = await until('push outcome', async () => {
      const text = (await page.getByRole('region', { name: 'Push notifications' }).innerText().catch(() => '')) || (await page.locator('[aria-labelledby="push-heading"]').innerText());
      return /push service|are on in this browser/.test(text) ? text : undefined;
    }, 20_000);
    expect(pushOutcome).toMatch(/push service refused|Push notifications are on in this browser/);

    // Rotate the key: a warning first, then the old key stops working.
    await page.goto(`/projects/${projectId}/settings`);
    await page.getByRole('button', { name: 'Rotate key…' }).click();
    await page.getByText('the current key stops working immediately').waitFor();
    await shoot(page, 'rotate-key');
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
    const newKey = await until('new key shown', async () => {
      const shown = (await page.getByTestId('api-key').innerText()).trim();
      return shown.startsWith('llk_') && shown !== apiKey && !shown.includes('…') ? shown : undefined;
    });
    ISSUED_SECRETS.add(newKey);
    const old = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: '{"message":"old key"}' });
    expect(old.status).toBe(401);
    await postLogs(server, newKey, { message: 'new key works' });

    // Rename.
    await page.getByLabel('Name', { exact: true }).fill('Checkout API (prod)');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: /Checkout API \(prod\)/ }).waitFor();

    // Nothing secret in storage the page can read.
    const stored = await readableStorage(page);
    for (const secret of [apiKey, newKey, token, password, refresh!.value]) expect(stored).not.toContain(secret);
    expect(stored).not.toMatch(/eyJ[\w-]+\.[\w-]+/);

    // Sign out: back at sign in, the cookie is gone, and Back does not reopen the console.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await context.cookies()).find((c) => c.name === 'loglane_refresh')).toBeUndefined();
    await page.goBack();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    // Back in with the keyboard alone, then delete the project by typing its name.
    await page.getByLabel('Email').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    // Signed in again on the page that was open.
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`/projects/${projectId}/settings`);
    await page.getByRole('button', { name: 'Delete project…' }).click();
    const confirm = page.getByRole('dialog').getByRole('button', { name: 'Delete project' });
    await page.getByRole('dialog').getByLabel('Project name').fill('Checkout API');
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByRole('dialog').getByLabel('Project name').fill('Checkout API (prod)');
    await shoot(page, 'delete-project');
    await confirm.click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    expect((await server.request('GET', `/v1/projects/${projectId}`, { token })).status).toBe(404);
    await page.getByRole('button', { name: 'Sign out' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    // The browser saw no server error and printed no error but the provoked refusals.
    expect(serverErrors).toEqual([]);
    // Chromium prints one line per refused fetch; those must be exactly the refusals provoked above.
    const printed = printedErrors(consoleErrors, { 'Chrome currently does not support the Push API in incognito mode': 'chromium: no Push API in incognito' });
    // A query that does not parse refuses the search and the histogram at once, in either order.
    expect([...printed].sort()).toEqual([...expectedFailures].sort());
  }, 180_000);
});
