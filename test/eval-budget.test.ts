/**
 * Issue 25, finding 1 (pure parts): deciding one log costs bounded, counted work. A metadata path
 * compares each object's keys with the path (not every split of it), a multi-word term is looked
 * up in a word index from its rarest word, a log has one inline regex budget for all its array
 * elements, and a decision past DECISION_BUDGET units is undecided. Differential checks against
 * the algorithms they replace keep the meaning.
 */
import { describe, expect, it } from 'vitest';
import { INLINE_COST } from '../src/features/logs/pattern.js';
import { DECISION_BUDGET, evalCounters, evaluate, groupName, groupNames, inlineRegexes, LogView, MAX_GROUP_NAME, MAX_QUERY_PROGRAM_SIZE, parseGroupBy, parseQuery, resetEvalCounters } from '../src/features/logs/query/index.js';
import { resolvePath } from '../src/features/logs/query/view.js';
import { AppError } from '../src/errors.js';

const log = (message: string, metadata?: unknown) => ({ ts: 0, level: 2, source: null, message, metadata: metadata === undefined ? null : JSON.stringify(metadata) });
const decide = (q: string, l: ReturnType<typeof log>) => evaluate(parseQuery(q).root, new LogView(l), inlineRegexes(Number.POSITIVE_INFINITY));

/** The path resolution this replaces: every split of the remaining path tried as a key at every object. */
function resolveBySplits(root: unknown, path: readonly string[]): unknown[] {
  const out: unknown[] = [];
  if (root === undefined) return out;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [v, i] = stack.pop()!;
    if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push([v[k], i]);
      continue;
    }
    if (i === path.length) {
      out.push(v);
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    let key = '';
    for (let j = i; j < path.length; j++) {
      key = j === i ? path[i]! : key + '.' + path[j]!;
      if (Object.hasOwn(v, key)) stack.push([(v as Record<string, unknown>)[key], j + 1]);
    }
  }
  return out;
}

/** The adjacency this replaces: every start position, every term word compared. */
function adjacentNaive(term: string[], words: string[]): boolean {
  const glob = (t: string, w: string) => (t === '*' ? true : t.endsWith('*') ? w.startsWith(t.slice(0, -1)) : t === w);
  for (let i = 0; i + term.length <= words.length; i++) {
    let j = 0;
    while (j < term.length && glob(term[j]!, words[i + j]!)) j++;
    if (j === term.length) return true;
  }
  return false;
}

let seed = 11;
const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
const pick = <T>(xs: readonly T[]) => xs[rand(xs.length)]!;

