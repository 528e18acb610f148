/**
 * The CLI's explorer commands, run as the real binary against a server holding pino-http-like
 * logs: `projects`, `search` and `tail` with -o table|json and --fields, `stats` (its numbers
 * against the API's), `export` (its bytes against the API's export, NDJSON and CSV) and the
 * errors a person meets on the way.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VERSION } from '../src/app.js';
import { describeEngines, ingest, ISSUED_SECRETS, runCli, useAccount, useProject, useServer, waitFor, type StoredLog } from './harness.js';

/** A table the CLI printed: the header's words give where each column starts; lines starting with a space continue the row before. */
function parseTable(text: string): { header: string[]; rows: string[][] } {
  const lines = text.replace(/\n$/, '').split('\n');
  const headerLine = lines[0]!;
  const starts: number[] = [];
  const header: string[] = [];
  for (const m of headerLine.matchAll(/\S+/g)) {
    starts.push(m.index);
    header.push(m[0]);
  }
  const rows: string[][] = [];
  for (const line of lines.slice(1)) {
    if (line.startsWith(' ') && rows.length > 0) {
      const row = rows[rows.length - 1]!;
      // The CLI indents a following line to the last column's start, at most 48 characters.
      row[row.length - 1] += `\n${line.slice(Math.min(48, starts[starts.length - 1]!))}`;
      continue;
    }
    rows.push(starts.map((s, i) => (i === starts.length - 1 ? line.slice(s) : line.slice(s, starts[i + 1]!)).trimEnd()));
  }
  return { header, rows };
}

const STATUSES = [200, 200, 200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 409, 418, 500, 502, 503];
const MINUTE = 60_000;
/** A hang guard: each test runs the CLI as a process many times, which a busy two-core machine makes slow. */
const HANG = 240_000;

it('loglane --version is the server\'s version (the CLI reads it from package.json, without loading the server)', async () => {
  const res = await runCli(['--version'], {});
  expect(res.code, res.stderr).toBe(0);
  expect(res.stdout.trim()).toBe(VERSION);
});

