/**
 * The query language as a pure module (src/features/logs/query): the parser's errors and limits,
 * the predicate over the table of cases (test/query-cases.ts) drawn from docs/search.md ("The rules",
 * "Worked examples over two real logs"), the narrowing (a superset on every
 * case), groupBy, and random queries that may only ever produce the 400.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../src/errors.js';
import { levelIndex, LEVELS, parseLevel } from '../src/features/logs/levels.js';
import { compilePattern, parseFilter } from '../src/features/logs/filter.js';
import { FOLDS_TO_ASCII, fold, groupNames, matchEach, matchLogs, narrowing, parseGroupBy, parseQuery, withFilter, type Narrowing, type Query, type QueryLog } from '../src/features/logs/query/index.js';
import { globMatch, makeGlob, ONE, STAR, type GlobPart } from '../src/features/logs/query/text.js';
import { QUERY_CASES, QUERY_ERRORS, QUERY_LOGS, type NamedLog } from './query-cases.js';

const OWNER = 'proj_test';
const soon = () => Date.now() + 10_000;

async function selected(query: Query, logs: readonly NamedLog[] = QUERY_LOGS): Promise<string[]> {
  const answers = await matchLogs(query, logs, OWNER, soon());
  expect(answers.every((a) => a !== undefined)).toBe(true);
  return logs.filter((_, i) => answers[i]).map((l) => l.name).sort();
}

/** The 400 a query gives: its details[0]. */
function refusal(text: string, path?: string): { path: string; message: string } {
  try {
    parseQuery(text, path);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    expect(e.code).toBe('VALIDATION_ERROR');
    expect(e.status).toBe(400);
    return (e.details as { path: string; message: string }[])[0]!;
  }
  throw new Error(`parsed without an error: ${text}`);
}

describe('the fixtures', () => {
  it('have unique names and the stored shape', () => {
    expect(new Set(QUERY_LOGS.map((l) => l.name)).size).toBe(QUERY_LOGS.length);
    for (const l of QUERY_LOGS) {
      expect(l.level).toBeGreaterThanOrEqual(0);
      expect(l.level).toBeLessThan(LEVELS.length);
      if (l.metadata !== null) expect(JSON.stringify(JSON.parse(l.metadata))).toBe(l.metadata);
    }
    for (const c of QUERY_CASES) for (const name of c.expect) expect(QUERY_LOGS.some((l) => l.name === name), `${c.query}: ${name}`).toBe(true);
    expect(QUERY_CASES.length).toBeGreaterThanOrEqual(60);
  });
});

