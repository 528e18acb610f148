/**
 * Issue 14, finding 2: a valid RE2 pattern froze the whole server for seconds (search, stats, tail
 * and alert rules), and rules with huge programs were recompiled on every rule-cache refresh. Now
 * patterns past MAX_PROGRAM_SIZE are refused before they are compiled, costly tests leave the
 * event loop for the regex worker, and every place a user regex runs goes through that runner.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { RE2JS } from 're2js';
import { describeEngines, errorOf, ingest, openTail, useAccount, useProject, useServer, waitFor } from './harness.js';
import { beside, expectUnharmed } from './hostile.js';
import { compileRe2, DFA_MAX_BYTES, estimateProgramSize, limitDfa, MAX_PROGRAM_SIZE, PatternTooCostly } from '../src/features/logs/pattern.js';
import { runTests } from '../src/features/logs/regex-runner.js';

/** The pattern: ~20,000 instructions and no literal to prefilter on. */
const HUGE = '([a-z]{1000})'.repeat(20);
/** 142,000 instructions: 0.2 s to compile, so it must be refused before compiling. */
const VAST = 'a{1000}'.repeat(142);
/** The costliest kind still allowed: just under the cap, no literal; ~0.5 s per 30,000-character log below. */
const COSTLY = '([a-z]{1000})([a-z]{990})';
/** 30,000 characters on which COSTLY keeps ~1,800 threads alive at every position and never matches. */
const VICTIM_TEXT = ('abc'.repeat(600) + '1').repeat(17).slice(0, 30_000);


/** re2js's DFA, whose fields limitDfa sets: what the budget test reads of it. */
interface DfaState { nfaStates: readonly number[]; matchIDs: readonly number[]; next: readonly unknown[] | null; nextAnchored: readonly unknown[] | null }
interface Dfa {
  maxMem: number;
  memBudget: number;
  clearCache(): void;
  cachedStates(): Iterable<DfaState>;
  constructor: { stateCost(pcs: readonly number[], ids: readonly number[]): number; TABLE_OVERHEAD: number; ELEMENT_SIZE: number };
}
const dfaOf = (re: RE2JS): Dfa => (re.re2Input as unknown as { dfa: Dfa }).dfa;
/** The bytes a DFA's cache holds, by re2js's own cost of each state and transition table. */
function dfaBytes(dfa: Dfa): number {
  const cost = dfa.constructor;
  let bytes = 0;
  for (const state of dfa.cachedStates()) {
    bytes += cost.stateCost(state.nfaStates, state.matchIDs);
    for (const table of [state.next, state.nextAnchored]) if (table !== null) bytes += cost.TABLE_OVERHEAD + cost.ELEMENT_SIZE * table.length;
  }
  return bytes;
}

