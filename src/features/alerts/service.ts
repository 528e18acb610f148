import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db, Executor } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { formatDuration } from '../../duration.js';
import { isId, newId } from '../../ids.js';
import { findUserById } from '../accounts/repository.js';
import type { LogRowStored } from '../logs/store/repository.js';
import { presentLog, type Log } from '../logs/present.js';
import { compileRe2, type Pattern } from '../logs/pattern.js';
import type { Query } from '../logs/query/index.js';
import type { AlertCount, AlertCountRow } from '../logs/store/writer.js';
import { checkLimit } from '../plans/plans.js';
import type { ProjectsService } from '../projects/service.js';
import { findMemberProject } from '../projects/repository.js';
import * as repo from './repository.js';
import { logsUrl } from './links.js';
import type { Channels } from '../notifications/channels.js';
import type { FiringContext } from '../notifications/repository.js';
import { bucketSize, matchRules, parseChannels, parseRuleQuery, parseCondition, parseCooldown, presentRule, type AlertRule, type ConditionInput, type Matcher } from './rules.js';

export interface CreateRuleInput {
  projectId: string;
  name: string;
  condition: ConditionInput;
  channels: string[];
  cooldown?: string;
}

export interface UpdateRuleInput {
  name?: string;
  condition?: ConditionInput;
  channels?: string[];
  cooldown?: string;
  enabled?: boolean;
  /** ISO 8601; null (or a past time): not muted. */
  mutedUntil?: string | null;
  projectId?: string;
}

export type EntryKind = 'triggered' | 'resolved';

export interface HistoryEntry {
  id: string;
  alertId: string;
  kind: EntryKind;
  triggeredAt: string;
  matchedCount: number;
  threshold: number;
  window: string;
  deliveries: { channel: string; status: string; error?: string }[];
  sample: Log[];
  /** `logs`: the explorer with the rule's condition and this entry's window (links.ts). */
  links: { logs: string };
}

export type AlertsService = ReturnType<typeof createAlertsService>;

const ruleNotFound = () => notFound('alert rule');
/** How long one evaluation round spends matching a project's logs (each project its own slice, one after another) before carrying the rest to the next round. */
export const EVALUATION_SLICE_MS = 250;
/** A log still undecided after this many rounds in which its project's rules stalled (see carryOver) is given up (logged). */
export const MAX_EVALUATION_ROUNDS = 5;
const SAMPLE_SIZE = 5;
/**
 * Entries that notify, in any minute: per rule, and per project over all its rules. An entry past
 * either is still written (the history is the record) with every delivery `skipped`, its error
 * saying which budget it was over; a 0 s cooldown rule firing on every log sends its first
 * RULE_NOTIFICATIONS_PER_MINUTE a minute and no more. Counted in the database, so they hold across
 * nodes; on PostgreSQL, firings of one project in concurrent transactions (several nodes, or a
 * clock round beside an ingest) may each read the count before the others' entries, so a budget
 * may be passed by as many. docs/alerts.md, "How often a rule notifies", says so to users.
 */
export const RULE_NOTIFICATIONS_PER_MINUTE = 10;
export const PROJECT_NOTIFICATIONS_PER_MINUTE = 30;
/** Test notifications an account may send a minute (each reaches every destination of its channels). */
export const TESTS_PER_MINUTE = 10;
/** Rules the clock reads (and their counters) per statement. */
const CLOCK_PAGE = 500;

/** `mutedUntil` as stored: epoch ms, or null. */
function parseMutedUntil(text: string | null): number | null {
  if (text === null) return null;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) throw validationError('/mutedUntil', 'must be an ISO 8601 time (for example 2026-11-25T18:00:00Z) or null');
  return ms;
}

