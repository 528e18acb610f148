import { validationError } from '../../errors.js';
import { formatDuration, parseDuration } from '../../duration.js';
import { compilePattern } from '../logs/filter.js';
import type { Pattern } from '../logs/pattern.js';
import { decideWithRegexes, EVERY_LOG, evaluate, fold, inlineRegexes, LogView, narrowing, parseQuery, withFilter, type Pending, type Query, type QueryLog, type T3 } from '../logs/query/index.js';
import { SLICE_MS } from '../logs/regex-runner.js';
import { levelIndex, LEVELS, levelName } from '../logs/levels.js';
import type { AlertRulesTable } from '../../db/types.js';

export const CHANNELS = ['email', 'push', 'webhook', 'slack'] as const;
export type Channel = (typeof CHANNELS)[number];

const DURATION_TEXT = /^[0-9]+(s|m|h|d)$/;
const WEEK = 7 * 86_400_000;

export const COMPARISONS = ['above', 'below'] as const;
export type Comparison = (typeof COMPARISONS)[number];

export interface ConditionInput {
  level: string;
  threshold: number;
  window: string;
  source?: string;
  pattern?: string;
  query?: string;
  /** `above` (default): fires at count ≥ threshold; `below`: at count < threshold (a silence alert). */
  comparison?: string;
}

export interface Condition {
  comparison: Comparison;
  level: number;
  threshold: number;
  windowMs: number;
  source: string | null;
  pattern: string | null;
  query: string | null;
}

/**
 * A rule's duration (`window`, `cooldown`): `^[0-9]+(s|m|h|d)$` within the given bounds, as
 * docs/api.md ("Timestamps and durations" and "Alert rules") describes them.
 */
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
  const comparison = input.comparison ?? 'above';
  if (!(COMPARISONS as readonly string[]).includes(comparison)) throw validationError('/condition/comparison', 'must be above or below');
  return {
    comparison: comparison as Comparison,
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
  if (set.size === 0) throw validationError('/channels', `must name at least one channel: ${CHANNELS.join(', ')}`);
  return CHANNELS.filter((c) => set.has(c));
}

