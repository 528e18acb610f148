import type { Kysely } from 'kysely';

/**
 * The skip index's gram filter (src/features/logs/blocks/items.ts GRAM_CHARS): sampled pieces of a
 * block's long message words, so that a substring search for an id (a legacy `q`) can rule blocks
 * out. Its parts are log_block_blooms rows from part 1,000,000 on; gram_buckets is its bucket count.
 * Blocks summarised before keep none (0), and a search reads them as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('log_blocks')
    .addColumn('gram_buckets', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('log_blocks').dropColumn('gram_buckets').execute();
}
