import type { FastifyBaseLogger } from 'fastify';
import type { Executor } from '../../db/types.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/connect.js';
import { AppError, validationError } from '../../errors.js';
import { formatDuration, parseDuration } from '../../duration.js';
import { PLAN_NAMES } from '../plans/plans.js';
import type { ProjectsService } from '../projects/service.js';
import type { BodyItem } from './body.js';
import { decidedInApp, matchAll, type LogFilter } from './filter.js';
import { claimKey, deleteExpiredKeys, releaseKey } from './idempotency.js';
import { IngestQueue, type Committed } from './ingest-queue.js';
import { IngestRateLimiter } from './rate-limit.js';
import { LEVELS } from './levels.js';
import { normaliseLog, type LogRow } from './normalise.js';
import { groupNames, parseGroupBy, type GroupField } from './query/index.js';
import { listenForCommits } from './pg-listener.js';
import { createPartitionMaintenance } from './partitions.js';
import * as repo from './repository.js';
import { TailHub, type TailAuthority, type TailHandle, type TailSink } from './tail.js';
import { createPostgresWriter, createSqliteWriter } from './writer.js';
import { createIndexBuilder } from './blocks/builder.js';
import { eachIndexed, searchIndexed, type IndexOptions } from './blocks/search.js';
import { deleteBlocksBefore } from './blocks/store.js';

export interface IngestResult {
  accepted: number;
  rejected: { index: number; message: string }[];
}

export interface StatsResult {
  interval: string;
  buckets: { start: string; total: number; levels: Partial<Record<(typeof LEVELS)[number], number>>; groups?: Record<string, number> }[];
}

/** groupBy: how many values keep their own name; the names of the rest and of logs without the field. */
const TOP_GROUPS = 10;
const OTHER_GROUP = '(other)';
const NO_GROUP = '(none)';
/**
 * groupBy: a tenant's logs may hold any number of values, and what a request holds in memory must
 * not grow with them. config.groupByMaxValues distinct values are counted by name (further ones
 * count under "(other)"); SQL may hand back this many times as many (bucket, source) rows (past
 * that, a 400).
 */
const GROUP_ROWS_PER_VALUE = 10;

export type LogsService = ReturnType<typeof createLogsService>;

/**
 * Called after every commit, for whoever reacts to new logs (alerts). `rows()` builds the stored
 * form of the committed logs, with their seqs, only if the listener asks for it.
 */
export type CommitListener = (projectId: string, rows: () => repo.LogRowStored[]) => void;

/** How often open tails are checked against their login and project (logout or deletion on any node). */
export const TAIL_RECHECK_MS = 2000;

const STATS_INTERVALS = ['1m', '5m', '15m', '30m', '1h', '3h', '6h', '12h', '1d'];
const MAX_BUCKETS = 1500;
/** Rows read per round when a pattern is filtered in the app. */
const PATTERN_CHUNK = 2000;
/** Rows tested at a time within a round: a page that fills early stops testing. */
const PATTERN_STEP = 250;

/** Cursors are opaque to clients: `c1.<ts>.<seq>` in base64url. */
function encodeCursor(p: repo.Position): string {
  return Buffer.from(`c1.${p.ts}.${p.seq}`).toString('base64url');
}