describe('pattern cost cap', () => {
  it('refuses programs past the cap before compiling them, and caches by source', () => {
    expect(RE2JS.compile(COSTLY).re2Input.prog.numInst()).toBeLessThanOrEqual(MAX_PROGRAM_SIZE);
    expect(() => compileRe2(HUGE)).toThrow(PatternTooCostly);
    expect(() => compileRe2(VAST)).toThrow(PatternTooCostly);
    // The estimate alone refuses VAST: it is far past four times the cap, so nothing was compiled.
    expect(estimateProgramSize(VAST)).toBeGreaterThan(MAX_PROGRAM_SIZE * 4);
    // A pattern just past the cap by its real size, under it by the estimate's margin, is refused too.
    expect(estimateProgramSize('([a-z]{1000})([a-z]{1000})x')).toBeLessThan(MAX_PROGRAM_SIZE * 4);
    expect(() => compileRe2('([a-z]{1000})([a-z]{1000})x')).toThrow(PatternTooCostly);
    const a = compileRe2(COSTLY);
    expect(compileRe2(COSTLY)).toBe(a);
    expect(a.cheap(VICTIM_TEXT)).toBe(false);
    expect(compileRe2('timeout').cheap(VICTIM_TEXT)).toBe(true);
  });

  it('the runner answers exactly what RE2 answers, cheap and costly tests mixed, in order', async () => {
    const costly = compileRe2(COSTLY);
    const cheap = compileRe2('b(c|x)a');
    const texts = [VICTIM_TEXT, 'abcabc', 'q'.repeat(2500), VICTIM_TEXT.replace('1', 'z'.repeat(2000)), 'xbxa'];
    const tests = texts.flatMap((text) => [{ pattern: costly, text }, { pattern: cheap, text }]);
    const got = await runTests(tests, 'proj_runner', Date.now() + 20_000);
    const want = tests.map((t) => RE2JS.compile(t.pattern.source).test(t.text));
    expect(got).toEqual(want);
    expect(want).toContain(true);
    expect(want).toContain(false);
  });

  it("a compiled pattern's DFA keeps to its small budget, starting its cache again past it, with the same answers", () => {
    // A pattern whose DFA has thousands of states over varied text: the classic blow-up.
    const source = '[a-q][^u-z]{12}x';
    let seed = 7;
    const letter = () => String.fromCharCode(97 + ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 26));
    const texts = Array.from({ length: 40 }, () => Array.from({ length: 5000 }, letter).join(''));
    const small = limitDfa(RE2JS.compile(source), 64 * 1024);
    const plain = RE2JS.compile(source);
    const dfa = dfaOf(small);
    let restarts = 0;
    const clearCache = dfa.clearCache.bind(dfa);
    dfa.clearCache = () => {
      restarts++;
      clearCache();
    };
    for (const text of texts) {
      expect(small.test(text)).toBe(plain.test(text));
      // The bytes its cached states and tables hold, counted from what is in the cache, stay within the cap
      // after every text, and agree with its own accounting.
      const held = dfaBytes(dfa);
      expect(held).toBeLessThanOrEqual(64 * 1024);
      expect(held).toBe(dfa.maxMem - dfa.memBudget);
    }
    expect(dfa.maxMem).toBe(64 * 1024);
    // The cap was reached, and the cache started again, rather than never being tested:
    // without the cap the same texts make the DFA hold far more.
    expect(restarts).toBeGreaterThan(0);
    expect(dfaBytes(dfaOf(plain))).toBeGreaterThan(64 * 1024);
    // What the service compiles gets the default cap.
    expect(DFA_MAX_BYTES).toBeLessThan(8 * 1024 * 1024);
  });

  it('leaves tests undecided past the deadline instead of running them', async () => {
    const costly = compileRe2(COSTLY);
    const got = await runTests([{ pattern: costly, text: VICTIM_TEXT }], 'proj_late', Date.now() - 1);
    expect(got).toEqual([undefined]);
  });
});

