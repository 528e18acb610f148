/**
 * What the browser tests share (test/console.e2e.test.ts, test/console-teams.e2e.test.ts): where
 * chromium and the built console are, the screenshot folder and widths, the suite wrapper that skips
 * where either is missing (and the test that fails instead where they are required), launching
 * chromium, a browser context on the test server, collecting each page's errors and reading them
 * back, the accessible-name check, screenshots at both widths, and a few steps both journeys take:
 * sending logs, reading the page's storage, creating the first project.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { describeEngines, ENGINES, ISSUED_SECRETS, PG_REQUIRED, waitFor, type TestServer } from './harness.js';

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The chromium the tests drive: Debian's, unless CHROMIUM_PATH names another. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the screenshots go (docs/screenshots, linked from the README and docs/console.md). */
export const SHOTS = path.join(ROOT, 'docs', 'screenshots');
/** Whether the console is built (dist/web, by npm run build). */
export const BUILT = existsSync(path.join(ROOT, 'dist', 'web', 'index.html'));
/** Whether the browser tests can run here: chromium installed and the console built. */
export const runnable = existsSync(CHROMIUM) && BUILT;
/** The two widths every screen is shot at; the first, the desktop one, is the width the tests run at. */
export const WIDTHS = [
  { name: 'desktop', width: 1280, height: 860 },
  { name: 'mobile', width: 390, height: 844 },
] as const;
/** The desktop viewport, the one pages open with and return to after a screenshot. */
export const DESKTOP = { width: WIDTHS[0].width, height: WIDTHS[0].height };

/**
 * Where a missing piece must fail rather than skip (CI installs chromium (.ci/run) and builds the
 * console (npm test); PG_REQUIRED says so), a test that chromium and the built console are there.
 * `journey` names the suite in the test's title: "the <journey> has what it needs (…)".
 */
export function requireChromium(journey: string): void {
  if (!PG_REQUIRED) return;
  it(`the ${journey} has what it needs (chromium installed, console built)`, () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
    expect(BUILT, 'dist/web is missing: run npm run build').toBe(true);
  });
}

/**
 * Whether this suite's screens are saved as images: on the first engine only. The pages look the
 * same on both, so the second run checks them (every control named, no page error) without resizing
 * and writing the images again.
 */
let savingScreens = true;
export const screenshotsHere = (): boolean => savingScreens;

/** A suite run on each engine (describeEngines) where the browser tests are runnable, else one skipped suite saying why. */
export const describeInChromium: (name: string, suite: Parameters<typeof describeEngines>[1]) => void = runnable
  ? (name, suite) =>
      describeEngines(name, (engine) => {
        beforeAll(() => {
          savingScreens = engine === ENGINES[0];
        });
        suite(engine);
      })
  : (name: string) => describe.skip(`${name} (skipped: needs ${CHROMIUM} and a built console; .ci/run installs chromium and npm test builds)`, () => {});

/**
 * Polls `fn` (every 100 ms: each look drives the page) until it returns something truthy, and returns
 * that; fails naming `what` after `ms`. The harness's waitFor, with any falsy value (an empty text,
 * a null match) counted as not yet.
 */
export function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  return waitFor(async () => (await fn()) || undefined, ms, what, 100);
}

/** Launches CHROMIUM headless with what a sandboxed test machine needs (no sandbox, GPU, QUIC or background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A new browser context (its own cookies) on `server`, at the desktop width, in English (en-GB) and UTC. */
export function openContext(browser: Browser, server: TestServer): Promise<BrowserContext> {
  return browser.newContext({ viewport: DESKTOP, baseURL: server.url, locale: 'en-GB', timezoneId: 'UTC' });
}

/**
 * Collects what goes wrong on `page`: the errors it prints to its console and uncaught page errors
 * into `consoleErrors`, and every answer with a status of 500 or more into `serverErrors`.
 */
export function captureErrors(page: Page, consoleErrors: string[], serverErrors: string[]): void {
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`${msg.text()} (${msg.location().url})`);
  });
  page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
  page.on('response', (res) => {
    if (res.status() >= 500) serverErrors.push(`${res.status()} ${res.url()}`);
  });
}

/**
 * The errors collected by captureErrors, with each of chromium's "Failed to load resource" lines
 * shortened to `<status> <path>`; a line that starts with one of `known`'s keys becomes its value.
 */
