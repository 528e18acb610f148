/**
 * The search query language (docs/search.md, "The rules"): one parsed tree, one in-memory
 * predicate that decides (search, stats, tail and alerts), and a narrowing that SQL may use to fetch
 * a superset of the rows. Pure: no database, no HTTP.
 *
 * Where the documented rules are silent, this module decides (test/query-cases.ts marks those cases):
 * - "Ignoring case" everywhere (phrases, equality, wildcards, source, level names) is fold(): NFC,
 *   then the simple lower-case mapping, as for words. So `σίσυφος` (final ς) is not `ΣΊΣΥΦΟΣ` (σ).
 * - A bare `*` selects every log. A bare term with no word characters (`=>`, `🚀`) is matched as a
 *   phrase. `-` must touch its term (`- a` is a 400); `--a` is `a`.
 * - `level:*` and `message:*` select every log; `source:*` a log with a source. `@path:*` is true when
 *   some value at the path, arrays flattened, is not null (`[null]` and `[]` are not there).
 * - source and message take regexes (`source:/^api/`) but no comparisons or ranges (a 400); level
 *   and timestamp take no wildcards or regexes (a 400). `timestamp:T` is equality to the millisecond;
 *   an ISO time without an offset is UTC.
 * - Reserved field names are lower case only (`LEVEL:x` is a metadata path). A quoted segment is one
 *   key, never split at its dots; an unquoted dotted path tries every split (nested and flat keys).
 * - Metadata equality follows docs/search.md, "What each field compares", literally: a string
 *   compares as text (`"500.0"` is not `500`), a number numerically (`@x:5e2` matches 500).
 *   Regexes and wildcards see numbers and booleans as written in JSON, never null. Keys are
 *   case-sensitive.
 * - Columns: node `start` is the column of its first character, `end` the column just past it.
 */
import { levelName } from '../levels.js';
import { lruCache, type Pattern } from '../pattern.js';
import { MAX_TEST_STEPS, runTests, SLICE_MS, type RegexTest } from '../regex-runner.js';
import { regexKey, type Field, type Node, type RegexLeaf, type RegexTarget, type TermWord, type Value, type Words } from './ast.js';
import { evaluate, inlineRegexes, regexTexts, type RegexAnswers, type T3 } from './eval.js';
import { narrow, type Narrowing } from './narrow.js';
import { GROUP_BY_PATH, parse, parseField, QUERY_PATH } from './parse.js';
import { fold, scalarText } from './text.js';
import { createHash } from 'node:crypto';
import { evalCounters, LogView, metadataOf, resolvePath, type QueryLog } from './view.js';

export type { Field, Node, RegexLeaf, RegexTarget, TermWord, Value, Words, Narrowing, QueryLog };
export { MAX_DEPTH, MAX_QUERY_CHARS, MAX_QUERY_PROGRAM_SIZE, MAX_TERMS, queryError, QUERY_PATH, GROUP_BY_PATH } from './parse.js';
export { FOLDS_TO_ASCII, fold } from './text.js';
export { evaluate, inlineRegexes, type T3 } from './eval.js';
export { DECISION_BUDGET, evalCounters, LogView, resetEvalCounters } from './view.js';
export { needlesOf, needlesTest, prefilterOf, type Needle, type Prefilter } from './prefilter.js';

export interface Query {
  readonly text: string;
  readonly root: Node;
  /** Every regular expression in the tree, by RegexLeaf.id. */
  readonly regexes: readonly RegexLeaf[];
  /** Terms counted against MAX_TERMS. */
  readonly terms: number;
}

/**
 * Parses a query. Throws AppError VALIDATION_ERROR whose details[0] is `{ path, message: 'at column
 * N: expected …' }`; `path` defaults to 'querystring:/query' (alert rules pass '/condition/query').
 * Empty or blank text selects every log.
 */
export function parseQuery(text: string, path: string = QUERY_PATH): Query {
  // A query is immutable once parsed: the same text (at the same path, which errors name) is
  // parsed, and its regexes compiled, once while it is among the recently used.
  const key = path + '\u0000' + text;
  const hit = parsedQueries.get(key);
  if (hit !== undefined) return hit;
  const { root, regexes, terms } = parse(text, path);
  const query: Query = { text, root, regexes, terms };
  parsedQueries.set(key, query);
  return query;
}

