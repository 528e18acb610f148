import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validationError } from '../../errors.js';
import { bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, ListOf } from '../../http/schemas.js';
import type { ProjectsService } from './service.js';
import * as S from './schemas.js';

const tags = ['Projects'];

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw validationError('/name', 'must not be blank');
  return trimmed;
}

export function projectsRoutes(deps: { projects: ProjectsService; requireUser: preHandlerAsyncHookHandler }) {
  const { projects, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    r.addHook('preHandler', requireUser);
    // Project answers can carry the full API key: never cache them.
    r.addHook('onSend', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
    });
    const common = { tags, security: bearerSecurity };

    r.get('/projects', {
      schema: { ...common, operationId: 'listProjects', summary: 'List your projects (API keys masked)', response: { 200: ListOf(S.Project), ...errorResponses(401) } },
    }, async (req) => ({ data: await projects.list(req.userId) }));

    r.post('/projects', {
      schema: {
        ...common, operationId: 'createProject', summary: 'Create a project',
        description: 'Answers the project with its full API key. Refused with 403 PLAN_LIMIT_EXCEEDED beyond the plan\'s project cap.',
        body: S.ProjectBody,
        response: { 201: S.Project, ...errorResponses(400, 401, 403, 413, 415) },
      },
    }, async (req, reply) => reply.status(201).send(await projects.create(req.userId, cleanName(req.body.name))));

    r.get('/projects/:id', {
      schema: { ...common, operationId: 'getProject', summary: 'One project, with its full API key', params: IdParams, response: { 200: S.Project, ...errorResponses(401, 404) } },
    }, async (req) => projects.get(req.userId, req.params.id));

    r.put('/projects/:id', {
      schema: {
        ...common, operationId: 'updateProject', summary: 'Rename a project',
        params: IdParams, body: S.ProjectBody,
        response: { 200: S.Project, ...errorResponses(400, 401, 404, 413, 415) },
      },
    }, async (req) => projects.rename(req.userId, req.params.id, cleanName(req.body.name)));

    r.delete('/projects/:id', {
      schema: {
        ...common, operationId: 'deleteProject', summary: 'Delete a project and everything in it',
        description: 'Irreversible: the project, its logs, alert rules and alert history are deleted in one transaction.',
        params: IdParams, response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(401, 404) },
      },
    }, async (req, reply) => {
      await projects.remove(req.userId, req.params.id);
      return reply.status(204).send(null);
    });

    r.post('/projects/:id/rotate-key', {
      schema: {
        ...common, operationId: 'rotateProjectKey', summary: 'Replace the project\'s API key',
        description: 'The old key is refused from the moment this answers, on every node.',
        params: IdParams, response: { 200: S.RotatedKey, ...errorResponses(401, 404) },
      },
    }, async (req) => projects.rotateKey(req.userId, req.params.id));
  };
}