export function printedErrors(consoleErrors: string[], known: Record<string, string> = {}): string[] {
  return consoleErrors.map((e) => {
    const m = /^Failed to load resource: the server responded with a status of (\d+) .*\((http[^)]+)\)$/.exec(e);
    for (const [prefix, name] of Object.entries(known)) if (e.startsWith(prefix)) return name;
    return m ? `${m[1]} ${new URL(m[2]!).pathname}` : e;
  });
}

/** Every visible control on `page` has a name a screen reader can announce; `screen` names the page in the failure. */
export async function assertLabelled(page: Page, screen: string): Promise<void> {
  const unnamed = await page.evaluate(() => {
    type El = { getAttribute(n: string): string | null; textContent: string | null; outerHTML: string; labels?: ArrayLike<{ textContent: string | null }> | null; checkVisibility(): boolean };
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<El>; getElementById(id: string): El | null } }).document;
    const out: string[] = [];
    for (const el of Array.from(doc.querySelectorAll('input, select, textarea, button, a[href], [role="tab"], [role="switch"]'))) {
      if (!el.checkVisibility()) continue;
      const labelledBy = el.getAttribute('aria-labelledby');
      const name = [
        el.getAttribute('aria-label'),
        labelledBy ? doc.getElementById(labelledBy)?.textContent : '',
        Array.from(el.labels ?? []).map((l) => l.textContent).join(' '),
        el.textContent,
        el.getAttribute('title'),
      ].join('').trim();
      if (!name) out.push(el.outerHTML.slice(0, 120));
    }
    return out;
  });
  expect(unnamed, `controls without a name on ${screen}`).toEqual([]);
}

/**
 * Checks the screen with assertLabelled; on the suite's first engine, also saves it at both widths
 * as SHOTS/<name>-<width name>.png, then returns to the desktop width.
 */
export async function shoot(page: Page, name: string): Promise<void> {
  await assertLabelled(page, name);
  if (!savingScreens) return;
  for (const w of WIDTHS) {
    await page.setViewportSize({ width: w.width, height: w.height });
    // The page has taken the new width and painted at it (two animation frames after the resize).
    await page.waitForFunction((width) => (globalThis as unknown as { innerWidth: number }).innerWidth === width, w.width);
    await page.evaluate(() => {
      const frame = (globalThis as unknown as { requestAnimationFrame(cb: () => void): number }).requestAnimationFrame.bind(globalThis);
      return new Promise<void>((done) => frame(() => frame(() => done())));
    });
    // The phone screenshots take the page below the fold too, up to three screens (a page that
    // scrolls a long list, such as the explorer's, would otherwise make an image of thousands of rows).
    if (w.name === 'mobile') {
      const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${w.name}.png`), fullPage: true, clip: { x: 0, y: 0, width: w.width, height: Math.min(height, 3 * w.height) } });
    } else await page.screenshot({ path: path.join(SHOTS, `${name}-${w.name}.png`) });
  }
  await page.setViewportSize(DESKTOP);
}

/** Sends `logs` to `server` with the project's API key through POST /v1/logs, and expects them accepted (202). */
export async function postLogs(server: TestServer, apiKey: string, logs: unknown): Promise<void> {
  const res = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(logs) });
  expect(res.status).toBe(202);
}

/** What `page`'s scripts can read of its storage: localStorage and sessionStorage as one JSON text. */
export function readableStorage(page: Page): Promise<string> {
  return page.evaluate(() => {
    const g = globalThis as unknown as { localStorage: Record<string, string>; sessionStorage: Record<string, string> };
    return JSON.stringify({ local: { ...g.localStorage }, session: { ...g.sessionStorage } });
  });
}

/**
 * On the empty projects list, creates the first project named `name` through "Create your first
 * project", and returns the API key shown once it is created (checked to be a key, and added to
 * ISSUED_SECRETS) and the project's id from the page's address.
 */
export async function createFirstProject(page: Page, name: string): Promise<{ apiKey: string; projectId: string }> {
  await page.getByRole('button', { name: 'Create your first project' }).click();
  await page.getByLabel('Project name').fill(name);
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'API key' }).waitFor();
  const apiKey = (await page.getByTestId('api-key').innerText()).trim();
  expect(apiKey).toMatch(/^llk_/);
  ISSUED_SECRETS.add(apiKey);
  const projectId = new URL(page.url()).pathname.split('/')[2]!;
  return { apiKey, projectId };
}
