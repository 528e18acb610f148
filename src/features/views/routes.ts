import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, ListOf, Text, Timestamp } from '../../http/schemas.js';
import { MAX_COLUMNS, MAX_VIEWS, type ViewsService } from './service.js';

const NoBody = Type.Null({ description: 'No body' });

const Range = Type.Object(
  {
    last: Type.Optional(Type.String({ maxLength: 12, description: 'The last N seconds, minutes, hours or days before the view is opened: 15m, 24h, 7d (1s to 400d)' })),
    from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 or epoch ms' })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 or epoch ms' })),
  },
  { additionalProperties: false, description: 'Either a relative range ({"last": "15m"}) or an absolute one ({"from": ..., "to": ...}), not both' },
);

export const ViewBody = Type.Object(
  {
    name: Text(1, 100, 'Unique in the project, ignoring case'),
    query: Type.Optional(Type.String({ maxLength: 2000, description: 'A search query (docs/search.md); empty: every log' })),
    range: Range,
    columns: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: MAX_COLUMNS, description: 'Columns shown beside the message: timestamp, level, source, message, or metadata paths (@res.statusCode)' })),
    groupBy: Type.Optional(Type.Union([Type.String({ maxLength: 300, description: 'The histogram\'s split, as stats groupBy' }), Type.Null()])),
  },
  { additionalProperties: false },
);

export const View = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    name: Type.String(),
    query: Type.String(),
    range: Type.Union([Type.Object({ last: Type.String() }, { additionalProperties: false }), Type.Object({ from: Timestamp, to: Timestamp }, { additionalProperties: false })]),
    columns: Type.Array(Type.String()),
    groupBy: Type.Union([Type.String(), Type.Null()]),
    createdBy: Type.Object({ id: Type.String(), email: Type.Union([Type.String(), Type.Null()], { description: 'null once the account that saved it is deleted' }) }, { additionalProperties: false }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

const ViewParams = Type.Object({ id: Type.String({ maxLength: 100 }), viewId: Type.String({ maxLength: 100 }) });

/** Saved views: every member of a project reads and saves them; the creator or an admin changes or deletes one. */
export function viewRoutes(deps: { views: ViewsService; requireUser: preHandlerAsyncHookHandler }) {
  const { views, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    r.addHook('preHandler', requireUser);
    const common = { tags: ['Views'], security: bearerSecurity };

    r.get('/projects/:id/views', {
      schema: { ...common, operationId: 'listViews', summary: 'A project\'s saved views, by name', params: IdParams, response: { 200: ListOf(View), ...errorResponses(401, 404) } },
    }, async (req) => ({ data: await views.list(req.userId, req.params.id) }));

    r.post('/projects/:id/views', {
      schema: {
        ...common, operationId: 'createView', summary: 'Save a view',
        description: `Any member of the project may save one. The name is unique in the project ignoring case (409 VIEW_NAME_TAKEN). At most ${MAX_VIEWS} views per project (403 PLAN_LIMIT_EXCEEDED, resource "views").`,
        params: IdParams, body: ViewBody,
        response: { 201: View, ...errorResponses(400, 401, 403, 404, 409) },
      },
    }, async (req, reply) => reply.status(201).send(await views.create(req.userId, req.params.id, req.body)));

    r.get('/projects/:id/views/:viewId', {
      schema: { ...common, operationId: 'getView', summary: 'One saved view', params: ViewParams, response: { 200: View, ...errorResponses(401, 404) } },
    }, async (req) => views.get(req.userId, req.params.id, req.params.viewId));

    r.put('/projects/:id/views/:viewId', {
      schema: {
        ...common, operationId: 'updateView', summary: 'Change a saved view',
        description: 'The whole view, as when it was saved. Only the member who saved it, or an admin or the owner of the project (403 FORBIDDEN_ROLE otherwise).',
        params: ViewParams, body: ViewBody,
        response: { 200: View, ...errorResponses(400, 401, 403, 404, 409) },
      },
    }, async (req) => views.update(req.userId, req.params.id, req.params.viewId, req.body));

    r.delete('/projects/:id/views/:viewId', {
      schema: { ...common, operationId: 'deleteView', summary: 'Delete a saved view', description: 'Only the member who saved it, or an admin or the owner of the project.', params: ViewParams, response: { 204: NoBody, ...errorResponses(401, 403, 404) } },
    }, async (req, reply) => {
      await views.remove(req.userId, req.params.id, req.params.viewId);
      return reply.status(204).send(null);
    });
  };
}
