import type { Kysely } from 'kysely';

/** Alert rules may select logs with the search query language too (`condition.query`, issue 15). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alert_rules').addColumn('query', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alert_rules').dropColumn('query').execute();
}