describe('parser', () => {
  it.each(QUERY_ERRORS.map((e) => [e.query.length > 60 ? `${e.query.slice(0, 60)}… (${e.query.length})` : e.query, e] as const))('refuses %s with its column', (_, e) => {
    const d = refusal(e.query);
    expect(d.path).toBe('querystring:/query');
    const m = /^at column (\d+): (expected .*)$/.exec(d.message);
    expect(m, d.message).not.toBeNull();
    expect(Number(m![1]), d.message).toBe(e.column);
    expect(m![2], d.message).toMatch(e.expected);
  });

  it('uses the caller’s path and a sentence for the top-level message', () => {
    expect(refusal('@status:', '/condition/query')).toEqual({ path: '/condition/query', message: "at column 9: expected a value after ':'" });
    expect(() => parseQuery('(a')).toThrow(AppError);
    expect(() => parseQuery('(a')).toThrow(/^The query is not valid: at column 3: expected '\)' to close the '\(' at column 1\.$/);
  });

  it('holds the limits exactly at their edges', () => {
    expect(() => parseQuery('a'.repeat(2000))).not.toThrow();
    expect(() => parseQuery('🚀'.repeat(2000))).not.toThrow(); // code points, not UTF-16 units
    expect(refusal('🚀'.repeat(2001)).message).toMatch(/^at column 2001: /);
    expect(() => parseQuery(Array.from({ length: 64 }, (_, i) => `w${i}`).join(' '))).not.toThrow();
    expect(() => parseQuery(`${'('.repeat(16)}a${')'.repeat(16)}`)).not.toThrow();
    expect(() => parseQuery(`${'('.repeat(15)}@x:(1 OR 2)${')'.repeat(15)}`)).not.toThrow();
    expect(() => parseQuery(`@x:(${Array.from({ length: 64 }, (_, i) => i).join(' OR ')})`)).not.toThrow();
    expect(refusal(`@x:(${Array.from({ length: 65 }, (_, i) => i).join(' OR ')})`).message).toMatch(/at most 64 terms/);
    // Prefixes are read in a loop, not recursively: a long run of them is fine.
    expect(() => parseQuery('-'.repeat(1999) + 'a')).not.toThrow();
    expect(() => parseQuery('NOT '.repeat(499) + 'a')).not.toThrow();
  });

  it('counts columns in code points', () => {
    expect(refusal('🚀🚀 (a').message).toBe("at column 6: expected ')' to close the '(' at column 4");
    expect(refusal('é\u0301 @x:').message).toBe("at column 7: expected a value after ':'");
  });

  it('gives nodes their columns', () => {
    const q = parseQuery('🚀 level:error OR "x y"');
    expect(q.root.kind).toBe('or');
    if (q.root.kind !== 'or') return;
    const [and, phrase] = q.root.children;
    expect(and).toMatchObject({ kind: 'and', start: 1, end: 14 });
    expect(phrase).toMatchObject({ kind: 'phrase', start: 18, end: 23 });
    if (and?.kind !== 'and') return;
    expect(and.children[1]).toMatchObject({ kind: 'field', start: 3, end: 14, field: { kind: 'level', start: 3, end: 8 }, value: { kind: 'range', start: 9, end: 14 } });
  });

  it('reads precedence as NOT > AND > OR, and lower-case operators as words', () => {
    const shape = (n: Query['root']): unknown =>
      n.kind === 'and' || n.kind === 'or' ? { [n.kind]: n.children.map(shape) } : n.kind === 'not' ? { not: shape(n.child) } : n.kind === 'term' ? n.text : n.kind;
    expect(shape(parseQuery('a b OR c').root)).toEqual({ or: [{ and: ['a', 'b'] }, 'c'] });
    expect(shape(parseQuery('a OR b c').root)).toEqual({ or: ['a', { and: ['b', 'c'] }] });
    expect(shape(parseQuery('a AND b OR NOT c d').root)).toEqual({ or: [{ and: ['a', 'b'] }, { and: [{ not: 'c' }, 'd'] }] });
    expect(shape(parseQuery('-a -(b OR c)').root)).toEqual({ and: [{ not: 'a' }, { not: { or: ['b', 'c'] } }] });
    expect(shape(parseQuery('a and b or not c').root)).toEqual({ and: ['a', 'and', 'b', 'or', 'not', 'c'] });
    expect(shape(parseQuery('NOT NOT a').root)).toEqual('a');
  });

  it('turns every regex failure into the 400 at the regex', () => {
    for (const q of ['/a{2,1}/', '/\\8/', '/(?<name)/', '/[z-a]/']) {
      expect(refusal(`ok ${q}`).message, q).toMatch(/^at column 4: expected (a valid RE2|a cheaper)/);
    }
  });
});

