import { validationError } from '../../errors.js';
import { formatDuration, parseDuration } from '../../duration.js';
import { compilePattern } from '../logs/filter.js';
import type { Pattern } from '../logs/pattern.js';
import { runTests, type RegexTest } from '../logs/regex-runner.js';
import { matchEach, parseQuery, type Query, type QueryLog } from '../logs/query/index.js';
import { levelIndex, LEVELS, levelName } from '../logs/levels.js';
import type { AlertRulesTable } from '../../db/types.js';

export const CHANNELS = ['email', 'push'] as const;
export type Channel = (typeof CHANNELS)[number];

const DURATION_TEXT = /^[0-9]+(s|m|h|d)$/;
const WEEK = 7 * 86_400_000;

export interface ConditionInput {
  level: string;
  threshold: number;
  window: string;
  source?: string;
  pattern?: string;
  query?: string;
}

export interface Condition {
  level: number;
  threshold: number;
  windowMs: number;
  source: string | null;
  pattern: string | null;
  query: string | null;
}

/** CONTRACT durations: `^[0-9]+(s|m|h|d)$` within bounds. */
export function parseRuleDuration(text: string, path: string, minMs: number, maxMs: number): number {
  const ms = DURATION_TEXT.test(text) ? parseDuration(text) : undefined;
  if (ms === undefined) throw validationError(path, 'must be a number followed by s, m, h or d (for example 30s, 5m, 1h, 1d)');
  if (ms < minMs || ms > maxMs) throw validationError(path, `must be between ${formatDuration(minMs)} and 7d`);
  return ms;
}

/** Checks a condition as the API takes it and brings it to its stored form. */
export function parseCondition(input: ConditionInput): Condition {
  const level = levelIndex(input.level);
  if (level === undefined) throw validationError('/condition/level', `must be one of ${LEVELS.join(', ')}`);
  if (input.pattern !== undefined && input.pattern !== '') compilePattern(input.pattern, '/condition/pattern');
  const query = input.query !== undefined && input.query.trim() !== '' ? input.query : null;
  if (query !== null) parseQuery(query, '/condition/query');
  return {
    level,
    threshold: input.threshold,
    windowMs: parseRuleDuration(input.window, '/condition/window', 1000, WEEK),
    source: input.source !== undefined && input.source !== '' ? input.source : null,
    pattern: input.pattern !== undefined && input.pattern !== '' ? input.pattern : null,
    query,
  };
}

export function parseCooldown(text: string | undefined): number {
  return text === undefined ? 15 * 60_000 : parseRuleDuration(text, '/cooldown', 0, WEEK);
}

/** A set: duplicates collapse, order is the canonical one. */
export function parseChannels(channels: string[]): Channel[] {
  const set = new Set(channels);
  if (set.size === 0) throw validationError('/channels', 'must name at least one channel: email, push');
  return CHANNELS.filter((c) => set.has(c));
}

export interface AlertRule {
  id: string;
  projectId: string;
  name: string;
  condition: { level: string; threshold: number; window: string; source?: string; pattern?: string; query?: string };
  channels: Channel[];
  cooldown: string;
  enabled: boolean;
  lastTriggeredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function presentRule(row: AlertRulesTable): AlertRule {
  const condition: AlertRule['condition'] = { level: levelName(row.level), threshold: row.threshold, window: formatDuration(Number(row.window_ms)) };
  if (row.source !== null) condition.source = row.source;
  if (row.pattern !== null) condition.pattern = row.pattern;
  if (row.query !== null) condition.query = row.query;
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    condition,
    channels: row.channels.split(',').filter(Boolean) as Channel[],
    cooldown: formatDuration(Number(row.cooldown_ms)),
    enabled: Boolean(row.enabled),
    lastTriggeredAt: row.last_triggered_at === null ? null : iso(Number(row.last_triggered_at)),
    createdAt: iso(Number(row.created_at)),
    updatedAt: iso(Number(row.updated_at)),
  };
}

/** The counter bucket of a rule: a sixtieth of its window (at least a second), so the window count is within ~2 %. */
export function bucketSize(windowMs: number): number {
  return Math.max(1000, Math.floor(windowMs / 60_000) * 1000);
}

let queryParses = 0;

/** How many rule queries this process has parsed for evaluation (parseRuleQuery): tests and benches read it. */
export const ruleQueryParses = (): number => queryParses;

/** Parses a stored rule query for evaluation (counted by ruleQueryParses). Throws as parseQuery. */
export function parseRuleQuery(text: string): Query {
  queryParses++;
  return parseQuery(text, '/condition/query');
}

/** What evaluation needs of a rule, with its pattern compiled and its query parsed once. */
export interface Matcher {
  level: number;
  source: string | null;
  windowMs: number;
  pattern: Pattern | null;
  query?: Query | null;
}