/** Parsed queries by path and text; a text is at most MAX_QUERY_CHARS, so this holds a few MB at most. */
const parsedQueries = lruCache<string, Query>(512);

/** The query that selects every log. */
export const EVERY_LOG: Query = { text: '', root: { kind: 'all', start: 1, end: 1 }, regexes: [], terms: 0 };

/**
 * Decides each log, in order: matchEach with the one query. A log not decided by `deadline` (epoch
 * ms) answers undefined.
 */
export async function matchLogs(query: Query, logs: readonly QueryLog[], owner: string, deadline: number): Promise<(boolean | undefined)[]> {
  if (query.root.kind === 'all') return logs.map(() => true);
  const one = [query];
  const answers = await matchEach(logs, () => one, owner, deadline);
  return answers.map((a) => a[0]);
}

/**
 * Decides several queries over the same logs: answer[i][k] is the verdict of `queriesOf(i)[k]` on
 * log i. Each log gets one LogView, so its metadata is parsed and its words folded once however many
 * queries look at it (alert rules: all of a project's distinct queries in one pass).
 *
 * Logs are decided in order, in slices: the in-memory part of as many logs as fit in SLICE_MS on
 * the calling thread, then the regular expressions those logs still need, through the regex runner
 * (owner = the project id; a test shared by several queries of a log runs once). Between slices,
 * a turn of the event loop once the calling thread has been held `holdMs` (default SLICE_MS), and
 * a look at `deadline` (epoch ms): once it has passed (a call always decides its first slice),
 * the logs not reached answer undefined, as does any whose answer depends on a test not decided in
 * time.
 */
export async function matchEach(logs: readonly QueryLog[], queriesOf: (i: number) => readonly Query[], owner: string, deadline: number, options: { holdMs?: number } = {}): Promise<T3[][]> {
  const holdMs = options.holdMs ?? SLICE_MS;
  const out: T3[][] = new Array(logs.length);
  let heldSince = performance.now();
  let i = 0;
  while (i < logs.length) {
    if (i > 0) {
      if (performance.now() - heldSince > holdMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        heldSince = performance.now();
      }
      if (Date.now() >= deadline) break;
    }
    /** The slice's (log, query) pairs whose answer waits on regular expressions. */
    const pending: Pending[] = [];
    const sliceStart = performance.now();
    const rx = inlineRegexes(sliceStart + SLICE_MS);
    do {
      const queries = queriesOf(i);
      const answers: T3[] = new Array(queries.length);
      out[i] = answers;
      let view: LogView | undefined;
      for (let k = 0; k < queries.length; k++) {
        const query = queries[k]!;
        if (query.root.kind === 'all') {
          answers[k] = true;
          continue;
        }
        view ??= new LogView(logs[i]!);
        const r = evaluate(query.root, view, rx);
        // Cut off at its budget (view.over), the log stays undecided: its regexes would not help.
        if (r === undefined && !view.over) pending.push({ view, query, answers, k });
        else answers[k] = r;
      }
      i++;
    } while (i < logs.length && performance.now() - sliceStart <= SLICE_MS);
    if (pending.length > 0) await decideWithRegexes(pending, owner, deadline);
  }
  // Past the deadline: the logs not reached are not decided.
  for (; i < logs.length; i++) out[i] = new Array<T3>(queriesOf(i).length).fill(undefined);
  return out;
}

/** A query on a log that the in-memory pass could not decide without its regular expressions. */
export interface Pending {
  view: LogView;
  query: Query;
  /** Where the verdict goes: answers[k]. */
  answers: T3[];
  k: number;
}

/**
 * Runs the regular expressions of the pending (log, query) pairs in one batch (each regex on each
 * of its texts, once per log even when several of its queries hold the same regex on the same
 * field; none whose answer the log's view already keeps) and decides the pairs with their answers.
 */