describe('metadata paths', () => {
  it('resolve as every split did, on generated keys (empty, dotted, unicode, long) and nesting', () => {
    const keys = ['a', 'b', '', 'a.b', 'b.a', 'a.b.a', 'é', 'x'.repeat(300), 'a..b', '.a', 'a.'];
    const gen = (depth: number): unknown => {
      const r = rand(6);
      if (depth > 3 || r === 0) return pick([1, 'v', null, true, 'a b']);
      if (r === 1) return Array.from({ length: rand(3) }, () => gen(depth + 1));
      const o: Record<string, unknown> = {};
      for (let k = rand(4); k >= 0; k--) o[pick(keys)] = gen(depth + 1);
      return o;
    };
    let compared = 0;
    for (let run = 0; run < 3000; run++) {
      const meta = gen(0);
      const path = Array.from({ length: 1 + rand(4) }, () => pick(['a', 'b', '', 'é', 'x'.repeat(300)]));
      expect(resolvePath(meta, path)).toEqual(resolveBySplits(meta, path));
      if (resolveBySplits(meta, path).length > 0) compared++;
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('a 999-segment path over 2,000 objects costs about one unit per value, and finds a flat dotted key', () => {
    const path = Array.from({ length: 999 }, () => 'a');
    const query = `@${path.join('.')}:*`;
    resetEvalCounters();
    expect(decide(query, log('m', { a: Array.from({ length: 2000 }, () => ({})) }))).toBe(false);
    expect(evalCounters.maxDecisionUnits).toBeLessThan(5000);
    expect(decide(query, log('m', { [path.join('.')]: 'x' }))).toBe(true);
    expect(decide(query, log('m', { a: { [path.slice(1).join('.')]: 'x' } }))).toBe(true);
    // groupBy names from the same resolution, counted too.
    resetEvalCounters();
    const group = parseGroupBy(path.slice(0, 149).join('.'));
    expect(groupNames(group, log('m', { a: Array.from({ length: 20_000 }, () => ({})) }))).toEqual(['(none)']);
    expect(evalCounters.maxGroupUnits).toBeLessThan(25_000);
  });
});

describe('multi-word terms', () => {
  it('match as comparing every position did, on generated terms and texts', () => {
    for (let run = 0; run < 2000; run++) {
      const words = Array.from({ length: rand(40) }, () => pick(['a', 'b', 'ab', 'ba', 'c']));
      const term = Array.from({ length: 2 + rand(4) }, () => pick(['a', 'b', '*', 'a*', 'ab', 'c']));
      const want = adjacentNaive(term, words);
      expect(decide(term.join('-'), log(words.join(' ')))).toBe(want);
      expect(decide(term.join('-'), log('zzz', { k: [words.join(' ')] }))).toBe(want);
    }
  });

  it('`*-*-…-b` of 999 words over 30,000 one-letter words costs the occurrences of b', () => {
    const term = [...Array.from({ length: 998 }, () => '*'), 'b'].join('-');
    const text = Array.from({ length: 30_000 }, (_, i) => (i % 7 === 0 ? 'b' : 'a')).join(' ');
    resetEvalCounters();
    expect(decide(term, log(text))).toBe(true);
    expect(decide(term, log(text.replace(/b/g, 'c')))).toBe(false);
    expect(decide(term, log('zzz', { m: text }))).toBe(true);
    // Indexing the words once (30,000) and a candidate per b: nowhere near 999 × 30,000.
    expect(evalCounters.maxDecisionUnits).toBeLessThan(80_000);
    expect(evalCounters.cutOff).toBe(0);
  });

  it('a decision past its budget is undecided, not a stall, and counted', () => {
    // 30 runs of 998 b's and an x: every b is a candidate for 999 b's, each failing late.
    const text = Array.from({ length: 30 }, () => 'b '.repeat(998) + 'x').join(' ');
    const term = Array.from({ length: 999 }, () => 'b').join('-');
    resetEvalCounters();
    expect(decide(term, log(text))).toBeUndefined();
    expect(evalCounters.cutOff).toBe(1);
    // Cut off within one look at the budget past it.
    expect(evalCounters.maxDecisionUnits).toBeLessThan(DECISION_BUDGET + 10_000);
    // NOT of undecided is undecided: the three-valued predicate, never a wrong answer.
    expect(decide(`-(${term})`, log(text))).toBeUndefined();
  });
});

describe('regexes over arrays', () => {
  it('a log has one inline budget for all its elements; the rest is left to the runner', () => {
    // Each element is cheap alone (under INLINE_COST), 44 of them are not.
    const element = 'abc'.repeat(330);
    const l = log('m', { arr: Array.from({ length: 44 }, () => element) });
    const q = parseQuery('@arr:/([a-z]{1000})([a-z]{990})/');
    const leaf = q.regexes[0]!;
    expect(leaf.pattern.cost(element)).toBeLessThanOrEqual(INLINE_COST);
    expect(leaf.pattern.cost(element) * 44).toBeGreaterThan(INLINE_COST);
    resetEvalCounters();
    expect(evaluate(q.root, new LogView(l), inlineRegexes(Number.POSITIVE_INFINITY))).toBeUndefined();
    expect(evalCounters.maxLogRegexSteps).toBeLessThanOrEqual(INLINE_COST);
  });
});

describe('compiling a query', () => {
  it("64 fresh 2,000-instruction regexes are a 400 at the one past the query's total, compiled no further", () => {
    const fresh = (Date.now() % 36 ** 4).toString(36);
    const regexes = Array.from({ length: 64 }, (_, i) => `/x{995}y{995}${fresh}${i}/`);
    const q = regexes.join(' OR ');
    let err: unknown;
    try {
      parseQuery(q);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    const details = (err as AppError).details as { path: string; message: string }[];
    expect(details[0]!.message).toContain(`${MAX_QUERY_PROGRAM_SIZE.toLocaleString('en')} instructions`);
    // The third regex crosses it (two fit): the 61 after it were never compiled.
    const third = regexes[0]!.length + regexes[1]!.length + 2 * ' OR '.length + 1;
    expect(details[0]!.message).toMatch(new RegExp(`^at column ${third}:`));
  });

  it('a query text is parsed once while cached', () => {
    const q = `@k:/x${Date.now()}y/ AND level:error`;
    expect(parseQuery(q)).toBe(parseQuery(q));
  });
});

describe('group names', () => {
  it('a real (none) or (other) is escaped, long values are cut and stay distinct', () => {
    expect(groupName('(none)')).toBe('\\(none)');
    expect(groupName('(other)')).toBe('\\(other)');
    expect(groupName('\\(none)')).toBe('\\\\(none)');
    expect(groupName('(nonE)')).toBe('(nonE)');
    const a = 'x'.repeat(60_000) + 'a';
    const b = 'x'.repeat(60_000) + 'b';
    expect(groupName(a)).not.toBe(groupName(b));
    expect(groupName(a).length).toBeLessThan(MAX_GROUP_NAME + 20);
    expect(groupName('y'.repeat(MAX_GROUP_NAME))).toBe('y'.repeat(MAX_GROUP_NAME));
  });
});
