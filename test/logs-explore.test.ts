/**
 * What the explorer reads besides pages, on both engines: a log's context (nearest logs on each
 * side, also inside one crowded millisecond and through a query), exports (NDJSON and CSV compared
 * with the search API, the per-user line, bad input), facets (equal to stats' groupBy over the same
 * range, numbers' statistics, per-value percentiles) and the fields list.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, signup, useServer, type Account, type StoredLog, type TestServer } from './harness.js';

/** Every log the search API selects, newest first, page by page. */
async function searchAll(s: TestServer, account: Account, projectId: string, params: Record<string, string> = {}): Promise<StoredLog[]> {
  const out: StoredLog[] = [];
  let cursor: string | null = null;
  do {
    const q: URLSearchParams = new URLSearchParams({ ...params, limit: '1000', ...(cursor ? { cursor } : {}) });
    const res: { status: number; text: string; body: { data: unknown[]; nextCursor: string | null } } = await s.request('GET', `/v1/projects/${projectId}/logs?${q}`, { token: account.accessToken });
    expect(res.status, res.text).toBe(200);
    out.push(...(res.body.data as StoredLog[]));
    cursor = res.body.nextCursor;
  } while (cursor);
  return out;
}

/** Sends logs in batches of at most 1,000. */
async function send(s: TestServer, apiKey: string, logs: unknown[]): Promise<void> {
  for (let i = 0; i < logs.length; i += 1000) {
    const res = await ingest(s, apiKey, logs.slice(i, i + 1000));
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(Math.min(1000, logs.length - i));
  }
}

const BASE = Date.parse('2026-11-20T10:00:00.000Z');
const STATUSES = [200, 200, 404, 500, 503];

/** 600 pino-like logs a second apart (the first 30 of them sharing one millisecond), two sources. */
function pinoLogs(): unknown[] {
  return Array.from({ length: 600 }, (_, i) => ({
    timestamp: i < 30 ? BASE : BASE + i * 1000,
    level: i % 10 === 0 ? 'error' : 'info',
    source: i % 2 === 0 ? 'api' : 'worker',
    message: i % 50 === 0 ? `failed, "order" ${i}\nstack line` : `request ${i} done`,
    reqId: `req-${i % 7}`,
    req: { url: `/api/orders/${i}`, method: i % 3 === 0 ? 'POST' : 'GET' },
    res: { statusCode: STATUSES[i % STATUSES.length] },
    ...(i % 4 === 0 ? {} : { duration: i % 97 }),
  }));
}

