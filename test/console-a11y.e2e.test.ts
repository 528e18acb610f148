/**
 * Accessibility, the colour theme and first-log detection in a real browser (Debian's chromium
 * driven by playwright-core) against the real server on each engine.
 *
 * - axe-core's WCAG 2 A and AA rules find nothing on the project settings page, the log explorer,
 *   the alerts page and an alert's page, in the light theme and in the dark one.
 * - A keyboard walk: pressing Tab from the top of each of those pages reaches every control that
 *   can take the focus (the list of focusable controls compared with the ones reached).
 * - The top bar's theme picker: system, light and dark, kept in localStorage and applied before the
 *   console's script runs (web/public/theme-init.js, under the console's strict CSP).
 * - The settings page of a project without logs notices the first one and offers "Open logs".
 * - Sign-up says each problem once, in plain words, under its field.
 */
import { mkdir } from 'node:fs/promises';
import axe from 'axe-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createProject, signup, uniqueEmail, useServer, type Account } from './harness.js';
import { describeInChromium, launchChromium, openContext, postLogs, requireChromium, shoot, SHOTS, until } from './browser.js';

requireChromium('accessibility check');

type Theme = 'light' | 'dark';

/** One thing axe found: the rule, what it says, and the elements (CSS selectors). */
interface Finding {
  rule: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Runs axe-core's WCAG 2 A and AA rules on the page as it is now. */
async function axeFindings(page: Page): Promise<Finding[]> {
  // page.evaluate runs outside the page's CSP (script-src 'self'), which an injected tag would meet.
  await page.evaluate(axe.source);
  return page.evaluate(async () => {
    type Result = { violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> };
    const run = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<Result> } }).axe.run;
    const doc = (globalThis as unknown as { document: unknown }).document;
    const result = await run(doc, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ rule: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.map(String).join(' ')) }));
  });
}

/**
 * Presses Tab until the focus comes round again to the first control it reached, and returns the
 * controls that could take the focus but were never reached (their start tag). The focusable controls are
 * the visible, enabled ones with a tab index of 0 or more; radios count once per group (Tab enters
 * a group, arrows move in it). Also returns the controls that, once reached, drew no outline or
 * shadow to show they have the focus.
 */
async function unreachedByTab(page: Page): Promise<{ focusable: string[]; unreached: string[]; unmarked: string[] }> {
  const expected = await page.evaluate(() => {
    type El = {
      tagName: string;
      tabIndex: number;
      disabled?: boolean;
      type?: string;
      name?: string;
      outerHTML: string;
      checkVisibility(o?: unknown): boolean;
      closest(s: string): unknown;
      setAttribute(n: string, v: string): void;
    };
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<El> } }).document;
    const found: Array<{ key: string; html: string }> = [];
    const selector = 'a[href], button, input, select, textarea, summary, iframe, [tabindex], [contenteditable="true"]';
    let n = 0;
    for (const el of Array.from(doc.querySelectorAll(selector))) {
      if (el.disabled || el.tabIndex < 0 || el.closest('[inert]') || (el.tagName === 'INPUT' && el.type === 'hidden')) continue;
      if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: false })) continue;
      const key = el.tagName === 'INPUT' && el.type === 'radio' && el.name ? `radio:${el.name}` : `el:${n++}`;
      el.setAttribute('data-kbd', key);
      if (!found.some((f) => f.key === key)) found.push({ key, html: el.outerHTML.replace(/>[\s\S]*$/, '>').slice(0, 160) });
    }
    const active = (globalThis as unknown as { document: { activeElement: { blur?(): void } | null } }).document.activeElement;
    active?.blur?.();
    return found;
  });
  const reached = new Set<string>();
  const unmarked = new Set<string>();
  let first: string | undefined;
  let bodies = 0;
  for (let i = 0; i < expected.length * 2 + 30; i++) {
    await page.keyboard.press('Tab');
    const { key, shown, html } = await page.evaluate(() => {
      type El = { tagName: string; outerHTML: string; getAttribute(n: string): string | null };
      const g = globalThis as unknown as { document: { activeElement: El | null }; getComputedStyle(e: El): { outlineStyle: string; outlineWidth: string; boxShadow: string } };
      const el = g.document.activeElement;
      if (!el || el.tagName === 'BODY' || el.tagName === 'HTML') return { key: 'body', shown: true, html: '' };
      // A focus indicator: an outline or a shadow drawn while it has the focus.
      const style = g.getComputedStyle(el);
      const shown = (style.outlineStyle !== 'none' && style.outlineWidth !== '0px') || style.boxShadow !== 'none';
      return { key: el.getAttribute('data-kbd') ?? `new:${el.tagName}`, shown, html: el.outerHTML.replace(/>[\s\S]*$/, '>').slice(0, 160) };
    });
    if (!shown) unmarked.add(html);
    if (key === 'body') {
      // Past the last control the focus leaves the page once; the next Tab starts again at the top
      // (the walk may start in the middle, where the page last had the focus): go on round.
      if (++bodies > 2) break;
      continue;
    }
    if (key === first) break;
    first ??= key;
    reached.add(key);
  }
  return { focusable: expected.map((e) => e.html), unreached: expected.filter((e) => !reached.has(e.key)).map((e) => e.html), unmarked: [...unmarked] };
}