describe('predicate', () => {
  it.each(QUERY_CASES.map((c) => [c.query, c] as const))('%s', async (_, c) => {
    expect(await selected(parseQuery(c.query))).toEqual([...c.expect].sort());
  });

  it('answers undefined for a log whose regex was not decided in time, and decides the rest', async () => {
    const logs: QueryLog[] = [
      { ts: 1, level: 4, source: null, message: 'x'.repeat(60_000), metadata: null },
      { ts: 1, level: 2, source: null, message: 'y'.repeat(60_000), metadata: null },
    ];
    const q = parseQuery('level:error /x[a-z]{60}z/');
    // A deadline already past: the costly test (the message is long) is never run.
    const answers = await matchLogs(q, logs, OWNER, Date.now() - 1);
    expect(answers).toEqual([undefined, false]);
    expect(await matchLogs(parseQuery('level:info OR /x[a-z]{60}z/'), logs, OWNER, Date.now() - 1)).toEqual([undefined, true]);
  });

  it('honours the deadline in its in-memory loop too: the first slice is decided, the logs not reached answer undefined', async () => {
    // No regex at all: before, the whole loop ran to the end whatever the deadline.
    const logs: QueryLog[] = Array.from({ length: 100_000 }, (_, i) => ({ ts: i, level: 2, source: null, message: `request ${i} failed`, metadata: JSON.stringify({ i, user: { id: `u${i % 7}` } }) }));
    const answers = await matchLogs(parseQuery('@user.id:u3 failed'), logs, OWNER, Date.now() - 1);
    const reached = answers.indexOf(undefined);
    expect(reached).toBeGreaterThan(0);
    expect(answers.slice(0, reached)).toEqual(logs.slice(0, reached).map((_, i) => i % 7 === 3));
    expect(answers.slice(reached).every((a) => a === undefined)).toBe(true);
  });

  it('runs each slice\'s regexes before the next slice: at the deadline the logs reached are decided, not left on tests never run', async () => {
    // Long in-memory work per log (a bare word over 2,000 metadata values), and a regex that the
    // worker runs (too long a text for the event loop): were every regex left until after the
    // in-memory pass, the pass would use up the deadline and no test would run at all.
    const metadata = JSON.stringify({ words: Array.from({ length: 2000 }, (_, i) => `value${i} of the request`) });
    const message = 'x'.repeat(30_000);
    const logs: QueryLog[] = Array.from({ length: 5000 }, (_, i) => ({ ts: i, level: 2, source: null, message, metadata }));
    const q = parseQuery('nowhere OR /[a-z]{400}$/');
    expect(q.regexes[0]!.pattern.cheap(message)).toBe(false);
    const answers = await matchLogs(q, logs, OWNER, Date.now() + 1000);
    const reached = answers.indexOf(undefined);
    expect(reached).toBeGreaterThan(0);
    expect(answers.slice(0, reached).every((a) => a === true)).toBe(true);
  });

  it('lets the event loop in every few milliseconds, or after holdMs when the caller says so', async () => {
    const logs: QueryLog[] = Array.from({ length: 50_000 }, (_, i) => ({ ts: i, level: 2, source: null, message: `request ${i} failed`, metadata: JSON.stringify({ i, user: { id: `u${i % 7}` } }) }));
    const q = parseQuery('@user.id:u3 failed');
    const turnsDuring = async (holdMs: number | undefined) => {
      let turns = 0;
      let done = false;
      const tick = () => {
        if (done) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const answers = await matchEach(logs, () => [q], OWNER, soon(), holdMs === undefined ? {} : { holdMs });
      done = true;
      expect(answers.every((a) => a[0] !== undefined)).toBe(true);
      return turns;
    };
    expect(await turnsDuring(undefined)).toBeGreaterThan(1);
    expect(await turnsDuring(60_000)).toBe(0);
  });

  it("matchEach decides several queries over one view of each log: its metadata parsed once, each answer the query's own", async () => {
    const queries = QUERY_CASES.map((c) => parseQuery(c.query));
    // Each log its own list of queries, as alert rules give them.
    const queriesOf = (i: number) => queries.filter((_, k) => (k + i) % 3 !== 0);
    const parse = vi.spyOn(JSON, 'parse');
    let together: (boolean | undefined)[][];
    let parses: number;
    try {
      together = await matchEach(QUERY_LOGS, queriesOf, OWNER, soon());
      parses = parse.mock.calls.length;
    } finally {
      parse.mockRestore();
    }
    expect(parses).toBe(QUERY_LOGS.filter((l) => l.metadata !== null).length);
    for (const [i, log] of QUERY_LOGS.entries()) {
      const alone = await Promise.all(queriesOf(i).map(async (q) => (await matchLogs(q, [log], OWNER, soon()))[0]));
      expect(together[i], log.name).toEqual(alone);
    }
  });

  it('parses malformed or odd metadata without throwing', async () => {
    const logs: QueryLog[] = [
      { ts: 1, level: 2, source: null, message: 'm', metadata: '{not json' },
      { ts: 1, level: 2, source: null, message: 'm', metadata: '[1,2,{"a":3}]' },
      { ts: 1, level: 2, source: null, message: 'm', metadata: JSON.stringify({ __proto__: 1, constructor: { a: 'x' } }).replace('{', '{"__proto__":{"a":"p"},') },
      { ts: 1, level: 2, source: null, message: 'm', metadata: '['.repeat(5000) + ']'.repeat(5000) },
    ];
    expect(await matchLogs(parseQuery('@a:3'), logs, OWNER, soon())).toEqual([false, true, false, false]);
    expect(await matchLogs(parseQuery('@__proto__.a:p'), logs, OWNER, soon())).toEqual([false, false, true, false]);
    expect(await matchLogs(parseQuery('@constructor.a:x p'), logs, OWNER, soon())).toEqual([false, false, true, false]);
    expect(await matchLogs(parseQuery('@toString:*'), logs, OWNER, soon())).toEqual([false, false, false, false]);
  });

  it('resolves dotted paths without blowing up on many ways to split them', async () => {
    const meta: Record<string, unknown> = {};
    let node: Record<string, unknown> = meta;
    for (let i = 0; i < 30; i++) {
      node['a.a'] = { a: {} };
      const next: Record<string, unknown> = {};
      node.a = next;
      node = next;
    }
    node.end = 1;
    const log: QueryLog = { ts: 1, level: 2, source: null, message: '', metadata: JSON.stringify(meta) };
    const path = Array.from({ length: 30 }, () => 'a').join('.');
    // Trying each of the 2^30 ways to split the path would not finish within the test's timeout: the right
    // answer at all is the check. The time depends on the machine, so it is printed, never asserted.
    const started = performance.now();
    expect(await matchLogs(parseQuery(`@${path}.end:1`), [log], OWNER, soon())).toEqual([true]);
    console.log(`30-level dotted path resolved in ${Math.round(performance.now() - started)} ms`);
  });

  it('ANDs the legacy parameters as nodes of the same tree', async () => {
    const q = withFilter(parseQuery('request'), { levels: [4], source: 'api', q: 'COMPLETED', pattern: compilePattern('req') });
    expect(await selected(q)).toEqual(['pino-503']);
    expect(await selected(withFilter(parseQuery(''), { source: 'API' }))).toEqual(['pino-500-string']);
    expect(await selected(withFilter(parseQuery(''), { from: Date.parse('2026-11-23T14:04:00Z'), to: Date.parse('2026-11-23T14:05:00Z') }))).toEqual(['escapes', 'level-key']);
    expect(narrowing(withFilter(parseQuery('level:>=warn'), { levels: [2, 4], source: 'api', q: 'Completed' }))).toEqual({ levels: [4], sources: ['api'], contains: ['completed'] });
  });
});

describe('the legacy parameters and the query read alike', () => {
  it('a time without an offset is UTC in from/to as in timestamp:, whatever the server’s zone', () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect(new Date(2026, 10, 24).getTime()).not.toBe(Date.UTC(2026, 10, 24));
      const midnight = Date.UTC(2026, 10, 24);
      for (const text of ['2026-11-24', '2026-11-24T00:00:00', '2026-11-24 00:00', '2026-11-24T01:00:00+01:00', `${midnight}`]) {
        expect(parseFilter({ from: text, to: ` ${text} ` }), text).toEqual({ from: midnight, to: midnight });
        const root = parseQuery(`timestamp:"${text}"`).root;
        expect(root.kind === 'field' && root.value.kind === 'range' ? root.value.lo : undefined, text).toBe(midnight);
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    for (const bad of ['yesterday', '2026-11-24T25:00', '2026-02-30', '2026-11-24 GMT', '']) {
      expect(() => parseFilter({ from: bad }), bad).toThrow(AppError);
    }
  });

  it('level values are the six names in any case, never ingestion’s aliases', () => {
    expect(parseFilter({ level: 'WARN, error,warn' }).levels).toEqual([3, 4]);
    expect(parseFilter({ level: '\u0130NFO' }).levels).toEqual([2]);
    expect(parseQuery('level:\u0130NFO').root).toMatchObject({ value: { lo: 2, hi: 2 } });
    for (const alias of ['warning', 'err', 'critical', 'verbose', '40', '__proto__']) {
      expect(() => parseFilter({ level: alias }), alias).toThrow(AppError);
      expect(refusal(`level:${alias}`).message, alias).toMatch(/expected a level/);
      expect(levelIndex(alias), alias).toBeUndefined();
    }
    // Search refuses them (docs/search.md, "What each field compares"); ingestion still maps them
    // (docs/integrations.md, "How `POST /v1/logs` reads a log").
    expect(['warning', 'ERR', ' critical ', '\u0130NFO'].map(parseLevel)).toEqual([3, 4, 5, 2]);
  });

  it('refuses a pattern for its syntax or its cost alike as a parameter and in a query', () => {
    const param = (source: string) => {
      try {
        compilePattern(source, 'querystring:/pattern');
      } catch (err) {
        return ((err as AppError).details as { message: string }[])[0]!.message;
      }
      throw new Error(`compiled: ${source}`);
    };
    expect(param('(?=x)')).toMatch(/^is not a valid RE2 regular expression \(.+\); backreferences and lookaround are not supported$/);
    expect(refusal('/(?=x)/').message).toMatch(/^at column 1: expected a valid RE2 regular expression \(.+\); backreferences and lookaround are not supported$/);
    expect(param('a{1000}b{1000}c{1000}')).toMatch(/^is too costly to run: it compiles to/);
    expect(refusal('/a{1000}b{1000}c{1000}/').message).toMatch(/^at column 1: expected a cheaper regular expression: it compiles to/);
  });
});

describe('metadata', () => {
  it('is parsed once per log in one pass, and not kept past it', async () => {
    const logs: QueryLog[] = [0, 1, 2, 3, 4].map((i) => ({ ts: i, level: 2, source: null, message: 'm', metadata: JSON.stringify({ n: i, tag: `t${i}`, deep: { x: 'y' } }) }));
    // Bare terms, a phrase, paths and a regex on a path (the last two logs wait for it, then are decided again).
    const q = parseQuery('t1 OR "t2" OR @n:0 OR @deep.x:z OR @tag:/^t3/');
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const parsedOf = () => parse.mock.calls.filter(([text]) => logs.some((l) => l.metadata === text)).length;
      expect(await matchLogs(q, logs, OWNER, soon())).toEqual([true, true, true, true, false]);
      expect(parsedOf()).toBe(5);
      // A second pass over the same rows parses again: nothing kept the first pass's values.
      expect(await matchLogs(q, logs, OWNER, soon())).toEqual([true, true, true, true, false]);
      expect(parsedOf()).toBe(10);
    } finally {
      parse.mockRestore();
    }
  });
});

