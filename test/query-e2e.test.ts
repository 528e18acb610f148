/**
 * Issue 15: one meaning for the query language. The query language's cases (test/query-cases.ts, the
 * expected sets derived by hand) run end to end on each engine through the four places a query
 * selects logs: search (GET …/logs?query), stats (…/logs/stats?query, totals and levels), the live
 * tail (replayed from Last-Event-ID 0) and alert evaluation (a rule per case and level, whose
 * firing counts the matches of one ingest batch). All four must select exactly the expected logs.
 */
import { beforeAll, expect, it } from 'vitest';
import { LEVELS } from '../src/features/logs/levels.js';
import { logId } from '../src/features/logs/present.js';
import { createProject, describeEngines, errorOf, ingest, openTail, useAccount, useProject, useServer } from './harness.js';
import { QUERY_CASES, QUERY_LOGS } from './query-cases.js';

/** A word no fixture log holds: the tail's last log, so a replay is known to be complete when it arrives. */
const SENTINEL = 'zzqsentinelzz';

const asIngested = (log: (typeof QUERY_LOGS)[number], ts: number) => ({
  message: log.message,
  level: LEVELS[log.level],
  timestamp: ts,
  ...(log.source !== null ? { source: log.source } : {}),
  ...(log.metadata !== null ? { metadata: JSON.parse(log.metadata) as object } : {}),
});

