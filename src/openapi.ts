import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';

/**
 * The OpenAPI document the server serves at /v1/openapi.json, built from the route declarations
 * on a throwaway SQLite database, without opening a port. `loglane openapi` prints it; the client
 * package's types are generated from it.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'loglane-openapi-'));
  try {
    const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' });
    const database = openDatabase(config);
    try {
      await migrateToLatest(database.db);
      const app = await buildApp({ config, database, secretKey: randomBytes(32).toString('hex'), logger: pino({ level: 'silent' }) });
      await app.ready();
      const doc = app.swagger() as unknown as Record<string, unknown>;
      await app.close();
      return JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
    } finally {
      await database.close().catch(() => undefined);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