describeEngines('loglane CLI: projects, search, tail, stats, export', (engine) => {
  const s = useServer(engine);
  const account = useAccount(s, { plan: 'pro' });
  const project = useProject(s, account, 'explore-api');
  const other = useProject(s, account, 'quiet project');
  let home: string;
  let env: Record<string, string>;
  /** The range the logs were sent in, whole minutes. */
  let from: string;
  let to: string;
  const COUNT = 240;

  const api = async (p: string) => {
    const res = await s.request('GET', p as '/v1/projects', { token: account.accessToken });
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${res.text}`);
    return res.body as any;
  };
  /** An answer's bytes as text (the harness's request would read an NDJSON body as one JSON document). */
  const raw = async (p: string) => {
    const res = await fetch(s.url + p, { headers: { authorization: `Bearer ${account.accessToken}` } });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const range = () => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;

  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'loglane-cli-explore-'));
    env = { XDG_CONFIG_HOME: home, NO_COLOR: '1' };
    const start = Math.floor((Date.now() - 60 * MINUTE) / MINUTE) * MINUTE;
    from = new Date(start).toISOString();
    to = new Date(start + 50 * MINUTE).toISOString();
    const logs = [];
    for (let i = 0; i < COUNT; i++) {
      const status = STATUSES[i % STATUSES.length]!;
      const metadata: Record<string, unknown> = {
        reqId: `req-${1000 + i}`,
        req: { method: i % 3 === 0 ? 'POST' : 'GET', url: `/api/orders/${i % 7}`, headers: { host: 'shop.example', 'user-agent': 'curl/8' } },
        responseTime: 5 + (i % 40),
        'http.route': '/api/orders/:id',
      };
      // Every tenth log has no answer (an error before it): "(none)" in a split by status.
      if (i % 10 !== 9) metadata.res = { statusCode: status };
      logs.push({
        timestamp: new Date(start + i * 12_000).toISOString(),
        level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
        source: i % 4 === 0 ? 'worker' : 'api',
        message: i % 10 === 9 ? `request failed\nError: boom ${i}\n    at handler (/app/orders.js:${i}:7)` : `request completed ${i}`,
        metadata,
      });
    }
    // A message that would move the cursor and recolour the terminal if printed as it is.
    logs.push({ timestamp: new Date(start + 55 * MINUTE).toISOString(), level: 'info', source: 'api', message: 'odd \u001b[2J\u001b[31mred\u0007 text', metadata: { reqId: 'req-odd' } });
    const sent = await ingest(s, project.apiKey, logs);
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body.accepted).toBe(COUNT + 1);
    const login = await runCli(['login', '--server', s.url, '--email', account.email, '--password-stdin'], env, `${account.password}\n`);
    expect(login.code, login.stderr).toBe(0);
    const creds = JSON.parse(await readFile(path.join(home, 'loglane', 'credentials.json'), 'utf8')) as { accessToken: string; refreshToken: string };
    ISSUED_SECRETS.add(creds.accessToken).add(creds.refreshToken);
  });
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('projects lists id, name, role and logs as a table and as JSON lines, the same as the API', async () => {
    const listed = (await api('/v1/projects')).data as { id: string; name: string; role: string; logCount: number; storedBytes: number; createdAt: string }[];
    const table = await runCli(['projects'], env);
    expect(table.code, table.stderr).toBe(0);
    const t = parseTable(table.stdout);
    expect(t.header).toEqual(['NAME', 'ID', 'ROLE', 'LOGS', 'STORED']);
    expect(t.rows.map((r) => r.slice(0, 4).map((c) => c.trim()))).toEqual(listed.map((p) => [p.name, p.id, p.role, p.logCount.toLocaleString('en')]));
    expect(t.rows.find((r) => r[1] === project.id)!.slice(0, 4).map((c) => c.trim())).toEqual(['explore-api', project.id, 'owner', (COUNT + 1).toLocaleString('en')]);

    const json = await runCli(['projects', '-o', 'json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual(listed.map((p) => ({ id: p.id, name: p.name, role: p.role, logCount: p.logCount, storedBytes: p.storedBytes, createdAt: p.createdAt })));
  }, HANG);

  it('search prints the default columns (not every metadata), the same logs as the API, newest first', async () => {
    const res = await runCli(['search', 'explore-api', '--from', from, '--to', to, '-n', '500'], env);
    expect(res.code, res.stderr).toBe(0);
    const expected = (await api(`/v1/projects/${project.id}/logs?${range()}&limit=1000`)).data as StoredLog[];
    expect(expected).toHaveLength(COUNT);
    const t = parseTable(res.stdout);
    expect(t.header).toEqual(['TIMESTAMP', 'LEVEL', 'SOURCE', 'MESSAGE']);
    expect(t.rows).toEqual(expected.map((l) => [l.timestamp, l.level.toUpperCase(), l.source ?? '', l.message]));
    // The metadata stays out of the table unless asked for.
    expect(res.stdout).not.toContain('statusCode');
    expect(res.stdout).not.toContain('req-10');
    expect(res.stderr).toContain(`${COUNT} logs, newest first.`);
    // A stack trace keeps its lines, each following one indented under the message.
    const failed = expected.find((l) => l.message.startsWith('request failed'))!;
    const at = res.stdout.split('\n').findIndex((l) => l.endsWith('request failed') && l.startsWith(failed.timestamp));
    expect(res.stdout.split('\n')[at + 1]).toMatch(/^ {20,}Error: boom \d+$/);

    // More than --limit: the newest ones, and a word that there are more.
    const few = await runCli(['search', 'explore-api', '--from', from, '--to', to, '-n', '5', '--no-header'], env);
    expect(few.code, few.stderr).toBe(0);
    expect(few.stdout.split('\n').filter((l) => /^\d{4}-/.test(l)).map((l) => l.slice(0, 24))).toEqual(expected.slice(0, 5).map((l) => l.timestamp));
    expect(few.stderr).toMatch(/5 logs, newest first\. More match/);
  }, HANG);

  it('search --fields picks columns and metadata paths; -o json prints the API\'s logs, or just the fields', async () => {
    const query = '@res.statusCode:>=400';
    const expected = (await api(`/v1/projects/${project.id}/logs?${range()}&limit=1000&query=${encodeURIComponent(query)}`)).data as StoredLog[];
    expect(expected.length).toBeGreaterThan(50);
    const fields = 'timestamp,level,@req.method,@res.statusCode,@http.route,@reqId,@missing.path,message';
    const table = await runCli(['search', 'explore-api', query, '--from', from, '--to', to, '-n', '500', '--fields', fields], env);
    expect(table.code, table.stderr).toBe(0);
    const t = parseTable(table.stdout);
    expect(t.header).toEqual(['TIMESTAMP', 'LEVEL', '@REQ.METHOD', '@RES.STATUSCODE', '@HTTP.ROUTE', '@REQID', '@MISSING.PATH', 'MESSAGE']);
    expect(t.rows).toEqual(
      expected.map((l) => [l.timestamp, l.level.toUpperCase(), l.metadata.req.method, String(l.metadata.res.statusCode), '/api/orders/:id', l.metadata.reqId, '', l.message]),
    );

    const json = await runCli(['search', 'explore-api', '--query', query, '--from', from, '--to', to, '-n', '500', '-o', 'json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual(expected);
    expect(json.stderr).toBe('');

    // With --fields, each JSON line holds those fields (objects as they are, missing ones null).
    const picked = await runCli(['search', 'explore-api', query, '--from', from, '--to', to, '-n', '3', '-o', 'json', '--fields', 'id,@req,@res.statusCode,@nope'], env);
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual(expected.slice(0, 3).map((l) => ({ id: l.id, '@req': l.metadata.req, '@res.statusCode': l.metadata.res.statusCode, '@nope': null })));

    // A log's control characters are shown as escapes, never sent to the terminal.
    const odd = await runCli(['search', 'explore-api', '@reqId:req-odd'], env);
    expect(odd.code, odd.stderr).toBe(0);
    expect(odd.stdout).not.toContain('\u001b');
    expect(odd.stdout).toContain('odd \\u001b[2J\\u001b[31mred\\u0007 text');
  }, HANG);

  it('stats --group-by prints the API\'s numbers: top values, (other), (none), and each bucket', async () => {
    const answer = await api(`/v1/projects/${project.id}/logs/stats?${range()}&interval=10m&groupBy=${encodeURIComponent('@res.statusCode')}`);
    const json = await runCli(['stats', 'explore-api', '--group-by', '@res.statusCode', '--from', from, '--to', to, '--interval', '10m', '-o', 'json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(answer);

    const res = await runCli(['stats', 'explore-api', '--group-by', '@res.statusCode', '--from', from, '--to', to, '--interval', '10m'], env);
    expect(res.code, res.stderr).toBe(0);
    const [summary, blank1, ...rest] = res.stdout.replace(/\n$/, '').split('\n');
    expect(summary).toBe(`${COUNT} logs from ${from} to ${to}, by @res.statusCode (10m buckets)`);
    expect(blank1).toBe('');
    const cut = rest.indexOf('');
    const totals = parseTable(rest.slice(0, cut).join('\n'));
    const buckets = parseTable(rest.slice(cut + 1).join('\n'));

    // The totals the API's buckets add up to, ranked as the server ranks its groups.
    const sums = new Map<string, number>();
    for (const b of answer.buckets) for (const [k, n] of Object.entries(b.groups as Record<string, number>)) sums.set(k, (sums.get(k) ?? 0) + n);
    const named = [...sums].filter(([k]) => k !== '(other)' && k !== '(none)').sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    expect(named).toHaveLength(10);
    expect(sums.get('(other)')).toBeGreaterThan(0);
    expect(sums.get('(none)')).toBe(COUNT / 10);
    const expectedTotals = [...named, ['(other)', sums.get('(other)')!], ['(none)', sums.get('(none)')!]] as [string, number][];
    expect(totals.header).toEqual(['@RES.STATUSCODE', 'LOGS', 'SHARE']);
    expect(totals.rows.map((r) => [r[0]!.trim(), Number(r[1]!.trim().replace(/,/g, ''))])).toEqual(expectedTotals);
    expect(totals.rows[0]![0]!.trim()).toBe('200');
    // Each bucket: its start, its total, and each group's count.
    expect(buckets.header).toEqual(['START', 'TOTAL', ...expectedTotals.map(([k]) => k)]);
    expect(buckets.rows.map((r) => r.map((c) => c.trim()))).toEqual(
      answer.buckets.map((b: { start: string; total: number; groups: Record<string, number> }) => [b.start, String(b.total), ...expectedTotals.map(([k]) => String(b.groups[k] ?? 0))]),
    );

    // Without --group-by: per level, with the filters search takes.
    const levels = await api(`/v1/projects/${project.id}/logs/stats?${range()}&source=api`);
    const byLevel = await runCli(['stats', 'explore-api', '--source', 'api', '--from', from, '--to', to, '--no-buckets'], env);
    expect(byLevel.code, byLevel.stderr).toBe(0);
    const lines = byLevel.stdout.replace(/\n$/, '').split('\n');
    const apiLogs = levels.buckets.reduce((n: number, b: { total: number }) => n + b.total, 0);
    expect(lines[0]).toBe(`${apiLogs} logs from ${from} to ${to}, by level (${levels.interval} buckets)`);
    const levelTable = parseTable(lines.slice(2).join('\n'));
    const levelSums: Record<string, number> = {};
    for (const b of levels.buckets) for (const [k, n] of Object.entries(b.levels as Record<string, number>)) levelSums[k] = (levelSums[k] ?? 0) + n;
    expect(levelTable.header).toEqual(['LEVEL', 'LOGS', 'SHARE']);
    expect(levelTable.rows.map((r) => [r[0]!.trim(), Number(r[1]!.trim())])).toEqual(['error', 'warn', 'info'].map((l) => [l, levelSums[l]]));
    expect(levelTable.rows.map((r) => r[2]!.trim())).toEqual(['error', 'warn', 'info'].map((l) => `${((levelSums[l]! / apiLogs) * 100).toFixed(1)}%`));
  }, HANG);

  it('export streams exactly the API\'s export: NDJSON to standard output, CSV with columns to a file', async () => {
    const query = 'source:api';
    const ndjsonUrl = `/v1/projects/${project.id}/logs/export?format=ndjson&${range()}&query=${encodeURIComponent(query)}`;
    const apiNdjson = await raw(ndjsonUrl);
    expect(apiNdjson.status, apiNdjson.text).toBe(200);
    const out = await runCli(['export', 'explore-api', query, '--from', from, '--to', to, '--progress'], env);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(apiNdjson.text);
    const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l) as StoredLog);
    const searched = (await api(`/v1/projects/${project.id}/logs?${range()}&limit=1000&query=${encodeURIComponent(query)}`)).data as StoredLog[];
    expect(lines).toEqual(searched);
    expect(out.stderr).toMatch(new RegExp(`\\r${searched.length} logs, [\\d.]+ (B|KB), [\\d,]+ logs/s`));
    expect(out.stderr).toMatch(new RegExp(`Exported ${searched.length} logs \\([\\d.]+ KB, NDJSON\\) in [\\d.]+ s\\.`));

    const columns = 'timestamp,level,@req.url,@res.statusCode,message';
    const csvUrl = `/v1/projects/${project.id}/logs/export?format=csv&${range()}&columns=${encodeURIComponent(columns)}`;
    const apiCsv = await raw(csvUrl);
    expect(apiCsv.status, apiCsv.text).toBe(200);
    const file = path.join(home, 'errors.csv');
    const csv = await runCli(['export', 'explore-api', '--format', 'csv', '--columns', columns, '--from', from, '--to', to, '-O', file], env);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('');
    expect(await readFile(file, 'utf8')).toBe(apiCsv.text);
    expect(apiCsv.text.split('\n')[0]!.trim()).toBe(columns);
    // The quoted stack traces' line breaks are inside records, not between them.
    expect(csv.stderr).toContain(`Exported ${COUNT} logs (`);
    expect(csv.stderr).toContain(`to ${file}.`);
    expect(csv.stderr).not.toContain('\r');

    // -O without a name: the name the server suggests, in the current directory.
    const dir = await mkdtemp(path.join(home, 'named-'));
    const named = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.resolve('bin/loglane.js'), 'export', 'explore-api', '@reqId:req-odd', '-O'], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env } });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(named.code, named.stderr).toBe(0);
    const [written] = await readdir(dir);
    expect(written).toMatch(/\.ndjson$/);
    expect(JSON.parse(await readFile(path.join(dir, written!), 'utf8')).metadata.reqId).toBe('req-odd');
  }, HANG);

  it('export refusals say why, exit 1 and leave no file', async () => {
    const file = path.join(home, 'never.ndjson');
    const broken = await runCli(['export', 'explore-api', '@res.statusCode:', '-O', file], env);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/column 17/);
    await expect(readFile(file)).rejects.toThrow(/ENOENT/);
    const notCsv = await runCli(['export', 'explore-api', '--columns', 'timestamp,message'], env);
    expect(notCsv.code).toBe(1);
    expect(notCsv.stderr).toContain('--columns chooses the columns of a CSV export: add --format csv');
    const badFormat = await runCli(['export', 'explore-api', '--format', 'xml'], env);
    expect(badFormat.code).toBe(1);
    expect(badFormat.stderr).toContain('--format takes ndjson or csv (got "xml")');
  }, HANG);

  it('tail takes --fields and -o json', async () => {
    const run = async (args: string[], log: Record<string, unknown>, until: string) => {
      const child = spawn(process.execPath, [path.resolve('bin/loglane.js'), 'tail', 'quiet project', ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const seen = (text: () => string, what: string) =>
        waitFor(() => text().includes(what), 15_000, `"${what}" from the tail`).catch((err: Error) => {
          child.kill('SIGKILL');
          throw new Error(`${err.message}; its stderr: ${stderr}`);
        });
      await seen(() => stderr, 'Tailing quiet project');
      const sent = await ingest(s, other.apiKey, [log]);
      expect(sent.status).toBe(202);
      await seen(() => stdout, until);
      const exited = new Promise<number | null>((r) => child.on('close', r));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      return stdout;
    };
    const table = await run(['--fields', 'level,@reqId,@res.statusCode,message'], { level: 'warn', message: 'slow answer', metadata: { reqId: 'req-77', res: { statusCode: 504 }, big: 'not shown' } }, 'slow answer');
    expect(table).toBe('LEVEL  @REQID  @RES.STATUSCODE  MESSAGE\nWARN   req-77  504              slow answer\n');
    const json = await run(['-o', 'json', '--fields', 'level,@reqId,message'], { level: 'info', message: 'as json', metadata: { reqId: 'req-78' } }, 'as json');
    expect(JSON.parse(json)).toEqual({ level: 'info', '@reqId': 'req-78', message: 'as json' });
  }, HANG);

  it('says what went wrong: bad options, an unknown project, not signed in', async () => {
    const [badSince, both, badOutput, badField, badGroup, badInterval, unknown] = await Promise.all([
      runCli(['search', 'explore-api', '--since', 'an hour'], env),
      runCli(['stats', 'explore-api', '--since', '1h', '--from', from], env),
      runCli(['search', 'explore-api', '-o', 'yaml'], env),
      runCli(['search', 'explore-api', '--fields', 'timestamp,statusCode'], env),
      runCli(['stats', 'explore-api', '--group-by', '@'], env),
      runCli(['stats', 'explore-api', '--since', '1d', '--interval', '1s'], env),
      runCli(['stats', 'no-such-project'], env),
    ]);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toContain('--since takes a duration such as 30s, 15m, 6h, 7d or 2w (got "an hour")');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--since and --from both set the start of the range');
    expect(badOutput.code).toBe(1);
    expect(badOutput.stderr).toContain('-o/--output takes json or table (got "yaml")');
    expect(badField.code).toBe(1);
    expect(badField.stderr).toContain('"statusCode" is not a field');
    expect(badField.stderr).toContain('did you mean @statusCode?');
    expect(badGroup.code).toBe(1);
    expect(badGroup.stderr).toMatch(/column 2/);
    expect(badInterval.code).toBe(1);
    expect(badInterval.stderr).toContain('interval makes more than');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No project "no-such-project". Yours: ');
    expect(unknown.stderr).toContain(`explore-api (${project.id})`);

    const stranger = { XDG_CONFIG_HOME: path.join(home, 'nobody'), NO_COLOR: '1' };
    for (const res of await Promise.all([['projects'], ['stats', 'explore-api'], ['export', 'explore-api']].map((args) => runCli(args, stranger)))) {
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('Not signed in: run `loglane login` first.');
    }

    // Tokens the server no longer takes (revoked, or from another server's key): log in again.
    const ended = { XDG_CONFIG_HOME: path.join(home, 'ended'), NO_COLOR: '1' };
    await mkdir(path.join(ended.XDG_CONFIG_HOME, 'loglane'), { recursive: true });
    await writeFile(path.join(ended.XDG_CONFIG_HOME, 'loglane', 'credentials.json'), JSON.stringify({ server: new URL(s.url).origin, email: account.email, accessToken: 'not-a-token', refreshToken: 'rtk_not_one_either' }));
    const stale = await runCli(['projects'], ended);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('Your session has ended: run `loglane login` again.');
  }, HANG);
});
