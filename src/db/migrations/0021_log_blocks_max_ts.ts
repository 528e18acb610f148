import type { Kysely } from 'kysely';

/**
 * A newest-first page over packed blocks opens them by their newest log (log_blocks.max_ts,
 * descending) and usually needs one or two: this index hands it those without reading the
 * project's whole block list (2,441 blocks at 10M logs) on every page.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('log_blocks_project_max_ts').on('log_blocks').columns(['project_id', 'max_ts']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('log_blocks_project_max_ts').execute();
}
