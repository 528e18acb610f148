import { createHash, timingSafeEqual } from 'node:crypto';
import { maxHeaderSize } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { AppError } from './errors.js';
import { accountsRoutes } from './features/accounts/routes.js';
import { projectsRoutes } from './features/projects/routes.js';
import { ingestRoutes, logQueryRoutes, otlpRoutes } from './features/logs/routes.js';
import { elasticsearchRoutes } from './features/logs/elasticsearch-routes.js';
import { lokiRoutes } from './features/logs/loki-routes.js';
import { hecRoutes } from './features/logs/hec-routes.js';
import { alertRoutes, destinationRoutes, pushRoutes } from './features/alerts/routes.js';
import { viewRoutes } from './features/views/routes.js';
import { clientErrorHandler, errorResponses, installErrorHandling, newRequestId, sendError, translateError } from './http/errors.js';
import { installValidators } from './http/validation.js';
import { bearerToken } from './http/auth.js';
import { liveSessions } from './features/accounts/sessions.js';
import { consoleRoutes } from './http/console.js';
import { planRoutes } from './features/plans/routes.js';
import { createServices, type Clock, type Services } from './services.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The wired services, for the CLI and tests; routes receive theirs explicitly. */
    services: Services;
  }
}

export interface AppDeps {
  config: Config;
  database: Database;
  secretKey: string;
  logger: Logger;
  clock?: Clock;
  /** The built web console; default dist/web of this package. */
  consoleDir?: string;
}

export const VERSION = '0.1.0';

function constantTimeEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

/** Builds the whole HTTP application from its dependencies. Reads no environment, opens no port. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database, logger } = deps;
  const clock = deps.clock ?? { now: () => Date.now() };

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: config.trustProxy,
    genReqId: newRequestId,
    // Errors of Node's HTTP parser (431, a broken Content-Length…) answer in the error body too
    // (docs/api.md, "The error body").
    clientErrorHandler: clientErrorHandler(maxHeaderSize),
    // Our own 503 OVERLOADED (below) answers requests that arrive while closing.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: 200 },
    // Errors Fastify raises before routing (an overlong path parameter, a malformed URL) get the
    // error body too (docs/api.md, "The error body"). An id too long to exist is simply not found.
    frameworkErrors: (error, request, reply) => {
      const notFound = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      void sendError(reply, request, notFound ? { status: 404, code: 'NOT_FOUND', message: 'The resource was not found.' } : translateError(error));
    },
    ajv: { customOptions: { strict: false } },
  });

  if (config.refreshTokenTtlMs < config.accessTokenTtlMs) {
    logger.warn(
      { refreshTokenTtlMs: config.refreshTokenTtlMs, accessTokenTtlMs: config.accessTokenTtlMs },
      'REFRESH_TOKEN_EXPIRY is shorter than ACCESS_TOKEN_EXPIRY: a session ends before its first access token expires, and clients cannot refresh',
    );
  }
  const services = createServices({ config, database, secretKey: deps.secretKey, clock, log: logger });
  installValidators(app);
  installErrorHandling(app, { isRetryable: (err) => services.store.isRetryable(err) });
  // JSON only: a text/plain body is a 415, not a string handed to a route.
  app.removeContentTypeParser('text/plain');

  let closing = false;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      throw new AppError('OVERLOADED', 'The server is shutting down; retry on another node or in a moment.', { retryAfter: 5 });
    }
  });
  app.addHook('preClose', async () => {
    closing = true;
    // Live tails would hold the server open forever.
    services.logs.closeTails();
  });
  // Responses finished while closing end their keep-alive connection, so the close can complete.
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  // Every route can answer these: a malformed or oversized body, a content type it does not take,
  // and 503 while the server shuts down. Documented once here rather than on every route.
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide) return;
    route.schema = { ...route.schema, response: { ...errorResponses(400, 413, 415, 503), ...(route.schema?.response as object | undefined) } };
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Loglane API',
        version: VERSION,
        description: 'Self-hostable log collection: accounts, projects, ingestion, search, live tail and alerts. Every error has the body `{"error": {"code", "message", "requestId", "details?"}}`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token; for POST /v1/logs, the project API key also works here' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The project API key (POST /v1/logs)' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  // Prometheus scrapes this; with METRICS_TOKEN set, only with that bearer token.
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (config.metricsToken !== undefined && !constantTimeEqual(bearerToken(request) ?? '', config.metricsToken)) {
      throw new AppError('UNAUTHORIZED', 'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.');
    }
    reply.header('cache-control', 'no-store');
    return reply.type(services.metrics.registry.contentType).send(await services.metrics.registry.metrics());
  });
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    try {
      await database.ping();
      return { status: 'ok', database: database.engine };
    } catch (err) {
      request.log.warn({ err }, 'database unreachable');
      throw new AppError('OVERLOADED', 'The database is unreachable.', { retryAfter: 5 });
    }
  });

  app.decorate('services', services);
  await app.register(accountsRoutes({ ...services, refreshTokenTtlMs: config.refreshTokenTtlMs }), { prefix: '/v1' });
  await app.register(planRoutes(), { prefix: '/v1' });
  await app.register(projectsRoutes(services), { prefix: '/v1' });
  await app.register(ingestRoutes(services), { prefix: '/v1' });
  await app.register(otlpRoutes(services), { prefix: '/v1' });
  await app.register(elasticsearchRoutes({ ...services, isRetryable: (err) => services.store.isRetryable(err) }), { prefix: '/es' });
  await app.register(lokiRoutes({ ...services, isRetryable: (err) => services.store.isRetryable(err) }), { prefix: '/loki' });
  await app.register(hecRoutes({ ...services, isRetryable: (err) => services.store.isRetryable(err) }), { prefix: '/services/collector' });
  // An export ends with the login that started it (logout, revoked), checked as it streams.
  await app.register(logQueryRoutes({ ...services, now: () => clock.now(), liveSessions: (ids) => liveSessions(database.db, ids, clock.now()) }), { prefix: '/v1' });
  await app.register(alertRoutes(services), { prefix: '/v1' });
  await app.register(pushRoutes(services), { prefix: '/v1' });
  await app.register(destinationRoutes(services), { prefix: '/v1' });
  await app.register(viewRoutes(services), { prefix: '/v1' });
  await app.register(consoleRoutes({ dir: deps.consoleDir }));

  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await services.start();
    timer = setInterval(() => {
      Promise.all([services.accounts.housekeeping(), services.alerts.housekeeping(), services.members.housekeeping()]).catch((err: unknown) => logger.warn({ err }, 'housekeeping failed'));
    }, HOUSEKEEPING_INTERVAL_MS);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    // Every log already acknowledged or waiting for its commit is written before the database closes.
    await services.stop();
  });

  return app;
}
