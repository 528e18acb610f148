import { sql, type Kysely } from 'kysely';

/**
 * Log counts per project, minute and level, kept by the log writer in the same transaction as the
 * logs. Stats over whole minutes read these instead of every log in the range: a day of a busy
 * project is at most 1,440 × 6 rows here, against millions of logs. The counts of minutes the
 * logs table already holds are filled in here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_counts')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('level', 'smallint', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_counts_pk', ['project_id', 'minute', 'level'])
    .execute();
  await sql`insert into log_counts (project_id, minute, level, n)
    select project_id, ts - (ts % 60000), level, count(*) from logs group by project_id, ts - (ts % 60000), level`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('log_counts').execute();
}
