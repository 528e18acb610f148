import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Packs (src/features/logs/store/packs/): a block of the skip index whose logs were all received
 * more than COMPACT_AFTER ago is stored as one compressed unit, in log_packs, and its rows leave
 * `logs` in the same transaction. log_blocks.packed is the pack's size in bytes (0: the block's
 * logs are rows in `logs`), so a read learns from the block list alone where a block's logs are.
 *
 * PostgreSQL: `data` is stored EXTERNAL, out of line and not compressed a second time (it is
 * compressed already; pglz would spend CPU to gain nothing).
 *
 * log_blocks.part_buckets: see below.
 *
 * Existing installs: nothing moves here; the compactor packs the old blocks in the background after
 * the upgrade, so the migration is instant whatever the table's size.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('log_blocks').addColumn('packed', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // Buckets per stored part of the block's filter: 64 (2 KiB) before, 60 from now on, so that two
  // parts fit a 4 KiB SQLite page (a 2 KiB part took a page alone) and four an 8 KiB PostgreSQL page.
  await db.schema.alterTable('log_blocks').addColumn('part_buckets', 'integer', (c) => c.notNull().defaultTo(64)).execute();
  await db.schema
    .createTable('log_packs')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('first_seq', 'bigint', (c) => c.notNull())
    .addColumn('data', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_packs_pk', ['project_id', 'first_seq'])
    .execute();
  if (postgres) await sql`alter table log_packs alter column data set storage external`.execute(db);
  // "The packs after seq N" (a live tail resuming, a read by seq) without walking every block.
  await db.schema.createIndex('log_blocks_project_last_seq').on('log_blocks').columns(['project_id', 'last_seq']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Unpacking is not done here: run `down` only on a store whose packs are gone.
  await db.schema.dropIndex('log_blocks_project_last_seq').execute();
  await db.schema.dropTable('log_packs').execute();
  await db.schema.alterTable('log_blocks').dropColumn('part_buckets').execute();
  await db.schema.alterTable('log_blocks').dropColumn('packed').execute();
}
