/**
 * Issue 25, finding 1 (and the query-compile and group-name parts of findings 6 and 7): one query
 * froze the server for seconds to minutes, because deciding one log was never interrupted and cost
 * whatever the query and the log made it. Now paths, multi-word terms and regexes over arrays cost
 * bounded work per log, counted (evalCounters), and a decision past its budget is undecided; groupBy
 * names in slices; a query's regexes are capped in all; real `(none)`/`(other)` values keep apart
 * from the synthetic groups. Each attack runs beside a bystander (test/hostile.ts).
 */
import { beforeEach, expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, openTail, signup, useAccount, useProject, useServer, waitFor } from './harness.js';
import { beside, expectUnharmed } from './hostile.js';
import { INLINE_COST } from '../src/features/logs/pattern.js';
import { evalCounters, resetEvalCounters } from '../src/features/logs/query/index.js';
import { runnerCounters } from '../src/features/logs/regex-runner.js';

const PATH_999 = Array.from({ length: 999 }, () => 'a').join('.');
const PATH_149 = Array.from({ length: 149 }, () => 'a').join('.');
/** The term: 998 wildcards and a b, matched against adjacent words. */
const TERM_999 = [...Array.from({ length: 998 }, () => '*'), 'b'].join('-');
/** The costliest regex allowed; an element of 990 letters is just cheap enough alone for the event loop, 44 of them are not. */
const COSTLY = '([a-z]{1000})([a-z]{990})';
const ELEMENT = 'abc'.repeat(330);

type Bucket = { total: number; groups?: Record<string, number> };
const groupsOf = (buckets: Bucket[]) => {
  const out: Record<string, number> = {};
  for (const b of buckets) for (const [k, n] of Object.entries(b.groups ?? {})) out[k] = (out[k] ?? 0) + n;
  return out;
};

