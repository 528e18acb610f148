import { validationError } from '../../errors.js';
import { formatDuration, parseDuration } from '../../duration.js';
import { compilePattern } from '../logs/filter.js';
import type { Pattern } from '../logs/pattern.js';
import { runTests, type RegexTest } from '../logs/regex-runner.js';
import { matchLogs, parseQuery, type Query } from '../logs/query/index.js';
import { isLevel, LEVELS, levelName } from '../logs/levels.js';
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
  const level = input.level.toLowerCase();
  if (!isLevel(level)) throw validationError('/condition/level', `must be one of ${LEVELS.join(', ')}`);
  if (input.pattern !== undefined && input.pattern !== '') compilePattern(input.pattern, '/condition/pattern');
  const query = input.query !== undefined && input.query.trim() !== '' ? input.query : null;
  if (query !== null) parseQuery(query, '/condition/query');
  return {
    level: LEVELS.indexOf(level),
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

type T = { ts: number; level: number; source: string | null; message: string; metadata: string | null };

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

/**
 * Counts a batch against many rules at once: each log is checked only against the rules on its
 * level, then source, then window, then pattern (cheapest first). A rule counts a log at its level
 * exactly, from its source if set, matching its pattern (RE2) if set, with a timestamp inside the
 * window ending `now` (up to a minute ahead, for clock skew).
 *
 * Patterns run through the regex runner (cheap tests here in short slices, costly ones in its
 * worker, round-robin with other projects), owned by `owner`. A log whose tests are not all
 * decided by `deadline` counts for no rule and is returned in `undecided`, to be evaluated again
 * later: a project whose patterns are costly delays its own alerts, never another project's.
 */
export async function matchRules<R extends T, M extends Matcher>(rules: readonly M[], rows: readonly R[], now: number, samples: number, owner: string, deadline: number): Promise<{ results: Map<M, MatchResult<R>>; undecided: R[] }> {
  const byLevel: M[][] = [];
  for (const rule of rules) (byLevel[rule.level] ??= []).push(rule);
  const latest = now + 60_000;
  // First the checks that need no regex; pattern tests are gathered and run together.
  const hits: { row: number; rule: M }[] = [];
  const tests: RegexTest[] = [];
  const tested: { row: number; rule: M }[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const candidates = byLevel[row.level];
    if (candidates === undefined) continue;
    for (const rule of candidates) {
      if (rule.source !== null && row.source !== rule.source) continue;
      if (row.ts < now - rule.windowMs || row.ts > latest) continue;
      if (rule.pattern === null) hits.push({ row: i, rule });
      else {
        tests.push({ pattern: rule.pattern, text: row.message });
        tested.push({ row: i, rule });
      }
    }
  }
  const undecidedRows = new Set<number>();
  let candidates = hits;
  if (tests.length > 0) {
    const verdicts = await runTests(tests, owner, deadline);
    tested.forEach((t, k) => {
      if (verdicts[k] === undefined) undecidedRows.add(t.row);
      else if (verdicts[k]) candidates.push(t);
    });
  }
  // A rule's query, if it has one, decides last, over the logs that passed everything else.
  const withQuery = new Map<Query, number[]>();
  for (const { row, rule } of candidates) {
    if (!rule.query) continue;
    let list = withQuery.get(rule.query);
    if (!list) withQuery.set(rule.query, (list = []));
    list.push(row);
  }
  if (withQuery.size > 0) {
    const selected = new Map<Query, Map<number, boolean | undefined>>();
    await Promise.all(
      [...withQuery].map(async ([query, rowIndexes]) => {
        const unique = [...new Set(rowIndexes)];
        const verdicts = await matchLogs(query, unique.map((i) => rows[i]!), owner, deadline);
        selected.set(query, new Map(unique.map((i, k) => [i, verdicts[k]])));
      }),
    );
    candidates = candidates.filter(({ row, rule }) => {
      if (!rule.query) return true;
      const verdict = selected.get(rule.query)!.get(row);
      if (verdict === undefined) undecidedRows.add(row);
      return verdict === true;
    });
  }
  const results = new Map<M, MatchResult<R>>();
  for (const { row: i, rule } of candidates) {
    if (undecidedRows.has(i)) continue;
    const row = rows[i]!;
    let result = results.get(rule);
    if (result === undefined) results.set(rule, (result = { buckets: new Map(), sample: [], count: 0 }));
    const size = bucketSize(rule.windowMs);
    const b = row.ts - (row.ts % size);
    result.buckets.set(b, (result.buckets.get(b) ?? 0) + 1);
    result.count++;
    addToSample(result.sample, row, samples);
  }
  return { results, undecided: [...undecidedRows].sort((a, b) => a - b).map((i) => rows[i]!) };
}

/** Keeps the `max` newest logs (by timestamp, newest first) in `sample`. */
function addToSample<R extends T>(sample: R[], row: R, max: number): void {
  if (sample.length === max && sample[max - 1]!.ts >= row.ts) return;
  let i = sample.length;
  while (i > 0 && sample[i - 1]!.ts < row.ts) i--;
  sample.splice(i, 0, row);
  if (sample.length > max) sample.pop();
}