describeInChromium('console accessibility, theme and first log in chromium', (engine) => {
  const server = useServer(engine);
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let owner: Account;
  let project: { id: string; apiKey: string };
  let ruleId: string;

  beforeAll(async () => {
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
    owner = await signup(server);
    project = await createProject(server, owner, 'Accessible shop');
    const now = Date.now();
    const levels = ['info', 'warn', 'error', 'debug'];
    await postLogs(
      server,
      project.apiKey,
      Array.from({ length: 12 }, (_, i) => ({
        timestamp: new Date(now - (12 - i) * 30_000).toISOString(),
        level: levels[i % levels.length],
        source: i % 2 ? 'checkout' : 'api',
        message: `checkout step ${i} for order ${1000 + i}`,
        metadata: { reqId: `req-${i}`, res: { statusCode: i % 3 ? 200 : 503 }, durationMs: 10 * i },
      })),
    );
    const rule = await server.request('POST', '/v1/alerts', {
      token: owner.accessToken,
      body: { projectId: project.id, name: 'Checkout errors', condition: { level: 'error', threshold: 1, window: '5m' }, channels: ['email'] },
    });
    expect(rule.status, rule.text).toBe(201);
    ruleId = rule.body.id;
  });

  afterAll(async () => {
    await browser?.close();
  });

  async function newPage(theme?: Theme): Promise<Page> {
    const context = await openContext(browser, server);
    contexts.push(context);
    if (theme) await context.addInitScript((t) => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem('loglane-theme', t), theme);
    return context.newPage();
  }

  async function signIn(page: Page, account: Account): Promise<void> {
    await page.goto('/login');
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
  }

  /** The pages checked, each with what shows it has loaded. */
  const pages: Array<{ name: string; path: () => string; ready: (page: Page) => Promise<unknown> }> = [
    { name: 'settings', path: () => `/projects/${project.id}/settings`, ready: (p) => p.getByRole('heading', { name: 'API key' }).waitFor() },
    { name: 'explorer', path: () => `/projects/${project.id}/logs`, ready: (p) => p.getByText('checkout step 11 for order 1011').first().waitFor() },
    {
      name: 'explorer with a log opened',
      path: () => `/projects/${project.id}/logs`,
      ready: async (p) => {
        await p.getByText('checkout step 10 for order 1010').first().click();
        await p.locator('[aria-expanded="true"]').first().waitFor();
      },
    },
    { name: 'alerts', path: () => `/projects/${project.id}/alerts`, ready: (p) => p.getByText('Checkout errors').first().waitFor() },
    { name: 'alert detail', path: () => `/projects/${project.id}/alerts/${ruleId}`, ready: (p) => p.getByRole('heading', { name: /Checkout errors/ }).first().waitFor() },
    { name: 'projects', path: () => '/projects', ready: (p) => p.getByRole('link', { name: 'Accessible shop' }).waitFor() },
    { name: 'account', path: () => '/account', ready: (p) => p.getByRole('heading', { name: 'Usage' }).waitFor() },
  ];

  // Each engine's run checks the pages in one theme, the two runs between them in both: what the
  // pages show does not depend on the engine, and a theme's pass costs a sign-in and a render of
  // every page.
  const theme: Theme = engine === 'sqlite' ? 'light' : 'dark';

  for (const target of pages) {
    it(`axe-core finds no WCAG A/AA violation on the ${target.name} page in the ${theme} theme, and Tab reaches every control, each showing that it has the focus`, async () => {
      const page = await newPage(theme);
      await signIn(page, owner);
      await page.goto(target.path());
      await target.ready(page);
      expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { dataset: { theme?: string } } } }).document.documentElement.dataset.theme)).toBe(theme);
      // Settled: nothing still loading (spinners gone).
      await until('the page settled', async () => (await page.locator('.spinner').count()) === 0 || target.name === 'settings');
      const found = (await axeFindings(page)).map((f) => `[${theme}] ${f.rule} (${f.impact}): ${f.help} at ${f.targets.join(', ')}`);
      expect(found, `axe-core's findings on the ${target.name} page`).toEqual([]);
      // The same page, walked with Tab from the top.
      const walk = await unreachedByTab(page);
      // The walk saw the page's controls: the skip link, the top bar's and the project's tabs at least.
      expect(walk.focusable.length).toBeGreaterThan(8);
      expect(walk.focusable.some((c) => c.includes('skip-link'))).toBe(true);
      expect(walk.unreached, `controls of the ${target.name} page that Tab never reached`).toEqual([]);
      expect(walk.unmarked, `controls of the ${target.name} page that show no focus indicator when Tab reaches them`).toEqual([]);
      await page.context().close();
    }, 120_000);
  }

  it(`a project over the plan: the note names the operator command, and axe finds nothing in the ${theme} theme`, async () => {
    const page = await newPage(theme);
    await signIn(page, owner);
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Project name').fill('One too many');
    await page.getByRole('button', { name: 'Create project' }).click();
    const note = page.locator('.plan-limit');
    await expect.poll(() => note.innerText().catch(() => '')).toMatch(/Plan limit reached/);
    // The free plan's owner is the signed-in person: the command carries their email.
    expect(await note.innerText()).toContain(`its operator can raise your plan with loglane users set-plan ${owner.email} <plan>`);
    expect(await note.getByRole('link', { name: 'Compare plans' }).getAttribute('href')).toBe('/account');
    expect(await axeFindings(page)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("the account page's new password: the server's refusal in plain words, under the field, once", async () => {
    const page = await newPage();
    await signIn(page, owner);
    await page.goto('/account');
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill(owner.password);
    await form.getByLabel('New password').fill('short');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => form.locator('.field-error').allInnerTexts()).toEqual(['Use at least 8 characters.']);
    expect(await form.locator('.error-note').count()).toBe(0);
    expect((await form.innerText()).split('8 characters').length - 1).toBe(1);
    await page.context().close();
  }, 120_000);

  it('the checks can fail: axe reports an unnamed image, the Tab walk a keyboard trap and a control without a focus ring', async () => {
    const page = await newPage();
    await signIn(page, owner);
    await page.goto(`/projects/${project.id}/settings`);
    await page.getByRole('heading', { name: 'API key' }).waitFor();
    await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { createElement(t: string): any; querySelector(s: string): any } }).document;
      const img = doc.createElement('img');
      img.src = '/favicon.svg';
      doc.querySelector('main').prepend(img);
      // A control that keeps the focus: Tab never gets past it.
      const trap = doc.createElement('button');
      trap.textContent = 'Trap';
      trap.addEventListener('keydown', (e: { key: string; preventDefault(): void }) => {
        if (e.key === 'Tab') e.preventDefault();
      });
      doc.querySelector('main').prepend(trap);
      // Before it, a control that hides that it has the focus.
      const hidden = doc.createElement('button');
      hidden.textContent = 'No ring';
      hidden.style.outline = 'none';
      doc.querySelector('main').prepend(hidden);
    });
    expect((await axeFindings(page)).map((f) => f.rule)).toContain('image-alt');
    const walk = await unreachedByTab(page);
    expect(walk.unreached.some((c) => c.includes('Rotate key') || c.includes('danger-outline'))).toBe(true);
    expect(walk.unreached.some((c) => c.includes('skip-link'))).toBe(false);
    expect(walk.unmarked).toEqual([expect.stringMatching(/^<button style="outline: none;"/)]);
    await page.context().close();
  }, 120_000);

  it('the settings page of a project without logs notices the first one and offers "Open logs"', async () => {
    // The free plan has room for one project: the project is another person's first.
    const quiet = await signup(server);
    const fresh = await createProject(server, quiet, 'Quiet service');
    const page = await newPage();
    await signIn(page, quiet);
    await page.goto(`/projects/${fresh.id}/settings`);
    const watch = page.getByTestId('first-log');
    await expect.poll(() => watch.innerText()).toMatch(/Waiting for the first log/);
    // The project's sections are one click away, this one marked as the current page.
    const tabs = page.getByRole('navigation', { name: 'Project sections' });
    expect(await tabs.getByRole('link').allInnerTexts()).toEqual(['Logs', 'Alerts', 'Settings']);
    expect(await tabs.getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).toBe('page');
    expect(await watch.getByRole('link', { name: 'Open logs' }).count()).toBe(0);

    await postLogs(server, fresh.apiKey, [{ level: 'info', message: 'hello from the quiet service', source: 'quiet' }]);
    await until('the first log noticed', async () => /The first log has arrived/.test(await watch.innerText()), 20_000);
    expect(await watch.getByRole('status').innerText()).toMatch(/holds 1 log now/);
    await shoot(page, 'first-log');
    // The same page in the dark theme.
    await page.getByLabel('Theme').selectOption('dark');
    await shoot(page, 'settings-dark');
    await watch.getByRole('link', { name: 'Open logs' }).click();
    await until('the explorer opened', () => new URL(page.url()).pathname === `/projects/${fresh.id}/logs`);
    await page.getByText('hello from the quiet service').first().waitFor();
    await page.context().close();
  }, 120_000);

  it('the theme picker: system by default, light and dark kept and applied before the console script runs', async () => {
    const page = await newPage();
    const themeAttr = () => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { getAttribute(n: string): string | null } } }).document.documentElement.getAttribute('data-theme'));
    const background = () =>
      page.evaluate(() => {
        const g = globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string }; document: { documentElement: unknown } };
        return g.getComputedStyle(g.document.documentElement).backgroundColor;
      });
    const stored = () => page.evaluate(() => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem('loglane-theme'));
    const LIGHT_BG = 'rgb(246, 247, 249)';
    const DARK_BG = 'rgb(15, 18, 22)';

    await page.emulateMedia({ colorScheme: 'dark' });
    await signIn(page, owner);
    const picker = page.getByLabel('Theme');
    // System: no attribute, the system's dark scheme.
    expect(await picker.inputValue()).toBe('system');
    expect(await themeAttr()).toBeNull();
    expect(await background()).toBe(DARK_BG);
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await background()).toBe(LIGHT_BG);

    // Dark chosen on a light system, then light on a dark one.
    await picker.selectOption('dark');
    expect(await themeAttr()).toBe('dark');
    expect(await stored()).toBe('dark');
    expect(await background()).toBe(DARK_BG);
    await page.emulateMedia({ colorScheme: 'dark' });
    await picker.selectOption('light');
    expect(await themeAttr()).toBe('light');
    expect(await stored()).toBe('light');
    expect(await background()).toBe(LIGHT_BG);

    // Kept across a reload, and in force before the console's script has run: the script is held
    // back until the page has been looked at.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/assets\/index-[^/]+\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    const reloaded = page.reload();
    await until('the page parsed without its script', () =>
      page.evaluate(() => (globalThis as unknown as { document: { readyState: string; getElementById(id: string): unknown } }).document.getElementById('root') !== null).catch(() => false),
    );
    expect(await themeAttr()).toBe('light');
    expect(await page.locator('#root').innerHTML()).toBe('');
    expect(await background()).toBe(LIGHT_BG);
    release();
    await reloaded;
    await page.unroute(/\/assets\/index-[^/]+\.js$/);
    await page.getByLabel('Theme').waitFor();
    expect(await page.getByLabel('Theme').inputValue()).toBe('light');

    // A choice made in another tab of the same browser reaches this one.
    const other = await page.context().newPage();
    await other.goto('/account');
    await other.getByLabel('Theme').selectOption('dark');
    await until('the other tab\'s choice applied here', async () => (await themeAttr()) === 'dark');
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark');
    await other.close();

    // Back to system: the entry and the attribute go, and the system's scheme applies again.
    await page.getByLabel('Theme').selectOption('system');
    expect(await themeAttr()).toBeNull();
    expect(await stored()).toBeNull();
    expect(await background()).toBe(DARK_BG);
    await page.context().close();
  }, 120_000);

  it('sign-up says each problem once, in plain words, under its field', async () => {
    const page = await newPage();
    const signups: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/auth/signup') signups.push(r.method());
    });
    await page.goto('/signup');
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    const form = page.locator('form');
    const html = page.locator('html');
    const email = page.getByLabel('Email');
    const password = page.getByLabel('Password');
    const submit = page.getByRole('button', { name: 'Create account' });
    const fieldErrors = () => form.locator('.field-error').allInnerTexts();
    /** How often `text` appears in the form's visible text. */
    const times = async (text: string) => (await form.innerText()).split(text).length - 1;

    // Nothing typed: one message under each field, none elsewhere, the focus on the first.
    await submit.click();
    await expect.poll(fieldErrors).toEqual(['Enter your email address.', 'Choose a password of at least 8 characters.']);
    expect(await form.locator('.error-note').count()).toBe(0);
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await email.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
    // Each message is what its field is described by.
    const describedBy = (await email.getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${describedBy}"]`).innerText()).toBe('Enter your email address.');

    // A half address and a short password: said once each, and the password hint makes way.
    await email.fill('nope');
    await password.fill('short');
    await submit.click();
    await expect.poll(fieldErrors).toEqual(['Enter a full email address, such as name@example.com.', 'Use at least 8 characters (this one has 5).']);
    expect(await times('8 characters')).toBe(1);
    // The form with its problems shown passes axe in both themes (set as the theme picker would).
    for (const theme of ['light', 'dark']) {
      await html.evaluate((el, t) => (el as unknown as { setAttribute(n: string, v: string): void }).setAttribute('data-theme', t), theme);
      expect(await axeFindings(page), `the sign-up form with its problems, ${theme}`).toEqual([]);
    }
    // Typing in a field clears its message only.
    await email.fill('new@example.com');
    await expect.poll(fieldErrors).toEqual(['Use at least 8 characters (this one has 5).']);
    expect(signups).toEqual([]);

    // The server's refusals, in the same words and the same place: an address it does not accept,
    // then one that has an account already.
    await email.fill('someone@example.123');
    await password.fill('long enough password');
    await submit.click();
    await expect.poll(fieldErrors).toEqual(['Enter a full email address, such as name@example.com.']);
    expect(await form.locator('.error-note').count()).toBe(0);
    await email.fill(owner.email);
    await submit.click();
    await expect.poll(fieldErrors).toEqual(['An account with this email already exists. Sign in instead, or use another address.']);
    expect(await form.locator('.error-note').count()).toBe(0);
    expect(signups).toEqual(['POST', 'POST']);

    // A good pair signs up.
    await email.fill(uniqueEmail('a11y'));
    await submit.click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    await page.context().close();
  }, 120_000);
});
