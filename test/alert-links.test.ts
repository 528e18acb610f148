/**
 * "View matching logs" (issue 29): a firing's link to the explorer with the rule's whole condition
 * as one query and the window it counted. The link is built in one place on the server
 * (src/features/alerts/links.ts) and goes out in the alert email (real SMTP sink), the webhook
 * body and the Slack message (a real HTTP receiver) and the history API; the search API, asked
 * with the link's from, to and query, answers exactly the logs the rule counted. The console words
 * the same link for its history entries (web/src/lib/alerts.ts): both are compared here, and in
 * chromium the alert form checks its query as you type, opens prefilled from a search, and the
 * rule's page links each entry and sample line to the explorer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { conditionQuery, exactRegex, firingWindow, logsUrl, slashEscaped } from '../src/features/alerts/links.js';
import { compileRe2 } from '../src/features/logs/pattern.js';
import { parseQuery } from '../src/features/logs/query/index.js';
import type { Browser, Page } from 'playwright-core';
import { captureErrors, describeInChromium, launchChromium, openContext, printedErrors, requireChromium, until } from './browser.js';
import { createProject, describeEngines, errorOf, ingest, useAccount, useServer, waitFor, type StoredLog } from './harness.js';
import { startSmtpSink } from './sinks.js';
import { mimeParts } from './teams-helpers.js';

const PUBLIC_URL = 'https://logs.example.com';

type ConsoleCondition = { level: string; source?: string; pattern?: string; query?: string };
/** The console's helpers (web/src/lib/alerts.ts, compiled with the console's own settings, so imported by a path the server's typecheck leaves alone). */
const WEB_ALERTS = '../web/src/lib/alerts.ts';
const consoleAlerts = (await import(WEB_ALERTS)) as {
  conditionQuery(c: ConsoleCondition): string;
  matchingLogsPath(projectId: string, c: ConsoleCondition, triggeredAt: string, window: string): string | undefined;
};

it('words a condition as one query that parses, with the source exact and the pattern unchanged in meaning', () => {
  expect(conditionQuery({ level: 4 })).toBe('level:error');
  expect(conditionQuery({ level: 'warn', source: 'api', pattern: 'time(d )?out', query: '@res.statusCode:>=500' })).toBe('level:warn source:/^api$/ /time(d )?out/ @res.statusCode:>=500');
  // AND binds tighter than OR: a query with an OR keeps its parentheses.
  expect(conditionQuery({ level: 'error', query: '@a:1 OR @b:2' })).toBe('level:error (@a:1 OR @b:2)');
  const odd = { level: 'fatal', source: 'api.v1 (eu)/[x]|y$', pattern: 'GET /v1/orders|a\\/b|[/]', query: '-@req.url:"/healthz" (x OR y)' };
  const text = conditionQuery(odd);
  expect(() => parseQuery(text)).not.toThrow();

  // The source regex matches the source itself and nothing else, case included.
  const source = compileRe2(exactRegex(odd.source));
  expect(source.test(odd.source)).toBe(true);
  for (const other of ['API.V1 (EU)/[X]|Y$', `${odd.source}x`, `x${odd.source}`, 'api.v1 (eu)/[x]']) expect(source.test(other), other).toBe(false);
  // The pattern, as the query's /…/ holds it, matches what the rule's pattern matches.
  const leaf = parseQuery(`/${slashEscaped(odd.pattern)}/`).regexes[0]!;
  const rulePattern = compileRe2(odd.pattern);
  for (const message of ['GET /v1/orders', 'GET v1orders', 'a/b', 'a\\/b', 'ab', '/', 'nothing']) expect(leaf.pattern.test(message), message).toBe(rulePattern.test(message));

  // The window: the firing time minus the window, down to the counting step (5 s for 5 minutes).
  expect(firingWindow(Date.parse('2026-11-28T12:00:03.500Z'), 300_000)).toEqual({ from: Date.parse('2026-11-28T11:55:00.000Z'), to: Date.parse('2026-11-28T12:00:03.500Z') });
  expect(logsUrl(`${PUBLIC_URL}/`, 'proj_1', { level: 'error' }, Date.parse('2026-11-28T12:00:00.000Z'), 60_000)).toBe(
    `${PUBLIC_URL}/projects/proj_1/logs?from=2026-11-28T11%3A59%3A00.000Z&to=2026-11-28T12%3A00%3A00.000Z&query=level%3Aerror`,
  );
});

