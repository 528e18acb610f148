import type { Kysely } from 'kysely';

/**
 * Login throttling reserves an attempt before it checks the password: `pending` counts the checks
 * in flight for a key, so `failures + pending` never passes the limit, however many requests
 * arrive at once and on however many nodes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('login_throttle').addColumn('pending', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('login_throttle').dropColumn('pending').execute();
}
