/**
 * The notification outbox's statements: deliveries due, claimed by one node at a time, finished;
 * and what a message about one entry needs.
 */
import type { AlertDeliveriesTable, Executor } from '../../db/types.js';

export function dueDeliveries(db: Executor, now: number, limit: number) {
  return db
    .selectFrom('alert_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
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