/** Whether a log satisfies a narrowing the way SQL applies it (ASCII lower case; FOLDS_TO_ASCII rows kept). */
function admits(n: Narrowing, log: QueryLog): boolean {
  const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  if (n.levels && !n.levels.includes(log.level)) return false;
  if (n.from !== undefined && log.ts < n.from) return false;
  if (n.to !== undefined && log.ts > n.to) return false;
  if (n.sources && (log.source === null || (!n.sources.includes(asciiLower(log.source)) && !FOLDS_TO_ASCII.test(log.source)))) return false;
  if (n.contains && !FOLDS_TO_ASCII.test(log.message) && !n.contains.every((s) => asciiLower(log.message).includes(s))) return false;
  return true;
}

describe('narrowing', () => {
  it('is a superset on every case', async () => {
    for (const c of QUERY_CASES) {
      const n = narrowing(parseQuery(c.query));
      for (const name of c.expect) expect(admits(n, QUERY_LOGS.find((l) => l.name === name)!), `${c.query} → ${JSON.stringify(n)} refuses ${name}`).toBe(true);
    }
  });

  it('says what it can from the top-level AND chain only', () => {
    const t = (s: string) => Date.parse(s);
    expect(narrowing(parseQuery(''))).toEqual({});
    expect(narrowing(parseQuery('level:>=warn'))).toEqual({ levels: [3, 4, 5] });
    expect(narrowing(parseQuery('level:(debug OR error) level:>info'))).toEqual({ levels: [4] });
    expect(narrowing(parseQuery('level:[debug TO warn} -level:debug'))).toEqual({ levels: [1, 2] });
    expect(narrowing(parseQuery('source:API source:(api OR db)'))).toEqual({ sources: ['api'] });
    expect(narrowing(parseQuery('source:api-* source:Café'))).toEqual({});
    expect(narrowing(parseQuery('timestamp:>2026-11-23T10:00:00Z timestamp:<2026-11-23T11:00:00Z'))).toEqual({ from: t('2026-11-23T10:00:00Z') + 1, to: t('2026-11-23T11:00:00Z') - 1 });
    expect(narrowing(parseQuery('timestamp:[1000 TO *] (timestamp:5 OR timestamp:[9 TO 10])'))).toEqual({ from: 1000 });
    expect(narrowing(parseQuery('message:"Connection Reset" message:req-10* message:café /Tim(e)out/ timeout'))).toEqual({ contains: ['connection reset', 'req', '10', 'tim'] });
    expect(narrowing(parseQuery('level:error OR source:api'))).toEqual({});
    expect(narrowing(parseQuery('NOT level:error'))).toEqual({});
    expect(narrowing(parseQuery('(level:error source:api) timestamp:>=5'))).toEqual({ levels: [4], sources: ['api'], from: 5 });
  });
});

