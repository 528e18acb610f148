import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { createAccountsService } from './features/accounts/service.js';
import { createAccessTokens } from './features/accounts/tokens.js';
import { createLogsService } from './features/logs/service.js';
import { createProjectsService } from './features/projects/service.js';
import { requireUser } from './http/auth.js';
import { deriveKey } from './secrets.js';

export interface Clock {
  now(): number;
}

/** The one place where repositories, services and hooks are wired together. */
export function createServices(deps: { config: Config; database: Database; secretKey: string; clock: Clock; log: FastifyBaseLogger }) {
  const { config, database, secretKey, clock, log } = deps;
  const now = () => clock.now();
  const tokens = createAccessTokens(deriveKey(secretKey, 'jwt-signing'), config.accessTokenTtlMs, now);
  const accounts = createAccountsService({ db: database.db, config, tokens, now, log });
  const projects = createProjectsService({ db: database.db, encryptionKey: deriveKey(secretKey, 'api-key-encryption'), now });
  const logs = createLogsService({ database, config, now, log, projects });
  return { tokens, accounts, projects, logs, requireUser: requireUser(tokens), tailHeartbeatMs: config.tailHeartbeatMs };
}

export type Services = ReturnType<typeof createServices>;
