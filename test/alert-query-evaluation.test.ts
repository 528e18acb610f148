/**
 * Alert evaluation under costly rules, through the HTTP API on both engines:
 * - rule queries are parsed once per text, and a rule-cache refresh with unchanged rules parses none;
 * - rules that share a query (or a pattern) decide a log once, not once per rule;
 * - each project gets its own slice of a round: one project's costly rules cannot use up another's;
 * - a log its rules cannot decide is tried in a bounded number of rounds, then given up (logged).
 *
 * The costly work is real: COSTLY on SLOW_MATCH takes about a second in the regex worker (far past a
 * project's 250 ms slice), and the worker finishes a test it has started even past the deadline.
 */
import { expect, it, vi } from 'vitest';
import { MAX_EVALUATION_ROUNDS, RULE_CACHE_MS } from '../src/features/alerts/service.js';
import { matchRules, parseRuleQuery, ruleQueryParses } from '../src/features/alerts/rules.js';
import { createProject, describeEngines, ingest, setPlan, signup, type Account, useAccount, useServer, waitFor } from './harness.js';

/** The costliest kind of pattern still allowed (as in hostile-regex): no literal to prefilter on. */
const COSTLY = '([a-z]{1000})([a-z]{990})';
/** ~47,000 characters that COSTLY matches only at the very end: about a second per test in the worker. */
const SLOW_MATCH = ('abc'.repeat(600) + '1').repeat(25) + 'z'.repeat(2000);


it("matchRules reads each log once for all its rules' distinct queries, and counts as each query alone would", async () => {
  const now = Date.now();
  const rows = Array.from({ length: 500 }, (_, i) => ({ ts: now - i, level: 4, source: 'api', message: `request ${i} failed`, metadata: JSON.stringify({ i, status: 500 + (i % 7) }) }));
  const rules = Array.from({ length: 20 }, (_, k) => ({ level: 4, source: null, windowMs: 300_000, pattern: null, query: parseRuleQuery(`@i:>=${k * 20} @status:(500 OR 50${k % 5}) failed`) }));
  const parse = vi.spyOn(JSON, 'parse');
  let matched: Awaited<ReturnType<typeof matchRules<(typeof rows)[number], (typeof rules)[number]>>>;
  let parses: number;
  try {
    matched = await matchRules(rules, rows, now, 5, 'proj_unit', Date.now() + 10_000);
    parses = parse.mock.calls.length;
  } finally {
    parse.mockRestore();
  }
  // One parse of a log's metadata for its twenty queries (it was one per query).
  expect(parses).toBe(rows.length);
  expect(matched.undecided).toEqual([]);
  rules.forEach((rule, k) => {
    const want = rows.filter((_, i) => i >= k * 20 && (i % 7 === 0 || i % 7 === k % 5)).length;
    expect(matched.results.get(rule)?.count ?? 0, `rule ${k}`).toBe(want);
  });
});