export async function decideWithRegexes(pending: readonly Pending[], owner: string, deadline: number): Promise<void> {
  const tests: RegexTest[] = [];
  /** Texts in each test. */
  const sizes: number[] = [];
  /** Per log, per RegexLeaf.key: the span [from, to) of its tests and the texts known not to match before them, or its known answer. */
  const spansOf = new Map<LogView, Map<string, [number, number, number] | boolean>>();
  for (const { view, query } of pending) {
    let byLeaf = spansOf.get(view);
    if (byLeaf === undefined) spansOf.set(view, (byLeaf = new Map()));
    for (const leaf of query.regexes) {
      if (byLeaf.has(leaf.key)) continue;
      const known = view.answers?.get(leaf.key);
      if (typeof known === 'boolean') {
        byLeaf.set(leaf.key, known);
        continue;
      }
      const from = tests.length;
      // A leaf's texts (an array's elements) are tested together, a run of them per test, so that
      // elements each cheap but costly together are a test for the worker, never a run of inline
      // tests; a run stops before MAX_TEST_STEPS. The texts an earlier round found not to match
      // (a number kept on the view) are not tested again, so a long array is decided over rounds.
      const done = known ?? 0;
      let run: string[] = [];
      let steps = 0;
      const texts = regexTexts(leaf.target, view);
      for (let x = done; x < texts.length; x++) {
        const text = texts[x]!;
        const cost = leaf.pattern.cost(text);
        if (run.length > 0 && steps + cost > MAX_TEST_STEPS) {
          tests.push({ pattern: leaf.pattern, texts: run });
          sizes.push(run.length);
          run = [];
          steps = 0;
        }
        run.push(text);
        steps += cost;
      }
      if (run.length > 0) {
        tests.push({ pattern: leaf.pattern, texts: run });
        sizes.push(run.length);
      }
      byLeaf.set(leaf.key, [from, tests.length, done]);
    }
  }
  const results = tests.length > 0 ? await runTests(tests, owner, deadline) : [];
  /** A leaf's answer, or (undecided) how many of its texts are known not to match. */
  const answerOf = (span: [number, number, number]): boolean | number => {
    let open = false;
    let misses = span[2];
    for (let t = span[0]; t < span[1]; t++) {
      const r = results[t];
      if (r === true) return true;
      if (r === undefined) open = true;
      else if (!open) misses += sizes[t]!;
    }
    return open ? misses : false;
  };
  // The view keeps each answer found (see LogView.answers); then every pair is decided from them.
  for (const [view, byLeaf] of spansOf) {
    for (const [key, span] of byLeaf) {
      if (typeof span === 'boolean') continue;
      const answer = answerOf(span);
      if (typeof answer === 'boolean' || answer > span[2]) (view.answers ??= new Map()).set(key, answer);
    }
  }
  for (const { view, query, answers, k } of pending) answers[k] = evaluate(query.root, view, keptAnswer);
}

/** rx from what a view keeps alone. */
const keptAnswer: RegexAnswers = (leaf, view) => {
  const kept = view.answers?.get(leaf.key);
  return typeof kept === 'boolean' ? kept : undefined;
};

/** What SQL may use to narrow the rows (a superset); {} when nothing is known. See Narrowing. */
export function narrowing(query: Query): Narrowing {
  return narrow(query.root);
}

/** A groupBy field for stats. */
export interface GroupField {
  readonly text: string;
  readonly field: Field;
}

/** groupBy: 'level', 'source', or a metadata path ('path' or '@path', quoted segments as in queries). Throws the 400 (path 'querystring:/groupBy'). */
export function parseGroupBy(text: string): GroupField {
  return { text, field: parseField(text, GROUP_BY_PATH) };
}

export const NONE_GROUP = '(none)';
export const OTHER_GROUP = '(other)';

/** Longest group name kept as it is (UTF-16 code units); see groupName. */
export const MAX_GROUP_NAME = 200;

/**
 * The name a real value's text is reported under in groupBy. Two rules keep distinct values apart
 * from each other and from the synthetic groups `(none)` (no value) and `(other)` (past the most
 * frequent): a value that is `(none)` or `(other)` after any number of backslashes gets one more
 * in front (`(none)` → `\(none)`, `\(none)` → `\\(none)`); and a value longer than
 * MAX_GROUP_NAME characters is cut to its first MAX_GROUP_NAME, followed by `…` and the first
 * 16 hex digits of the SHA-256 of the whole value, so 10,000 distinct 60 KB values hold about
 * 2 MB of names, not 600 MB, and stay distinct.
 */