describe('groupBy', () => {
  const log = (name: string) => QUERY_LOGS.find((l) => l.name === name)!;
  const names = (field: string, name: string) => groupNames(parseGroupBy(field), log(name)).sort();

  it('names each log’s groups', () => {
    expect(names('level', 'pino-200')).toEqual(['info']);
    expect(names('source', 'pino-500-string')).toEqual(['API']);
    expect(names('source', 'emoji')).toEqual(['(none)']);
    expect(names('@res.statusCode', 'pino-503')).toEqual(['503']);
    expect(names('res.statusCode', 'pino-500-string')).toEqual(['500']);
    expect(names('res.statusCode', 'otel-500')).toEqual(['(none)']);
    expect(names('http.response.status_code', 'otel-500')).toEqual(['500']);
    expect(names('http.response.status_code', 'otel-502-mixed')).toEqual(['502']);
    expect(names('http.response.status_code', 'otel-200-nested')).toEqual(['200']);
    expect(names('@"weird key".x', 'weird-keys')).toEqual(['1']);
    expect(names('@level', 'weird-keys')).toEqual(['custom']);
    expect(names('tags', 'arrays')).toEqual(['billing', 'eu-west', 'retry']);
    expect(names('ids', 'arrays')).toEqual(['500', '501']);
    expect(names('tags', 'empty-array')).toEqual(['(none)']);
    expect(names('mfa', 'bob')).toEqual(['(none)']);
    expect(names('mfa', 'alice')).toEqual(['false']);
    expect(names('user.admin', 'alice')).toEqual(['true']);
    expect(names('responseTime', 'pino-503')).toEqual(['1502.5']);
    expect(names('res', 'pino-503')).toEqual(['{"statusCode":503}']);
    expect(names('anything', 'no-meta')).toEqual(['(none)']);
  });

  it('refuses what is not a field, with the groupBy path', () => {
    for (const [text, column] of [['', 1], ['message', 1], ['timestamp', 1], ['@', 2], ['@"a', 4], ['@"a" b', 5], ['a b', 2], ['a..b', 3], ['@a:b', 3], ['a:b', 2]] as const) {
      try {
        parseGroupBy(text);
        throw new Error(`accepted ${text}`);
      } catch (err) {
        expect(err, text).toBeInstanceOf(AppError);
        const d = ((err as AppError).details as { path: string; message: string }[])[0]!;
        expect(d.path).toBe('querystring:/groupBy');
        expect(d.message, text).toMatch(new RegExp(`^at column ${column}: expected `));
      }
    }
  });
});

