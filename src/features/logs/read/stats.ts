/**
 * Log stats: counts per time bucket and level (and group), by SQL and the per-minute rollups where
 * the filter allows, else decided in the app by the one predicate (through the skip index where it
 * helps), within the time budget.
 */
import type { Config } from '../../../config.js';
import { AppError, validationError } from '../../../errors.js';
import { formatDuration, parseDuration } from '../../../duration.js';
import type { ProjectsService } from '../../projects/service.js';
import { eachIndexed } from './block-search.js';
import { decidedInApp, matchAll, type LogFilter } from '../filter.js';
import { LEVELS } from '../levels.js';
import { groupName, groupNames, NONE_GROUP, OTHER_GROUP, parseGroupBy, type GroupField } from '../query/index.js';
import { SLICE_MS } from '../regex-runner.js';
import { outOfTime, PATTERN_CHUNK, shedIfLate, stopIfGone, waited, type LogReader, type ReadCaller, type ReadRun } from './reader.js';
import type * as repo from '../store/repository.js';
import type { LogStore } from '../store/index.js';

export interface StatsResult {
  interval: string;
  buckets: { start: string; total: number; levels: Partial<Record<(typeof LEVELS)[number], number>>; groups?: Record<string, number> }[];
}

/**
 * groupBy: how many values keep their own name; the names of the rest and of logs without the
 * field are `(other)` and `(none)`, and a real value of either name is reported escaped (groupName).
 */
const TOP_GROUPS = 10;
const NO_GROUP = NONE_GROUP;
/**
 * groupBy: a tenant's logs may hold any number of values, and what a request holds in memory must
 * not grow with them. config.groupByMaxValues distinct values are counted by name (further ones
 * count under "(other)"); SQL may hand back this many times as many (bucket, source) rows (past
 * that, a 400).
 */
const GROUP_ROWS_PER_VALUE = 10;

const STATS_INTERVALS = ['1m', '5m', '15m', '30m', '1h', '3h', '6h', '12h', '1d'];
const MAX_BUCKETS = 1500;

