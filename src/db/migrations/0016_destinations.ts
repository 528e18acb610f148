import type { Kysely } from 'kysely';

/**
 * A project's alert destinations (docs/alerts.md, "Destinations"): webhooks
 * and Slack incoming webhooks. A webhook's signing secret is kept sealed (AES-256-GCM under a key
 * derived from the server's secret, bound to the destination's id), never in plain text; it is
 * shown once, in the answer to its creation.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('alert_destinations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_destinations_project').on('alert_destinations').columns(['project_id', 'type']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alert_destinations').execute();
}
