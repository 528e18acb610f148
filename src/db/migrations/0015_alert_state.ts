import type { Kysely } from 'kysely';

/**
 * Alert state (docs/alerts.md, "State"):
 * - alert_rules.state `ok` | `firing`, state_since (null until the first change of state);
 * - comparison `above` (count ≥ threshold, as before) | `below` (count < threshold);
 * - condition_at: when the condition was last set (a `below` rule fires only once it is a window old);
 * - clear_since: while firing, since when evaluations have seen the condition false (null: not seen,
 *   or seen true since); a whole window of that resolves the rule;
 * - muted_until: while in the future, deliveries are skipped;
 * - alert_history.kind `triggered` | `resolved`.
 * Existing rules are `ok`, `above`, not muted; existing entries `triggered`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alert_rules').addColumn('state', 'text', (c) => c.notNull().defaultTo('ok')).execute();
  await db.schema.alterTable('alert_rules').addColumn('state_since', 'bigint').execute();
  await db.schema.alterTable('alert_rules').addColumn('comparison', 'text', (c) => c.notNull().defaultTo('above')).execute();
  await db.schema.alterTable('alert_rules').addColumn('condition_at', 'bigint').execute();
  await db.schema.alterTable('alert_rules').addColumn('clear_since', 'bigint').execute();
  await db.schema.alterTable('alert_rules').addColumn('muted_until', 'bigint').execute();
  await db.schema.alterTable('alert_history').addColumn('kind', 'text', (c) => c.notNull().defaultTo('triggered')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['state', 'state_since', 'comparison', 'condition_at', 'clear_since', 'muted_until']) await db.schema.alterTable('alert_rules').dropColumn(column).execute();
  await db.schema.alterTable('alert_history').dropColumn('kind').execute();
}