function decodeCursor(cursor: string): repo.Position {
  const m = /^c1\.(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError('querystring:/cursor', 'is not a cursor this server issued');
  return { ts: Number(m[1]), seq: Number(m[2]) };
}

/** Text a database can search for: PostgreSQL text cannot hold NUL. */
function sqlSafe(text: string | undefined): string | undefined {
  return text !== undefined && !text.includes('\u0000') ? text : undefined;
}

export function createLogsService(deps: {
  database: Database;
  config: Config;
  now: () => number;
  log: FastifyBaseLogger;
  projects: ProjectsService;
  /** Which of these logins (access-token `sid`s) are still live: tails end with theirs. */
  liveSessions: (sessionIds: string[]) => Promise<Set<string>>;
}) {
  const { database, config, now, log, projects, liveSessions } = deps;
  const db = database.db;
  const partitions = database.engine === 'postgres' ? createPartitionMaintenance({ db, config, now, log }) : undefined;
  const writer = database.engine === 'sqlite' ? createSqliteWriter(database.sqliteFile!) : createPostgresWriter(db);
  const indexBuilder = createIndexBuilder(db, { blockLogs: config.indexBlockLogs, intervalMs: config.indexIntervalMs, now, log });
  const indexOptions: IndexOptions = { blockLogs: config.indexBlockLogs, enabled: config.searchIndex };
  const hub = new TailHub(
    {
      since: (projectId, afterSeq, upToSeq, limit, minTs) => repo.findSince(db, projectId, afterSeq, upToSeq, limit, minTs),
      lastSeq: (projectId) => repo.lastSeq(db, projectId),
    },
    log,
    now,
  );
  const listeners: CommitListener[] = [];
  // A deleted project's tails end at once on this node; on other nodes, at their next check.
  projects.onDeleted((projectId) => hub.closeWhere((p) => p === projectId, 'the project was deleted'));

  function onCommit(committed: Committed[]) {
    for (const { batch, prevSeq, firstSeq, lastSeq } of committed) {
      hub.markCommitted(batch.projectId, lastSeq);
      // The stored form is built only when someone on this node wants the logs, and once.
      let built: repo.LogRowStored[] | undefined;
      const rows = () => {
        let seq = firstSeq;
        built ??= batch.rows.map((r) => ({ project_id: batch.projectId, seq: seq++, ts: r.ts, received_at: batch.receivedAt, level: r.level, source: r.source, message: r.message, metadata: r.metadata }));
        return built;
      };
      if (hub.isTailed(batch.projectId)) hub.publish(batch.projectId, prevSeq, lastSeq, rows());
      for (const listener of listeners) {
        try {
          listener(batch.projectId, rows);
        } catch (err) {
          log.error({ err }, 'a commit listener failed');
        }
      }
    }
  }

  const limiter = new IngestRateLimiter(config.ingestRates, now);
  const queue = new IngestQueue(writer, {
    maxQueuedLogs: config.ingestQueueLimit,
    maxQueuedBytes: config.ingestQueueMaxBytes,
    maxLogsPerCommit: config.ingestCommitMaxLogs,
    maxBytesPerCommit: config.ingestCommitMaxBytes,
    maxInFlightBytesPerProject: config.ingestProjectInflightBytes,
    onCommit,
    log,
  });
  let listener: ReturnType<typeof listenForCommits> | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;
  let tailCheckTimer: NodeJS.Timeout | undefined;
  let retentionRunning: Promise<unknown> | undefined;
  /** What the last search through the index read (tests count it). */
  let lastIndexReport: import('./blocks/search.js').IndexReport | undefined;

  return {
    hub,
    queue,
    /** SQLite: alert counters go through the writer's thread (see LogWriter.addAlertCounts). */
    addAlertCounts: writer.addAlertCounts?.bind(writer),

    /** Resolves when every log queued so far is committed. */
    drain(): Promise<void> {
      return queue.drain();
    },

    /** Calls `listener` after every commit, with the committed logs. */
    onCommit(fn: CommitListener) {
      listeners.push(fn);
    },

    /**
     * Checks every item, stores the good ones and answers only once they are durably committed.
     * Every item bad → 400 with the reasons.
     */
    async ingest(projectId: string, plan: string, items: BodyItem[], idempotency?: { key: string; bodyHash: string }): Promise<{ result: IngestResult; replayed: boolean }> {
      const receivedAt = now();
      if (idempotency) {
        const claim = await claimKey(db, projectId, idempotency.key, idempotency.bodyHash, receivedAt);
        if (claim.kind === 'replay') return { result: JSON.parse(claim.response) as IngestResult, replayed: true };
      }
      try {
        const rows: LogRow[] = [];
        const rejected: IngestResult['rejected'] = [];
        items.forEach((item, index) => {
          if ('error' in item) return void rejected.push({ index, message: item.error });
          const n = normaliseLog(item.value, receivedAt);
          if (n.ok) rows.push(n.row);
          else rejected.push({ index, message: n.message });
        });
        if (rows.length === 0) {
          const first = rejected[0]!;
          throw new AppError('VALIDATION_ERROR', `No log was accepted: log ${first.index}: ${first.message}.`, { details: rejected.slice(0, 100).map((r) => ({ path: `/${r.index}`, message: r.message })) });
        }
        limiter.take(projectId, plan, rows.length);
        const result: IngestResult = { accepted: rows.length, rejected };
        const committed = await queue.submit({ projectId, receivedAt, rows, idempotency: idempotency && { key: idempotency.key, response: JSON.stringify(result) } });
        if (committed === null) throw new AppError('INVALID_API_KEY', 'The API key is not valid (its project no longer exists).');
        return { result, replayed: false };
      } catch (err) {
        // Nothing was committed: let a retry with the same key go ahead.
        if (idempotency) await releaseKey(db, projectId, idempotency.key).catch(() => {});
        throw err;
      }
    },

    /** Newest first, keyset-paginated. A pattern is matched in the app, in rounds, within the time budget. */
    async search(userId: string, projectId: string, filter: LogFilter, limit: number, cursor: string | undefined): Promise<{ data: repo.LogRowStored[]; nextCursor: string | null }> {
      let position = cursor ? decodeCursor(cursor) : undefined;
      const sqlOnly = !decidedInApp(filter);
      /** A page SQL decides alone: one more row than the page says whether a cursor is due. */
      const sqlPage = (rows: repo.LogRowStored[]) => {
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        return { data: page, nextCursor: rows.length > limit && last ? encodeCursor({ ts: last.ts, seq: last.seq }) : null };
      };
      if (sqlOnly && filter.q === undefined) {
        // Nothing for the index to probe. The ownership check and the page are read together; a
        // stranger's page is never answered.
        const [, rows] = await Promise.all([projects.assertOwned(userId, projectId), withBudget((ex) => repo.findPage(ex, projectId, filter, position, limit + 1))]);
        return sqlPage(rows);
      }
      await projects.assertOwned(userId, projectId);
      const deadline = Date.now() + config.queryBudgetMs;
      // A query, a pattern, or a legacy substring (the words wholly inside it) may rule blocks out.
      const indexed = await searchThroughIndex(projectId, filter, position, limit, deadline, sqlOnly);
      if (indexed) return indexed;
      if (sqlOnly) return sqlPage(await withBudget((ex) => repo.findPage(ex, projectId, filter, position, limit + 1)));
      const found: repo.LogRowStored[] = [];
      let decided = 0;
      for (;;) {
        // SQL narrows (the pattern's required literal, the query's levels and times); the app decides.
        const rows = await withBudget((ex) => repo.findPage(ex, projectId, narrowed(filter), position, PATTERN_CHUNK));
        // In steps, so a page that fills early does not test the rest of the chunk.
        for (let start = 0; start < rows.length; start += PATTERN_STEP) {
          const step = rows.slice(start, start + PATTERN_STEP);
          const verdicts = await matchAll(filter, step, projectId, deadline, { sqlDecided: true });
          for (let i = 0; i < step.length; i++) {
            const verdict = verdicts[i];
            if (verdict === undefined) {
              // Out of time: answer what was found, and a cursor from the last log decided.
              if (decided === 0) throw patternOutOfBudget();
              return { data: found, nextCursor: encodeCursor(position!) };
            }
            decided++;
            const row = step[i]!;
            position = { ts: row.ts, seq: row.seq };
            if (!verdict) continue;
            found.push(row);
            if (found.length === limit) return { data: found, nextCursor: encodeCursor(position) };
          }
        }
        if (rows.length < PATTERN_CHUNK) return { data: found, nextCursor: null };
        // Out of time: answer what was found, and a cursor from where the scan stopped.
        if (Date.now() > deadline) return { data: found, nextCursor: encodeCursor(position!) };
      }
    },

    async stats(userId: string, projectId: string, filter: LogFilter, interval: string | undefined, groupBy?: string): Promise<StatsResult> {
      const group = groupBy !== undefined && groupBy.trim() !== '' ? parseGroupBy(groupBy) : undefined;
      await projects.assertOwned(userId, projectId);
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
        ? await countInApp(projectId, { ...filter, from, to }, ms, group)
        : await countInSql(projectId, { ...filter, from, to }, ms, group);
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
    },

    /**
     * Opens a live tail after checking ownership, the per-user cap and the node's cap. The tail ends
     * when its access token expires, when its login ends (logout, revoked) or when the project is
     * deleted or changes hands, whichever comes first.
     */
    async openTail(authority: TailAuthority, projectId: string, filter: LogFilter, afterSeq: number | undefined, sink: TailSink): Promise<TailHandle> {
      const { userId } = authority;
      await projects.assertOwned(userId, projectId);
      if (hub.openCount(userId) >= config.maxTailsPerUser) {
        throw new AppError('RATE_LIMITED', `At most ${config.maxTailsPerUser} live tails can be open per user; close one first.`, { retryAfter: 5 });
      }
      if (hub.totalOpen >= config.maxTails) {
        throw new AppError('OVERLOADED', `This server has ${config.maxTails} live tails open, its limit; retry later or on another node.`, { retryAfter: 5 });
      }
      return hub.open(authority, projectId, filter, sink, afterSeq);
    },

    /** Ends the tails whose authority has lapsed: an expired token, an ended login, a project gone or given away. */
    async recheckTails(): Promise<number> {
      const open = hub.tails();
      if (open.length === 0) return 0;
      const [live, owners] = await Promise.all([liveSessions([...new Set(open.map((t) => t.authority.sessionId))]), projects.ownersOf([...new Set(open.map((t) => t.projectId))])]);
      const t = now();
      let ended = hub.closeWhere((projectId, a) => owners.get(projectId) !== a.userId, 'the project is gone, or no longer yours');
      ended += hub.closeWhere((_, a) => !live.has(a.sessionId), 'the login that opened this tail has ended (logged out or revoked)');
      ended += hub.closeWhere((_, a) => a.expiresAt <= t, 'the access token expired; reconnect with a fresh one');
      return ended;
    },

    /** Deletes logs past their plan's retention, in bounded batches, keeping logCount exact. */
    async runRetention(batch = 5000): Promise<number> {
      await deleteExpiredKeys(db, now());
      // PostgreSQL: whole daily partitions first; the batches below take what is left.
      let total = (await partitions?.expire()) ?? 0;
      for (const plan of PLAN_NAMES) {
        const cutoff = now() - config.retentionDays[plan] * 86_400_000;
        for (const projectId of await repo.projectsWithLogsBefore(db, plan, cutoff)) {
          for (;;) {
            const n = await db.transaction().execute((tx) => repo.deleteOlderThan(tx, projectId, cutoff, batch));
            total += n;
            if (n < batch) break;
            await new Promise((r) => setImmediate(r));
          }
        }
      }
      // Summaries of blocks whose every log is gone, by batches or with a partition (the others
      // only say "maybe" more often).
      for (const plan of PLAN_NAMES) await deleteBlocksBefore(db, plan, now() - config.retentionDays[plan] * 86_400_000);
      await partitions?.ensure();
      if (total > 0) log.info({ deleted: total }, 'retention deleted expired logs');
      return total;
    },

    async start(): Promise<void> {
      if (database.engine === 'postgres') {
        listener = listenForCommits(database.postgresUrl!, log, {
          onCommit: (projectId, lastSeq, count, minTs) => hub.remote(projectId, lastSeq, count, minTs),
          onResync: () => void hub.resync().catch((err: unknown) => log.warn({ err }, 'tail resync failed')),
        });
        await listener.ready;
      }
      // In the background (a first run may make a year of partitions); close() waits for it.
      retentionRunning = partitions?.ensure().finally(() => (retentionRunning = undefined));
      retentionTimer = setInterval(() => {
        retentionRunning ??= this.runRetention()
          .catch((err: unknown) => log.warn({ err }, 'retention failed'))
          .finally(() => (retentionRunning = undefined));
      }, config.retentionIntervalMs);
      retentionTimer.unref();
      tailCheckTimer = setInterval(() => {
        this.recheckTails().catch((err: unknown) => log.warn({ err }, 'could not recheck live tails'));
      }, TAIL_RECHECK_MS);
      tailCheckTimer.unref();
      // SEARCH_INDEX=off: searches scan and nothing builds in the background (buildIndex() still builds).
      if (config.searchIndex) indexBuilder.start();
    },

    /** Summarises what is due for the skip index now (tests; the builder also runs on its own). */
    buildIndex(): Promise<number> {
      return indexBuilder.runOnce();
    },

    /**
     * Test hook: search with the index where it helps (on), wherever it can be used (forced), with
     * every block saying "maybe" (all-maybe, forced too), or without it (off).
     */
    setSearchIndex(mode: 'on' | 'forced' | 'all-maybe' | 'off'): void {
      indexOptions.enabled = mode !== 'off';
      indexOptions.force = mode === 'forced' || mode === 'all-maybe';
      indexOptions.allMaybe = mode === 'all-maybe';
    },

    /** What the last search through the skip index read. */
    lastIndexReport(): import('./blocks/search.js').IndexReport | undefined {
      return lastIndexReport;
    },

    /** Live tails open on this node. */
    openTails(): number {
      return hub.totalOpen;
    },

    /** Ends live tails (so the server can close). */
    closeTails(): void {
      hub.closeAll();
    },

    /** Waits for queued logs to commit, then stops the writer and the listener. */
    async close(): Promise<void> {
      if (retentionTimer) clearInterval(retentionTimer);
      if (tailCheckTimer) clearInterval(tailCheckTimer);
      await indexBuilder.stop();
      hub.closeAll();
      await queue.drain();
      await retentionRunning;
      await writer.close();
      await listener?.close();
    },
  };


  /**
   * Stats decided in the app (a pattern, a query, or groupBy): the rows SQL narrows to are read in
   * rounds, decided by the same predicate as search and tails, and counted per bucket and level
   * (and per group name). Past the time budget the request is refused (narrow the range) rather
   * than answered with partial counts.
   */
  async function countInApp(projectId: string, filter: LogFilter, ms: number, group: GroupField | undefined): Promise<{ counts: repo.BucketCount[]; groups?: Map<number, Map<string, number>> }> {
    const deadline = Date.now() + config.queryBudgetMs;
    const tally = new Map<string, repo.BucketCount>();
    const groups = group ? new Map<number, Map<string, number>>() : undefined;
    const named = new Set<string>();
    let position: { ts: number; seq: number } | undefined;
    const outOfBudget = () => new AppError('VALIDATION_ERROR', `Counting did not finish within its ${formatDuration(config.queryBudgetMs)} budget; narrow the time range or add filters.`);
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
    // A needle's count reads only the blocks that may hold it.
    if (decidedInApp(filter) && indexOptions.enabled) {
      const report = await withBudget((ex) => eachIndexed(ex, projectId, filter, narrowed(filter), deadline, indexOptions, add));
      if (report !== undefined) {
        if ('outOfBudget' in report) throw outOfBudget();
        lastIndexReport = report;
        return { counts: [...tally.values()], groups };
      }
    }
    for (;;) {
      const rows = await withBudget((ex) => repo.findPage(ex, projectId, narrowed(filter), position, PATTERN_CHUNK));
      const verdicts = decidedInApp(filter) ? await matchAll(filter, rows, projectId, deadline, { sqlDecided: true }) : undefined;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        position = { ts: row.ts, seq: row.seq };
        if (verdicts) {
          const verdict = verdicts[i];
          if (verdict === undefined) throw outOfBudget();
          if (!verdict) continue;
        }
        add(row);
      }
      if (rows.length < PATTERN_CHUNK) return { counts: [...tally.values()], groups };
      if (Date.now() > deadline) throw outOfBudget();
      // Counting without a predicate is all synchronous work: let other requests in between rounds.
      if (!verdicts) await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Stats SQL can count alone (no pattern or query): per bucket and level (from the per-minute
   * rollup where it can), and grouped by level or source when asked, with the same names the app's
   * groupNames gives (the level's name; the source as it is, "(none)" without one).
   */
  async function countInSql(projectId: string, filter: LogFilter, ms: number, group: GroupField | undefined): Promise<{ counts: repo.BucketCount[]; groups?: Map<number, Map<string, number>> }> {
    const counts = await withBudget((ex) => repo.countByBucket(ex, projectId, filter, ms));
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
      const rows = await withBudget((ex) => repo.countBySourceBucket(ex, projectId, filter, ms, maxRows));
      if (rows.length > maxRows) {
        throw validationError('querystring:/groupBy', `these logs hold too many sources to group (over ${maxRows.toLocaleString('en')} source and bucket pairs); narrow the time range or choose a larger interval`);
      }
      for (const c of rows) add(c.bucket, c.source ?? NO_GROUP, c.n);
    }
    return { counts, groups };
  }

  /** A page through the skip index, or undefined when the index would not help (then the caller scans). */
  async function searchThroughIndex(projectId: string, filter: LogFilter, position: repo.Position | undefined, limit: number, deadline: number, sqlOnly: boolean): Promise<{ data: repo.LogRowStored[]; nextCursor: string | null } | undefined> {
    if (!indexOptions.enabled) return undefined;
    const page = await withBudget((ex) => searchIndexed(ex, projectId, filter, sqlOnly ? filter : narrowed(filter), position, limit, deadline, sqlOnly, indexOptions));
    if (!page) return undefined;
    if ('outOfBudget' in page) throw patternOutOfBudget();
    lastIndexReport = page.report;
    return { data: page.data, nextCursor: page.nextCursor && encodeCursor(page.nextCursor) };
  }

  /** What SQL narrows to when the app decides: the other filters, the pattern's literal, the query's levels and times. */
  function narrowed(filter: LogFilter): LogFilter {
    return { ...filter, pattern: undefined, contains: sqlSafe(filter.pattern?.literal) };
  }

  /** A pattern search that could not decide a single log within the budget. */
  function patternOutOfBudget(): AppError {
    return new AppError('VALIDATION_ERROR', `The pattern could not be tested within the ${formatDuration(config.queryBudgetMs)} budget on these logs; simplify the pattern, narrow the time range or add filters.`, {
      details: [{ path: 'querystring:/pattern', message: 'did not finish within the query time budget' }],
    });
  }

  /**
   * Runs a read with the query time budget. On PostgreSQL the read pool's statement_timeout cancels
   * a statement that outlives it, which is the client's 400. SQLite has no such switch; there the
   * pattern scan's rounds and their deadline bound the work.
   */
  async function withBudget<T>(work: (db: Executor) => Promise<T>): Promise<T> {
    try {
      return await work(database.readDb);
    } catch (err) {
      if ((err as { code?: string }).code === '57014') {
        throw new AppError('VALIDATION_ERROR', `The search did not finish within its ${formatDuration(config.queryBudgetMs)} budget; narrow the time range or add filters.`);
      }
      throw err;
    }
  }
}

