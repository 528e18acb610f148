import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, ListOf } from '../../http/schemas.js';
import type { PushService } from '../notifications/push-service.js';
import type { DestinationsService } from '../notifications/destinations.js';
import type { AlertsService } from './service.js';
import * as S from './schemas.js';

const NoBody = Type.Null({ description: 'No body' });

export function alertRoutes(deps: { alerts: AlertsService; requireUser: preHandlerAsyncHookHandler }) {
  const { alerts, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    r.addHook('preHandler', requireUser);
    const common = { tags: ['Alerts'], security: bearerSecurity };

    r.get('/alerts', {
      schema: { ...common, operationId: 'listAlerts', summary: 'List alert rules (of one project with ?projectId=, else all of yours)', querystring: S.ListQuery, response: { 200: ListOf(S.Rule), ...errorResponses(400, 401, 404) } },
    }, async (req) => ({ data: await alerts.list(req.userId, req.query.projectId) }));

    r.post('/alerts', {
      schema: {
        ...common, operationId: 'createAlert', summary: 'Create an alert rule',
        description: 'The rule fires when the logs of its project that match it (level exactly; source if set; pattern, RE2, if set; query, in the search query language, if set) and whose timestamps fall within the last `window` number at least `threshold`, at most once per `cooldown`. Beyond the plan\'s rules per project: 403 PLAN_LIMIT_EXCEEDED.',
        body: S.CreateRuleBody,
        response: { 201: S.Rule, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    }, async (req, reply) => reply.status(201).send(await alerts.create(req.userId, req.body)));

    r.get('/alerts/:id', {
      schema: { ...common, operationId: 'getAlert', summary: 'One alert rule', params: IdParams, response: { 200: S.Rule, ...errorResponses(401, 404) } },
    }, async (req) => alerts.get(req.userId, req.params.id));

    r.put('/alerts/:id', {
      schema: {
        ...common, operationId: 'updateAlert', summary: 'Change an alert rule',
        description: 'Takes any of name, condition (a whole new condition), channels, cooldown, enabled. Applies to the next batch of logs on every node.',
        params: IdParams, body: S.UpdateRuleBody,
        response: { 200: S.Rule, ...errorResponses(400, 401, 404, 413, 415) },
      },
    }, async (req) => alerts.update(req.userId, req.params.id, req.body));

    r.delete('/alerts/:id', {
      schema: { ...common, operationId: 'deleteAlert', summary: 'Delete an alert rule and its history', params: IdParams, response: { 204: NoBody, ...errorResponses(401, 404) } },
    }, async (req, reply) => {
      await alerts.remove(req.userId, req.params.id);
      return reply.status(204).send(null);
    });

    r.get('/alerts/:id/history', {
      schema: {
        ...common, operationId: 'alertHistory', summary: 'Firings of an alert rule, newest first',
        description: 'Each entry has the count that fired it, the outcome per channel (sent, failed with the error, skipped with the reason, or pending while being delivered), a few sample logs and `links.logs`: the log explorer under PUBLIC_URL with the rule\'s condition as a query and the window the entry counted (docs/alerts.md, "View matching logs").',
        params: IdParams, querystring: S.HistoryQuery,
        response: { 200: S.HistoryResponse, ...errorResponses(400, 401, 404) },
      },
    }, async (req) => alerts.history(req.userId, req.params.id, req.query.limit, req.query.cursor));

    r.post('/alerts/:id/test', {
      schema: {
        ...common, operationId: 'testAlert', summary: 'Send a test notification on each of the rule\'s channels now',
        description: 'One attempt per destination, mute ignored, with the count and sample of the current window; no history entry is written. At most 10 tests a minute per account (429 with Retry-After past that).',
        params: IdParams,
        response: { 200: S.TestResponse, ...errorResponses(401, 404, 429) },
      },
    }, async (req) => alerts.test(req.userId, req.params.id));
  };
}

export function destinationRoutes(deps: { destinations: DestinationsService; requireUser: preHandlerAsyncHookHandler }) {
  const { destinations, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    r.addHook('preHandler', requireUser);
    const common = { tags: ['Alerts'], security: bearerSecurity };

    r.post('/projects/:id/destinations', {
      schema: {
        ...common, operationId: 'createDestination', summary: 'Add a webhook or Slack destination to a project',
        description: 'A rule whose channels name `webhook` or `slack` notifies every destination of that type in its project. A webhook\'s signing secret is in this answer only. The URL must be https and not point at localhost or a private, loopback or link-local address.',
        params: IdParams, body: S.DestinationBody,
        response: { 201: S.Destination, ...errorResponses(400, 401, 404, 413, 415) },
      },
    }, async (req, reply) => {
      const created = await destinations.create(req.userId, req.params.id, req.body);
      // The answer may hold the webhook's secret: no cache keeps it.
      reply.header('cache-control', 'no-store');
      return reply.status(201).send(created);
    });

    r.get('/projects/:id/destinations', {
      schema: { ...common, operationId: 'listDestinations', summary: 'A project\'s destinations (without secrets)', params: IdParams, response: { 200: ListOf(S.Destination), ...errorResponses(401, 404) } },
    }, async (req) => ({ data: await destinations.list(req.userId, req.params.id) }));

    r.delete('/projects/:id/destinations/:destId', {
      schema: { ...common, operationId: 'deleteDestination', summary: 'Remove a destination', params: S.DestinationParams, response: { 204: NoBody, ...errorResponses(401, 404) } },
    }, async (req, reply) => {
      await destinations.remove(req.userId, req.params.id, req.params.destId);
      return reply.status(204).send(null);
    });
  };
}

export function pushRoutes(deps: { push: PushService; requireUser: preHandlerAsyncHookHandler }) {
  const { push, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Push'];

    r.get('/push/vapid-public-key', {
      schema: { tags, operationId: 'vapidPublicKey', summary: 'The VAPID public key for PushManager.subscribe', response: { 200: Type.Object({ publicKey: Type.String() }, { additionalProperties: false }) } },
    }, async () => ({ publicKey: await push.publicKey() }));

    r.post('/push/subscriptions', {
      preHandler: requireUser,
      schema: {
        tags, security: bearerSecurity, operationId: 'createPushSubscription', summary: 'Register this browser for push notifications',
        description: 'Body: PushSubscription.toJSON(). The endpoint must belong to a push service on PUSH_ALLOWED_ORIGINS.',
        body: S.PushSubscriptionBody,
        response: { 201: S.PushSubscription, ...errorResponses(400, 401, 413, 415) },
      },
    }, async (req, reply) => reply.status(201).send(await push.subscribe(req.userId, req.body)));

    r.get('/push/subscriptions', {
      preHandler: requireUser,
      schema: { tags, security: bearerSecurity, operationId: 'listPushSubscriptions', summary: 'Your push subscriptions', response: { 200: ListOf(S.PushSubscription), ...errorResponses(401) } },
    }, async (req) => ({ data: await push.list(req.userId) }));

    r.delete('/push/subscriptions/:id', {
      preHandler: requireUser,
      schema: { tags, security: bearerSecurity, operationId: 'deletePushSubscription', summary: 'Stop push notifications to a browser', params: IdParams, response: { 204: NoBody, ...errorResponses(401, 404) } },
    }, async (req, reply) => {
      await push.remove(req.userId, req.params.id);
      return reply.status(204).send(null);
    });
  };
}
