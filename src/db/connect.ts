import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver, type SqliteDatabase, type SqliteDialectConfig } from 'kysely';
import type { Config, Engine } from '../config.js';
import type { LogStore, LogStoreDeps } from '../features/logs/store/index.js';
import { createPostgresLogStore } from '../features/logs/store/postgres.js';
import { createSqliteLogStore } from '../features/logs/store/sqlite.js';
import { FairMutex } from './mutex.js';
import { SQLITE_PRAGMAS } from './sqlite-pragmas.js';
import type { DatabaseSchema, Db } from './types.js';

export interface Database {
  readonly engine: Engine;
  readonly db: Db;
  /**
   * The SQLite file, for tools and tests that open a second connection; undefined on PostgreSQL.
   * The app never reads it: its log store was given what it needs here.
   */
  readonly sqliteFile?: string;
  /** A short description for logs, without credentials. */
  readonly description: string;
  /**
   * The log store of this engine (features/logs/store), made once per app with its clock, logger
   * and settings: it holds the writer, the search pool, retention's and the index's engine parts.
   */
  createLogStore(deps: LogStoreDeps): LogStore;
  /** Round-trips a trivial query; throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'loglane.db';

/** int8 (BIGINT, COUNT(*)) as a JavaScript number: every value we store fits in 2^53. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

export function openDatabase(config: Pick<Config, 'engine' | 'databaseUrl' | 'dataDir' | 'databasePoolSize'> & Partial<Pick<Config, 'queryBudgetMs'>>): Database {
  return config.engine === 'postgres'
    ? openPostgres(config.databaseUrl!, config.databasePoolSize, config.queryBudgetMs ?? 5000)
    : openSqlite(path.join(config.dataDir, SQLITE_FILE));
}

/**
 * Kysely's SQLite driver with `BEGIN IMMEDIATE` transactions, and a fair lock on its one connection.
 *
 * The log writer commits from its own connection (a worker thread); a transaction that read first
 * and wrote later would then fail with SQLITE_BUSY_SNAPSHOT whenever the writer committed in
 * between. Taking the write lock at BEGIN makes it wait (busy_timeout) instead.
 *
 * Kysely's driver guards its one connection with a lock whose waiters all await one promise: each
 * release wakes every waiter, one takes the lock and the rest wait again, so N queries queued at
 * once cost N²/2 wakeups on the event loop (thousands of key lookups at once froze the server for
 * seconds). Here the connection is taken under a FairMutex first, which hands it to one waiter at
 * a time in arrival order; Kysely's own lock is then always free when it is asked.
 */
export class ImmediateSqliteDriver extends SqliteDriver {
  readonly connectionLock = new FairMutex();

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.connectionLock.lock();
    try {
      return await super.acquireConnection();
    } catch (err) {
      this.connectionLock.unlock();
      throw err;
    }
  }

  override async releaseConnection(): Promise<void> {
    try {
      await super.releaseConnection();
    } finally {
      this.connectionLock.unlock();
    }
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

/** Statements kept compiled per connection, by their SQL text (the least recently used go first). */
const STATEMENT_CACHE = 256;

/**
 * The connection as Kysely's driver sees it, with its statements kept compiled: the driver asks
 * for a new statement on every query, and compiling one (a few tens of microseconds, more for a
 * long one) was about a tenth of a small search's time on the event loop. A statement another
 * query is still iterating (a stream) is busy: a fresh one is compiled for that query instead.
 */
export function cachingStatements(sqlite: SQLite.Database, size = STATEMENT_CACHE): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string) {
      const hit = cache.get(text);
      if (hit && !hit.busy) {
        cache.delete(text);
        cache.set(text, hit);
        return hit;
      }
      const stmt = sqlite.prepare(text);
      if (!hit) {
        cache.set(text, stmt);
        if (cache.size > size) cache.delete(cache.keys().next().value!);
      }
      return stmt;
    },
    close() {
      cache.clear();
      sqlite.close();
    },
  };
}

function openSqlite(file: string): Database {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  for (const pragma of SQLITE_PRAGMAS) sqlite.pragma(pragma);
  const db = new Kysely<DatabaseSchema>({ dialect: new ImmediateSqliteDialect({ database: cachingStatements(sqlite) }) });
  return {
    engine: 'sqlite',
    db,
    sqliteFile: file,
    description: `SQLite at ${file}`,
    createLogStore: (deps) => createSqliteLogStore(db, file, deps),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

function openPostgres(url: string, poolSize: number, queryBudgetMs: number): Database {
  // Log searches run on their own small pool whose connections carry statement_timeout =
  // QUERY_TIME_BUDGET, so no search can run away.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes, connectionTimeoutMillis: 10_000 });
  const readPool = new pg.Pool({ connectionString: url, max: Math.max(2, Math.ceil(poolSize / 2)), types: pgTypes, connectionTimeoutMillis: 10_000, statement_timeout: Math.round(queryBudgetMs) });
  // An idle client that loses its connection emits here; without a listener the process would exit.
  pool.on('error', () => {});
  readPool.on('error', () => {});
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  const readDb = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: readPool }) });
  const safe = new URL(url);
  return {
    engine: 'postgres',
    db,
    description: `PostgreSQL at ${safe.hostname}:${safe.port || 5432}${safe.pathname}`,
    createLogStore: (deps) => createPostgresLogStore(db, readDb, url, deps),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await Promise.all([db.destroy(), readDb.destroy()]);
    },
  };
}