export interface AlertRule {
  id: string;
  projectId: string;
  name: string;
  condition: { level: string; threshold: number; window: string; source?: string; pattern?: string; query?: string; comparison: Comparison };
  channels: Channel[];
  cooldown: string;
  enabled: boolean;
  state: 'ok' | 'firing';
  stateSince: string | null;
  mutedUntil: string | null;
  lastTriggeredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function presentRule(row: AlertRulesTable): AlertRule {
  const condition = { level: levelName(row.level), threshold: row.threshold, window: formatDuration(Number(row.window_ms)) } as AlertRule['condition'];
  if (row.source !== null) condition.source = row.source;
  if (row.pattern !== null) condition.pattern = row.pattern;
  if (row.query !== null) condition.query = row.query;
  condition.comparison = row.comparison as Comparison;
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    condition,
    channels: row.channels.split(',').filter(Boolean) as Channel[],
    cooldown: formatDuration(Number(row.cooldown_ms)),
    enabled: Boolean(row.enabled),
    state: row.state === 'firing' ? 'firing' : 'ok',
    stateSince: row.state_since === null ? null : iso(Number(row.state_since)),
    mutedUntil: row.muted_until === null ? null : iso(Number(row.muted_until)),
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
  /**
   * What its query says of a matching log's source (narrowing: the folded source is one of these),
   * checked before anything else of the query; undefined when the query does not say.
   */
  sources: readonly string[] | undefined;
  /** Its query ANDed with its pattern (a regex on the message, last); null when it has neither: every log. */
  predicate: Query | null;
  /** The longest window of its rules: a log older than this is a candidate for none of them. */
  windowMs: number;
  rules: M[];
}

/**
 * How long matching may hold the event loop before it lets other work in (its regex tests still
 * run every few milliseconds). Evaluation runs behind the 202 and must keep up with ingestion: a
 * turn every 8 ms (the default) let each turn's ingest requests take most of the CPU, evaluation
 * fell behind and ingestion was refused (bench:alerts --rules query on SQLite: 21.7 % of plain
 * ingest, with 429s; holding up to 250 ms: 61.1 %, none; 50 ms: 54.1 %, none, within this
 * machine's ±20 % between runs). No longer than 50 ms: the loop also serves other tenants'
 * requests, and a hold is a stall for them (the hostile-tenant bar is /healthz p99 under 100 ms).
 * A project's slice (the deadline) bounds it in any case.
 */
const MATCH_HOLD_MS = 50;

/**
 * The regex answers already known of a log carried to a later round (by RegexLeaf.key). An answer
 * depends on the log and the regex alone, so it stays true whatever the rules become; the entry
 * goes with the log (a WeakMap), or when the log is decided.
 */
const known = new WeakMap<object, Map<string, boolean | number>>();

/**
 * A level's groups, and per folded source the groups whose query admits it (see Group.sources),
 * worked out at the first log from that source: a log is then checked only against those.
 */
interface LevelGroups<M> {
  groups: Group<M>[];
  bySource: Map<string | null, Group<M>[]>;
}

/** Distinct sources remembered per level of a rule set; past it, a source's groups are worked out per log. */
const MAX_SOURCES_PER_LEVEL = 1024;

function groupsFor<M>(level: LevelGroups<M>, folded: string | null): Group<M>[] {
  let hit = level.bySource.get(folded);
  if (hit === undefined) {
    hit = level.groups.filter((g) => g.sources === undefined || (folded !== null && g.sources.includes(folded)));
    if (level.bySource.size < MAX_SOURCES_PER_LEVEL) level.bySource.set(folded, hit);
  }
  return hit;
}

/** The groups of a rule set (the rule cache hands out the same array until it reads the rules again). */
const groupsOf = new WeakMap<readonly Matcher[], LevelGroups<Matcher>[]>();

function groupsByLevel<M extends Matcher>(rules: readonly M[]): LevelGroups<M>[] {
  const cached = groupsOf.get(rules);
  if (cached !== undefined) return cached as LevelGroups<M>[];
  const byKey = new Map<string, Group<M>>();
  const byLevel: LevelGroups<M>[] = [];
  for (const rule of rules) {
    const query = rule.query && rule.query.root.kind !== 'all' ? rule.query : null;
    const key = JSON.stringify([rule.level, rule.source, rule.pattern?.source ?? null, query?.text ?? null]);
    let group = byKey.get(key);
    if (group === undefined) {
      const predicate = rule.pattern !== null ? withFilter(query ?? EVERY_LOG, { pattern: rule.pattern }) : query;
      byKey.set(key, (group = { source: rule.source, sources: query === null ? undefined : narrowing(query).sources, predicate, windowMs: rule.windowMs, rules: [] }));
      (byLevel[rule.level] ??= { groups: [], bySource: new Map() }).groups.push(group);
    }
    group.rules.push(rule);
    if (rule.windowMs > group.windowMs) group.windowMs = rule.windowMs;
  }
  groupsOf.set(rules, byLevel);
  return byLevel;
}

/** A log whose groups wait on regular expressions: the groups it passed so far, and those waiting (answers[k] for waiting[k]). */
interface Waiting<R, M> {
  i: number;
  row: R;
  view: LogView;
  passed: Group<M>[] | undefined;
  waiting: Group<M>[];
  answers: T3[];
}

/**
 * Counts a batch against many rules at once: each log is checked only against the rules on its
 * level, then source, then window, then (in memory) its query and pattern, and last the regular
 * expressions those leave open. A rule counts a log at its level exactly, from its source if set,
 * matching its pattern (RE2) and its query if set, with a timestamp inside the window ending `now`
 * (up to a minute ahead, for clock skew).
 *
 * Rules with the same level, source, pattern and query decide a log together, once; a log's
 * metadata is parsed once for all its rules, and a regular expression runs on it once however many
 * of its rules hold it.
 *
 * Logs are decided in order, in slices: the in-memory part of as many logs as fit in SLICE_MS,
 * then the regexes they still need, through the regex runner (cheap tests here, costly ones in its
 * worker, round-robin with other projects), owned by `owner`. The event loop gets a turn once
 * matching has held it MATCH_HOLD_MS. A log not decided by `deadline` (not reached, or waiting on a
 * test not answered in time) counts for no rule and is returned in `undecided`, to be evaluated
 * again later; the regex answers it got are kept, so the next round goes on from there. `stalled`
 * says that not even the first log that needed more than level, source and window was decided: the
 * rules are too costly for the slice, as opposed to there being more logs than fit in it.
 */
export async function matchRules<R extends QueryLog, M extends Matcher>(rules: readonly M[], rows: readonly R[], now: number, samples: number, owner: string, deadline: number): Promise<{ results: Map<M, MatchResult<R>>; undecided: R[]; stalled: boolean }> {
  const byLevel = groupsByLevel(rules);
  const latest = now + 60_000;
  /** Sources folded as the query language compares them, once per distinct source of the batch. */
  const sourceFolds = new Map<string, string>();
  const results = new Map<M, MatchResult<R>>();
  const count = (row: R, group: Group<M>) => {
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
  };
  const undecided: R[] = [];
  /** The first log that needed more than level, source and window; -1 while none. */
  let firstWork = -1;
  let firstWorkUndecided = false;
  let heldSince = performance.now();
  let i = 0;
  while (i < rows.length) {
    if (i > 0) {
      if (performance.now() - heldSince > MATCH_HOLD_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        heldSince = performance.now();
      }
      if (Date.now() >= deadline) break;
    }
    const pending: Pending[] = [];
    const waiting: Waiting<R, M>[] = [];
    const sliceStart = performance.now();
    const rx = inlineRegexes(sliceStart + SLICE_MS);
    do {
      const row = rows[i]!;
      const level = byLevel[row.level];
      if (level !== undefined) {
        let folded: string | null = null;
        if (row.source !== null) {
          folded = sourceFolds.get(row.source) ?? null;
          if (folded === null) sourceFolds.set(row.source, (folded = fold(row.source)));
        }
        let view: LogView | undefined;
        let passed: Group<M>[] | undefined;
        let wait: Waiting<R, M> | undefined;
        for (const group of groupsFor(level, folded)) {
          if (group.source !== null && row.source !== group.source) continue;
          if (row.ts < now - group.windowMs || row.ts > latest) continue;
          const predicate = group.predicate;
          if (predicate !== null) {
            if (firstWork === -1) firstWork = i;
            view ??= new LogView(row, known.get(row));
            const verdict = evaluate(predicate.root, view, rx);
            if (verdict === false) continue;
            if (verdict === undefined) {
              wait ??= { i, row, view, passed: undefined, waiting: [], answers: [] };
              const k = wait.waiting.push(group) - 1;
              // Cut off at its work budget (view.over): undecided whatever its regexes say.
              if (view.over) wait.answers[k] = undefined;
              else pending.push({ view, query: predicate, answers: wait.answers, k });
              continue;
            }
          }
          (passed ??= []).push(group);
        }
        if (wait !== undefined) {
          wait.passed = passed;
          waiting.push(wait);
        } else {
          if (passed !== undefined) for (const group of passed) count(row, group);
          if (view?.answers !== undefined) known.delete(row);
        }
      }
      i++;
    } while (i < rows.length && performance.now() - sliceStart <= SLICE_MS);
    if (waiting.length === 0) continue;
    if (pending.length > 0) await decideWithRegexes(pending, owner, deadline);
    for (const w of waiting) {
      if (w.answers.includes(undefined)) {
        // Undecided: counted for nothing now; the answers it got wait for the next round.
        if (w.i === firstWork) firstWorkUndecided = true;
        if (w.view.answers !== undefined) known.set(w.row, w.view.answers);
        undecided.push(w.row);
        continue;
      }
      if (w.passed !== undefined) for (const group of w.passed) count(w.row, group);
      w.answers.forEach((verdict, k) => verdict && count(w.row, w.waiting[k]!));
      known.delete(w.row);
    }
  }
  // Past the deadline: the logs not reached are not decided (more logs than fit in the slice, not a stall).
  for (; i < rows.length; i++) if (byLevel[rows[i]!.level] !== undefined) undecided.push(rows[i]!);
  return { results, undecided, stalled: firstWork !== -1 && firstWorkUndecided };
}

/** Keeps the `max` newest logs (by timestamp, newest first) in `sample`. */
function addToSample<R extends QueryLog>(sample: R[], row: R, max: number): void {
  if (sample.length === max && sample[max - 1]!.ts >= row.ts) return;
  let i = sample.length;
  while (i > 0 && sample[i - 1]!.ts < row.ts) i--;
  sample.splice(i, 0, row);
  if (sample.length > max) sample.pop();
}