it("the console's link for a history entry is the server's, path and parameters alike", () => {
  const conditions = [
    { level: 'error' as const },
    { level: 'info' as const, source: 'nightly-backup' },
    { level: 'warn' as const, source: 'a.b (c)/d', pattern: 'x/y|\\/z', query: '@s:>=500 OR timeout' },
    { level: 'debug' as const, query: '  -@req.url:"/healthz" @ms:[100 TO *]  ' },
  ];
  for (const c of conditions) {
    expect(consoleAlerts.conditionQuery(c)).toBe(conditionQuery(c));
    for (const [at, window, ms] of [['2026-11-28T12:00:03.517Z', '5m', 300_000], ['2026-11-28T00:00:00.000Z', '7d', 7 * 86_400_000], ['2026-11-28T09:41:15.123Z', '10s', 10_000]] as const) {
      const server = new URL(logsUrl(PUBLIC_URL, 'proj_1', c, Date.parse(at), ms));
      expect(consoleAlerts.matchingLogsPath('proj_1', c, at, window)).toBe(server.pathname + server.search);
    }
  }
});

interface Received {
  path: string;
  body: string;
}

async function startReceiver() {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { got, origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;` back to their characters (HTML and Slack's mrkdwn). */
const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

describeEngines('alert links: View matching logs', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    smtp = await startSmtpSink();
    receiver = await startReceiver();
  });
  // Declared before the server: afterAll hooks run in reverse, so the peers close after it.
  afterAll(async () => {
    await smtp?.close();
    await receiver?.close();
  });
  const s = useServer(engine, () => ({ env: { SMTP_URL: smtp.url, PUBLIC_URL, WEBHOOK_ALLOWED_ORIGINS: receiver.origin, DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2' } }));
  const a = useAccount(s, { plan: 'enterprise' });

  it('a firing of a rule with a query links its email, webhook, Slack message and history entry to exactly the logs it counted', async () => {
    const p = await createProject(s, a, 'Shop');
    for (const [type, path] of [['webhook', '/hook'], ['slack', '/slack']]) {
      const res = await s.request('POST', `/v1/projects/${p.id}/destinations`, { token: a.accessToken, body: { type, url: `${receiver.origin}${path}` } });
      expect(res.status, res.text).toBe(201);
    }
    // Level, an exact source, a pattern with a `/`, and a query with an OR at its top: each must
    // come through the link with its meaning.
    const condition = { level: 'error', threshold: 3, window: '5m', source: 'api', pattern: 'time(d )?out|refused|/v1/pay', query: '@res.statusCode:>=500 OR @fatal:true' };
    const created = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'API failures', condition, channels: ['email', 'webhook', 'slack'], cooldown: '1h' } });
    expect(created.status, created.text).toBe(201);
    const rule = created.body;
    expect(rule.condition.query).toBe(condition.query);

    const now = s.clock.now();
    const at = (secondsAgo: number) => new Date(now - secondsAgo * 1000).toISOString();
    const counted = [
      { level: 'error', source: 'api', message: 'db timeout', timestamp: at(50), metadata: { res: { statusCode: 503 } } },
      { level: 'error', source: 'api', message: 'POST /v1/pay failed', timestamp: at(40), metadata: { res: { statusCode: 502 } } },
      { level: 'error', source: 'api', message: 'upstream timed out', timestamp: at(30), metadata: { fatal: true } },
    ];
    const notCounted = [
      { level: 'warn', source: 'api', message: 'db timeout', timestamp: at(45), metadata: { res: { statusCode: 503 } } },
      // The rule's source is exact: `API` is another source (`source:api` would take it).
      { level: 'error', source: 'API', message: 'db timeout', timestamp: at(44), metadata: { res: { statusCode: 503 } } },
      { level: 'error', source: 'worker', message: 'db timeout', timestamp: at(43), metadata: { res: { statusCode: 503 } } },
      { level: 'error', source: 'api', message: 'all good', timestamp: at(42), metadata: { res: { statusCode: 503 } } },
      { level: 'error', source: 'api', message: 'db timeout', timestamp: at(41), metadata: { res: { statusCode: 404 } } },
      // Matches the query's second half only: without parentheses around the query it would be selected.
      { level: 'info', source: 'batch', message: 'nightly', timestamp: at(39), metadata: { fatal: true } },
      // Outside the window.
      { level: 'error', source: 'api', message: 'db timeout long ago', timestamp: at(600), metadata: { res: { statusCode: 503 } } },
    ];
    expect((await ingest(s, p.apiKey, [...notCounted, ...counted])).status).toBe(202);
    await s.app.services.alertsCaughtUp();
    const [entry] = await waitFor(async () => {
      const h = (await s.request('GET', `/v1/alerts/${rule.id}/history`, { token: a.accessToken })).body.data;
      return h.length === 1 && h[0]!.deliveries.every((d) => d.status !== 'pending') ? h : undefined;
    }, 10_000, 'the firing and its deliveries');
    expect(entry!.matchedCount).toBe(3);
    expect(entry!.deliveries).toEqual([
      { channel: 'email', status: 'sent' },
      { channel: 'slack', status: 'sent' },
      { channel: 'webhook', status: 'sent' },
    ]);

    // The history API's link.
    const link = (entry as { links: { logs: string } }).links.logs;
    const url = new URL(link);
    expect(url.origin + url.pathname).toBe(`${PUBLIC_URL}/projects/${p.id}/logs`);
    expect(url.searchParams.get('query')).toBe('level:error source:/^api$/ /time(d )?out|refused|\\/v1\\/pay/ (@res.statusCode:>=500 OR @fatal:true)');
    const triggeredAt = Date.parse(entry!.triggeredAt);
    expect(url.searchParams.get('to')).toBe(entry!.triggeredAt);
    expect(Date.parse(url.searchParams.get('from')!)).toBe(Math.floor((triggeredAt - 300_000) / 5000) * 5000);
    // The console's history entry links to the same place.
    expect(consoleAlerts.matchingLogsPath(p.id, rule.condition, entry!.triggeredAt, entry!.window)).toBe(url.pathname + url.search);

    // The email: its text and HTML parts carry the same link.
    const mail = await waitFor(() => smtp.mails.find((m) => m.to.includes(a.email) && m.subject.includes('API failures fired')), 5000, 'the alert mail');
    const parts = mimeParts(mail.raw);
    const text = parts.find((x) => x.contentType === 'text/plain')!.text;
    const html = parts.find((x) => x.contentType === 'text/html')!.text;
    expect(/^View matching logs: (\S+)$/m.exec(text)?.[1]).toBe(link);
    expect(unescape(/<a href="([^"]+)">View matching logs<\/a>/.exec(html)?.[1] ?? '')).toBe(link);
    expect(text).not.toContain('See the logs');

    // The webhook body: links.logs (and links.alert, the rule's page).
    const hook = receiver.got.find((r) => r.path === '/hook');
    const body = JSON.parse(hook!.body);
    expect(body.links).toEqual({ alert: `${PUBLIC_URL}/alerts/${rule.id}`, logs: link });
    expect(body.alert.condition.query).toBe(condition.query);

    // Slack: a link at the end of the text, and a button.
    const slack = JSON.parse(receiver.got.find((r) => r.path === '/slack')!.body);
    expect(slack.text).toContain('selected by `@res.statusCode:&gt;=500 OR @fatal:true`');
    expect(unescape(/<([^|>]+)\|View matching logs>$/.exec(slack.text)?.[1] ?? '')).toBe(link);
    const buttons = slack.blocks.find((b: { type: string }) => b.type === 'actions').elements;
    expect(buttons.find((b: { text: { text: string } }) => b.text.text === 'View matching logs').url).toBe(link);

    // The link's from, to and query select exactly the logs the rule counted.
    const search = new URLSearchParams({ from: url.searchParams.get('from')!, to: url.searchParams.get('to')!, query: url.searchParams.get('query')!, limit: '1000' });
    const found = await s.request('GET', `/v1/projects/${p.id}/logs?${search}`, { token: a.accessToken });
    expect(found.status, found.text).toBe(200);
    const logs = found.body.data as StoredLog[];
    expect(logs.map((l) => l.message).sort()).toEqual(counted.map((l) => l.message).sort());
    expect(logs).toHaveLength(entry!.matchedCount);
    expect(entry!.sample.map((l) => l.id).sort()).toEqual(logs.map((l) => l.id).sort());
  });

  it('a form that sends a query the language refuses gets a 400 naming its column at /condition/query', async () => {
    const p = await createProject(s, a, 'Bad query');
    const res = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'x', condition: { level: 'error', threshold: 1, window: '1m', query: '@status:' }, channels: ['email'] } });
    expect(res.status).toBe(400);
    expect(errorOf(res).details).toEqual([{ path: '/condition/query', message: "at column 9: expected a value after ':'" }]);
    // The console shows it under the field with its column (the same reader as the search's 400).
    const search = await s.request('GET', `/v1/projects/${p.id}/logs?${new URLSearchParams({ query: '@status:', from: new Date().toISOString(), to: new Date().toISOString(), limit: '1' })}`, { token: a.accessToken });
    expect(search.status).toBe(400);
    expect(errorOf(search).details).toEqual([{ path: 'querystring:/query', message: "at column 9: expected a value after ':'" }]);
  });
});

requireChromium('alert console');

describeInChromium('alert console: the query field, a form from a search, and the links of the history', (engine) => {
  // LOGLANE_CONSOLE_DIR: a console built elsewhere (vite build --outDir) while dist/web is someone else's.
  const s = useServer(engine, { consoleDir: process.env.LOGLANE_CONSOLE_DIR });
  const a = useAccount(s, { plan: 'enterprise' });
  let browser: Browser;
  const consoleErrors: string[] = [];
  const serverErrors: string[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function signedIn(): Promise<Page> {
    const page = await (await openContext(browser, s)).newPage();
    captureErrors(page, consoleErrors, serverErrors);
    await page.goto('/login');
    await page.getByLabel('Email').fill(a.email);
    await page.getByLabel('Password').fill(a.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    return page;
  }

  it('a search opens the create form prefilled; the query is checked as you type and on saving, and shown in the list', async () => {
    const p = await createProject(s, a, 'Form');
    const page = await signedIn();
    // What the explorer's "Create alert from this search" opens: two levels, a query with a mistake at column 9.
    await page.goto(`/projects/${p.id}/alerts?${new URLSearchParams({ create: '1', query: '@status:', level: 'warn,error' })}`);
    const form = page.getByRole('dialog', { name: 'New alert rule' });
    const query = form.getByLabel('Query (optional)');
    expect(await query.inputValue()).toBe('@status:');
    // A rule counts one level: the most severe of the two, and the form says why.
    expect(await form.getByLabel('Level').inputValue()).toBe('error');
    await form.getByText('The search had warn, error; a rule counts one level, the most severe here.').waitFor();
    // Checked as you type: the search language's message and a caret under column 9.
    await form.getByText("at column 9: expected a value after ':'").waitFor();
    expect(await form.locator('.query-echo').innerText()).toBe('@status: \n        ^');
    expect(await query.getAttribute('aria-invalid')).toBe('true');
    await query.fill('@status:>=500');
    await until('the message gone once the query parses', async () => (await form.locator('.query-error').count()) === 0);
    await form.getByLabel('Name').fill('Server errors');
    // Saved before the check has run: the server's 400 at /condition/query is shown at the field.
    await query.fill('@status:[500 TO');
    await form.getByRole('button', { name: 'Create alert' }).click();
    await until('the save refused at the query', async () => (await form.locator('.query-error').innerText().catch(() => '')).includes("at column 16: expected a bound after 'TO'"));
    await query.fill('@status:>=500 -@path:"/healthz"');
    await form.getByRole('button', { name: 'Create alert' }).click();
    await page.getByText('Alert Server errors saved.').waitFor();
    // The form left the address, so a reload does not open it again.
    expect(new URL(page.url()).search).toBe('');
    const row = page.locator('.alerts-table tbody tr', { hasText: 'Server errors' });
    expect(await row.locator('.rule-query code').innerText()).toBe('@status:>=500 -@path:"/healthz"');
    const rules = (await s.request('GET', `/v1/alerts?projectId=${p.id}`, { token: a.accessToken })).body.data;
    expect(rules.map((r) => r.condition)).toEqual([{ level: 'error', threshold: 10, window: '5m', query: '@status:>=500 -@path:"/healthz"', comparison: 'above' }]);

    // Editing keeps the query, and clearing it removes it from the rule.
    await row.getByRole('button', { name: 'Edit Server errors' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit alert rule' });
    expect(await edit.getByLabel('Query (optional)').inputValue()).toBe('@status:>=500 -@path:"/healthz"');
    await edit.getByLabel('Query (optional)').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Alert Server errors saved.').first().waitFor();
    await until('the query gone from the rule', async () => (await s.request('GET', `/v1/alerts?projectId=${p.id}`, { token: a.accessToken })).body.data[0]!.condition.query === undefined);
    expect(printedErrors(consoleErrors).filter((e) => !/^400 \/v1\/(alerts|projects\/[^/]+\/logs)$/.test(e))).toEqual([]);
    expect(serverErrors).toEqual([]);
  });

  it("an alert's page shows its query and links each entry to its matching logs and each sample line to its log", async () => {
    const p = await createProject(s, a, 'Links');
    const condition = { level: 'error', threshold: 2, window: '5m', source: 'api', query: '@status:>=500 OR @fatal:true' };
    const rule = (await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'API failures', condition, channels: ['webhook'] } })).body;
    const now = s.clock.now();
    expect(
      (
        await ingest(s, p.apiKey, [
          { level: 'error', source: 'api', message: 'boom one', timestamp: new Date(now - 2000).toISOString(), metadata: { status: 503 } },
          { level: 'error', source: 'api', message: 'boom two', timestamp: new Date(now - 1000).toISOString(), metadata: { fatal: true } },
        ])
      ).status,
    ).toBe(202);
    await s.app.services.alertsCaughtUp();
    const [entry] = await waitFor(async () => {
      const h = (await s.request('GET', `/v1/alerts/${rule.id}/history`, { token: a.accessToken })).body.data;
      return h.length === 1 ? h : undefined;
    }, 10_000, 'the firing');
    const api = new URL(entry!.links.logs);

    const page = await signedIn();
    await page.goto(`/alerts/${rule.id}`);
    await page.getByRole('heading', { name: 'API failures' }).waitFor();
    expect(await page.locator('.details code.rule-query').innerText()).toBe(condition.query);
    const link = page.getByRole('link', { name: /^View matching logs/ });
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe(api.pathname + api.search);
    await page.locator('.history summary').click();
    const samples = page.locator('.sample a');
    expect(await samples.count()).toBe(2);
    for (const [i, log] of entry!.sample.entries()) {
      const href = new URL((await samples.nth(i).getAttribute('href'))!, s.url);
      expect(href.pathname).toBe(`/projects/${p.id}/logs`);
      expect(Object.fromEntries(href.searchParams)).toEqual({ log: log.id, ...Object.fromEntries(api.searchParams) });
    }
    await link.click();
    await page.waitForURL((u) => u.pathname === `/projects/${p.id}/logs`);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual(Object.fromEntries(api.searchParams));
    expect(serverErrors).toEqual([]);
  });
});