/** What a rule counted in a batch: matches per counter bucket, and the newest few as a sample. */
export interface MatchResult<R> {
  buckets: Map<number, number>;
  sample: R[];
  count: number;
}

/** Rules that decide a log alike: same level, source, pattern and query; only their windows differ. */
interface Group<M> {
  source: string | null;
  pattern: Pattern | null;
  /** Null when the rule has no query, or one that selects every log. */
  query: Query | null;
  /** The keys of its pattern's and query's verdicts ('p' + source, 'q' + text; see `known`), made once. */
  patternKey: string;
  queryKey: string;
  /** The longest window of its rules: a log older than this is a candidate for none of them. */
  windowMs: number;
  rules: M[];
}

/** A log that passed a group's level, source and window, in the order the rules will count it. */
interface Candidate<M> {
  row: number;
  group: Group<M>;
}

/**
 * How long matching rule queries may hold the event loop before it lets other work in (its regex
 * tests still run every few milliseconds). Evaluation runs behind the 202 and must keep up with
 * ingestion: a turn every 8 ms (the default) let each turn's ingest requests take most of the CPU,
 * evaluation fell behind and ingestion was refused (bench:alerts --rules query on SQLite: 21.7 %
 * of plain ingest, with 429s; holding up to 250 ms: 61.1 %, none; 50 ms: 54.1 %, none, within
 * this machine's ±20 % between runs). No longer than 50 ms: the loop also serves other tenants'
 * requests, and a hold is a stall for them (the hostile-tenant bar is /healthz p99 under 100 ms).
 * A project's slice (the deadline) bounds it in any case.
 */
const MATCH_HOLD_MS = 50;

/**
 * What is already known of a log carried to a later round: the verdicts of its patterns ('p' +
 * source) and queries ('q' + text) that were decided. A verdict depends on the log and the text
 * of the pattern or query alone, so it stays true whatever the rules become; the entry goes with
 * the log (a WeakMap), or when the log is decided.
 */
const known = new WeakMap<object, Map<string, boolean>>();

function groupsByLevel<M extends Matcher>(rules: readonly M[]): Group<M>[][] {
  const byKey = new Map<string, Group<M>>();
  const byLevel: Group<M>[][] = [];
  for (const rule of rules) {
    const query = rule.query && rule.query.root.kind !== 'all' ? rule.query : null;
    const key = JSON.stringify([rule.level, rule.source, rule.pattern?.source ?? null, query?.text ?? null]);
    let group = byKey.get(key);
    if (group === undefined) {
      byKey.set(key, (group = { source: rule.source, pattern: rule.pattern, query, patternKey: 'p' + rule.pattern?.source, queryKey: 'q' + query?.text, windowMs: rule.windowMs, rules: [] }));
      (byLevel[rule.level] ??= []).push(group);
    }
    group.rules.push(rule);
    if (rule.windowMs > group.windowMs) group.windowMs = rule.windowMs;
  }
  return byLevel;
}

/**
 * Counts a batch against many rules at once: each log is checked only against the rules on its
 * level, then source, then window, then pattern, then query (cheapest first). A rule counts a log
 * at its level exactly, from its source if set, matching its pattern (RE2) and its query if set,
 * with a timestamp inside the window ending `now` (up to a minute ahead, for clock skew).
 *
 * Rules with the same level, source, pattern and query decide a log together, once; a pattern or
 * a query is decided once per log even when several such groups share it.
 *
 * Patterns and the queries' regexes run through the regex runner (cheap tests here in short
 * slices, costly ones in its worker, round-robin with other projects), owned by `owner`. A log
 * whose tests are not all decided by `deadline` counts for no rule and is returned in `undecided`,
 * to be evaluated again later; what was decided of it is kept, so the next round goes on from
 * there instead of starting over. Logs are decided in order: at the deadline the first ones are.
 * `stalled` says that not even the first log that needed a test or a query was decided: the rules
 * are too costly for the slice, as opposed to there being more logs than fit in it.
 */
