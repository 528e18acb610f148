/**
 * The notification outbox's statements: deliveries due, claimed by one node at a time, finished;
 * and what a message about one entry needs.
 */
import { sql } from 'kysely';
import type { AlertDeliveriesTable, Executor } from '../../db/types.js';

/**
 * Due deliveries picked fairly across projects: each project's `perProject` oldest at most, every
 * project's first before any project's second (so a project with a thousand pending deliveries
 * takes one place per round like any other), `limit` in all; projects in `skip` (their slots on
 * this node are full) not at all.
 */
export async function dueDeliveries(db: Executor, now: number, perProject: number, limit: number, skip: readonly string[] = []): Promise<{ id: string; project_id: string }[]> {
  const skipped = skip.length > 0 ? sql`and h.project_id not in (${sql.join(skip.map((p) => sql`${p}`))})` : sql``;
  const { rows } = await sql<{ id: string; project_id: string }>`
    select id, project_id from (
      select d.id, h.project_id, d.next_attempt_at,
        row_number() over (partition by h.project_id order by d.next_attempt_at, d.id) as turn
      from alert_deliveries d join alert_history h on h.id = d.history_id
      where d.status = 'pending' and d.next_attempt_at <= ${now} and (d.locked_until is null or d.locked_until < ${now}) ${skipped}
    ) due
    where turn <= ${perProject}
    order by turn, next_attempt_at, id
    limit ${limit}`.execute(db);
  return rows;
}

/** Takes a delivery for `lockMs`; only one node gets it. A crashed node's lock simply runs out. */
export function claimDelivery(db: Executor, id: string, now: number, lockMs: number) {
  return db
    .updateTable('alert_deliveries')
    .set((eb) => ({ locked_until: now + lockMs, attempts: eb('attempts', '+', 1), updated_at: now }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .returningAll()
    .executeTakeFirst();
}

export async function finishDelivery(db: Executor, id: string, changes: Partial<AlertDeliveriesTable>): Promise<void> {
  await db.updateTable('alert_deliveries').set({ ...changes, locked_until: null }).where('id', '=', id).execute();
}

/**
 * Forgets a user in the progress of pending deliveries (whom a mail already reached): for account
 * deletion. A finished delivery keeps no progress at all, and each attempt keeps only the current
 * recipients, so this is only for the few still pending.
 */
export async function forgetRecipient(db: Executor, userId: string): Promise<void> {
  const rows = await db.selectFrom('alert_deliveries').select(['id', 'state']).where('status', '=', 'pending').where('state', 'like', `%"${userId}"%`).execute();
  for (const row of rows) {
    const state = JSON.parse(row.state!) as { done?: string[] };
    state.done = (state.done ?? []).filter((id) => id !== userId);
    await db.updateTable('alert_deliveries').set({ state: JSON.stringify(state) }).where('id', '=', row.id).where('status', '=', 'pending').execute();
  }
}

/** Everything a message about one entry needs. */
export function firingContext(db: Executor, historyId: string): Promise<FiringContext | undefined> {
  return db
    .selectFrom('alert_history')
    .innerJoin('alert_rules', 'alert_rules.id', 'alert_history.rule_id')
    .innerJoin('projects', 'projects.id', 'alert_history.project_id')
    .select([
      'alert_history.id as historyId', 'alert_history.kind as kind', 'alert_history.triggered_at as triggeredAt', 'alert_rules.state as ruleState', 'alert_history.matched_count as matchedCount',
      'alert_history.threshold as threshold', 'alert_history.window_ms as windowMs', 'alert_history.sample as sample',
      'alert_rules.id as ruleId', 'alert_rules.name as ruleName', 'alert_rules.comparison as comparison', 'alert_rules.level as level', 'alert_rules.source as source', 'alert_rules.pattern as pattern', 'alert_rules.query as query',
      'projects.id as projectId', 'projects.name as projectName',
    ])
    .where('alert_history.id', '=', historyId)
    .executeTakeFirst();
}



/**
 * What a message about one entry (or a test) says: the entry, its rule and project, and for a test its one recipient.
 * `kind` `test` has no entry (historyId null): its count and sample are the rule's current window.
 */
export interface FiringContext {
  historyId: string | null;
  kind: string;
  triggeredAt: number | string;
  matchedCount: number;
  threshold: number;
  windowMs: number | string;
  /** JSON: Log[] */
  sample: string;
  /** The rule's state after the event (for a test, now). */
  ruleState: string;
  ruleId: string;
  ruleName: string;
  comparison: string;
  level: number;
  source: string | null;
  pattern: string | null;
  query: string | null;
  projectId: string;
  projectName: string;
  /** Who email and push go to; when absent, every member of the project who has not muted it. */
  recipients?: Recipient[];
}

export interface Recipient {
  userId: string;
  email: string;
}