describeEngines('the query language means one thing everywhere', (engine) => {
  const s = useServer(engine, { env: { MAX_TAILS_PER_USER: '20' } });
  const owner = useAccount(s, { plan: 'enterprise' });
  const project = useProject(s, owner, 'query cases');
  const byId = new Map<string, string>();
  const minTs = Math.min(...QUERY_LOGS.map((l) => l.ts));
  const maxTs = Math.max(...QUERY_LOGS.map((l) => l.ts));

  beforeAll(async () => {
    // One request, in fixture order: the project's logs get seqs 1..n in that order.
    const res = await ingest(s, project.apiKey, [...QUERY_LOGS.map((l) => asIngested(l, l.ts)), { message: SENTINEL, timestamp: maxTs + 1000 }]);
    expect(res.status, res.text).toBe(202);
    expect(res.body.rejected).toEqual([]);
    QUERY_LOGS.forEach((l, i) => byId.set(logId(i + 1), l.name));
  });

  const range = `from=${minTs}&to=${maxTs}`;
  const expectedOf = (names: string[]) => [...names].sort();

  it(`search selects exactly the expected logs (${QUERY_CASES.length} queries)`, async () => {
    for (const c of QUERY_CASES) {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs?${range}&limit=1000&query=${encodeURIComponent(c.query)}`, { token: owner.accessToken });
      expect(res.status, `${c.query}: ${res.text}`).toBe(200);
      const got = (res.body.data as { id: string }[]).map((l) => byId.get(l.id)!).sort();
      expect(got, c.query).toEqual(expectedOf(c.expect));
    }
  });

  it('stats count exactly the expected logs, per level', async () => {
    for (const c of QUERY_CASES) {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs/stats?${range}&interval=1d&query=${encodeURIComponent(c.query)}`, { token: owner.accessToken });
      expect(res.status, `${c.query}: ${res.text}`).toBe(200);
      const levels: Record<string, number> = {};
      let total = 0;
      for (const b of res.body.buckets as { total: number; levels: Record<string, number> }[]) {
        total += b.total;
        for (const [name, n] of Object.entries(b.levels)) levels[name] = (levels[name] ?? 0) + n;
      }
      const want: Record<string, number> = {};
      for (const name of c.expect) {
        const level = LEVELS[QUERY_LOGS.find((l) => l.name === name)!.level]!;
        want[level] = (want[level] ?? 0) + 1;
      }
      expect({ total, levels }, c.query).toEqual({ total: c.expect.length, levels: want });
    }
  });

  it('a live tail replayed from the start sends exactly the expected logs', async () => {
    for (const c of QUERY_CASES) {
      const query = c.query.trim() === '' ? '' : `(${c.query}) OR ${SENTINEL}`;
      const tail = await openTail(s, owner.accessToken, project.id, { query: `query=${encodeURIComponent(query)}`, lastEventId: '0' });
      expect(tail.status, `${c.query}: ${tail.body}`).toBe(200);
      // Logs come in commit order, so once the sentinel (the last log) is here the replay is complete.
      await tail.waitFor(() => tail.logs().some((l) => l.message === SENTINEL), 10_000);
      const got = tail
        .logs()
        .filter((l) => l.message !== SENTINEL)
        .map((l) => byId.get(l.id)!)
        .sort();
      tail.close();
      expect(got, c.query).toEqual(expectedOf(c.expect));
    }
  }, 120_000);

  it('alert evaluation counts exactly the expected logs, per level', async () => {
    // Rules count logs inside their window ending now, so this project gets the same logs stamped
    // within the last minutes (cases about timestamps are left to the three checks above).
    const cases = QUERY_CASES.filter((c) => !/timestamp/i.test(c.query));
    const alerting = await createProject(s, owner, 'query rules');
    const rules: { query: string; level: string; id: string; want: number }[] = [];
    for (const c of cases) {
      for (const level of LEVELS) {
        const want = c.expect.filter((name) => LEVELS[QUERY_LOGS.find((l) => l.name === name)!.level] === level).length;
        const res = await s.request('POST', '/v1/alerts', { token: owner.accessToken, body: { projectId: alerting.id, name: `${level} ${c.query}`.slice(0, 200), condition: { level, threshold: 1, window: '1h', query: c.query }, channels: ['push'], cooldown: '0s' } });
        expect(res.status, `${c.query}: ${res.text}`).toBe(201);
        rules.push({ query: c.query, level, id: res.body.id, want });
      }
    }
    const now = Date.now();
    const res = await ingest(s, alerting.apiKey, QUERY_LOGS.map((l, i) => asIngested(l, now - 60_000 + i)));
    expect(res.status, res.text).toBe(202);
    // Every log committed so far has been checked against every rule: each rule fired at most once
    // (one batch), counting all its matches in that batch.
    await s.app.services.logs.drain();
    await s.app.services.alertsCaughtUp();
    for (const r of rules) {
      const history = await s.request('GET', `/v1/alerts/${r.id}/history`, { token: owner.accessToken });
      const counted = history.body.data.length === 0 ? 0 : history.body.data[history.body.data.length - 1]!.matchedCount;
      expect(counted, `${r.level}: ${r.query}`).toBe(r.want);
    }
  }, 180_000);

  it('groupBy splits stats by a field: source and a nested metadata path, over the same logs', async () => {
    const count = (names: (string | null)[]) => {
      const out: Record<string, number> = {};
      for (const n of names) out[n ?? '(none)'] = (out[n ?? '(none)'] ?? 0) + 1;
      return out;
    };
    const statusOf = (metadata: string | null): string | null => {
      const v = metadata === null ? undefined : (JSON.parse(metadata) as { res?: { statusCode?: unknown } }).res?.statusCode;
      return v === undefined || v === null ? null : String(v);
    };
    const cases: [string, Record<string, number>][] = [
      ['source', count(QUERY_LOGS.map((l) => l.source))],
      ['@res.statusCode', count(QUERY_LOGS.map((l) => statusOf(l.metadata)))],
    ];
    for (const [groupBy, want] of cases) {
      const res = await s.request('GET', `/v1/projects/${project.id}/logs/stats?${range}&interval=1d&groupBy=${encodeURIComponent(groupBy)}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(200);
      const got: Record<string, number> = {};
      for (const b of res.body.buckets as { groups: Record<string, number> }[]) for (const [name, n] of Object.entries(b.groups)) got[name] = (got[name] ?? 0) + n;
      // At most 10 named values: fold what the test expects past the top 10 the same way.
      const named = Object.entries(want).filter(([k]) => k !== '(none)').sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const folded: Record<string, number> = {};
      named.forEach(([k, n], i) => {
        const key = i < 10 ? k : '(other)';
        folded[key] = (folded[key] ?? 0) + n;
      });
      if (want['(none)']) folded['(none)'] = want['(none)'];
      expect(got, groupBy).toEqual(folded);
    }
    // Grouped by level or source without a query, SQL counts; with a query, the app does: the same answer.
    for (const groupBy of ['source', 'level']) {
      const url = `/v1/projects/${project.id}/logs/stats?${range}&interval=1h&groupBy=${groupBy}`;
      const bySql = await s.request('GET', url, { token: owner.accessToken });
      const byApp = await s.request('GET', `${url}&query=${encodeURIComponent('*')}`, { token: owner.accessToken });
      expect(bySql.status).toBe(200);
      expect(byApp.body, groupBy).toEqual(bySql.body);
    }
    const bad = await s.request('GET', `/v1/projects/${project.id}/logs/stats?groupBy=${encodeURIComponent('@"unclosed')}`, { token: owner.accessToken });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).details).toEqual([expect.objectContaining({ path: 'querystring:/groupBy' })]);
  });

  it('past ten values, groupBy sums the rest under "(other)", ties going to the name that sorts first', async () => {
    const p = await createProject(s, owner, 'many sources');
    // Sources s00..s12: s00 has 13 logs, s01 12, … s12 one; then two logs without a source.
    const logs = Array.from({ length: 13 }, (_, i) => Array.from({ length: 13 - i }, () => ({ message: 'x', source: `s${String(i).padStart(2, '0')}`, timestamp: minTs }))).flat();
    logs.push({ message: 'no source', timestamp: minTs } as never, { message: 'no source', timestamp: minTs } as never);
    // A tie at the edge: t-a and t-b both with 4 logs, like s09; only the first by name keeps its own group.
    for (const name of ['t-b', 't-a']) for (let i = 0; i < 4; i++) logs.push({ message: 'tie', source: name, timestamp: minTs });
    expect((await ingest(s, p.apiKey, logs)).status).toBe(202);
    const res = await s.request('GET', `/v1/projects/${p.id}/logs/stats?${range}&interval=1d&groupBy=source`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    const groups = (res.body.buckets as { groups: Record<string, number> }[]).find((b) => Object.keys(b.groups).length > 0)!.groups;
    // Top 10 by count: s00..s08 (13..5) and then one of the three with 4 (s09, t-a, t-b): s09 sorts first.
    expect(groups).toEqual({ s00: 13, s01: 12, s02: 11, s03: 10, s04: 9, s05: 8, s06: 7, s07: 6, s08: 5, s09: 4, '(other)': 3 + 2 + 1 + 4 + 4, '(none)': 2 });
  });

  it('two tails on one project with different queries each get only their own logs', async () => {
    const p = await createProject(s, owner, 'two tails');
    const a = await openTail(s, owner.accessToken, p.id, { query: `query=${encodeURIComponent('@team:alpha')}` });
    const b = await openTail(s, owner.accessToken, p.id, { query: `query=${encodeURIComponent('@team:beta')}` });
    const all = await openTail(s, owner.accessToken, p.id);
    expect([a.status, b.status, all.status]).toEqual([200, 200, 200]);
    const sent = await ingest(s, p.apiKey, [
      { message: 'one', metadata: { team: 'alpha' } },
      { message: 'two', metadata: { team: 'beta' } },
      { message: 'three', metadata: { team: 'alpha' } },
    ]);
    expect(sent.status).toBe(202);
    // Logs arrive in commit order: once the unfiltered tail has the last one, the others have decided too.
    await all.waitFor(() => all.logs().length === 3);
    await a.waitFor(() => a.logs().some((l) => l.message === 'three'));
    await b.waitFor(() => b.logs().some((l) => l.message === 'two'));
    expect(a.logs().map((l) => l.message)).toEqual(['one', 'three']);
    expect(b.logs().map((l) => l.message)).toEqual(['two']);
    for (const t of [a, b, all]) t.close();
  });
});

