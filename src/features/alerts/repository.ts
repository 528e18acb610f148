import { sql } from 'kysely';
import type { AlertDeliveriesTable, AlertHistoryTable, AlertRulesTable, Executor } from '../../db/types.js';

export type RuleRow = AlertRulesTable;

export async function insertRule(db: Executor, row: RuleRow): Promise<void> {
  await db.insertInto('alert_rules').values(row).execute();
}

export async function countRules(db: Executor, projectId: string): Promise<number> {
  const row = await db.selectFrom('alert_rules').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A rule, if the user is a member of its project. */
export function findMemberRule(db: Executor, userId: string, id: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('alert_rules')
    .innerJoin('project_members', (j) => j.onRef('project_members.project_id', '=', 'alert_rules.project_id').on('project_members.user_id', '=', userId))
    .selectAll('alert_rules')
    .where('alert_rules.id', '=', id)
    .executeTakeFirst();
}

/** The rules of every project the user is a member of (or of one of them). */
export function listRules(db: Executor, userId: string, projectId?: string): Promise<RuleRow[]> {
  let q = db
    .selectFrom('alert_rules')
    .innerJoin('project_members', (j) => j.onRef('project_members.project_id', '=', 'alert_rules.project_id').on('project_members.user_id', '=', userId))
    .selectAll('alert_rules');
  if (projectId !== undefined) q = q.where('alert_rules.project_id', '=', projectId);
  return q.orderBy('alert_rules.created_at').orderBy('alert_rules.id').execute();
}

export function updateRule(db: Executor, id: string, changes: Partial<RuleRow>): Promise<RuleRow | undefined> {
  return db.updateTable('alert_rules').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteRule(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('alert_rules').where('id', '=', id).execute();
}

/** The rules the evaluator checks a batch against: read for every batch, so edits apply to the next one on every node. */
export function enabledRules(db: Executor, projectId: string): Promise<RuleRow[]> {
  return db.selectFrom('alert_rules').selectAll().where('project_id', '=', projectId).where('enabled', '=', 1).execute();
}

/**
 * Adds a batch's matches for every rule in one statement (a multi-row upsert), so a batch costs
 * the same two statements however many rules it matches.
 */
export async function addCounts(db: Executor, counts: { ruleId: string; bucket: number; n: number }[]): Promise<void> {
  if (counts.length === 0) return;
  await db
    .insertInto('alert_counts')
    .values(counts.map((c) => ({ rule_id: c.ruleId, bucket: c.bucket, n: c.n })))
    .onConflict((oc) => oc.columns(['rule_id', 'bucket']).doUpdateSet({ n: sql<number>`alert_counts.n + excluded.n` }))
    .execute();
}

/** The counter buckets of these rules from `from` on, for each rule to sum over its own window. */
export function countsSince(db: Executor, ruleIds: string[], from: number) {
  return db.selectFrom('alert_counts').select(['rule_id', 'bucket', 'n']).where('rule_id', 'in', ruleIds).where('bucket', '>=', from).execute();
}

export async function deleteOldCounts(db: Executor, before: number): Promise<void> {
  await db.deleteFrom('alert_counts').where('bucket', '<', before).execute();
}

/**
 * Claims a `triggered` entry: ok → firing, or a reminder while firing, once the cooldown has passed
 * since the last one. One conditional update, so of any number of nodes evaluating the same rule at
 * once exactly one gets the row back (the cooldown decides: with `0s`, every evaluation that finds
 * the condition true may write one, as docs/alerts.md, "State", says of reminders). It holds only for the
 * condition the node evaluated (its version, condition_at): a node working from a rule read
 * before a change of condition (a cached set, a clock page) claims nothing. A `below` rule is
 * claimed only once its condition is a window old. state_since moves only on the change of state.
 */
export function claimFiring(db: Executor, seen: RuleRow, now: number): Promise<RuleRow | undefined> {
  let q = db
    .updateTable('alert_rules')
    .set({ last_triggered_at: now, clear_since: null, state_since: sql<number>`case when state = 'ok' then ${now} else state_since end`, state: 'firing' })
    .where('id', '=', seen.id)
    .where('enabled', '=', 1)
    .where('comparison', '=', seen.comparison)
    .where(sql<boolean>`coalesce(condition_at, created_at) = ${Number(seen.condition_at ?? seen.created_at)}`)
    .where((eb) => eb.or([eb('last_triggered_at', 'is', null), eb('last_triggered_at', '<=', sql<number>`${now} - cooldown_ms`)]));
  if (seen.comparison === 'below') q = q.where(sql<boolean>`${now} - coalesce(condition_at, created_at) >= window_ms`);
  return q.returningAll().executeTakeFirst();
}

/** A firing rule's condition was seen false: the first such evaluation starts its quiet window. */
export async function markClear(db: Executor, ruleId: string, now: number): Promise<void> {
  await db.updateTable('alert_rules').set({ clear_since: now }).where('id', '=', ruleId).where('state', '=', 'firing').where('clear_since', 'is', null).execute();
}

/** A firing rule's condition was seen true again: its quiet window starts over. */
export async function unmarkClear(db: Executor, ruleId: string): Promise<void> {
  await db.updateTable('alert_rules').set({ clear_since: null }).where('id', '=', ruleId).where('clear_since', 'is not', null).execute();
}

/** Claims the `resolved` entry: firing → ok once the condition has been false for a whole window. One node wins. */
export function claimResolved(db: Executor, ruleId: string, now: number): Promise<RuleRow | undefined> {
  return db
    .updateTable('alert_rules')
    .set({ state: 'ok', state_since: now, clear_since: null })
    .where('id', '=', ruleId)
    .where('enabled', '=', 1)
    .where('state', '=', 'firing')
    .where('clear_since', 'is not', null)
    .where('clear_since', '<=', sql<number>`${now} - window_ms`)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The rules the clock evaluates, `limit` at a time after `afterId`: enabled ones that are firing
 * (recovery, reminders), that watch for silence, or `above` rules in ok whose cooldown held back a
 * firing lately (logs counted during the cooldown may still hold the condition once it ends, with
 * no new log to evaluate them).
 */
export function rulesOnClock(db: Executor, afterId: string, limit: number, now: number): Promise<RuleRow[]> {
  return db
    .selectFrom('alert_rules')
    .selectAll()
    .where('enabled', '=', 1)
    .where((eb) =>
      eb.or([
        eb('state', '=', 'firing'),
        eb('comparison', '=', 'below'),
        eb.and([eb('last_triggered_at', 'is not', null), eb('last_triggered_at', '>', sql<number>`${now} - cooldown_ms - window_ms`)]),
      ]),
    )
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Each rule's count over its own window, summed by the database: one row per rule, whatever its
 * window and bucket size (a round's memory does not grow with a long window's buckets).
 */
export async function windowCounts(db: Executor, windows: { ruleId: string; from: number }[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (windows.length === 0) return out;
  const values = sql.join(windows.map((w) => sql`(${w.ruleId}, cast(${w.from} as bigint))`));
  const { rows } = await sql<{ rule_id: string; n: number | string }>`
    with w(rule_id, since) as (values ${values})
    select c.rule_id, sum(c.n) as n from w join alert_counts c on c.rule_id = w.rule_id and c.bucket >= w.since
    group by c.rule_id`.execute(db);
  for (const r of rows) out.set(r.rule_id, Number(r.n));
  return out;
}

/** Forgets a rule's counters (its condition changed: what they counted no longer applies). */
export async function deleteCounts(db: Executor, ruleId: string): Promise<void> {
  await db.deleteFrom('alert_counts').where('rule_id', '=', ruleId).execute();
}

/** Why a delivery is skipped when its entry was over a notification budget: such entries did not notify. */
export const RATE_LIMITED = 'rate limited';

/**
 * How many entries of a rule (or of a project) written after `since` notified (those with a
 * delivery neither muted nor over a budget), counted up to `atMost`: one indexed range of entries
 * read oldest first (in a burst the entries that notified come first, so those over the budget
 * after them are not read), each entry looked up in deliveries.
 */
export async function notifiedSince(db: Executor, by: 'rule_id' | 'project_id', id: string, since: number, atMost: number): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from (
      select 1 as one from alert_history h
      where ${sql.ref(`h.${by}`)} = ${id} and h.triggered_at > ${since}
        and exists (select 1 from alert_deliveries d where d.history_id = h.id
          and (d.error is null or (d.error <> 'muted' and d.error not like ${RATE_LIMITED + '%'})))
      order by h.triggered_at
      limit ${atMost}
    ) notified`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export async function insertHistory(db: Executor, row: AlertHistoryTable): Promise<void> {
  await db.insertInto('alert_history').values(row).execute();
}

export async function insertDelivery(db: Executor, row: AlertDeliveriesTable): Promise<void> {
  await db.insertInto('alert_deliveries').values(row).execute();
}

export function historyPage(db: Executor, ruleId: string, before: { at: number; id: string } | undefined, limit: number) {
  let q = db.selectFrom('alert_history').selectAll().where('rule_id', '=', ruleId);
  if (before) q = q.where((eb) => eb.or([eb('triggered_at', '<', before.at), eb.and([eb('triggered_at', '=', before.at), eb('id', '<', before.id)])]));
  return q.orderBy('triggered_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export function deliveriesOf(db: Executor, historyIds: string[]) {
  if (historyIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('alert_deliveries').select(['history_id', 'channel', 'status', 'error']).where('history_id', 'in', historyIds).orderBy('channel').execute();
}
