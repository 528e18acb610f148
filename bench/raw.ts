/**
 * The engines' raw bulk-insert rate, without Loglane: the same rows into a bare table with one
 * (project_id, ts) index, 1,000 rows per transaction. It is the ceiling the HTTP ingest is compared to.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { RawRow } from './logs.js';

export interface RawResult {
  rows: number;
  seconds: number;
  rowsPerSec: number;
  /** sqlite_version() or PostgreSQL's server_version. */
  engineVersion: string;
}

export interface RawOptions {
  /** Pre-generated transactions (1,000 rows each), used round robin. */
  batches: RawRow[][];
  projectId: string;
  maxSeconds: number;
  maxRows: number;
}

/** A fresh SQLite file with Loglane's durability settings (WAL, synchronous=FULL), one prepared insert per row. */
export function rawSqlite(options: RawOptions): RawResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-bench-raw-'));
  const db = new Sqlite(path.join(dir, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`create table raw_logs (project_id text, ts integer, received_at integer, level integer, source text, message text, metadata text);
      create index raw_logs_project_ts on raw_logs (project_id, ts);`);
    const engineVersion = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
    const insert = db.prepare('insert into raw_logs (project_id, ts, received_at, level, source, message, metadata) values (?, ?, ?, ?, ?, ?, ?)');
    const insertBatch = db.transaction((rows: RawRow[], receivedAt: number) => {
      for (const r of rows) insert.run(options.projectId, r.ts, receivedAt, r.level, r.source, r.message, r.metadata);
    });

    let rows = 0;
    const start = performance.now();
    const deadline = start + options.maxSeconds * 1000;
    for (let i = 0; rows < options.maxRows && performance.now() < deadline; i++) {
      const batch = options.batches[i % options.batches.length]!;
      insertBatch(batch, Date.now());
      rows += batch.length;
    }
    const seconds = (performance.now() - start) / 1000;
    return { rows, seconds, rowsPerSec: rows / seconds, engineVersion };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** COPY's text format: backslash, tab, newline and carriage return are escaped with a backslash. */
function copyText(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** One `COPY raw_logs FROM STDIN` per 1,000 rows, each its own (implicit) transaction, in `databaseUrl`. */
export async function rawPostgres(databaseUrl: string, options: RawOptions): Promise<RawResult> {
  // Encoded before timing, like the HTTP bodies; received_at is fixed at encoding time.
  const receivedAt = Date.now();
  const payloads = options.batches.map((rows) => ({
    rows: rows.length,
    data: Buffer.from(
      rows.map((r) => [options.projectId, r.ts, receivedAt, r.level, copyText(r.source), copyText(r.message), copyText(r.metadata)].join('\t') + '\n').join(''),
    ),
  }));

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('create table raw_logs (project_id text, ts bigint, received_at bigint, level smallint, source text, message text, metadata text)');
    await client.query('create index raw_logs_project_ts on raw_logs (project_id, ts)');
    const engineVersion = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;

    let rows = 0;
    const start = performance.now();
    const deadline = start + options.maxSeconds * 1000;
    for (let i = 0; rows < options.maxRows && performance.now() < deadline; i++) {
      const payload = payloads[i % payloads.length]!;
      await pipeline(Readable.from([payload.data]), client.query(copyFrom('COPY raw_logs FROM STDIN')));
      rows += payload.rows;
    }
    const seconds = (performance.now() - start) / 1000;
    return { rows, seconds, rowsPerSec: rows / seconds, engineVersion };
  } finally {
    await client.end();
  }
}
