import type { Kysely } from 'kysely';

/**
 * An account being deleted is marked first (`deleting_since`, under the user's row lock that
 * project creation takes too), so no project can be created, and no ownership handed to it, while
 * its projects are being purged: nothing of it can be left behind when the user row goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('deleting_since', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('deleting_since').execute();
}