/** Nearest-rank percentile, as the server computes it. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

/** A raw GET that reads `limit` bytes of the answer at most, then holds the connection open without reading. */
function holdExport(s: TestServer, token: string, path: string): Promise<{ status: number; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, s.url), { headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.pause();
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

describeEngines('explore: context, export, facets, fields', (engine) => {
  const s = useServer(engine, { env: { INGEST_RATE_FREE: '1000000' } });
  let owner: Account;
  let project: { id: string; apiKey: string };
  let all: StoredLog[];
  const range = { from: new Date(BASE - 1000).toISOString(), to: new Date(BASE + 700_000).toISOString() };

  it('setup: 600 logs of a pino app', async () => {
    owner = await signup(s);
    project = await createProject(s, owner, `Shop ${randomBytes(2).toString('hex')}`);
    await send(s, project.apiKey, pinoLogs());
    all = await searchAll(s, owner, project.id, range);
    expect(all).toHaveLength(600);
  });

  const context = (logId: string, params: Record<string, string> = {}, projectId = project.id, who = owner) =>
    s.request('GET', `/v1/projects/${projectId}/logs/${logId}/context?${new URLSearchParams(params)}`, { token: who.accessToken });

  it('context: the nearest logs on each side, before newest first and after oldest first, ties by id', async () => {
    // Newest first: all[k] has all[k+1] before it and all[k-1] after it.
    for (const k of [300, 585 /* inside the shared millisecond */, 0, 599]) {
      const res = await context(all[k]!.id, { before: '5', after: '7' });
      expect(res.status, res.text).toBe(200);
      expect(res.body.log).toEqual(all[k]);
      expect(res.body.before.map((l) => l.id)).toEqual(all.slice(k + 1, k + 6).map((l) => l.id));
      expect(res.body.after.map((l) => l.id)).toEqual(all.slice(Math.max(0, k - 7), k).reverse().map((l) => l.id));
    }
    const defaults = await context(all[300]!.id);
    expect(defaults.body.before).toHaveLength(20);
    expect(defaults.body.after).toHaveLength(20);
    const none = await context(all[300]!.id, { before: '0', after: '0' });
    expect(none.body).toEqual({ before: [], log: all[300], after: [] });
  });

  it('context with a query keeps only the logs it selects (the log itself is always answered)', async () => {
    const target = all.find((l, k) => k > 100 && l.source === 'worker')!;
    const k = all.indexOf(target);
    const api = all.filter((l) => l.source === 'api');
    const res = await context(target.id, { before: '4', after: '4', query: 'source:api' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.log.id).toBe(target.id);
    const olderApi = api.filter((l) => all.indexOf(l) > k).slice(0, 4);
    const newerApi = api.filter((l) => all.indexOf(l) < k).slice(-4).reverse();
    expect(res.body.before.map((l) => l.id)).toEqual(olderApi.map((l) => l.id));
    expect(res.body.after.map((l) => l.id)).toEqual(newerApi.map((l) => l.id));
    const sameReq = await context(target.id, { before: '3', after: '3', query: `@reqId:${target.metadata.reqId}` });
    for (const l of [...sameReq.body.before, ...sameReq.body.after]) expect(l.metadata.reqId).toBe(target.metadata.reqId);
    expect(sameReq.body.before.length + sameReq.body.after.length).toBe(6);
  });

  it('context inside a millisecond that holds more logs than a page: the next ones by id', async () => {
    const t = BASE + 5000;
    const crowdedOwner = await signup(s);
    const mine = await createProject(s, crowdedOwner, 'Crowded 2');
    await send(s, mine.apiKey, [
      ...Array.from({ length: 2500 }, (_, i) => ({ timestamp: t, message: `burst ${i}` })),
      ...Array.from({ length: 10 }, (_, i) => ({ timestamp: t + 1 + i, message: `after ${i}` })),
    ]);
    const logs = await searchAll(s, crowdedOwner, mine.id);
    expect(logs).toHaveLength(2510);
    const oldestFirst = [...logs].reverse();
    const k = 1000;
    const res = await context(oldestFirst[k]!.id, { before: '200', after: '200' }, mine.id, crowdedOwner);
    expect(res.status, res.text).toBe(200);
    expect(res.body.after.map((l) => l.message)).toEqual(oldestFirst.slice(k + 1, k + 201).map((l) => l.message));
    expect(res.body.before.map((l) => l.message)).toEqual(oldestFirst.slice(k - 200, k).reverse().map((l) => l.message));
    // Near the crowded millisecond's end, the logs after it follow.
    const end = await context(oldestFirst[2495]!.id, { before: '0', after: '10' }, mine.id, crowdedOwner);
    expect(end.body.after.map((l) => l.message)).toEqual(['burst 2496', 'burst 2497', 'burst 2498', 'burst 2499', 'after 0', 'after 1', 'after 2', 'after 3', 'after 4', 'after 5']);
  });

  it('context: unknown, malformed and foreign log ids are 404; bad counts are 400', async () => {
    const stranger = await signup(s);
    const theirs = await createProject(s, stranger, 'Theirs');
    await send(s, theirs.apiKey, [{ message: 'theirs' }]);
    const [foreign] = await searchAll(s, stranger, theirs.id);
    for (const id of ['log_0000000zzzzzz', 'nope', 'log_', 'log_0000000000000', `${all[0]!.id}x`]) {
      const res = await context(id);
      expect(res.status, id).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
    }
    // A log id of another project names a log of this one, if any, with that number: not theirs.
    const crossed = await context(foreign!.id);
    if (crossed.status === 200) expect(crossed.body.log.message).not.toBe('theirs');
    expect((await context(foreign!.id, {}, theirs.id)).status).toBe(404);
    for (const params of [{ before: '201' }, { after: '-1' }, { before: 'x' }, { query: '(open' }] as Record<string, string>[]) {
      const res = await context(all[10]!.id, params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    }
  });

  const exportOf = (params: Record<string, string>, who = owner, projectId = project.id) =>
    s.request('GET', `/v1/projects/${projectId}/logs/export?${new URLSearchParams(params)}`, { token: who.accessToken });

  it('export NDJSON: every selected log, newest first, as the search API answers it, as a download', async () => {
    const res = await exportOf({ format: 'ndjson', ...range });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="Shop-[0-9a-f]{4}-20261120T095959Z-20261120T101140Z\.ndjson"$/);
    const lines = res.text.split('\n');
    if (!lines[0]!.endsWith('}')) throw new Error(res.text.slice(0, 600));
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(all);

    const query = '@res.statusCode:>=500 -source:worker';
    const filtered = await exportOf({ format: 'ndjson', query, ...range });
    const expected = await searchAll(s, owner, project.id, { query, ...range });
    expect(expected.length).toBeGreaterThan(10);
    expect(filtered.text.trim().split('\n').map((l) => JSON.parse(l))).toEqual(expected);
    const byLevel = await exportOf({ level: 'error', pattern: 'failed', ...range });
    expect(byLevel.text.trim().split('\n').map((l) => JSON.parse(l))).toEqual(await searchAll(s, owner, project.id, { level: 'error', pattern: 'failed', ...range }));
  });

  it('export CSV: RFC 4180 with the columns as asked, objects as JSON, missing values empty', async () => {
    const columns = 'timestamp,level,source,@res.statusCode,@req,@duration,message';
    const res = await exportOf({ format: 'csv', columns, ...range });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/\.csv"$/);
    const rows = parseCsv(res.text);
    expect(rows[0]).toEqual(columns.split(','));
    expect(rows.slice(1)).toEqual(
      all.map((l) => [l.timestamp, l.level, l.source ?? '', String(l.metadata.res.statusCode), JSON.stringify(l.metadata.req), l.metadata.duration === undefined ? '' : String(l.metadata.duration), l.message]),
    );
    // Lines end with CRLF; a field with a quote, a comma or a line break is quoted.
    expect(res.text.startsWith(`${columns}\r\n`)).toBe(true);
    expect(res.text).toContain('"failed, ""order"" 0\nstack line"');
    const defaults = parseCsv((await exportOf({ format: 'csv', ...range })).text);
    expect(defaults[0]).toEqual(['timestamp', 'level', 'source', 'message']);
    expect(defaults).toHaveLength(601);
  });

  it('export: bad input is 400, a stranger\'s project 404, and a third export at once 429', async () => {
    for (const params of [{ format: 'xml' }, { format: 'csv', columns: '@' }, { format: 'csv', columns: Array.from({ length: 51 }, (_, i) => `@f${i}`).join(',') }, { query: 'a AND' }, { from: 'soon' }] as Record<string, string>[]) {
      const res = await exportOf(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    }
    const stranger = await signup(s);
    expect((await exportOf({}, stranger)).status).toBe(404);

    // Two exports held open by a client that does not read (their logs outgrow the socket's buffers).
    const big = await createProject(s, stranger, 'Big');
    const blob = 'x'.repeat(60_000);
    for (let i = 0; i < 300; i += 50) await send(s, big.apiKey, Array.from({ length: 50 }, (_, j) => ({ message: `${i + j} ${blob}` })));
    const path = `/v1/projects/${big.id}/logs/export?format=ndjson`;
    const held = [await holdExport(s, stranger.accessToken, path), await holdExport(s, stranger.accessToken, path)];
    try {
      expect(held.map((h) => h.status)).toEqual([200, 200]);
      const third = await s.request('GET', path, { token: stranger.accessToken });
      expect(third.status).toBe(429);
      expect(errorOf(third).code).toBe('RATE_LIMITED');
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      // Another user is not held back by them.
      expect((await exportOf({ format: 'ndjson', ...range })).status).toBe(200);
    } finally {
      for (const h of held) h.close();
    }
    const again = await (async () => {
      for (let i = 0; i < 100; i++) {
        const res = await s.request('GET', `/v1/projects/${big.id}/logs/export?format=csv&columns=message`, { token: stranger.accessToken });
        if (res.status === 200) return res;
        // sleep: the slots are given back when the server sees the held connections close; poll for it
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the export slots were never given back');
    })();
    expect(parseCsv(again.text)).toHaveLength(301);
  });

  const facets = (params: Record<string, string>) => s.request('GET', `/v1/projects/${project.id}/logs/facets?${new URLSearchParams({ ...range, ...params })}`, { token: owner.accessToken });

  it('facets count over the whole range: the same values and counts as stats\' groupBy', async () => {
    const res = await facets({ fields: 'level,source,@res.statusCode,@reqId,@duration' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(600);
    for (const facet of res.body.facets) {
      const stats = await s.request('GET', `/v1/projects/${project.id}/logs/stats?${new URLSearchParams({ ...range, groupBy: facet.field })}`, { token: owner.accessToken });
      expect(stats.status, stats.text).toBe(200);
      const summed: Record<string, number> = {};
      for (const b of stats.body.buckets) for (const [name, n] of Object.entries(b.groups ?? {})) summed[name] = (summed[name] ?? 0) + (n as number);
      const named = Object.fromEntries(facet.values.map((v) => [v.value, v.count]));
      const { '(none)': none = 0, '(other)': other = 0, ...rest } = summed;
      expect(named, facet.field).toEqual(rest);
      expect(facet.none, facet.field).toBe(none);
      expect(facet.other, facet.field).toBe(other);
    }
    const status = res.body.facets.find((f) => f.field === '@res.statusCode')!;
    expect(status.values).toEqual([
      { value: '200', count: 240 },
      { value: '404', count: 120 },
      { value: '500', count: 120 },
      { value: '503', count: 120 },
    ]);
    const durations = all.map((l) => l.metadata.duration).filter((d): d is number => typeof d === 'number');
    const duration = res.body.facets.find((f) => f.field === '@duration')!;
    expect(duration.none).toBe(150);
    expect(duration.numeric).toEqual({ count: durations.length, min: Math.min(...durations), max: Math.max(...durations), p50: percentile(durations, 0.5), p95: percentile(durations, 0.95), sampled: false });
    expect(res.body.facets.find((f) => f.field === 'level')!.numeric).toBeNull();
  });

  it('facets: a query narrows them, limit sums the rest in other, measure gives p50/p95 per value', async () => {
    const narrowed = await facets({ fields: '@res.statusCode', query: 'source:api' });
    const api = all.filter((l) => l.source === 'api');
    expect(narrowed.body.total).toBe(api.length);
    expect(narrowed.body.facets[0]!.values.reduce((n, v) => n + v.count, 0)).toBe(api.length);
    const limited = await facets({ fields: '@reqId', limit: '2' });
    const facet = limited.body.facets[0]!;
    expect(facet.values).toHaveLength(2);
    expect(facet.values[0]!.count + facet.values[1]!.count + facet.other + facet.none).toBe(600);
    const measured = await facets({ fields: 'source', measure: '@duration' });
    for (const v of measured.body.facets[0]!.values) {
      const ds = all.filter((l) => l.source === v.value).map((l) => l.metadata.duration).filter((d): d is number => typeof d === 'number');
      expect(v.p50, v.value).toBe(percentile(ds, 0.5));
      expect(v.p95, v.value).toBe(percentile(ds, 0.95));
    }
    for (const params of [{ fields: '' }, { fields: '@' }, { fields: Array.from({ length: 21 }, (_, i) => `@f${i}`).join(',') }, { fields: 'level', measure: 'level' }, { fields: 'level', limit: '51' }] as Record<string, string>[]) {
      const res = await facets(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    }
  });

  it('fields: level, source and every metadata path of the range, most common first, with counts', async () => {
    const res = await s.request('GET', `/v1/projects/${project.id}/logs/fields?${new URLSearchParams(range)}`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(600);
    const counts = Object.fromEntries(res.body.fields.map((f) => [f.field, f.count]));
    expect(counts).toEqual({ level: 600, source: 600, '@reqId': 600, '@req.url': 600, '@req.method': 600, '@res.statusCode': 600, '@duration': 450 });
    expect(res.body.fields.at(-1)).toEqual({ field: '@duration', count: 450 });
    const stranger = await signup(s);
    expect((await s.request('GET', `/v1/projects/${project.id}/logs/fields`, { token: stranger.accessToken })).status).toBe(404);
    expect((await s.request('GET', `/v1/projects/${project.id}/logs/facets?fields=level`, { token: stranger.accessToken })).status).toBe(404);
  });
});

/** RFC 4180 rows (quoted fields may hold quotes, commas and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
      } else {
        field += c;
        i++;
      }
    } else if (c === '"') {
      quoted = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      field += c;
      i++;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