describeEngines('a costly pattern never stalls the server', (engine) => {
  // A generous budget: the point here is that costly work does not stall others, not the budget.
  const s = useServer(engine, { env: { QUERY_TIME_BUDGET: '30s' } });
  const attacker = useAccount(s);
  const attackerProject = useProject(s, attacker, 'attacker');
  const bystander = useAccount(s, { plan: 'pro' });
  const bystanderProject = useProject(s, bystander, 'bystander');

  beforeAll(async () => {
    // Two of the attacker's own logs of 30,000 characters, as in the finding.
    const res = await ingest(s, attackerProject.apiKey, [{ message: VICTIM_TEXT }, { message: VICTIM_TEXT.replace(/1/g, '2') }]);
    expect(res.status).toBe(202);
  });

  it('patterns past the cost cap are a 400 everywhere a pattern is taken', async () => {
    const t = attacker.accessToken;
    const base = `/v1/projects/${attackerProject.id}/logs`;
    for (const pattern of [HUGE, VAST]) {
      const q = `pattern=${encodeURIComponent(pattern)}`;
      for (const path of [`${base}?${q}`, `${base}/stats?${q}`]) {
        const res = await s.request('GET', path, { token: t });
        expect(res.status).toBe(400);
        const err = errorOf(res);
        expect(err.details).toEqual([{ path: 'querystring:/pattern', message: expect.stringContaining('too costly') }]);
      }
      const tail = await openTail(s, t, attackerProject.id, { query: q });
      expect(tail.status).toBe(400);
      const created = await s.request('POST', '/v1/alerts', { token: t, body: { projectId: attackerProject.id, name: 'x', condition: { level: 'error', threshold: 1, window: '5m', pattern }, channels: ['email'] } });
      expect(created.status).toBe(400);
      expect(errorOf(created).details).toEqual([{ path: '/condition/pattern', message: expect.stringContaining('instructions') }]);
    }
  });

  it('search, stats, a tail and an alert rule with the costliest allowed pattern run beside a bystander that sees no stall', async () => {
    const t = attacker.accessToken;
    const base = `/v1/projects/${attackerProject.id}/logs`;
    const q = `pattern=${encodeURIComponent(COSTLY)}`;
    // The bystander's own rule, on a cheap pattern: it must fire while the attacker's costly work runs.
    const rule = await s.request('POST', '/v1/alerts', { token: bystander.accessToken, body: { projectId: bystanderProject.id, name: 'bystander errors', condition: { level: 'error', threshold: 1, window: '5m', pattern: 'pay(ment)? failed' }, channels: ['email'], cooldown: '0s' } });
    expect(rule.status).toBe(201);
    const attackRule = await s.request('POST', '/v1/alerts', { token: t, body: { projectId: attackerProject.id, name: 'costly', condition: { level: 'error', threshold: 1, window: '5m', pattern: COSTLY }, channels: ['email'] } });
    expect(attackRule.status).toBe(201);
    const tail = await openTail(s, t, attackerProject.id, { query: q });
    expect(tail.status).toBe(200);

    const { result, report } = await beside(s, bystanderProject.apiKey, async () => {
      // Every place the attacker's regex runs: search and stats over its long logs, then rule
      // evaluation (and the tail) on more of them.
      const search = s.request('GET', `${base}?${q}`, { token: t });
      const stats = s.request('GET', `${base}/stats?${q}`, { token: t });
      const bystanderError = ingest(s, bystanderProject.apiKey, [{ message: 'payment failed for order 7', level: 'error' }]);
      const [searched, counted, bystanderSent] = await Promise.all([search, stats, bystanderError]);
      const sent = await ingest(s, attackerProject.apiKey, Array.from({ length: 4 }, (_, i) => ({ message: VICTIM_TEXT.replace(/1/g, String(i)), level: 'error' })));
      const answers = [sent, searched, counted, bystanderSent] as const;
      // The bystander's rule fires while the attacker's evaluation is still working through its logs.
      await waitFor(async () => (await s.request('GET', `/v1/alerts/${rule.body.id}/history`, { token: bystander.accessToken })).body.data.length > 0, 10_000, "the bystander's alert");
      return answers;
    }, { minMs: 1500, label: 'the costliest regex in search, stats, tail and a rule' });
    expectUnharmed(report);
    const [sent, search, stats, bystanderError] = result;
    expect(sent.status).toBe(202);
    expect(bystanderError.status).toBe(202);
    // Correct answers, not just fast ones: none of these logs holds 1,990 letters in a row.
    expect(search.status).toBe(200);
    expect(search.body).toEqual({ data: [], nextCursor: null });
    expect(stats.status).toBe(200);
    expect(stats.body.buckets.reduce((n: number, b: { total: number }) => n + b.total, 0)).toBe(0);
    // A log the pattern does match reaches the tail, after the costly ones were decided.
    const match = 'q'.repeat(1990);
    expect((await ingest(s, attackerProject.apiKey, [{ message: match, level: 'error' }])).status).toBe(202);
    await tail.waitFor(() => tail.logs().some((l) => l.message === match), 15_000);
    expect(tail.logs().map((l) => l.message)).toEqual([match]);
    tail.close();
    // The attacker's rule did evaluate its logs in the end, and fired on the matching one.
    await waitFor(async () => (await s.request('GET', `/v1/alerts/${attackRule.body.id}/history`, { token: t })).body.data.length > 0, 15_000, "the attacker's alert");
    const history = await s.request('GET', `/v1/alerts/${attackRule.body.id}/history`, { token: t });
    expect(history.body.data[0]!.sample.map((l) => l.message)).toEqual([match]);
  });
});
