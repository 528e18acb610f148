/**
 * Teams and account care in a real browser (Debian's chromium driven by playwright-core) against
 * the real server on each engine, with the real SMTP sink reading the mails: two people in two
 * browser contexts. One invites the other by email; the second follows the mail's link, signs up on
 * the way, and watches the project's logs live; the first removes them and their view loses access
 * at once. Then one person's account care: sessions signed out one at a time, a changed password,
 * a forgotten one reset through the mailed link, and an account deleted by typing its email.
 */
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ISSUED_SECRETS, uniqueEmail, useServer } from './harness.js';
import { startSmtpSink, type Mail } from './sinks.js';
import { captureErrors, createFirstProject, describeInChromium, launchChromium, openContext, postLogs, printedErrors, readableStorage, requireChromium, shoot, SHOTS, until } from './browser.js';

/** The address the mails link to; the browser opens the same path and fragment on the test server. */
const PUBLIC_URL = 'http://console.loglane.test';

requireChromium('teams journey');

/** A mail's text as a reader sees it: quoted-printable and base64 parts decoded. */
function mailText(mail: Mail): string {
  const qp = mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  const b64 = [...mail.raw.matchAll(/Content-Transfer-Encoding: base64\r?\n(?:[^\r\n]+\r?\n)*\r?\n([A-Za-z0-9+/=\r\n]+)/gi)].map((m) => Buffer.from(m[1]!.replace(/\s/g, ''), 'base64').toString('utf8'));
  return [qp, ...b64].join('\n');
}

/** The link of the one mail to `to` whose subject is `subject`, once it has arrived (mails are sent after the answer). */
async function linkIn(mails: Mail[], to: string, subject: string, pagePath: string): Promise<URL> {
  const mail = await until(`the mail "${subject}" to ${to}`, () => mails.find((m) => m.to.includes(to) && m.subject === subject), 20_000);
  const escaped = PUBLIC_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${escaped}${pagePath}#token=[A-Za-z0-9_-]+`).exec(mailText(mail));
  expect(m, `a ${PUBLIC_URL}${pagePath}#token=… link in: ${mailText(mail).slice(0, 2000)}`).not.toBeNull();
  return new URL(m![0]);
}