describe('wildcards', () => {
  const reference = (parts: readonly GlobPart[]) =>
    new RegExp(`^${parts.map((p) => (p === STAR ? '[^]*' : p === ONE ? '.' : p.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))).join('')}$`, 'su');

  it('match the whole text like the obvious regular expression', () => {
    const part = fc.oneof(fc.constant<GlobPart>(STAR), fc.constant<GlobPart>(ONE), fc.constantFrom<GlobPart>('a', 'b', 'ab', 'é', '🚀', '.'));
    const text = fc.array(fc.constantFrom('a', 'b', 'é', '🚀', '.', 'c'), { maxLength: 14 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), text, (parts, t) => {
        expect(globMatch(makeGlob(parts), t), `${JSON.stringify(parts)} ${t}`).toBe(reference(parts).test(t));
      }),
      { numRuns: 3000 },
    );
  });

  it('stay linear on hostile patterns and long values', async () => {
    const value = 'a'.repeat(60_000);
    const log: QueryLog = { ts: 1, level: 2, source: null, message: value, metadata: JSON.stringify({ v: value, w: [value.slice(1)] }) };
    // A backtracking matcher would not finish these within the test's timeout: each answered, and
    // answered false, is the check.
    // The time depends on the machine, so it is printed, never asserted.
    const started = performance.now();
    for (const q of [`@v:*${'a?'.repeat(300)}b*`, `@w:*${'a'.repeat(600)}b*a`, `${'a?'.repeat(300)}b*`, `*a*a*a*a*a*a*a*a*a*a*b`, `@v:${'*a'.repeat(200)}*b`]) {
      expect(await matchLogs(parseQuery(q), [log], OWNER, soon()), q).toEqual([false]);
    }
    console.log(`hostile globs over 60,000 characters: ${Math.round(performance.now() - started)} ms`);
  });
});

