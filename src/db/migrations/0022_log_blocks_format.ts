import { sql, type Kysely } from 'kysely';

/**
 * The format a block's filter was built in (store/blocks/rows.ts INDEX_FORMAT) moves from a
 * one-byte row of log_block_blooms (part 2,000,000; no row: format 1) into log_blocks itself. A
 * needle search reads it for every block of its range beside the block's filter probes: as a row of
 * its own it cost one more lookup per block (on PostgreSQL half of a week's probe statement, 14.5 ms
 * at 2,441 blocks). Blocks with the row are of format 2, the only other format so far.
 */
const FORMAT_PART = 2_000_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('log_blocks').addColumn('format', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await sql`update log_blocks set format = 2 where exists (select 1 from log_block_blooms f
    where f.project_id = log_blocks.project_id and f.first_seq = log_blocks.first_seq and f.part = ${sql.lit(FORMAT_PART)})`.execute(db);
  await sql`delete from log_block_blooms where part = ${sql.lit(FORMAT_PART)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`insert into log_block_blooms (project_id, first_seq, part, bits)
    select project_id, first_seq, ${sql.lit(FORMAT_PART)}, ${Buffer.of(2)} from log_blocks where format = 2`.execute(db);
  await db.schema.alterTable('log_blocks').dropColumn('format').execute();
}