function encodeCursor(at: number, id: string): string {
  return Buffer.from(`h1.${at}.${id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: number; id: string } {
  const m = /^h1\.(\d{1,16})\.(alh_[0-9a-z]{26})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError('querystring:/cursor', 'is not a cursor this server issued');
  return { at: Number(m[1]), id: m[2]! };
}

export function createAlertsService(deps: {
  db: Db;
  now: () => number;
  log: FastifyBaseLogger;
  projects: ProjectsService;
  onFired: () => void;
  /** Adds matches and reads back counters in one go; by default two statements on `db`. */
  addCounts?: (counts: AlertCount[], ruleIds: string[], from: number) => Promise<AlertCountRow[]>;
  /** The channels' senders, for the test endpoint (the outbox sends everything else). */
  channels?: Channels;
  /** A few of the newest logs a rule counts in [from, to], for a test notification. */
  sampleOf?: (userId: string, rule: repo.RuleRow, from: number, to: number) => Promise<LogRowStored[]>;
  /** Where the links in history entries point (PUBLIC_URL); by default a path from the server's root. */
  publicUrl?: string;
}) {
  const { db, now, log, onFired } = deps;
  const addCounts =
    deps.addCounts ??
    (async (counts: AlertCount[], ruleIds: string[], from: number) => {
      await repo.addCounts(db, counts);
      return repo.countsSince(db, ruleIds, from);
    });
  /** Per account, when its recent tests were sent (at most TESTS_PER_MINUTE a minute). */
  const tests = new Map<string, number[]>();
  const rules = new RuleCache(
    db,
    (row, err) => log.warn({ ruleId: row.id, projectId: row.project_id, err: (err as Error).message }, 'alert rule pattern or query cannot run; the rule counts nothing until it is changed'),
    now,
  );
  /** Logs carried over to a later round at least once (the entries go with the logs). */
  const carried = new WeakSet<LogRowStored>();
  /** How many stalled rounds of its project each carried log has been left undecided in. */
  const stalls = new WeakMap<LogRowStored, number>();
  /**
   * The undecided logs of a project that get another round. A round counts against them only when
   * it stalled (it could not decide even the first log that needed a test: rules too costly for
   * the slice); when it merely had more logs than fit in the slice, nothing is counted, so a busy
   * project's logs wait (and its ingestion sheds load) but are never dropped. A log left undecided
   * in MAX_EVALUATION_ROUNDS stalled rounds is given up (it counts for no rule), with a warning
   * saying how many.
   */
  function carryOver(projectId: string, undecided: LogRowStored[], stalled: boolean): LogRowStored[] {
    for (const row of undecided) carried.add(row);
    if (!stalled) return undecided;
    const kept: LogRowStored[] = [];
    for (const row of undecided) {
      const n = (stalls.get(row) ?? 0) + 1;
      if (n < MAX_EVALUATION_ROUNDS) {
        stalls.set(row, n);
        kept.push(row);
      } else stalls.delete(row);
    }
    const dropped = undecided.length - kept.length;
    if (dropped > 0) {
      log.warn(
        { projectId, dropped, rounds: MAX_EVALUATION_ROUNDS },
        `gave up evaluating logs that the project's alert rules could not decide in ${MAX_EVALUATION_ROUNDS} rounds (costly patterns or queries); they count for no rule`,
      );
    }
    return kept;
  }
  async function owned(userId: string, id: string): Promise<repo.RuleRow> {
    const row = isId('alt', id) ? await repo.findMemberRule(db, userId, id) : undefined;
    if (!row) throw ruleNotFound();
    return row;
  }

  /**
   * Writes an entry (history, and one delivery per channel: pending, or skipped while the rule is
   * muted) if this node wins the entry's claim: `triggered` (ok → firing, or a reminder once the
   * cooldown has passed) or `resolved` (firing → ok after a whole window with the condition false).
   * Past the rule's or the project's notification budget, its deliveries are skipped (rate limited).
   */
  async function record(rule: repo.RuleRow, kind: EntryKind, count: number, sample: LogRowStored[]): Promise<boolean> {
    const t = now();
    const written = await db.transaction().execute(async (tx) => {
      const claimed = kind === 'triggered' ? await repo.claimFiring(tx, rule, t) : await repo.claimResolved(tx, rule.id, t);
      if (!claimed) return false;
      const historyId = newId('alh', t);
      await repo.insertHistory(tx, {
        id: historyId,
        rule_id: rule.id,
        project_id: rule.project_id,
        kind,
        triggered_at: t,
        matched_count: count,
        threshold: claimed.threshold,
        window_ms: claimed.window_ms,
        sample: JSON.stringify(sample.map(presentLog)),
      });
      const muted = claimed.muted_until !== null && Number(claimed.muted_until) > t;
      const skipped = muted ? 'muted' : await overBudget(tx, rule, t);
      for (const channel of claimed.channels.split(',').filter(Boolean)) {
        await repo.insertDelivery(tx, {
          id: newId('dlv', t),
          history_id: historyId,
          channel,
          status: skipped ? 'skipped' : 'pending',
          attempts: 0,
          next_attempt_at: t,
          locked_until: null,
          error: skipped,
          state: null,
          updated_at: t,
        });
      }
      return true;
    });
    if (written) {
      log.info({ ruleId: rule.id, projectId: rule.project_id, count, kind }, kind === 'resolved' ? 'alert resolved' : 'alert fired');
      onFired();
    }
    return written;
  }

  /**
   * Why an entry written now does not notify (a budget it is over), or null when it does. The
   * rule's budget is read first: a rule past it (a 0 s cooldown firing on every log) costs one short
   * read, the project's is read only for a rule within its own.
   */
  async function overBudget(tx: Executor, rule: repo.RuleRow, t: number): Promise<string | null> {
    const since = t - 60_000;
    if ((await repo.notifiedSince(tx, 'rule_id', rule.id, since, RULE_NOTIFICATIONS_PER_MINUTE)) >= RULE_NOTIFICATIONS_PER_MINUTE) {
      return `${repo.RATE_LIMITED}: this rule notified ${RULE_NOTIFICATIONS_PER_MINUTE} times in the last minute`;
    }
    if ((await repo.notifiedSince(tx, 'project_id', rule.project_id, since, PROJECT_NOTIFICATIONS_PER_MINUTE)) >= PROJECT_NOTIFICATIONS_PER_MINUTE) {
      return `${repo.RATE_LIMITED}: the project's alerts notified ${PROJECT_NOTIFICATIONS_PER_MINUTE} times in the last minute`;
    }
    return null;
  }

  /** Each rule's count over its own window (whole counter buckets from the window's start), from the counter rows read. */
  function windowTotals(buckets: readonly AlertCountRow[], fromOf: ReadonlyMap<string, number>): Map<string, number> {
    const totals = new Map<string, number>();
    for (const b of buckets) {
      const from = fromOf.get(b.rule_id);
      if (from !== undefined && Number(b.bucket) >= from) totals.set(b.rule_id, (totals.get(b.rule_id) ?? 0) + Number(b.n));
    }
    return totals;
  }

  /** Where a rule's window starts at `t`, on its counter bucket's edge. */
  function windowFrom(windowMs: number, t: number): number {
    const from = t - windowMs;
    return from - (from % bucketSize(windowMs));
  }

  /** One rule on the clock, with its window's count at `t` (see tick). */
  async function evaluateOnClock(row: repo.RuleRow, count: number, t: number): Promise<void> {
    const windowMs = Number(row.window_ms);
    const holds = row.comparison === 'below' ? count < row.threshold : count >= row.threshold;
    // Inside the cooldown nothing can be claimed: no write is tried.
    const due = row.last_triggered_at === null || Number(row.last_triggered_at) <= t - Number(row.cooldown_ms);
    if (row.state === 'firing') {
      if (holds) {
        // With a 0 s cooldown every batch that holds the condition already notifies on ingest; the
        // clock, with no new log, would only repeat the same news every round.
        if (due && Number(row.cooldown_ms) > 0) await record(row, 'triggered', count, []);
        else if (row.clear_since !== null) await repo.unmarkClear(db, row.id);
      } else if (row.clear_since === null) await repo.markClear(db, row.id, t);
      else if (Number(row.clear_since) <= t - windowMs) await record(row, 'resolved', count, []);
    } else if (holds && due && (row.comparison === 'above' || t - Number(row.condition_at ?? row.created_at) >= windowMs)) {
      await record(row, 'triggered', count, []);
    }
  }

  return {
    async create(userId: string, input: CreateRuleInput): Promise<AlertRule> {
      const condition = parseCondition(input.condition);
      const channels = parseChannels(input.channels);
      const cooldownMs = parseCooldown(input.cooldown);
      const name = input.name.trim();
      if (name === '') throw validationError('/name', 'must not be blank');
      return db.transaction().execute(async (tx) => {
        // The project row's lock serialises creates under one project, so the cap holds under races.
        // Any member may add a rule; the cap is the owner's plan's, whoever creates it.
        const project = isId('proj', input.projectId) ? await findMemberProject(tx, userId, input.projectId) : undefined;
        if (!project) throw notFound('project');
        await lockRow(tx, 'projects', project.id);
        const owner = await findUserById(tx, project.user_id);
        if (!owner) throw notFound('project');
        const check = checkLimit(owner.plan, 'alerts', await repo.countRules(tx, project.id));
        if (!check.ok) throw new AppError('PLAN_LIMIT_EXCEEDED', `${check.message.replace(/^Your /, 'The project owner\'s ')}`, { details: { resource: 'alerts', limit: check.limit, plan: owner.plan } });
        const t = now();
        const row: repo.RuleRow = {
          state: 'ok',
          state_since: null,
          comparison: condition.comparison,
          condition_at: t,
          clear_since: null,
          muted_until: null,
          id: newId('alt', t),
          project_id: project.id,
          name,
          level: condition.level,
          threshold: condition.threshold,
          window_ms: condition.windowMs,
          source: condition.source,
          pattern: condition.pattern,
          query: condition.query,
          channels: channels.join(','),
          cooldown_ms: cooldownMs,
          enabled: 1,
          last_triggered_at: null,
          created_at: t,
          updated_at: t,
        };
        await repo.insertRule(tx, row);
        rules.forget(project.id);
        return presentRule(row);
      });
    },

    async list(userId: string, projectId: string | undefined): Promise<AlertRule[]> {
      if (projectId !== undefined) {
        const project = isId('proj', projectId) ? await findMemberProject(db, userId, projectId) : undefined;
        if (!project) throw notFound('project');
      }
      return (await repo.listRules(db, userId, projectId)).map(presentRule);
    },

    async get(userId: string, id: string): Promise<AlertRule> {
      return presentRule(await owned(userId, id));
    },

    async update(userId: string, id: string, input: UpdateRuleInput): Promise<AlertRule> {
      const row = await owned(userId, id);
      if (input.projectId !== undefined && input.projectId !== row.project_id) throw validationError('/projectId', 'cannot change; create the rule in the other project instead');
      const t = now();
      const changes: Partial<repo.RuleRow> = { updated_at: t };
      if (input.name !== undefined) {
        const name = input.name.trim();
        if (name === '') throw validationError('/name', 'must not be blank');
        changes.name = name;
      }
      // Only a condition that differs from the stored one is a change (a client resending it
      // whole does not reset the rule).
      let conditionChanged = false;
      if (input.condition !== undefined) {
        const c = parseCondition(input.condition);
        const next = { comparison: c.comparison, level: c.level, threshold: c.threshold, window_ms: c.windowMs, source: c.source, pattern: c.pattern, query: c.query };
        conditionChanged = (Object.keys(next) as (keyof typeof next)[]).some((k) => String(next[k]) !== String(row[k]));
        if (conditionChanged) Object.assign(changes, next, { condition_at: t });
      }
      if (input.channels !== undefined) changes.channels = parseChannels(input.channels).join(',');
      if (input.cooldown !== undefined) changes.cooldown_ms = parseCooldown(input.cooldown);
      if (input.enabled !== undefined) changes.enabled = input.enabled ? 1 : 0;
      // Enabled again: its counters missed the logs meanwhile, so a silence alert's first window starts over.
      if (input.enabled === true && row.enabled === 0) changes.condition_at = t;
      if (input.mutedUntil !== undefined) changes.muted_until = parseMutedUntil(input.mutedUntil);
      // A new condition, or disabling, puts the rule back to ok without an entry (state_since moves
      // only if it was firing when the update ran, whatever was read before).
      const reset = conditionChanged || input.enabled === false;
      if (reset) Object.assign(changes, { state: 'ok', clear_since: null, state_since: sql<number>`case when state = 'firing' then ${t} else state_since end` as never });
      const updated = await db.transaction().execute(async (tx) => {
        const u = await repo.updateRule(tx, id, changes);
        // What the counters counted was the old condition's.
        if (u && conditionChanged) await repo.deleteCounts(tx, id);
        return u;
      });
      rules.forget(row.project_id);
      if (!updated) throw ruleNotFound();
      return presentRule(updated);
    },

    async remove(userId: string, id: string): Promise<void> {
      const row = await owned(userId, id);
      await repo.deleteRule(db, id);
      rules.forget(row.project_id);
    },

    async history(userId: string, id: string, limit: number, cursor: string | undefined): Promise<{ data: HistoryEntry[]; nextCursor: string | null }> {
      const rule = await owned(userId, id);
      const rows = await repo.historyPage(db, id, cursor ? decodeCursor(cursor) : undefined, limit + 1);
      const page = rows.slice(0, limit);
      const deliveries = await repo.deliveriesOf(db, page.map((r) => r.id));
      const last = page[page.length - 1];
      return {
        data: page.map((r) => ({
          id: r.id,
          alertId: r.rule_id,
          kind: r.kind === 'resolved' ? 'resolved' : 'triggered',
          triggeredAt: new Date(Number(r.triggered_at)).toISOString(),
          matchedCount: r.matched_count,
          threshold: r.threshold,
          window: formatDuration(Number(r.window_ms)),
          deliveries: deliveries
            .filter((d) => d.history_id === r.id)
            .map((d) => ({ channel: d.channel, status: d.status, ...(d.error ? { error: d.error } : {}) })),
          sample: JSON.parse(r.sample) as Log[],
          // The rule's condition as it is now: an entry does not keep the condition it fired on.
          links: { logs: logsUrl(deps.publicUrl ?? '', r.project_id, rule, Number(r.triggered_at), Number(r.window_ms)) },
        })),
        nextCursor: rows.length > limit && last ? encodeCursor(Number(last.triggered_at), last.id) : null,
      };
    },

    /**
     * Checks committed logs against their projects' enabled rules: the matches are counted in the
     * database (per rule and time bucket, so every node sees the same window count), and a rule
     * whose window count reaches its threshold fires if it wins the claim. Takes many batches of
     * many projects at once and costs two statements in all, plus one transaction per firing.
     * Answers the logs it could not decide within their project's slice (costly patterns or
     * queries), per project, for a later round; a log left undecided by MAX_EVALUATION_ROUNDS
     * rounds that stalled (see carryOver) is not answered again (given up, with a warning).
     */
    async evaluate(work: Iterable<[projectId: string, rows: LogRowStored[]]>): Promise<Map<string, LogRowStored[]>> {
      const t = now();
      const matched: { rule: repo.RuleRow; from: number; sample: LogRowStored[] }[] = [];
      const counts: { ruleId: string; bucket: number; n: number }[] = [];
      const leftovers = new Map<string, LogRowStored[]>();
      const projects = [...work];
      // Every project's rules are read side by side (most come from the cache) ...
      const ruleSets = await Promise.all(projects.map(([projectId]) => rules.of(projectId)));
      // ... then the projects are matched one at a time, each within its own slice, which starts
      // when its turn does: nothing another project's rules do (a long inline pass, a costly test
      // holding the regex worker) is taken from it. A project's turn ends once its slice is over and
      // the worker has answered the test it had started, so the next one finds the worker free.
      // Projects carrying undecided logs from an earlier round (costly rules) take their turn last.
      const order = projects.map((_, i) => i);
      const carries = projects.map(([, rows]) => rows.some((row) => carried.has(row)));
      order.sort((a, b) => Number(carries[a]) - Number(carries[b]) || a - b);
      for (const i of order) {
        const [projectId, rows] = projects[i]!;
        const projectRules = ruleSets[i]!;
        if (projectRules.length === 0) continue;
        const deadline = Date.now() + EVALUATION_SLICE_MS;
        const { results, undecided, stalled } = await matchRules(projectRules, rows, t, SAMPLE_SIZE, projectId, deadline);
        if (undecided.length > 0) {
          const kept = carryOver(projectId, undecided, stalled);
          if (kept.length > 0) leftovers.set(projectId, kept);
        }
        for (const [rule, match] of results) {
          for (const [bucket, n] of match.buckets) counts.push({ ruleId: rule.row.id, bucket, n });
          matched.push({ rule: rule.row, from: windowFrom(rule.windowMs, t), sample: match.sample });
        }
      }
      if (matched.length === 0) return leftovers;
      const buckets = await addCounts(counts, matched.map((m) => m.rule.id), Math.min(...matched.map((m) => m.from)));
      const totals = windowTotals(buckets, new Map(matched.map((m) => [m.rule.id, m.from])));
      for (const { rule, sample } of matched) {
        // A silence alert is decided on the clock; logs only add to its counters.
        if (rule.comparison === 'below') continue;
        const count = totals.get(rule.id) ?? 0;
        if (count < rule.threshold) continue;
        const written = await record(rule, 'triggered', count, sample);
        // Still firing, inside its cooldown: the condition holds again, so its quiet window starts over.
        if (!written && rule.state === 'firing' && rule.clear_since !== null) await repo.unmarkClear(db, rule.id);
      }
      return leftovers;
    },

    /**
     * Evaluates on the clock (every ALERT_CLOCK_INTERVAL, on every node; the claims keep each
     * transition to one): the enabled rules that are firing or watch for silence, each against its
     * window's count. A firing rule whose condition holds gets its reminder once the cooldown has
     * passed; one whose condition is false starts (or goes on with) its quiet window, and resolves
     * once that is a window long. A `below` rule in ok fires once its condition holds and the rule,
     * or its last condition change, is a window old.
     */
    async tick(): Promise<void> {
      const t = now();
      // A page of rules at a time, their counts summed by the database: what a round holds stays
      // bounded however many rules there are and however long their windows.
      for (let after = ''; ; ) {
        const rows = await repo.rulesOnClock(db, after, CLOCK_PAGE, t);
        if (rows.length === 0) return;
        after = rows[rows.length - 1]!.id;
        const totals = await repo.windowCounts(db, rows.map((r) => ({ ruleId: r.id, from: windowFrom(Number(r.window_ms), t) })));
        for (const row of rows) {
          // One rule's failure (a lost connection, a busy database) does not keep the others waiting.
          try {
            await evaluateOnClock(row, totals.get(row.id) ?? 0, t);
          } catch (err) {
            log.warn({ ruleId: row.id, projectId: row.project_id, err: (err as Error).message }, 'alert rule could not be evaluated on the clock; it is tried again next round');
          }
        }
        if (rows.length < CLOCK_PAGE) return;
      }
    },

    /**
     * Sends a test notification on each of the rule's channels now: one attempt per destination,
     * mute ignored, with the count and sample of the current window; no history entry. At most
     * TESTS_PER_MINUTE a minute per account on this node.
     */
    async test(userId: string, id: string): Promise<{ deliveries: { channel: string; status: 'sent' | 'failed' | 'skipped'; error?: string }[] }> {
      const row = await owned(userId, id);
      const t = now();
      const recent = (tests.get(userId) ?? []).filter((at) => at > t - 60_000);
      if (recent.length >= TESTS_PER_MINUTE) {
        throw new AppError('RATE_LIMITED', `At most ${TESTS_PER_MINUTE} test notifications a minute; try again shortly.`, { retryAfter: Math.max(1, Math.ceil((recent[0]! + 60_000 - t) / 1000)) });
      }
      recent.push(t);
      if (tests.size > 10_000) tests.clear();
      tests.set(userId, recent);
      const windowMs = Number(row.window_ms);
      const from = windowFrom(windowMs, t);
      const count = windowTotals(await repo.countsSince(db, [row.id], from), new Map([[row.id, from]])).get(row.id) ?? 0;
      const sample = deps.sampleOf ? await deps.sampleOf(userId, row, t - windowMs, t) : [];
      // A test goes to the member who asked for it, not to the whole team.
      const project = await db.selectFrom('projects').select('name').where('id', '=', row.project_id).executeTakeFirstOrThrow();
      const caller = await findUserById(db, userId);
      const ctx: FiringContext = {
        historyId: null,
        kind: 'test',
        triggeredAt: t,
        matchedCount: count,
        threshold: row.threshold,
        windowMs,
        sample: JSON.stringify(sample.slice(0, SAMPLE_SIZE).map(presentLog)),
        ruleState: row.state,
        ruleId: row.id,
        ruleName: row.name,
        comparison: row.comparison,
        level: row.level,
        source: row.source,
        pattern: row.pattern,
        query: row.query,
        projectId: row.project_id,
        projectName: project.name,
        recipients: caller ? [{ userId, email: caller.email }] : [],
      };
      const deliveries = await Promise.all(
        row.channels
          .split(',')
          .filter(Boolean)
          .map(async (channel) => {
            const send = deps.channels?.of(channel);
            let outcome: { status: string; error?: string };
            try {
              outcome = send ? await send(ctx, null) : { status: 'skipped', error: `unknown channel ${channel}` };
            } catch (err) {
              outcome = { status: 'failed', error: err instanceof Error ? err.message : String(err) };
            }
            // One attempt: what would be retried is a failure here.
            const status = outcome.status === 'retry' ? 'failed' : (outcome.status as 'sent' | 'failed' | 'skipped');
            return { channel, status, ...(outcome.error ? { error: outcome.error } : {}) };
          }),
      );
      return { deliveries };
    },

    /** Whether a project has no enabled rule, as far as this node knows right now (no database read). */
    surelyNoRules(projectId: string): boolean {
      return rules.cachedEmpty(projectId);
    },

    /** Drops counter buckets older than the longest window. */
    async housekeeping(): Promise<void> {
      await repo.deleteOldCounts(db, now() - 8 * 86_400_000);
    },
  };
}