describe('folding', () => {
  it('uses NFC and the simple lower-case mapping', () => {
    expect(fold('İSTANBUL')).toBe('istanbul');
    expect(fold('ΟΔΟΣ')).toBe('οδοσ');
    expect(fold('Cafe\u0301')).toBe('café');
    expect(fold('STRASSE')).not.toBe(fold('Straße'));
  });
});

/** What a query string may do: parse, or throw the 400 with a column. Anything else fails the test. */
function parseOr400(text: string): Query | undefined {
  try {
    return parseQuery(text);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'VALIDATION_ERROR') throw err;
    const d = (err.details as { path: string; message: string }[])[0]!;
    if (d.path !== 'querystring:/query' || !/^at column \d+: expected ./.test(d.message)) throw err;
    const column = Number(/^at column (\d+)/.exec(d.message)![1]);
    if (column < 1 || column > Array.from(text).length + 1) throw new Error(`column ${column} outside ${JSON.stringify(text)}`);
    return undefined;
  }
}

/** The grammar's pieces, and characters that tend to break hand-written lexers. */
const PIECES = [
  'AND', 'OR', 'NOT', 'TO', 'and', 'or', '-', '(', ')', '"', '/', '\\', ':', '@', '.', '*', '?', '>', '>=', '<', '<=', '[', ']', '{', '}', ' ', '  ', '\t', '\u00a0',
  'level', 'source', 'message', 'timestamp', 'error', 'warn', 'a', 'b.c', 'req-1007', '10.0.0.1', '500', '-1.5e3', '2026-11-23T10:00:00Z', '1795428000000',
  '@res.statusCode', '"weird key"', '/a+/', '/(?i)x/', '/(/', 'é', 'e\u0301', 'İ', 'ß', 'Σ', '🚀', '\u0000', '\ud800', '\udc00', '__proto__', 'constructor',
];
const soup = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((parts) => parts.join(''));
const spacedSoup = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((parts) => parts.join(' '));

/** Random logs shaped like the real ones: nested metadata, arrays, numbers as strings, Unicode, keys with dots. */
const KEYS = ['a', 'b', 'a.b', 'c', 'res', 'statusCode', 'res.statusCode', 'http.response.status_code', 'http', 'response', 'weird key', 'x', 'level', 'message', 'é', '__proto__'];
const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('500', '503', 'ERROR', 'error', 'İstanbul', 'req-1007', '10.0.0.1', 'café', 'cafe\u0301', 'ΣΊΣΥΦΟΣ', 'true', 'null', '/v1/orders', '1.5', '007', ''),
);
const { value: metaValue } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4 })),
}));
const randomLog: fc.Arbitrary<QueryLog> = fc.record({
  ts: fc.integer({ min: Date.parse('2026-11-23T09:00:00Z'), max: Date.parse('2026-11-23T15:00:00Z') }),
  level: fc.integer({ min: 0, max: 5 }),
  source: fc.option(fc.constantFrom('api', 'API', 'gateway', 'Café', 'İzmir', '\u212Aafka', 'db'), { nil: null }),
  message: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('request completed', 'connection reset', 'HTTP 500', 'İstanbul office', 'timeout after 30s', 'STRASSE', '\u212Aafka lag', 'cafe\u0301'), spacedSoup),
  metadata: fc.option(fc.dictionary(fc.constantFrom(...KEYS), metaValue, { maxKeys: 5 }).map((o) => JSON.stringify(o)), { nil: null }),
});

