import { sql, type Kysely } from 'kysely';

/**
 * Log counts per project, minute, level and source, kept by the log writer in the same transaction
 * as the logs (and as log_counts). Stats grouped by source read these instead of every log of the
 * range. A log without a source is counted under '' (a stored source is never empty). The rows
 * grow with the sources a project uses in a minute, never past the number of its logs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_source_counts')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('level', 'smallint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_source_counts_pk', ['project_id', 'minute', 'level', 'source'])
    .execute();
  await sql`insert into log_source_counts (project_id, minute, level, source, n)
    select project_id, ts - (ts % 60000), level, coalesce(source, ''), count(*) from logs
    group by project_id, ts - (ts % 60000), level, coalesce(source, '')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('log_source_counts').execute();
}
