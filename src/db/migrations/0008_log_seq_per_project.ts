import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: `logs.seq` numbers each project's logs (1, 2, 3, … in commit order), as it always has on
 * PostgreSQL, instead of being the table's rowid. A log's id, a search cursor and a live tail's
 * event id all carry the seq; while it was the global rowid, any tenant could read the platform's
 * ingest volume from them (a new project's first log had an id in the tens of thousands).
 *
 * The table is rebuilt: the rowid stays the table's key (implicit, so it is not a column anyone
 * reads), and `seq` becomes an ordinary column with a unique index (project_id, seq), which is also
 * what the live tail's "after seq N" reads (before, that scanned the project's rows or the global
 * rowid range). The time and level indexes end in seq, so `order by ts desc, seq desc` stays an
 * index walk now that the rowid appended to every index entry is no longer the seq.
 *
 * Existing rows keep their seq (and their rowid, so the file's order stays commit order): seqs are
 * unique within a project already, and projects.last_seq is the newest of them, so nothing is
 * renumbered and a project's next log takes last_seq + 1. Ids and cursors handed out before the
 * migration stay valid.
 *
 * Kysely runs SQLite migrations without a transaction, so this one takes its own: a crash leaves the
 * old table as it was. It takes time in proportion to the table (a copy and three index builds),
 * holding the write lock: migrate during a quiet hour.
 *
 * `down` turns seq back into the rowid: every row takes its rowid as its seq (the old seq of the rows
 * that were there before `up`; later rows got rowids above every row present, so rowid order is
 * commit order), and projects.last_seq becomes the project's newest. Ids of logs written after `up`
 * change.
 *
 * PostgreSQL: nothing changes (seq has been per project there from the start).
 */
const COLUMNS = sql.raw('project_id, seq, ts, received_at, level, source, message, metadata');

async function seqIsRowid(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info('logs')`.execute(db);
  return rows.some((r) => r.name === 'seq' && Number(r.pk) === 1);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await db.transaction().execute(async (tx) => {
    if (!(await seqIsRowid(tx))) return; // already done (a crash after the commit, before the migration was recorded)
    await sql`create table logs_rebuilt (
      project_id text not null,
      seq integer not null,
      ts bigint not null,
      received_at bigint not null,
      level smallint not null,
      source text,
      message text not null,
      metadata text
    )`.execute(tx);
    await sql`insert into logs_rebuilt (rowid, ${COLUMNS}) select seq, ${COLUMNS} from logs order by seq`.execute(tx);
    await sql`drop table logs`.execute(tx); // and its indexes
    await sql`alter table logs_rebuilt rename to logs`.execute(tx);
    // After the copy: building an index once is cheaper than maintaining it row by row.
    // Tail resumption, commits read back by other code, retention's batches: seq within a project.
    await sql`create unique index logs_project_seq on logs (project_id, seq)`.execute(tx);
    // Newest first, time ranges, cursors.
    await sql`create index logs_project_ts on logs (project_id, ts, seq)`.execute(tx);
    // Level filters (newest first) and the alert window count.
    await sql`create index logs_project_level_ts on logs (project_id, level, ts, seq)`.execute(tx);
    // last_seq is each project's newest seq already; should a project's row say less (a hand-made
    // load, say), its next log would collide with the unique index: raise it to the newest present.
    await sql`update projects set last_seq = max(last_seq, coalesce((select max(seq) from logs where logs.project_id = projects.id), 0))`.execute(tx);
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await db.transaction().execute(async (tx) => {
    if (await seqIsRowid(tx)) return;
    await sql`create table logs_rebuilt (
      seq integer primary key,
      project_id text not null,
      ts bigint not null,
      received_at bigint not null,
      level smallint not null,
      source text,
      message text not null,
      metadata text
    )`.execute(tx);
    await sql`insert into logs_rebuilt (${COLUMNS}) select project_id, rowid, ts, received_at, level, source, message, metadata from logs order by rowid`.execute(tx);
    await sql`drop table logs`.execute(tx);
    await sql`alter table logs_rebuilt rename to logs`.execute(tx);
    await sql`update projects set last_seq = coalesce((select max(seq) from logs where logs.project_id = projects.id), 0)`.execute(tx);
    await sql`create index logs_project_ts on logs (project_id, ts)`.execute(tx);
    await sql`create index logs_project_level_ts on logs (project_id, level, ts)`.execute(tx);
  });
}