/** Random queries that mostly parse: the grammar's forms over the fixtures' fields and values. */
const { node: queryText } = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.constantFrom('error', '500', 'req-1007', '10.0.0.1', 'café', 'İstanbul', 'time*', '*out', 'log?n', 'a', 'ß', 'Σίσυφος', 'kafka', 'K', '*', '🚀'),
    fc.constantFrom('"connection reset"', '"500"', '"é"', '"REQUEST c"', '""'),
    fc.constantFrom('/^request/', '/(?i)ERROR/', '/\\d+/', '/é/'),
    fc.constantFrom('trace', 'info', 'warn', 'error', '>=warn', '<info', '[debug TO error]', '{info TO *]', '(error OR fatal)', '*').map((v) => `level:${v}`),
    fc.constantFrom('api', 'API', 'gate*', '"api"', '*', 'kafka', 'café', 'izmir', '/^a/', '(api OR db)').map((v) => `source:${v}`),
    fc.constantFrom('timeout', '"request comp"', '/req/', 'KAFKA', '*', '(reset OR "http 5")').map((v) => `message:${v}`),
    fc.constantFrom('>=2026-11-23T12:00:00Z', '[1795428000000 TO *]', '<2026-11-23T11:00:00Z', '{2026-11-23T10:00:00Z TO 2026-11-23T13:00:00+01:00}').map((v) => `timestamp:${v}`),
    fc
      .tuple(
        fc.constantFrom('@a', 'a.b', '@res.statusCode', 'http.response.status_code', '@"weird key".x', '@level', '@message', 'c'),
        fc.constantFrom('500', '"500"', '>=500', '[1 TO 600]', '*', 'true', 'null', 'ERROR', '5*', '/^5/', '(500 OR >=501)', '{* TO 10}', 'café', '1.5', '-3'),
      )
      .map(([f, v]) => `${f}:${v}`),
  ),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf') as fc.Arbitrary<string>,
    fc.tuple(tie('node') as fc.Arbitrary<string>, fc.constantFrom(' ', ' AND ', ' OR '), tie('node') as fc.Arbitrary<string>).map(([a, op, b]) => `${a}${op}${b}`),
    (tie('node') as fc.Arbitrary<string>).map((a) => `-${a}`),
    (tie('node') as fc.Arbitrary<string>).map((a) => `NOT ${a}`),
    (tie('node') as fc.Arbitrary<string>).map((a) => `(${a})`),
  ),
}));

describe('properties', () => {
  it('random strings give a query or the 400, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ minLength: 1990, maxLength: 2010 })), (text) => {
        parseOr400(text);
      }),
      { numRuns: 1500 },
    );
  });

  it('token soups of the grammar’s pieces give a query or the 400, and a query then decides every log', async () => {
    let parsed = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(soup, spacedSoup), fc.array(randomLog, { maxLength: 4 }), async (text, logs) => {
        const q = parseOr400(text);
        if (!q) return;
        parsed++;
        const answers = await matchLogs(q, [...QUERY_LOGS, ...logs], OWNER, soon());
        expect(answers.every((a) => typeof a === 'boolean')).toBe(true);
        narrowing(q);
      }),
      { numRuns: 1500 },
    );
    // Not vacuous: a good share of the soups are queries.
    expect(parsed).toBeGreaterThan(150);
    console.log(`soups parsed ${parsed}`);
  });

  it('on random queries and logs: NOT is the complement, and the narrowing keeps every match', async () => {
    let parsed = 0;
    await fc.assert(
      fc.asyncProperty(queryText, fc.array(randomLog, { maxLength: 8 }), async (text, random) => {
        const q = parseOr400(text);
        if (!q) return;
        parsed++;
        const logs = [...QUERY_LOGS, ...random];
        const answers = await matchLogs(q, logs, OWNER, soon());
        expect(answers.every((a) => typeof a === 'boolean'), text).toBe(true);
        const n = narrowing(q);
        logs.forEach((log, i) => {
          if (answers[i]) expect(admits(n, log), `${text} → ${JSON.stringify(n)} refuses ${JSON.stringify(log)}`).toBe(true);
        });
        const negated = parseOr400(`NOT (${text})`);
        if (negated) expect(await matchLogs(negated, logs, OWNER, soon()), text).toEqual(answers.map((a) => !a));
      }),
      { numRuns: 800 },
    );
    expect(parsed).toBeGreaterThan(600);
    console.log(`soups parsed ${parsed}`);
  });

  it('groupBy on random logs names groups, never throws', () => {
    fc.assert(
      fc.property(fc.constantFrom('level', 'source', 'a', '@a.b', 'res.statusCode', 'http.response.status_code', '@"weird key"', '@level', '@message', 'c'), randomLog, (field, log) => {
        const names = groupNames(parseGroupBy(field), log);
        expect(names.length).toBeGreaterThan(0);
        expect(new Set(names).size).toBe(names.length);
      }),
      { numRuns: 500 },
    );
  });
});