export function groupName(text: string): string {
  if (text.length > MAX_GROUP_NAME) {
    let cut = MAX_GROUP_NAME;
    // Not between the halves of a surrogate pair.
    const last = text.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut--;
    // A copy: a slice of the value would keep the whole value alive.
    const head = Buffer.from(text.slice(0, cut), 'utf16le').toString('utf16le');
    return `${head}…${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
  }
  return SYNTHETIC_LOOKALIKE.test(text) ? '\\' + text : text;
}

const SYNTHETIC_LOOKALIKE = /^\\*\((none|other)\)$/;

/**
 * A log's group names for a field: the value as text (numbers and booleans as written in JSON, so
 * 500 and "500" share a group; objects as their JSON), each distinct element of an array once,
 * named by groupName; missing or null → ['(none)']. Level gives the level's name.
 */
export function groupNames(group: GroupField, log: QueryLog): string[] {
  const field = group.field;
  if (field.kind === 'level') return [levelName(log.level)];
  if (field.kind === 'source') return [log.source === null ? NONE_GROUP : groupName(log.source)];
  if (field.kind !== 'meta') return [NONE_GROUP];
  const names = new Set<string>();
  let units = 0;
  const values = resolvePath(metadataOf(log), field.path, (n) => void (units += n));
  evalCounters.units += units;
  if (units > evalCounters.maxGroupUnits) evalCounters.maxGroupUnits = units;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    names.add(groupName(scalarText(v) ?? JSON.stringify(v)));
  }
  return names.size === 0 ? [NONE_GROUP] : [...names];
}

/** The legacy parameters, each ANDed with the query as a node of the same tree. */
export interface LegacyFilter {
  from?: number;
  to?: number;
  levels?: readonly number[];
  /** Exact match (case-sensitive), as the `source` parameter always was. */
  source?: string;
  /** Case-insensitive substring of the message: the same node as message:"q". */
  q?: string;
  /** RE2 on the message (compiled by compilePattern): the same node as /pattern/. */
  pattern?: Pattern;
}

/**
 * The query ANDed with the legacy parameters `from`, `to`, `level`, `source`, `q` and `pattern`,
 * built as nodes (no parsing, no limits): they then narrow and match like the language's own.
 */
export function withFilter(query: Query, filter: LegacyFilter): Query {
  const none = { start: 0, end: 0 };
  const nodes: Node[] = [];
  const regexes = [...query.regexes];
  const field = (kind: 'level' | 'source' | 'message' | 'timestamp', value: Value): Node => ({ kind: 'field', field: { kind, text: kind, ...none }, value, ...none });
  if (filter.from !== undefined || filter.to !== undefined) {
    nodes.push(field('timestamp', { kind: 'range', lo: filter.from, loInclusive: true, hi: filter.to, hiInclusive: true, ...none }));
  }
  if (filter.levels !== undefined) {
    const values: Value[] = filter.levels.map((n) => ({ kind: 'range', lo: n, loInclusive: true, hi: n, hiInclusive: true, ...none }));
    nodes.push(field('level', { kind: 'list', values, ...none }));
  }
  if (filter.source !== undefined) nodes.push(field('source', { kind: 'exact', text: filter.source, ...none }));
  if (filter.q !== undefined) nodes.push(field('message', { kind: 'phrase', text: filter.q, folded: fold(filter.q), ...none }));
  if (filter.pattern !== undefined) {
    const target: RegexTarget = { kind: 'message' };
    const leaf: RegexLeaf = { id: regexes.length, source: filter.pattern.source, pattern: filter.pattern, target, key: regexKey(filter.pattern.source, target) };
    regexes.push(leaf);
    nodes.push({ kind: 'regex', regex: leaf, ...none });
  }
  if (nodes.length === 0) return query;
  const root: Node = query.root.kind === 'all' && nodes.length === 1 ? nodes[0]! : { kind: 'and', children: query.root.kind === 'all' ? nodes : [query.root, ...nodes], ...none };
  return { text: query.text, root, regexes, terms: query.terms };
}

