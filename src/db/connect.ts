import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Config, Engine } from '../config.js';
import type { DatabaseSchema, Db } from './types.js';

export interface Database {
  readonly engine: Engine;
  readonly db: Db;
  /** A short description for logs, without credentials. */
  readonly description: string;
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

export function openDatabase(config: Pick<Config, 'engine' | 'databaseUrl' | 'dataDir' | 'databasePoolSize'>): Database {
  return config.engine === 'postgres'
    ? openPostgres(config.databaseUrl!, config.databasePoolSize)
    : openSqlite(path.join(config.dataDir, SQLITE_FILE));
}

function openSqlite(file: string): Database {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  // FULL: a commit survives power loss as well as a crash of the process.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    engine: 'sqlite',
    db,
    description: `SQLite at ${file}`,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes, connectionTimeoutMillis: 10_000 });
  // An idle client that loses its connection emits here; without a listener the process would exit.
  pool.on('error', () => {});
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  const safe = new URL(url);
  return {
    engine: 'postgres',
    db,
    description: `PostgreSQL at ${safe.hostname}:${safe.port || 5432}${safe.pathname}`,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}
