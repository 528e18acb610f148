import type { Kysely } from 'kysely';

/**
 * A project's alert entries by time: firing counts the entries that notified in the project's
 * last minute against its budget (docs/alerts.md, "How often a rule notifies, and what one
 * project's destinations cost others"), one indexed range per firing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('alert_history_project').on('alert_history').columns(['project_id', 'triggered_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('alert_history_project').execute();
}
