/**
 * SQLite's connection keeps its statements compiled (db/connect.ts cachingStatements): Kysely's
 * driver asks for a statement on every query, and compiling it again was a tenth of a small
 * search's time. A cached statement is shared only when nobody is iterating it (a stream), and the
 * cache holds a bounded number of them. (PostgreSQL plans on its server; nothing to keep here.)
 */
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { cachingStatements } from '../src/db/connect.js';

describe('SQLite statements kept compiled', () => {
  let raw: SQLite.Database | undefined;
  afterEach(() => {
    if (raw?.open) raw.close();
    raw = undefined;
  });

  it('the same SQL gets the same statement; one being iterated is not shared', () => {
    raw = new SQLite(':memory:');
    const db = cachingStatements(raw, 4);
    const a = db.prepare('select 1 as x');
    expect(db.prepare('select 1 as x')).toBe(a);
    raw.exec('create table t (n integer)');
    raw.prepare('insert into t values (1), (2), (3)').run();
    const scan = db.prepare('select n from t order by n') as unknown as SQLite.Statement;
    const rows = scan.iterate();
    expect(rows.next().value).toEqual({ n: 1 });
    // While the first is mid-way, the same SQL runs on a fresh statement and both finish.
    const other = db.prepare('select n from t order by n') as unknown as SQLite.Statement;
    expect(other).not.toBe(scan);
    expect(other.all()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect([...rows]).toEqual([{ n: 2 }, { n: 3 }]);
    expect(db.prepare('select n from t order by n')).toBe(scan);
  });

  it('holds at most its size, dropping the least recently used', () => {
    raw = new SQLite(':memory:');
    const db = cachingStatements(raw, 2);
    const one = db.prepare('select 1');
    const two = db.prepare('select 2');
    expect(db.prepare('select 1')).toBe(one); // now the most recent
    db.prepare('select 3'); // drops `select 2`
    expect(db.prepare('select 1')).toBe(one);
    expect(db.prepare('select 2')).not.toBe(two);
  });

  it('through Kysely: queries, streams and schema changes answer as without it', async () => {
    raw = new SQLite(':memory:');
    const db = new Kysely<{ t: { n: number } }>({ dialect: new SqliteDialect({ database: cachingStatements(raw) }) });
    await sql`create table t (n integer)`.execute(db);
    await db.insertInto('t').values([{ n: 1 }, { n: 2 }]).execute();
    const q = () => db.selectFrom('t').select('n').orderBy('n').execute();
    expect(await q()).toEqual([{ n: 1 }, { n: 2 }]);
    // A stream of the same statement, then the query again (a stream holds Kysely's one connection
    // until it ends, so nothing else runs on it meanwhile; a stream left unfinished is the busy case above).
    const seen: number[] = [];
    for await (const row of db.selectFrom('t').select('n').orderBy('n').stream()) seen.push(row.n);
    expect(seen).toEqual([1, 2]);
    expect(await q()).toEqual([{ n: 1 }, { n: 2 }]);
    // The table changes shape under a kept statement: SQLite compiles it again.
    await sql`alter table t add column m integer default 7`.execute(db);
    expect(await db.selectFrom('t').selectAll().orderBy('n').execute()).toEqual([
      { n: 1, m: 7 },
      { n: 2, m: 7 },
    ]);
    expect(await q()).toEqual([{ n: 1 }, { n: 2 }]);
    await db.destroy();
  });
});
