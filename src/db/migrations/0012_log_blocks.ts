import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * The skip index (src/features/logs/blocks/): a summary per block of a project's consecutive logs
 * (seqs first_seq..last_seq): its time range, a mask of its levels, and a bloom filter of its
 * words, sources and metadata values, stored in parts of 64 buckets (2 KiB) so that a probe reads
 * one part per block and item. buckets = 0: the block keeps no filter (every probe says "maybe").
 * Summaries are built in the background after the logs are committed; a block without one is read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_blocks')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('first_seq', 'bigint', (c) => c.notNull())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .addColumn('min_ts', 'bigint', (c) => c.notNull())
    .addColumn('max_ts', 'bigint', (c) => c.notNull())
    .addColumn('level_mask', 'integer', (c) => c.notNull())
    .addColumn('logs', 'integer', (c) => c.notNull())
    .addColumn('buckets', 'integer', (c) => c.notNull())
    .addColumn('built_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_blocks_pk', ['project_id', 'first_seq'])
    .execute();
  await db.schema
    .createTable('log_block_blooms')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('first_seq', 'bigint', (c) => c.notNull())
    .addColumn('part', 'integer', (c) => c.notNull())
    .addColumn('bits', db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_block_blooms_pk', ['project_id', 'first_seq', 'part'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('log_block_blooms').execute();
  await db.schema.dropTable('log_blocks').execute();
}