describeInChromium('console teams and account care in chromium', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const consoleErrors: string[] = [];
  const serverErrors: string[] = [];
  /** Paths of non-2xx answers the journey provokes on purpose (the browser prints a line for each). */
  const expectedFailures = new Set<string>();

  // Hooks run in the order declared (and after-hooks in reverse): the mail sink is up before the
  // server that sends to it, and closes after it; the browser closes first.
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
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A person: their own browser context (own cookies), so two can be signed in at once. */
  async function person(): Promise<Page> {
    const context = await openContext(browser, server);
    contexts.push(context);
    const page = await context.newPage();
    captureErrors(page, consoleErrors, serverErrors);
    return page;
  }

  async function signUp(page: Page, email: string, password: string): Promise<void> {
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
  }

  /** An API login beside the browser's (another session), with the client name the sessions list shows. */
  async function apiLogin(email: string, password: string, userAgent: string): Promise<{ accessToken: string; refreshToken: string }> {
    const res = await server.request('POST', '/v1/auth/login', { body: { email, password }, headers: { 'user-agent': userAgent } });
    expect(res.status).toBe(200);
    const { accessToken, refreshToken } = res.body;
    if (typeof refreshToken !== 'string') throw new Error(`an API login answers with its refresh token in the body: ${res.text}`);
    ISSUED_SECRETS.add(accessToken);
    ISSUED_SECRETS.add(refreshToken);
    return { accessToken, refreshToken };
  }

  const refreshWith = (refreshToken: string) => server.request('POST', '/v1/auth/refresh', { body: { refreshToken } });

  const owner = { email: uniqueEmail('owner'), password: 'owner passphrase one' };
  const teammate = { email: uniqueEmail('teammate'), password: 'teammate passphrase' };
  ISSUED_SECRETS.add(owner.password);
  ISSUED_SECRETS.add(teammate.password);
  let a: Page;
  let b: Page;

  it('invites a teammate by email, who signs up from the link and tails the logs live until removed', async () => {
    a = await person();
    b = await person();

    // The owner signs up and creates a project.
    await a.goto('/signup');
    await signUp(a, owner.email, owner.password);
    const { apiKey, projectId } = await createFirstProject(a, 'Team logs');
    await postLogs(server, apiKey, { level: 'info', source: 'web', message: 'sent before the teammate joined' });

    // Members: the owner alone; invite the teammate as a member. The pending invitation is listed.
    const members = a.getByRole('region', { name: 'Members' });
    await expect.poll(() => members.locator('.members-table tbody tr').allInnerTexts()).toEqual([expect.stringMatching(new RegExp(`^${owner.email.replace(/\./g, '\\.')} \\(you\\)\\s+Owner`))]);
    await members.getByLabel('Email').fill(teammate.email);
    expect(await members.getByLabel('Role').inputValue()).toBe('member');
    await members.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => members.locator('.invitations-table tbody tr').allInnerTexts()).toEqual([expect.stringContaining(teammate.email)]);
    expect(await members.locator('.invitations-table tbody tr').innerText()).toContain('Member');
    await members.scrollIntoViewIfNeeded();
    await shoot(a, 'members-invited');

    // The teammate follows the mailed link while signed out: sign in is offered on the same address,
    // they switch to "Create an account", and once signed up the invitation is accepted.
    const invitation = await linkIn(smtp.mails, teammate.email, 'You are invited to Team logs on Loglane', '/invitations');
    ISSUED_SECRETS.add(invitation.hash.slice('#token='.length));
    await b.goto(invitation.pathname + invitation.hash);
    await b.getByRole('heading', { name: 'Sign in' }).waitFor();
    await b.getByText('You are invited to a project').waitFor();
    await shoot(b, 'invitation-sign-in');
    await b.getByRole('button', { name: 'Create an account' }).click();
    expect(new URL(b.url()).pathname).toBe('/invitations');
    await signUp(b, teammate.email, teammate.password);
    await b.getByRole('heading', { name: /^Team logs\s+logs$/ }).waitFor();
    expect(new URL(b.url()).pathname).toBe(`/projects/${projectId}/logs`);
    expect(new URL(b.url()).hash).toBe('');
    await b.getByText('You joined Team logs as Member.').waitFor();
    await expect.poll(() => b.locator('.log-message').allInnerTexts()).toEqual(['sent before the teammate joined']);

    // The member's role shows in the list, and what it may not do is disabled, saying which role it needs.
    await b.getByRole('link', { name: 'Projects' }).click();
    await expect.poll(() => b.getByTestId('role').innerText()).toMatch(/Member$/);
    await b.getByRole('link', { name: 'Settings & API key' }).click();
    await b.getByRole('heading', { name: 'API key' }).waitFor();
    const rotate = b.getByRole('button', { name: 'Rotate key…' });
    expect(await rotate.isDisabled()).toBe(true);
    expect(await rotate.getAttribute('title')).toMatch(/admin role/);
    expect(await b.getByRole('button', { name: 'Rename' }).getAttribute('title')).toMatch(/admin role/);
    const deleteProject = b.getByRole('button', { name: 'Delete project…' });
    expect(await deleteProject.isDisabled()).toBe(true);
    expect(await deleteProject.getAttribute('title')).toMatch(/owner role/);
    const destinations = b.getByRole('region', { name: 'Destinations' });
    expect(await destinations.getByRole('button', { name: 'Add destination' }).getAttribute('title')).toMatch(/admin role/);
    const bMembers = b.getByRole('region', { name: 'Members' });
    expect(await bMembers.getByRole('button', { name: 'Send invitation' }).isDisabled()).toBe(true);
    expect(await bMembers.getByRole('button', { name: `Remove ${owner.email}` }).isDisabled()).toBe(true);
    expect(await bMembers.getByRole('button', { name: 'Transfer ownership…' }).getAttribute('title')).toMatch(/owner role/);
    // Muting is the member's own: it holds over a reload.
    const mute = b.getByRole('switch', { name: 'Mute notifications from this project' });
    expect(await mute.isChecked()).toBe(false);
    await mute.check();
    await b.getByText('You will get no alert notifications from this project.').waitFor();
    await b.reload();
    await expect.poll(() => b.getByRole('switch', { name: 'Mute notifications from this project' }).isChecked()).toBe(true);
    await bMembers.scrollIntoViewIfNeeded();
    await shoot(b, 'member-settings');

    // The owner sees the teammate as a member, makes them an admin, and back (the list is read again each time).
    await a.reload();
    const teammateRole = members.getByLabel(`Role of ${teammate.email}`);
    await expect.poll(() => teammateRole.inputValue()).toBe('member');
    expect(await members.locator('.invitations-table').count()).toBe(0);
    await teammateRole.selectOption('admin');
    await a.getByText(`${teammate.email} is now an admin.`).waitFor();
    await a.reload();
    await expect.poll(() => teammateRole.inputValue()).toBe('admin');
    await teammateRole.selectOption('member');
    await a.getByText(`${teammate.email} is now a member.`).waitFor();

    // The teammate tails the logs live.
    await b.goto(`/projects/${projectId}/logs`);
    await expect.poll(() => b.locator('.log-message').allInnerTexts()).toEqual(['sent before the teammate joined']);
    const openTails = () => server.app.services.logs.openTails();
    const tailsBefore = openTails();
    await b.getByRole('button', { name: '▶ Live tail' }).click();
    await until('tail live', async () => (await b.locator('.tail-status').innerText()).startsWith('Live'));
    expect(openTails()).toBe(tailsBefore + 1);
    await postLogs(server, apiKey, { level: 'warn', source: 'web', message: 'seen live by the teammate' });
    await expect.poll(() => b.locator('.log-message').first().innerText()).toBe('seen live by the teammate');

    // The owner removes them: the open tail ends at once and the teammate's view says they lost access.
    // "At once" is checked by what happens, not by a clock: the teammate's page, never reloaded, is told by
    // its ending tail (within the wait's timeout), and the tail is closed on the server below.
    await members.getByRole('button', { name: `Remove ${teammate.email}` }).click();
    await a.getByRole('dialog', { name: 'Remove this member?' }).getByRole('button', { name: 'Remove member' }).click();
    await expect.poll(() => members.locator('.members-table tbody tr').count()).toBe(1);
    await b.getByText('You no longer have access to this project').waitFor({ timeout: 10_000 });
    expect(await b.locator('.log-message').count()).toBe(0);
    await until('the tail closed on the server', () => openTails() === tailsBefore, 5000);
    expectedFailures.add(`404 /v1/projects/${projectId}/logs/tail`);
    expectedFailures.add(`404 /v1/projects/${projectId}`);
    await shoot(b, 'access-lost');
    await postLogs(server, apiKey, { message: 'after the removal' });
    await b.getByRole('link', { name: 'Go to your projects' }).click();
    await b.getByRole('heading', { name: 'No projects yet' }).waitFor();
    // And the owner's projects list still shows their role.
    await a.getByRole('link', { name: 'Projects' }).click();
    await expect.poll(() => a.getByTestId('role').innerText()).toMatch(/Owner$/);
  }, 90_000);

  it('signs out another session, changes the password, resets a forgotten one by mail, and deletes an account', async () => {
    // Two more logins beside the browser's: the list shows three, the browser's marked.
    const cli = await apiLogin(owner.email, owner.password, 'curl/8.5.0');
    const script = await apiLogin(owner.email, owner.password, 'node');
    await a.getByRole('link', { name: 'Account' }).click();
    const sessions = a.getByRole('region', { name: 'Sessions' });
    await expect.poll(() => sessions.locator('tbody tr').count()).toBe(3);
    expect(await sessions.locator('tr.current').innerText()).toMatch(/Chrome on Linux \(this browser\)/);
    // "Sign this one out" on the curl login: it is gone from the list, and its refresh token is refused.
    await sessions.getByRole('button', { name: /^Sign this one out: curl,/ }).click();
    await expect.poll(() => sessions.locator('tbody tr').count()).toBe(2);
    expect((await refreshWith(cli.refreshToken)).status).toBe(401);
    await sessions.scrollIntoViewIfNeeded();
    await shoot(a, 'account-sessions');

    // Change the password: a wrong current one is said at its field; then the other login ends and this one stays.
    const passwordForm = a.getByRole('form', { name: 'Change password' });
    await passwordForm.getByLabel('Current password').fill('not the password');
    await passwordForm.getByLabel('New password').fill('owner passphrase two');
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    expectedFailures.add('401 /v1/auth/password');
    await passwordForm.getByText('This is not your current password.').waitFor();
    await passwordForm.getByLabel('Current password').fill(owner.password);
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    ISSUED_SECRETS.add('owner passphrase two');
    await a.getByText('Password changed. Your other sessions were signed out.').waitFor();
    await expect.poll(() => sessions.locator('tbody tr').count()).toBe(1);
    expect((await refreshWith(script.refreshToken)).status).toBe(401);
    await a.reload();
    await a.getByRole('region', { name: 'Sessions' }).waitFor();

    // Forgot the password: sign out, "Forgot your password?", the mail's link, a new password, sign in with it.
    await a.getByRole('button', { name: 'Sign out', exact: true }).click();
    await a.getByRole('heading', { name: 'Sign in' }).waitFor();
    await a.getByRole('link', { name: 'Forgot your password?' }).click();
    await a.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await a.getByLabel('Email').fill(owner.email);
    await a.getByRole('button', { name: 'Send reset link' }).click();
    await a.getByText('a link to choose a new password is on its way').waitFor();
    const reset = await linkIn(smtp.mails, owner.email, 'Reset your Loglane password', '/reset-password');
    ISSUED_SECRETS.add(reset.hash.slice('#token='.length));
    await a.goto(reset.pathname + reset.hash);
    await a.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await a.getByLabel('New password', { exact: true }).fill('owner passphrase three');
    await a.getByLabel('New password again').fill('owner passphrase 3');
    await a.getByRole('button', { name: 'Set new password' }).click();
    await a.getByText('The two passwords differ.').waitFor();
    await a.getByLabel('New password again').fill('owner passphrase three');
    ISSUED_SECRETS.add('owner passphrase three');
    await shoot(a, 'reset-password');
    await a.getByRole('button', { name: 'Set new password' }).click();
    await a.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(a.url()).pathname).toBe('/login');
    await a.getByText('Your password was changed. Sign in with the new password.').waitFor();
    // The link works once.
    await a.goto(reset.pathname + reset.hash);
    await a.getByLabel('New password', { exact: true }).fill('owner passphrase four');
    await a.getByLabel('New password again').fill('owner passphrase four');
    await a.getByRole('button', { name: 'Set new password' }).click();
    expectedFailures.add('400 /v1/auth/password-reset/confirm');
    await a.getByText('This reset link is no longer valid').waitFor();
    await a.getByRole('link', { name: 'Back to sign in' }).click();
    await a.getByLabel('Email').fill(owner.email);
    await a.getByLabel('Password').fill('owner passphrase three');
    await a.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => a.getByTestId('role').innerText().catch(() => '')).toMatch(/Owner$/);

    // The teammate deletes their account: the button waits for their email typed out.
    await b.getByRole('link', { name: 'Account' }).click();
    await b.getByRole('button', { name: 'Delete account…' }).click();
    const dialog = b.getByRole('dialog', { name: 'Delete your account?' });
    const confirm = dialog.getByRole('button', { name: 'Delete account' });
    await dialog.getByLabel('Your email').fill('someone@else.example');
    await dialog.getByLabel('Password').fill(teammate.password);
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Your email').fill(teammate.email);
    await shoot(b, 'delete-account');
    await confirm.click();
    await b.getByRole('heading', { name: 'Sign in' }).waitFor();
    await b.getByText('Your account was deleted').waitFor();
    const gone = await server.request('POST', '/v1/auth/login', { body: { email: teammate.email, password: teammate.password } });
    expect(gone.status).toBe(401);

    // Nothing secret in the storage a page can read.
    for (const page of [a, b]) {
      const stored = await readableStorage(page);
      expect(stored).not.toMatch(/eyJ[\w-]+\.[\w-]+|token|passphrase/);
    }
  }, 90_000);

  it('invites an admin who is signed in already, transfers ownership to them, and leaves', async () => {
    const c = await person();
    const admin = { email: uniqueEmail('admin'), password: 'admin passphrase' };
    ISSUED_SECRETS.add(admin.password);
    await c.goto('/signup');
    await signUp(c, admin.email, admin.password);
    await c.getByRole('heading', { name: 'No projects yet' }).waitFor();

    // Only the owner may invite an admin.
    await a.getByRole('link', { name: 'Members' }).click();
    const members = a.getByRole('region', { name: 'Members' });
    await members.getByLabel('Email').fill(admin.email);
    await members.getByLabel('Role', { exact: true }).selectOption('admin');
    await members.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => members.locator('.invitations-table tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/Admin/)]);

    // Signed in already: the link accepts at once and opens the project.
    const invitation = await linkIn(smtp.mails, admin.email, 'You are invited to Team logs on Loglane', '/invitations');
    ISSUED_SECRETS.add(invitation.hash.slice('#token='.length));
    await c.goto(invitation.pathname + invitation.hash);
    await c.getByText('You joined Team logs as Admin.').waitFor();
    await c.getByRole('heading', { name: /^Team logs\s+logs$/ }).waitFor();
    await c.getByRole('link', { name: 'Settings', exact: true }).click();
    await c.getByRole('heading', { name: 'API key' }).waitFor();
    expect(await c.getByRole('button', { name: 'Rotate key…' }).isEnabled()).toBe(true);
    expect(await c.getByRole('button', { name: 'Delete project…' }).getAttribute('title')).toMatch(/owner role \(you are an admin\)/);

    // The owner hands the project over; they stay on as an admin, and then leave.
    await a.reload();
    await expect.poll(() => members.getByLabel(`Role of ${admin.email}`).inputValue()).toBe('admin');
    await members.getByRole('button', { name: 'Transfer ownership…' }).click();
    const transfer = a.getByRole('dialog', { name: 'Transfer ownership' });
    expect(await transfer.getByLabel('New owner').inputValue()).not.toBe('');
    await shoot(a, 'transfer-ownership');
    await transfer.getByRole('button', { name: 'Transfer ownership' }).click();
    await a.getByText(`${admin.email} now owns Team logs. You are an admin.`).waitFor();
    await expect.poll(() => a.locator('.page-header [data-testid="role"]').innerText()).toMatch(/Admin$/);
    expect(await a.getByRole('button', { name: 'Delete project…' }).isDisabled()).toBe(true);
    await a.getByRole('button', { name: 'Leave project…' }).click();
    await a.getByRole('dialog', { name: 'Leave Team logs?' }).getByRole('button', { name: 'Leave project' }).click();
    await a.getByRole('heading', { name: 'No projects yet' }).waitFor();
    await c.getByRole('link', { name: 'Projects' }).click();
    await expect.poll(() => c.getByTestId('role').innerText()).toMatch(/Owner$/);

    // No server error, and no console error but the refusals provoked above.
    expect(serverErrors).toEqual([]);
    const printed = printedErrors(consoleErrors);
    expect(printed.filter((p) => !expectedFailures.has(p))).toEqual([]);
    for (const f of ['401 /v1/auth/password', '400 /v1/auth/password-reset/confirm']) expect(printed).toContain(f);
  }, 90_000);
});