describeEngines('alert evaluation of queries and costly rules', (engine) => {
  const s = useServer(engine);
  const a = useAccount(s, { plan: 'enterprise' });

  const createRule = async (account: Account, projectId: string, name: string, condition: Record<string, unknown>): Promise<string> => {
    const res = await s.request('POST', '/v1/alerts', { token: account.accessToken, body: { projectId, name, condition: { threshold: 1, window: '5m', ...condition }, channels: ['push'], cooldown: '0s' } });
    if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const firings = async (account: Account, ruleId: string): Promise<{ matchedCount: number; sample: { message: string }[] }[]> => {
    const res = await s.request('GET', `/v1/alerts/${ruleId}/history?limit=100`, { token: account.accessToken });
    expect(res.status).toBe(200);
    return res.body.data;
  };
  /** Every log committed so far is evaluated (or given up); fails instead of waiting forever. */
  const caughtUp = (timeoutMs: number) =>
    Promise.race([
      s.app.services.alertsCaughtUp(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`alert evaluation still busy after ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
  /** The "gave up" warnings the server logged so far, per project. */
  const gaveUp = (projectId: string) =>
    s.logs
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.includes('"gave up'))
      .map((line) => JSON.parse(line) as { level: number; projectId: string; dropped: number; rounds: number })
      .filter((l) => l.projectId === projectId);
  const send = async (apiKey: string, logs: unknown[]) => {
    const res = await ingest(s, apiKey, logs);
    expect(res.status, res.text).toBe(202);
  };

  it('parses each rule query once per text, and a refresh of unchanged rules parses none', async () => {
    const p = await createProject(s, a, 'parsing');
    const shared = '@status:>=500 @path:"/v1/orders" timeout';
    const ids = [
      await createRule(a, p.id, 'first', { level: 'error', query: shared }),
      await createRule(a, p.id, 'second', { level: 'error', query: shared }),
      await createRule(a, p.id, 'third', { level: 'error', source: 'api', query: shared }),
      await createRule(a, p.id, 'fourth', { level: 'error', query: '/up(stream)? timeout/' }),
    ];
    const log = (n: number) => ({ level: 'error', source: 'api', message: `upstream timeout ${n}`, metadata: { status: 503, path: '/v1/orders' } });

    let before = ruleQueryParses();
    await send(p.apiKey, [log(1)]);
    await caughtUp(10_000);
    // The rules were read and their two distinct queries parsed, once each; every rule counted the log.
    expect(ruleQueryParses() - before).toBe(2);
    for (const id of ids) expect((await firings(a, id)).length).toBe(1);

    // An edit through this node drops the cached rules at once; the unchanged queries are not parsed again.
    expect((await s.request('PUT', `/v1/alerts/${ids[0]}`, { token: a.accessToken, body: { name: 'first, renamed' } })).status).toBe(200);
    before = ruleQueryParses();
    await send(p.apiKey, [log(2)]);
    await caughtUp(10_000);
    expect(ruleQueryParses() - before).toBe(0);
    for (const id of ids) expect((await firings(a, id)).length).toBe(2);

    // The cache's own expiry (how edits through another node are seen) parses nothing either.
    // The cache ages on the server's clock: moving it past RULE_CACHE_MS expires the entry at once.
    s.clock.advance(RULE_CACHE_MS + 1);
    before = ruleQueryParses();
    await send(p.apiKey, [log(3)]);
    await caughtUp(10_000);
    expect(ruleQueryParses() - before).toBe(0);
    for (const id of ids) expect((await firings(a, id)).length).toBe(3);

    // A changed query is parsed, once, and applies: the fourth rule no longer matches.
    expect((await s.request('PUT', `/v1/alerts/${ids[3]}`, { token: a.accessToken, body: { condition: { level: 'error', threshold: 1, window: '5m', query: 'nothing-like-this' } } })).status).toBe(200);
    before = ruleQueryParses();
    await send(p.apiKey, [log(4)]);
    await caughtUp(10_000);
    expect(ruleQueryParses() - before).toBe(1);
    expect((await firings(a, ids[3]!)).length).toBe(3);
    expect((await firings(a, ids[0]!)).length).toBe(4);
  });

  it('rules sharing a query or a pattern decide each log once, however many they are', async () => {
    const p = await createProject(s, a, 'shared');
    // One costly test decides the log for all the query rules, one for all the pattern rules: as one
    // test per rule, only about one of them would be decided per round.
    const query = `/${COSTLY}/`;
    const ids = [
      await createRule(a, p.id, 'q1', { level: 'error', query }),
      await createRule(a, p.id, 'q2', { level: 'error', query, window: '1h' }),
      await createRule(a, p.id, 'q3', { level: 'error', query, threshold: 2 }),
      await createRule(a, p.id, 'q4', { level: 'error', source: 'api', query }),
      await createRule(a, p.id, 'q5', { level: 'error', source: 'api', query, window: '1m' }),
      await createRule(a, p.id, 'q6', { level: 'error', source: 'api', query }),
      await createRule(a, p.id, 'p1', { level: 'error', pattern: COSTLY }),
      await createRule(a, p.id, 'p2', { level: 'error', pattern: COSTLY, window: '1h' }),
      await createRule(a, p.id, 'p3', { level: 'error', source: 'api', pattern: COSTLY }),
      await createRule(a, p.id, 'p4', { level: 'error', source: 'api', pattern: COSTLY }),
      await createRule(a, p.id, 'p5', { level: 'error', source: 'api', pattern: COSTLY }),
      await createRule(a, p.id, 'p6', { level: 'error', source: 'api', pattern: COSTLY }),
      // Same query, other level: not a candidate for an error log.
      await createRule(a, p.id, 'other level', { level: 'warn', query }),
    ];
    // The log needs two costly tests (the pattern's, then the query's), more than one slice: the
    // second round goes on from what the first decided.
    await send(p.apiKey, [{ level: 'error', source: 'api', message: SLOW_MATCH }]);
    await caughtUp(30_000);
    expect(gaveUp(p.id)).toEqual([]);
    for (const [i, id] of ids.entries()) {
      const history = await firings(a, id);
      // q3 needs two logs, and the warn rule none of these.
      const fires = i === 2 || i === ids.length - 1 ? 0 : 1;
      expect(history.length, `rule ${i}`).toBe(fires);
      if (fires) expect(history[0]!.sample.map((l) => l.message.length)).toEqual([SLOW_MATCH.length]);
    }
    const counted = await s.database.db.selectFrom('alert_counts').select(['rule_id', 'n']).where('rule_id', 'in', ids).execute();
    expect(counted.map((c) => [c.rule_id, Number(c.n)]).sort()).toEqual(ids.slice(0, -1).map((id) => [id, 1]).sort());
  }, 60_000);

  it("one project's costly rules do not use up another project's slice of a round", async () => {
    const costly = await createProject(s, a, 'costly');
    const b = await signup(s);
    await setPlan(s, b.id, 'enterprise');
    const bystander = await createProject(s, b, 'bystander');
    const costlyRule = await createRule(a, costly.id, 'costly', { level: 'error', pattern: COSTLY });
    // The bystander's regexes are not cheap enough for the event loop (the worker runs them), but a
    // test of either takes a few milliseconds: within its own slice its log is always decided. The
    // query's test can only start once the pattern's is answered, so it is queued after the costly
    // project's first test in any case.
    const bRules = [
      await createRule(b, bystander.id, 'bystander pattern', { level: 'error', pattern: '[a-z]{400}$' }),
      await createRule(b, bystander.id, 'bystander query', { level: 'error', query: '/[a-z]{400}$/' }),
    ];
    // The costly project keeps sending: every round has its logs, and its first test holds the
    // worker for about a second, far past a slice.
    let sending = true;
    let accepted = 0;
    const stream = (async () => {
      for (let i = 0; sending; i++) {
        const res = await ingest(s, costly.apiKey, [{ level: 'error', message: SLOW_MATCH.replace('abc', `ab${'cdefgh'[i % 6]}`) }]);
        expect([202, 429]).toContain(res.status);
        if (res.status === 202) accepted++;
        // sleep: this paces a steady stream over time (a log about every 100 ms, so every round has
        // the costly project's logs) instead of a flood; nothing waits on it.
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      // The costly stream is under way (its first logs committed, their tests holding the worker)
      // before the bystander's log arrives.
      await waitFor(() => accepted >= 2, 10_000, "the costly project's first logs");
      await send(bystander.apiKey, [{ level: 'error', message: 'q'.repeat(6000) }]);
      // Its log is decided within the costly project's stream (in the next round, after the costly
      // project's own slice), not carried from round to round behind its tests.
      for (const id of bRules) await waitFor(async () => (await firings(b, id)).length > 0, 15_000, "the bystander's alerts");
    } finally {
      sending = false;
      await stream;
    }
    // The costly project's backlog goes at once with its rule (a second a log otherwise).
    expect((await s.request('PUT', `/v1/alerts/${costlyRule}`, { token: a.accessToken, body: { enabled: false } })).status).toBe(200);
    await caughtUp(30_000);
    expect(gaveUp(bystander.id)).toEqual([]);
    for (const id of bRules) expect((await firings(b, id)).length).toBe(1);
  }, 60_000);

  it(`a log its rules cannot decide is given up after ${MAX_EVALUATION_ROUNDS} rounds, with a warning`, async () => {
    const p = await createProject(s, a, 'stalled');
    // Sixteen rules whose patterns each take about a second on these logs: a log needs sixteen
    // seconds of the worker, and a round decides about one test (the one the worker had started).
    const ids: string[] = [];
    for (let k = 0; k < 16; k++) ids.push(await createRule(a, p.id, `costly ${k}`, { level: 'error', pattern: `([a-z]{1000})([a-z]{${990 - k}})` }));
    const n = 3;
    await send(p.apiKey, Array.from({ length: n }, (_, i) => ({ level: 'error', message: SLOW_MATCH.replace('abc', `a${'bcd'[i]}c`) })));
    // Before, such logs were carried from round to round for ever, and evaluation never caught up.
    await caughtUp(30_000);
    const warnings = gaveUp(p.id);
    expect(warnings.length).toBeGreaterThan(0);
    for (const w of warnings) {
      expect(w.level).toBe(40);
      expect(w.rounds).toBe(MAX_EVALUATION_ROUNDS);
    }
    expect(warnings.reduce((sum, w) => sum + w.dropped, 0)).toBe(n);
    const counted = await s.database.db.selectFrom('alert_counts').select('n').where('rule_id', 'in', ids).execute();
    expect(counted).toEqual([]);
  }, 60_000);

  it('a project with more logs than fit in a slice has every one counted: that is no reason to give logs up', async () => {
    const p = await createProject(s, a, 'busy');
    const n = 20_000;
    const rules = 40;
    const ids: string[] = [];
    for (let k = 0; k < rules; k++) ids.push(await createRule(a, p.id, `busy ${k}`, { level: 'error', threshold: 1_000_000, query: `@i:>=${k * 250} @status:(500 OR 50${k % 5}) -word${k} failed` }));
    // 40 queries on 20,000 logs committed at once: more than five slices of work here, so most logs
    // wait several rounds (counted against them, they were given up).
    await Promise.all(
      Array.from({ length: n / 5000 }, (_, b) =>
        send(p.apiKey, Array.from({ length: 5000 }, (_, j) => ({ level: 'error', message: `request ${b * 5000 + j} failed`, metadata: { i: b * 5000 + j, status: 500 + ((b * 5000 + j) % 7) } }))),
      ),
    );
    await caughtUp(60_000);
    expect(gaveUp(p.id)).toEqual([]);
    const counted = await s.database.db
      .selectFrom('alert_counts')
      .select((eb) => ['rule_id', eb.fn.sum<number>('n').as('n')])
      .where('rule_id', 'in', ids)
      .groupBy('rule_id')
      .execute();
    const got = new Map(counted.map((c) => [c.rule_id, Number(c.n)]));
    ids.forEach((id, k) => {
      let want = 0;
      for (let i = k * 250; i < n; i++) if (500 + (i % 7) === 500 || 500 + (i % 7) === 500 + (k % 5)) want++;
      expect(got.get(id) ?? 0, `rule ${k}`).toBe(want);
    });
  }, 120_000);
});
