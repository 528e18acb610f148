import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL only: `logs` becomes a table partitioned by range of `ts`, one partition per UTC day
 * (`logs_p20261122` holds [2026-11-22T00:00Z, 2026-11-23T00:00Z)), plus `logs_default` for any
 * timestamp without a daily partition. Retention then empties and drops whole days instead of
 * deleting row by row (src/features/logs/partitions.ts keeps the set of partitions up to date).
 *
 * Existing rows are kept: the old table is renamed, the new one created with a partition for every
 * day that holds rows (within the last MAX_DAYS_BACK days; older ones go to the default partition)
 * and for today and the next FUTURE_DAYS days, the rows copied, the old table dropped. The migrator
 * runs all of this in one transaction. On a large table it takes time in proportion to its size,
 * holding the table's lock: migrate during a quiet hour.
 *
 * A unique index on a partitioned table must contain the partition key, so (project_id, seq) can no
 * longer be unique on its own: the index is (project_id, seq, ts), unique, and serves every query
 * that used (project_id, seq). seq stays unique per project by construction (allocated from
 * projects.last_seq under the project row's lock).
 *
 * SQLite: nothing changes.
 *
 * Self-contained on purpose (migrations never change once released), so the few constants below
 * repeat those of partitions.ts.
 */
const DAY_MS = 86_400_000;
const FUTURE_DAYS = 3;
const MAX_DAYS_BACK = 400;
const COLUMNS = sql.raw('project_id, seq, ts, received_at, level, source, message, metadata');

function partitionName(day: number): string {
  return `logs_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

async function createLogsTable(db: Kysely<unknown>, name: string, partitioned: boolean): Promise<void> {
  await sql`create table ${sql.id(name)} (
    project_id text not null,
    seq bigint not null,
    ts bigint not null,
    received_at bigint not null,
    level smallint not null,
    source text,
    message text not null,
    metadata text
  ) ${sql.raw(partitioned ? 'partition by range (ts)' : '')}`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table logs rename to logs_unpartitioned`.execute(db);
  for (const index of ['logs_project_seq', 'logs_project_ts', 'logs_project_level_ts']) await sql`drop index ${sql.id(index)}`.execute(db);

  await createLogsTable(db, 'logs', true);
  await sql`create table logs_default partition of logs default`.execute(db);
  const today = Math.floor(Date.now() / DAY_MS);
  const { rows } = await sql<{ day: string | number }>`select distinct ts / ${DAY_MS} as day from logs_unpartitioned
    where ts >= ${(today - MAX_DAYS_BACK) * DAY_MS} and ts < ${(today + FUTURE_DAYS + 1) * DAY_MS}`.execute(db);
  const days = new Set(rows.map((r) => Number(r.day)));
  for (let d = today; d <= today + FUTURE_DAYS; d++) days.add(d);
  for (const day of [...days].sort((a, b) => a - b)) {
    await sql`create table ${sql.id(partitionName(day))} partition of logs for values from (${sql.lit(day * DAY_MS)}) to (${sql.lit((day + 1) * DAY_MS)})`.execute(db);
  }
  await sql`insert into logs (${COLUMNS}) select ${COLUMNS} from logs_unpartitioned`.execute(db);
  await sql`drop table logs_unpartitioned`.execute(db);

  // After the copy: building an index once is cheaper than maintaining it row by row.
  // Tail resumption, cursors and retention's batches: seq within a project.
  await sql`create unique index logs_project_seq on logs (project_id, seq, ts)`.execute(db);
  // Newest first, time ranges, cursors.
  await sql`create index logs_project_ts on logs (project_id, ts, seq)`.execute(db);
  // Level filters and the alert window count.
  await sql`create index logs_project_level_ts on logs (project_id, level, ts)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await createLogsTable(db, 'logs_unpartitioned', false);
  await sql`insert into logs_unpartitioned (${COLUMNS}) select ${COLUMNS} from logs`.execute(db);
  await sql`drop table logs`.execute(db); // and every partition with it
  await sql`alter table logs_unpartitioned rename to logs`.execute(db);
  await sql`create unique index logs_project_seq on logs (project_id, seq)`.execute(db);
  await sql`create index logs_project_ts on logs (project_id, ts, seq)`.execute(db);
  await sql`create index logs_project_level_ts on logs (project_id, level, ts)`.execute(db);
}