export async function matchRules<R extends QueryLog, M extends Matcher>(rules: readonly M[], rows: readonly R[], now: number, samples: number, owner: string, deadline: number): Promise<{ results: Map<M, MatchResult<R>>; undecided: R[]; stalled: boolean }> {
  const byLevel = groupsByLevel(rules);
  const latest = now + 60_000;
  // First the checks that need no regex; pattern tests are gathered (one per log and pattern) and run together.
  const hits: Candidate<M>[] = [];
  /** Logs with verdicts kept from an earlier round. */
  const carried: number[] = [];
  /** The first log (in order) that needs a test or a query verdict this round; -1 while none. */
  let firstWork = -1;
  const withPattern: (Candidate<M> & { test: number | boolean })[] = [];
  const tests: RegexTest[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const groups = byLevel[row.level];
    if (groups === undefined) continue;
    let testOf: Map<string, number> | undefined;
    const knownOf = known.get(row);
    if (knownOf !== undefined) carried.push(i);
    for (const group of groups) {
      if (group.source !== null && row.source !== group.source) continue;
      if (row.ts < now - group.windowMs || row.ts > latest) continue;
      if (group.pattern === null) {
        hits.push({ row: i, group });
        continue;
      }
      const source = group.pattern.source;
      const verdict = knownOf?.get(group.patternKey);
      if (verdict === false) continue;
      let test: number | boolean | undefined = verdict ?? testOf?.get(source);
      if (test === undefined) {
        test = tests.push({ pattern: group.pattern, text: row.message }) - 1;
        (testOf ??= new Map()).set(source, test);
        if (firstWork === -1) firstWork = i;
      }
      withPattern.push({ row: i, group, test });
    }
  }
  const undecidedRows = new Set<number>();
  /** The verdicts decided in this round, per log: kept for the logs that end up undecided. */
  const decided = new Map<number, Map<string, boolean>>();
  const remember = (row: number, key: string, verdict: boolean) => {
    let map = decided.get(row);
    if (map === undefined) decided.set(row, (map = new Map()));
    map.set(key, verdict);
  };
  /** A pattern's ('p' + source) or query's ('q' + text) verdict on a log, from this round or an earlier one. */
  const verdictOf = (row: number, key: string) => decided.get(row)?.get(key) ?? known.get(rows[row]!)?.get(key);
  const candidates = hits;
  if (withPattern.length > 0) {
    const verdicts = tests.length > 0 ? await runTests(tests, owner, deadline) : [];
    for (const c of withPattern) {
      const verdict = typeof c.test === 'boolean' ? c.test : verdicts[c.test];
      if (verdict === undefined) undecidedRows.add(c.row);
      else {
        if (typeof c.test === 'number') remember(c.row, c.group.patternKey, verdict);
        if (verdict) candidates.push({ row: c.row, group: c.group });
      }
    }
  }
  // A group's query, if it has one, decides last, over the logs that passed everything else: each
  // log's distinct queries together over one view of it (matchEach), logs in order, until the deadline.
  const needs = new Map<number, Map<string, Query>>();
  for (const { row, group } of candidates) {
    if (group.query === null || undecidedRows.has(row)) continue;
    const key = group.queryKey;
    if (verdictOf(row, key) !== undefined) continue;
    let need = needs.get(row);
    if (need === undefined) needs.set(row, (need = new Map()));
    need.set(key, group.query);
  }
  if (needs.size > 0) {
    const pending = [...needs.keys()].sort((a, b) => a - b);
    if (firstWork === -1 || pending[0]! < firstWork) firstWork = pending[0]!;
    const keys = pending.map((row) => [...needs.get(row)!.keys()]);
    const queries = pending.map((row) => [...needs.get(row)!.values()]);
    const verdicts = await matchEach(pending.map((row) => rows[row]!), (n) => queries[n]!, owner, deadline, { holdMs: MATCH_HOLD_MS });
    pending.forEach((row, n) => {
      keys[n]!.forEach((key, k) => {
        const verdict = verdicts[n]![k];
        if (verdict === undefined) undecidedRows.add(row);
        else remember(row, key, verdict);
      });
    });
  }
  const results = new Map<M, MatchResult<R>>();
  for (const { row: i, group } of candidates) {
    if (undecidedRows.has(i)) continue;
    if (group.query !== null && verdictOf(i, group.queryKey) !== true) continue;
    const row = rows[i]!;
    for (const rule of group.rules) {
      if (row.ts < now - rule.windowMs) continue;
      let result = results.get(rule);
      if (result === undefined) results.set(rule, (result = { buckets: new Map(), sample: [], count: 0 }));
      const size = bucketSize(rule.windowMs);
      const b = row.ts - (row.ts % size);
      result.buckets.set(b, (result.buckets.get(b) ?? 0) + 1);
      result.count++;
      addToSample(result.sample, row, samples);
    }
  }
  const undecided = [...undecidedRows].sort((a, b) => a - b);
  for (const i of undecided) {
    const more = decided.get(i);
    if (more === undefined) continue;
    const row = rows[i]!;
    const map = known.get(row);
    if (map === undefined) known.set(row, more);
    else for (const [key, verdict] of more) map.set(key, verdict);
  }
  // A decided log needs nothing kept.
  for (const i of carried) if (!undecidedRows.has(i)) known.delete(rows[i]!);
  return { results, undecided: undecided.map((i) => rows[i]!), stalled: firstWork !== -1 && undecidedRows.has(firstWork) };
}

/** Keeps the `max` newest logs (by timestamp, newest first) in `sample`. */
function addToSample<R extends QueryLog>(sample: R[], row: R, max: number): void {
  if (sample.length === max && sample[max - 1]!.ts >= row.ts) return;
  let i = sample.length;
  while (i > 0 && sample[i - 1]!.ts < row.ts) i--;
  sample.splice(i, 0, row);
  if (sample.length > max) sample.pop();
}