/** A rule as evaluation uses it: its row, with its pattern compiled once. */
interface LiveRule extends Matcher {
  row: repo.RuleRow;
}

/** How long a node uses a project's rule set before reading it again: edits made on another node apply within this. */
export const RULE_CACHE_MS = 1000;

interface RuleSet {
  /** When it was read (the service's clock); -Infinity once forgotten. */
  at: number;
  rules: Promise<LiveRule[]>;
  value?: LiveRule[];
  /**
   * The set's queries and patterns by their text, parsed or compiled (or why they cannot run): the
   * next read of the project takes those whose text is unchanged from here instead of again.
   */
  parsed?: Map<string, Query | Pattern | Error>;
}

/**
 * Each project's enabled rules, read at most once per RULE_CACHE_MS instead of for every batch.
 * Edits through this node make the project's entry stale at once; edits through another node are
 * seen when the entry expires. Concurrent misses for one project share one read. A read parses
 * only the queries (and compiles only the patterns) whose text the project's previous read did not
 * have, and rules with the same text share one parsed query.
 */
class RuleCache {
  #entries = new Map<string, RuleSet>();

  /**
   * The cache's age is read on the service's clock (`now`, the clock every alert decision uses), so
   * a test moves it forward instead of waiting. An entry whose read time is ahead of the clock (the
   * clock was set back) counts as expired, so a step back never keeps a set longer than
   * RULE_CACHE_MS.
   */
  constructor(
    private readonly db: Db,
    private readonly onUnusable: (row: repo.RuleRow, err: unknown) => void,
    private readonly now: () => number,
  ) {}

