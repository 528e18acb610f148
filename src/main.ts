import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { openDatabase, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { createLogger } from './logger.js';
import { resolveSecretKey } from './secrets.js';

/**
 * Starts Loglane: settings → database → migrations → app → listen, and a graceful close on
 * SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the database, exit 0).
 */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<FastifyInstance> {
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  const secret = resolveSecretKey(config);
  if (secret.generated) logger.info({ file: secret.file }, 'generated a new secret key (keep this file: tokens and API keys depend on it)');

  const database: Database = openDatabase(config);
  try {
    const { applied } = await migrateToLatest(database.db);
    logger.info({ database: database.description, applied }, applied.length ? `applied ${applied.length} migration(s)` : 'database schema is up to date');
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }

  const app = await buildApp({ config, database, secretKey: secret.key, logger });
  const address = await app.listen({ port: config.port, host: config.host });
  logger.info({ address, engine: database.engine }, `Loglane listening on ${address}`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.error('shutdown took longer than SHUTDOWN_TIMEOUT; exiting anyway');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    app.close().then(() => database.close()).then(
      () => {
        logger.info('stopped cleanly');
        logger.flush();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return app;
}