describeEngines('deciding a log never freezes the server', (engine) => {
  const s = useServer(engine, { env: { QUERY_TIME_BUDGET: '30s' } });
  const bystanderProject = useProject(s, useAccount(s, { plan: 'pro' }), 'bystander');
  /** Each attack from a fresh free account (one project each). */
  let attacker: Awaited<ReturnType<typeof signup>>;

  beforeEach(async () => {
    attacker = await signup(s);
  });

  const rule = async (projectId: string, query: string) => {
    const res = await s.request('POST', '/v1/alerts', { token: attacker.accessToken, body: { projectId, name: 'eval', condition: { level: 'error', threshold: 1, window: '5m', query }, channels: ['email'], cooldown: '0s' } });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const history = async (ruleId: string) => (await s.request('GET', `/v1/alerts/${ruleId}/history`, { token: attacker.accessToken })).body.data;

  it('a 999-segment path over 2,000 objects in search, a tail and an alert rule, and a 149-segment groupBy over 20,000 objects', async () => {
    const project = await createProject(s, attacker, 'paths');
    const base = `/v1/projects/${project.id}/logs`;
    const query = `@${PATH_999}:*`;
    const ruleId = await rule(project.id, query);
    const tail = await openTail(s, attacker.accessToken, project.id, { query: `query=${encodeURIComponent(query)}` });
    expect(tail.status).toBe(200);
    resetEvalCounters();
    const { result, report } = await beside(s, bystanderProject.apiKey, async () => {
      const wide = Array.from({ length: 4 }, (_, i) => ({ message: `wide ${i}`, level: 'error', metadata: { a: Array.from({ length: 2000 }, () => ({})) } }));
      const deep = Array.from({ length: 5 }, (_, i) => ({ message: `deep ${i}`, level: 'info', metadata: { a: Array.from({ length: 20_000 }, () => ({})) } }));
      const flat = [{ message: 'the flat key', level: 'error', metadata: { [PATH_999]: 'x' } }, { message: 'the 149 key', level: 'info', metadata: { [PATH_149]: 'v' } }];
      for (const batch of [wide, deep, flat]) expect((await ingest(s, project.apiKey, batch)).status).toBe(202);
      const searched = await s.request('GET', `${base}?query=${encodeURIComponent(query)}`, { token: attacker.accessToken });
      const grouped = await s.request('GET', `${base}/stats?groupBy=${encodeURIComponent(PATH_149)}`, { token: attacker.accessToken });
      await tail.waitFor(() => tail.logs().some((l) => l.message === 'the flat key'), 20_000);
      await waitFor(async () => (await history(ruleId)).length > 0, 20_000, "the attacker's rule");
      return { searched, grouped };
    }, { label: '999-segment path: search, groupBy, tail, rule' });
    expectUnharmed(report);
    // Right answers: only the flat dotted key is at the path.
    expect(result.searched.status).toBe(200);
    expect(result.searched.body.data.map((l: { message: string }) => l.message)).toEqual(['the flat key']);
    expect(result.grouped.status).toBe(200);
    expect(groupsOf(result.grouped.body.buckets)).toEqual({ v: 1, '(none)': 10 });
    expect(tail.logs().map((l) => l.message)).toEqual(['the flat key']);
    tail.close();
    expect((await history(ruleId))[0]!.sample.map((l) => l.message)).toEqual(['the flat key']);
    // Bounded, counted work: about one unit per metadata value, for every decision and every group.
    expect(evalCounters.maxDecisionUnits).toBeLessThan(25_000);
    expect(evalCounters.maxGroupUnits).toBeLessThan(25_000);
    expect(evalCounters.cutOff).toBe(0);
  });

  it('a 999-word bare term over logs of 30,000 one-letter words, in search and as an alert rule', async () => {
    const project = await createProject(s, attacker, 'terms');
    const ruleId = await rule(project.id, TERM_999);
    resetEvalCounters();
    const words = (i: number) => Array.from({ length: 30_000 }, (_, k) => (i === 0 && k === 29_999 ? 'b' : 'abcdefghijklmnopqrstuvwxyz'[(k + i) % 26] === 'b' ? 'c' : 'abcdefghijklmnopqrstuvwxyz'[(k + i) % 26])).join(' ');
    const { result, report } = await beside(s, bystanderProject.apiKey, async () => {
      const sent = await ingest(s, project.apiKey, Array.from({ length: 3 }, (_, i) => ({ message: words(i), level: 'error', metadata: { i } })));
      expect(sent.status).toBe(202);
      const searched = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(TERM_999)}`, { token: attacker.accessToken });
      await waitFor(async () => (await history(ruleId)).length > 0, 20_000, "the attacker's rule");
      return searched;
    }, { label: '999-word term: search, rule' });
    expectUnharmed(report);
    // Only the log whose last word is b has 998 words before a b.
    expect(result.status).toBe(200);
    expect(result.body.data.map((l) => l.metadata.i)).toEqual([0]);
    expect((await history(ruleId))[0]!.sample.map((l) => l.message)).toEqual([words(0)]);
    // Indexing 30,000 words once, then a candidate per b: not 999 × 30,000 comparisons.
    expect(evalCounters.maxDecisionUnits).toBeLessThan(80_000);
    expect(evalCounters.cutOff).toBe(0);
  });

  it('a regex over a 44-element metadata array, in search and as an alert rule: one inline budget per log', async () => {
    const project = await createProject(s, attacker, 'arrays');
    const query = `@arr:/${COSTLY}/`;
    const ruleId = await rule(project.id, query);
    resetEvalCounters();
    runnerCounters.maxStepsPerTurn = 0;
    const { result, report } = await beside(s, bystanderProject.apiKey, async () => {
      const logs = [0].map((i) => ({ message: `array ${i}`, level: 'error', metadata: { arr: Array.from({ length: 44 }, () => ELEMENT) } }));
      logs.push({ message: 'array match', level: 'error', metadata: { arr: [ELEMENT, 'q'.repeat(1990)] } });
      expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
      const searched = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(query)}`, { token: attacker.accessToken });
      await waitFor(async () => (await history(ruleId)).length > 0, 30_000, "the attacker's rule");
      return searched;
    }, { label: 'regex over a 44-element array: search, rule' });
    expectUnharmed(report);
    expect(result.status).toBe(200);
    expect(result.body.data.map((l) => l.message)).toEqual(['array match']);
    expect((await history(ruleId))[0]!.sample.map((l) => l.message)).toEqual(['array match']);
    // What one log ran inline, and what ran between two turns of the event loop: one budget each
    // (here the runs of elements all went to the regex worker, off the event loop).
    expect(evalCounters.maxLogRegexSteps).toBeLessThanOrEqual(INLINE_COST);
    expect(runnerCounters.maxStepsPerTurn).toBeLessThanOrEqual(INLINE_COST);
  }, 120_000);

  it('64 fresh 2,000-instruction regexes in one query are a 400, compiled no further than the cap', async () => {
    const project = await createProject(s, attacker, 'compile');
    let n = 0;
    const statuses: number[] = [];
    const messages = new Set<string>();
    const { report } = await beside(s, bystanderProject.apiKey, async () => {
      for (let r = 0; r < 20; r++) {
        const fresh = (Date.now() % 36 ** 3).toString(36) + (n++).toString(36);
        const q = Array.from({ length: 64 }, (_, i) => `/x{995}y{995}${fresh}${i}/`).join(' OR ');
        const res = await s.request('GET', `/v1/projects/${project.id}/logs?query=${encodeURIComponent(q)}`, { token: attacker.accessToken });
        statuses.push(res.status);
        messages.add(String((errorOf(res).details as { message: string }[])[0]!.message.replace(/^at column \d+: /, '')));
      }
    }, { label: '64 fresh regexes per query' });
    expectUnharmed(report);
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 400));
    expect([...messages]).toEqual(['expected regular expressions of at most 4,000 instructions in all in one query']);
  });

  it('a real value (none) or (other) is not merged with the synthetic groups of that name', async () => {
    const project = await createProject(s, attacker, 'groups');
    const logs: { message: string; source?: string; metadata?: Record<string, unknown> }[] = [];
    // Eleven values: the ten most frequent keep their names, k0 (the least) goes to (other).
    for (let k = 0; k <= 10; k++) for (let j = 0; j <= k; j++) logs.push({ message: `k${k}`, metadata: { kind: `k${k}` } });
    for (let j = 0; j < 20; j++) logs.push({ message: 'real none', source: '(none)', metadata: { kind: '(none)' } });
    for (let j = 0; j < 30; j++) logs.push({ message: 'real other', metadata: { kind: '(other)' } });
    logs.push({ message: 'escaped', metadata: { kind: '\\(none)' } });
    logs.push({ message: 'missing' });
    expect((await ingest(s, project.apiKey, logs)).status).toBe(202);
    const kind = await s.request('GET', `/v1/projects/${project.id}/logs/stats?groupBy=kind`, { token: attacker.accessToken });
    expect(kind.status).toBe(200);
    const groups = groupsOf(kind.body.buckets);
    expect(groups['\\(none)']).toBe(20);
    expect(groups['\\(other)']).toBe(30);
    expect(groups['(none)']).toBe(logs.length - 11 * 12 / 2 - 50 - 1);
    // k0, k1 and k2 (one, two and three logs) and `\(none)` (one) are past the ten most frequent.
    expect(groups['(other)']).toBe(1 + 2 + 3 + 1);
    expect(groups['k10']).toBe(11);
    const source = await s.request('GET', `/v1/projects/${project.id}/logs/stats?groupBy=source`, { token: attacker.accessToken });
    expect(groupsOf(source.body.buckets)).toEqual({ '\\(none)': 20, '(none)': logs.length - 20 });
  });
});