  /** Whether an entry read at `at` is still fresh at `t`. */
  static #fresh(at: number, t: number): boolean {
    const age = t - at;
    return age >= 0 && age < RULE_CACHE_MS;
  }

  of(projectId: string): Promise<LiveRule[]> {
    const t = this.now();
    const hit = this.#entries.get(projectId);
    if (hit && RuleCache.#fresh(hit.at, t)) return hit.rules;
    const entry: RuleSet = {
      at: t,
      rules: repo.enabledRules(this.db, projectId).then((rows) => {
        const before = hit?.parsed;
        const parsed = new Map<string, Query | Pattern | Error>();
        /** A query ('q' + text) or pattern ('p' + source) parsed or compiled, from the previous read if it had it. */
        const get = <V extends Query | Pattern>(key: string, make: () => V): V => {
          let value = parsed.get(key) ?? before?.get(key);
          if (value === undefined) {
            try {
              value = make();
            } catch (err) {
              value = err instanceof Error ? err : new Error(String(err));
            }
          }
          parsed.set(key, value);
          if (value instanceof Error) throw value;
          return value as V;
        };
        const live: LiveRule[] = [];
        for (const row of rows) {
          let pattern: Pattern | null = null;
          let query: Query | null = null;
          // compileRe2 keeps patterns by source too, but only the 256 used last by anyone. A pattern
          // saved before today's cost cap that is past it can no longer run: the rule counts nothing.
          try {
            if (row.pattern !== null) pattern = get('p' + row.pattern, () => compileRe2(row.pattern!));
            if (row.query !== null) query = get('q' + row.query, () => parseRuleQuery(row.query!));
          } catch (err) {
            this.onUnusable(row, err);
            continue;
          }
          live.push({ row, level: row.level, source: row.source, windowMs: Number(row.window_ms), pattern, query });
        }
        entry.value = live;
        entry.parsed = parsed;
        return live;
      }),
    };
    // A failed read is tried again by the next use, which still finds the previous read's parse here.
    if (hit?.parsed) entry.parsed = hit.parsed;
    entry.rules.catch(() => void (entry.at = -Infinity));
    if (this.#entries.size > 10_000) this.#entries.clear();
    this.#entries.set(projectId, entry);
    return entry.rules;
  }

  /** True only when a fresh read found no enabled rule. */
  cachedEmpty(projectId: string): boolean {
    const hit = this.#entries.get(projectId);
    return hit !== undefined && RuleCache.#fresh(hit.at, this.now()) && hit.value !== undefined && hit.value.length === 0;
  }

  /** The project's rules changed: read them again before the next use (the parsed texts stay for that read). */
  forget(projectId: string): void {
    const hit = this.#entries.get(projectId);
    if (hit) hit.at = -Infinity;
  }
}
