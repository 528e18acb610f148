import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: the skip index's filter parts stay in the table's own rows. A 2 KiB part makes a row
 * past PostgreSQL's TOAST threshold (~2 KB), so with the default storage every part went to the
 * TOAST table (bloom bits do not compress), and every probe of a block paid a second index lookup
 * and read there: at 10M logs, probing a week's 2,441 blocks cost ~30 ms. Now the table's rows are
 * made small only past 8,160 bytes (toast_tuple_target; the default is ~2 KB) and `bits` is stored
 * MAIN (not compressed out of line first), so a part stays in its row; only a filter too large for a
 * page (a slice of very large logs) still goes out of line.
 *
 * Existing parts are rewritten so that they move inline too: a pass over the index's rows (a few
 * percent of the logs' size), holding a lock on log_block_blooms meanwhile (searches then wait).
 * `down` restores the default storage (the rows stay where they are).
 *
 * SQLite: nothing (a 2 KiB blob fits a 4 KiB page's row).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table log_block_blooms set (toast_tuple_target = 8160)`.execute(db);
  await sql`alter table log_block_blooms alter column bits set storage main`.execute(db);
  await sql`update log_block_blooms set bits = bits || ''::bytea`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table log_block_blooms reset (toast_tuple_target)`.execute(db);
  await sql`alter table log_block_blooms alter column bits set storage extended`.execute(db);
}