export function createStats(deps: {
  store: Pick<LogStore, 'countByBucket' | 'countBySourceBucket'>;
  reader: LogReader;
  config: Pick<Config, 'queryBudgetMs' | 'groupByMaxValues'>;
  now: () => number;
  projects: Pick<ProjectsService, 'assertRole'>;
}) {
  const { store, reader, config, now, projects } = deps;

  async function stats(userId: string, projectId: string, filter: LogFilter, interval: string | undefined, groupBy?: string, caller?: ReadCaller): Promise<StatsResult> {
    const group = groupBy !== undefined && groupBy.trim() !== '' ? parseGroupBy(groupBy) : undefined;
    const run = reader.startRun(caller);
    await waited(run, projects.assertRole(userId, projectId));
    shedIfLate(run);
    const to = filter.to ?? now();
    const from = filter.from ?? to - 86_400_000;
    const span = Math.max(1, to - from);
    let ms: number;
    if (interval !== undefined) {
      const parsed = parseDuration(interval);
      if (parsed === undefined || parsed < 1000) throw validationError('querystring:/interval', 'must be a duration such as 1m, 5m, 1h or 1d');
      if (span / parsed > MAX_BUCKETS) throw validationError('querystring:/interval', `makes more than ${MAX_BUCKETS} buckets for this time range; choose a larger one`);
      ms = parsed;
    } else {
      ms = parseDuration(STATS_INTERVALS.find((i) => span / parseDuration(i)! <= 120) ?? '1d')!;
      while (span / ms > MAX_BUCKETS) ms *= 2;
    }
    const counted = decidedInApp(filter) || (group && group.field.kind !== 'level' && group.field.kind !== 'source')
      ? await countInApp(projectId, { ...filter, from, to }, ms, group, run)
      : await countInSql(projectId, { ...filter, from, to }, ms, group, run);
    const byStart = new Map<number, StatsResult['buckets'][number]>();
    const first = from - (from % ms);
    for (let start = first; start <= to; start += ms) byStart.set(start, { start: new Date(start).toISOString(), total: 0, levels: {}, ...(group ? { groups: {} } : {}) });
    for (const c of counted.counts) {
      const b = byStart.get(c.bucket);
      if (!b) continue;
      b.total += c.n;
      const name = LEVELS[c.level]!;
      b.levels[name] = (b.levels[name] ?? 0) + c.n;
    }
    if (counted.groups) {
      // The 10 most frequent values of the whole range (ties to the name that sorts first) keep
      // their names; the rest are summed under "(other)"; "(none)" stays itself.
      const totals = new Map<string, number>();
      for (const byName of counted.groups.values()) for (const [name, n] of byName) if (name !== NO_GROUP) totals.set(name, (totals.get(name) ?? 0) + n);
      const top = new Set([...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, TOP_GROUPS).map(([name]) => name));
      for (const [bucket, byName] of counted.groups) {
        const b = byStart.get(bucket);
        if (!b) continue;
        const groups: Record<string, number> = Object.create(null);
        for (const [name, n] of byName) {
          const key = name === NO_GROUP || top.has(name) ? name : OTHER_GROUP;
          groups[key] = (groups[key] ?? 0) + n;
        }
        b.groups = { ...groups };
      }
    }
    return { interval: formatDuration(ms), buckets: [...byStart.values()] };
  }

  /**
   * Calls `visit` with every log the filter selects (in no particular order): through the skip
   * index where it helps, else the rows SQL narrows to, read in rounds a chunk of bounded bytes at a
   * time and decided by the same predicate as search and tails. A `costly` visitor (one that parses
   * metadata) runs in slices of the event loop. Past the time budget the whole call is refused with
   * `outOfBudget()` (narrow the range) rather than answered with part of the logs, or with 503
   * OVERLOADED when the run spent most of its budget waiting for the database. `run` is the
   * caller's read (its budget runs from the request's start); once its client has gone, no more
   * logs are read or visited.
   */
  async function eachMatching(projectId: string, filter: LogFilter, visit: (row: repo.LogRowStored) => void, costly: boolean, ownOutOfBudget: () => AppError, run: ReadRun = reader.startRun()): Promise<void> {
    const { deadline } = run;
    const outOfBudget = () => outOfTime(run, ownOutOfBudget);
    stopIfGone(run);
    shedIfLate(run);
    // A needle's count reads only the blocks that may hold it.
    if (decidedInApp(filter) && reader.index.enabled) {
      // The index hands over matching logs without a pause; a costly visit (a metadata parse each)
      // is left to a drain that runs in slices between its reads, and is awaited at the end.
      const backlog: repo.LogRowStored[] = [];
      let next = 0;
      let draining: Promise<void> | undefined;
      let late = false;
      const drain = async () => {
        await new Promise((r) => setImmediate(r));
        let sliceStart = performance.now();
        while (next < backlog.length && !late) {
          visit(backlog[next]!);
          backlog[next++] = undefined as unknown as repo.LogRowStored;
          if (performance.now() - sliceStart > SLICE_MS) {
            await new Promise((r) => setImmediate(r));
            if (Date.now() > deadline || run.signal?.aborted) late = true;
            sliceStart = performance.now();
          }
        }
        backlog.length = next = 0;
        draining = undefined;
      };
      const onMatch = costly ? (row: repo.LogRowStored) => {
        backlog.push(row);
        draining ??= drain();
      } : visit;
      // Each of the index's reads is counted, and none is made once the client has gone.
      const report = await reader.withBudget(() => eachIndexed(reader.measured(run), projectId, filter, reader.narrowed(filter), deadline, reader.index, onMatch));
      while (draining) await draining;
      stopIfGone(run);
      if (late) throw outOfBudget();
      if (report !== undefined) {
        if ('outOfBudget' in report) throw outOfBudget();
        reader.reported(report);
        return;
      }
    }
    // The rows are read a chunk of bounded bytes at a time (a round of 2,000 logs of 124 KB would be
    // 250 MB read at once), with a turn of the event loop after each.
    for await (const { rows } of reader.scan(projectId, filter, undefined, PATTERN_CHUNK, run)) {
      if (Date.now() > deadline) throw outOfBudget();
      const verdicts = decidedInApp(filter) ? await matchAll(filter, rows, projectId, deadline, { sqlDecided: true }) : undefined;
      let sliceStart = performance.now();
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        if (verdicts) {
          const verdict = verdicts[i];
          if (verdict === undefined) throw outOfBudget();
          if (!verdict) continue;
        }
        visit(row);
        // A costly visit parses each log's metadata: in slices, like deciding logs.
        if (costly && performance.now() - sliceStart > SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          stopIfGone(run);
          if (Date.now() > deadline) throw outOfBudget();
          sliceStart = performance.now();
        }
      }
    }
  }

  const countingOutOfBudget = () => new AppError('VALIDATION_ERROR', `Counting did not finish within its ${formatDuration(config.queryBudgetMs)} budget; narrow the time range or add filters.`);

  /**
   * Stats decided in the app (a pattern, a query, or groupBy): every selected log counted per
   * bucket and level (and per group name).
   */
  async function countInApp(projectId: string, filter: LogFilter, ms: number, group: GroupField | undefined, run: ReadRun): Promise<{ counts: repo.BucketCount[]; groups?: Map<number, Map<string, number>> }> {
    const tally = new Map<string, repo.BucketCount>();
    const groups = group ? new Map<number, Map<string, number>>() : undefined;
    const named = new Set<string>();
    const add = (row: repo.LogRowStored) => {
      const bucket = row.ts - (((row.ts % ms) + ms) % ms);
      const key = `${bucket}:${row.level}`;
      const t = tally.get(key);
      if (t) t.n++;
      else tally.set(key, { bucket, level: row.level, n: 1 });
      if (groups) {
        let byName = groups.get(bucket);
        if (!byName) groups.set(bucket, (byName = new Map()));
        for (let name of groupNames(group!, row)) {
          if (!named.has(name)) {
            if (named.size >= config.groupByMaxValues) name = OTHER_GROUP;
            else named.add(name);
          }
          byName.set(name, (byName.get(name) ?? 0) + 1);
        }
      }
    };
    await eachMatching(projectId, filter, add, group !== undefined, countingOutOfBudget, run);
    return { counts: [...tally.values()], groups };
  }

  /**
   * Stats SQL can count alone (no pattern or query): per bucket and level (from the per-minute
   * rollup where it can), and grouped by level or source when asked, with the same names the app's
   * groupNames gives (the level's name; the source as it is, "(none)" without one).
   */
  async function countInSql(projectId: string, filter: LogFilter, ms: number, group: GroupField | undefined, run: ReadRun): Promise<{ counts: repo.BucketCount[]; groups?: Map<number, Map<string, number>> }> {
    const counts = await reader.withBudget(() => store.countByBucket(projectId, filter, ms), run);
    if (!group) return { counts };
    const groups = new Map<number, Map<string, number>>();
    const add = (bucket: number, name: string, n: number) => {
      let byName = groups.get(bucket);
      if (!byName) groups.set(bucket, (byName = new Map()));
      byName.set(name, (byName.get(name) ?? 0) + n);
    };
    if (group.field.kind === 'level') for (const c of counts) add(c.bucket, LEVELS[c.level]!, c.n);
    else {
      const maxRows = config.groupByMaxValues * GROUP_ROWS_PER_VALUE;
      const rows = await reader.withBudget(() => store.countBySourceBucket(projectId, filter, ms, maxRows), run);
      if (rows.length > maxRows) {
        throw validationError('querystring:/groupBy', `these logs hold too many sources to group (over ${maxRows.toLocaleString('en')} source and bucket pairs); narrow the time range or choose a larger interval`);
      }
      for (const c of rows) add(c.bucket, c.source === null ? NO_GROUP : groupName(c.source), c.n);
    }
    return { counts, groups };
  }

  return { stats, eachMatching };
}
