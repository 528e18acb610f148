import { PostgresAdapter } from 'kysely';
import type { Executor } from './types.js';

function isPostgres(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The query with FOR UPDATE where the engine locks rows (PostgreSQL, across every node); as it is
 * on SQLite, whose write transaction already locks the whole database.
 */
export function forUpdate<Q extends { forUpdate(): Q }>(db: Executor, query: Q): Q {
  return isPostgres(db) ? query.forUpdate() : query;
}

/**
 * Serialises transactions that check-then-write under one parent row (a user's project count, a
 * project's alert count). PostgreSQL takes a row lock (`FOR UPDATE`) that holds across every node;
 * SQLite needs none, since one connection runs one transaction at a time and a write transaction
 * locks the whole database.
 */
export async function lockRow(tx: Executor, table: 'users' | 'projects', id: string): Promise<boolean> {
  const query = tx.selectFrom(table).select('id').where('id', '=', id);
  const row = await forUpdate(tx, query).executeTakeFirst();
  return row !== undefined;
}
