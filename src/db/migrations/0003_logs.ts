import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Logs. `seq` orders logs in commit order, so "after seq N" is exact for cursors and live-tail
 * resumption on every node:
 * - SQLite: `seq` is the rowid, allocated by the single writer inside its transaction (global,
 *   increasing). Rowid tables need no separate index for it, which keeps inserts fast.
 * - PostgreSQL: `seq` numbers a project's logs, allocated from projects.last_seq under the project
 *   row's lock in the ingest transaction, so it follows commit order across nodes.
 * projects.last_seq holds the seq of the project's newest log on both. No foreign key: deleting a
 * project deletes its logs explicitly in the same transaction, and the ingest path skips a per-row
 * check.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('projects').addColumn('last_seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  let table = db.schema.createTable('logs');
  table = postgres
    ? table.addColumn('project_id', 'text', (c) => c.notNull()).addColumn('seq', 'bigint', (c) => c.notNull())
    : table.addColumn('seq', 'integer', (c) => c.primaryKey()).addColumn('project_id', 'text', (c) => c.notNull());
  await table
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('level', 'smallint', (c) => c.notNull())
    .addColumn('source', 'text')
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .execute();
  if (postgres) {
    // Tail resumption and retention's batches: seq within a project.
    await db.schema.createIndex('logs_project_seq').on('logs').columns(['project_id', 'seq']).unique().execute();
  }
  // Newest first, time ranges, cursors (SQLite appends the rowid, i.e. seq, to every index entry).
  await db.schema.createIndex('logs_project_ts').on('logs').columns(postgres ? ['project_id', 'ts', 'seq'] : ['project_id', 'ts']).execute();
  // Level filters and the alert window count.
  await db.schema.createIndex('logs_project_level_ts').on('logs').columns(['project_id', 'level', 'ts']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('logs').execute();
  await db.schema.alterTable('projects').dropColumn('last_seq').execute();
}
