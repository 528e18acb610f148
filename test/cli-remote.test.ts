/**
 * The CLI's API commands, run as the real binary against a running server: login, send (a
 * 10,000-line file, with its progress and summary), search and tail.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEngines, ISSUED_SECRETS, runCli, useAccount, useProject, useServer, waitFor } from './harness.js';

describeEngines('loglane CLI against a server', (engine) => {
  const s = useServer(engine);
  const account = useAccount(s, { plan: 'pro' });
  const project = useProject(s, account, 'cli project');
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'loglane-cli-'));
    env = { XDG_CONFIG_HOME: home, NO_COLOR: '1' };
  });
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('login keeps the tokens in a file only its owner can read; a wrong password says so', async () => {
    const wrong = await runCli(['login', '--server', s.url, '--email', account.email, '--password-stdin'], env, 'not the password\n');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/email or password/i);
    const ok = await runCli(['login', '--server', s.url, '--email', account.email, '--password-stdin'], env, `${account.password}\n`);
    expect(ok.stderr).toContain(`Signed in to ${new URL(s.url).origin} as ${account.email}`);
    expect(ok.code).toBe(0);
    const file = path.join(home, 'loglane', 'credentials.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(await readFile(file, 'utf8')) as { refreshToken: string; accessToken: string };
    ISSUED_SECRETS.add(creds.refreshToken).add(creds.accessToken);
    expect(ok.stdout + ok.stderr).not.toContain(creds.refreshToken);
  });

  it('send ships a 10,000-line file in batches with a progress bar and a summary; search finds it', async () => {
    const file = path.join(home, 'app.log');
    const lines: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      lines.push(i % 2 === 0 ? `plain line ${i}` : JSON.stringify({ level: i % 5 === 0 ? 'error' : 'info', message: `json line ${i}`, source: 'worker', metadata: { i } }));
    }
    await writeFile(file, `${lines.join('\n')}\n`);
    const sent = await runCli(['send', file, '--api-key', project.apiKey, '--server', s.url, '--source', 'cli', '--batch', '2000', '--progress'], env);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toMatch(/\[#{30}\] 100%/);
    expect(sent.stderr).toMatch(/Sent 10,000 lines in [\d.]+ s: 10,000 accepted, 0 rejected/);
    expect(sent.stderr).not.toContain(project.apiKey);
    const count = await s.request('GET', `/v1/projects/${project.id}`, { token: account.accessToken });
    expect(count.body.logCount).toBe(10_000);

    // `projects` lists it with its logs and what they take on disk, as a table and as JSON.
    const listed = await runCli(['projects'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^NAME +ID +ROLE +LOGS +STORED$/m);
    expect(listed.stdout).toMatch(new RegExp(`^cli project +${project.id} +owner +10,000 +[\\d.]+ (KB|MB)$`, 'm'));
    const listedJson = await runCli(['projects', '--json'], env);
    const mine = listedJson.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; logCount: number; storedBytes: number }).find((p) => p.id === project.id);
    expect(mine).toMatchObject({ logCount: 10_000, storedBytes: expect.any(Number) });
    expect(mine!.storedBytes).toBeGreaterThan(0);

    const plain = await runCli(['search', 'cli project', '-q', 'plain line 9998', '--json'], env);
    expect(plain.code).toBe(0);
    const found = plain.stdout.trim().split('\n').map((l) => JSON.parse(l) as { message: string; source: string; level: string });
    expect(found).toEqual([expect.objectContaining({ message: 'plain line 9998', source: 'cli', level: 'info' })]);

    // The query language, as the argument: metadata fields, levels, words.
    const queried = await runCli(['search', 'cli project', '@i:>=9990 level:error', '--json'], env);
    expect(queried.code, queried.stderr).toBe(0);
    expect(queried.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['json line 9995']);
    // --contains is the plain substring filter.
    const contains = await runCli(['search', 'cli project', '--contains', 'LINE 9998', '--json'], env);
    expect(contains.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['plain line 9998']);
    // A query that does not parse: the server's message, with the column, and exit 1.
    const broken = await runCli(['search', 'cli project', '@i:'], env);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/at column 4/);

    const errors = await runCli(['search', project.id, '--level', 'error', '--source', 'worker', '-n', '2500'], env);
    expect(errors.code).toBe(0);
    const [header, ...rows] = errors.stdout.trim().split('\n');
    expect(header).toMatch(/^TIMESTAMP {17}LEVEL  SOURCE  MESSAGE$/);
    expect(rows).toHaveLength(1000);
    // The default columns: no metadata on the line (--fields or -o json show it).
    expect(rows.every((r) => /^\S+Z  ERROR  worker  json line \d*5$/.test(r))).toBe(true);
    expect(errors.stderr).toContain('1,000 logs, newest first.');

    // Lines refused by the server are counted, shown, and make the exit status 1.
    const bad = await runCli(['send', '-', '--api-key', project.apiKey, '--server', s.url, '--no-progress'], env, '{"message": "ok"}\n{"message": "bad level", "level": "loud"}\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Sent 2 lines .*: 1 accepted, 1 rejected/);
    expect(bad.stderr).toMatch(/line 2: level must be/);
  });

  it('tail prints a log sent after it started, then stops on SIGINT', async () => {
    const child = spawn(process.execPath, [path.resolve('bin/loglane.js'), 'tail', 'cli project', '--level', 'warn', '--query', 'source:node-*'], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const seen = (text: () => string, what: string) =>
      waitFor(() => text().includes(what), 10_000, `"${what}" from the tail`).catch((err: Error) => {
        child.kill('SIGKILL');
        throw new Error(`${err.message}; its stderr: ${stderr}`);
      });
    await seen(() => stderr, 'Tailing cli project');
    const sent = await runCli(['send', '-', '--api-key', project.apiKey, '--server', s.url, '--no-progress'], env, '{"level":"info","message":"not shown"}\n{"level":"warn","message":"nor this","source":"web-1"}\n{"level":"warn","message":"disk almost full","source":"node-3"}\n');
    expect(sent.code).toBe(0);
    await seen(() => stdout, 'disk almost full');
    expect(stdout).toMatch(/^TIMESTAMP {17}LEVEL  SOURCE  MESSAGE\n\d{4}-\d{2}-\d{2}T[\d:.]+Z  WARN   node-3  disk almost full\n$/);
    const exited = new Promise<number | null>((r) => child.on('close', r));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('commands that need a login say so, and logout forgets the tokens', async () => {
    const out = await runCli(['logout'], env);
    expect(out.code).toBe(0);
    const search = await runCli(['search', 'cli project'], env);
    expect(search.code).toBe(1);
    expect(search.stderr).toContain('Not signed in: run `loglane login` first.');
    const unknown = await runCli(['login', '--server', s.url, '--email', account.email, '--password-stdin'], env, `${account.password}\n`);
    expect(unknown.code).toBe(0);
    const missing = await runCli(['tail', 'no such project'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No project "no such project". Yours: cli project');
  });
});
