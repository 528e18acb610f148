import type { Kysely } from 'kysely';

/**
 * Logs. `seq` numbers a project's logs in commit order (it is allocated from projects.last_seq
 * under the project row's lock in the ingest transaction), so "after seq N" is exact for cursors
 * and live-tail resumption on every node. No foreign key: deleting a project deletes its logs
 * explicitly in the same transaction, and the ingest path skips a per-row check.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('last_seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema
    .createTable('logs')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('level', 'smallint', (c) => c.notNull())
    .addColumn('source', 'text')
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .execute();
  // Tail resumption and retention's batches: seq within a project.
  await db.schema.createIndex('logs_project_seq').on('logs').columns(['project_id', 'seq']).unique().execute();
  // Newest first, time ranges, cursors.
  await db.schema.createIndex('logs_project_ts').on('logs').columns(['project_id', 'ts', 'seq']).execute();
  // Level filters and the alert window count.
  await db.schema.createIndex('logs_project_level_ts').on('logs').columns(['project_id', 'level', 'ts']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('logs').execute();
  await db.schema.alterTable('projects').dropColumn('last_seq').execute();
}
