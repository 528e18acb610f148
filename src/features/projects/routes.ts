import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validationError } from '../../errors.js';
import { bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, ListOf } from '../../http/schemas.js';
import type { ProjectsService } from './service.js';
import type { MembersService } from './members.js';
import * as S from './schemas.js';

const tags = ['Projects'];

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw validationError('/name', 'must not be blank');
  return trimmed;
}

export function projectsRoutes(deps: { projects: ProjectsService; members: MembersService; requireUser: preHandlerAsyncHookHandler }) {
  const { projects, members, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    r.addHook('preHandler', requireUser);
    // Project answers can carry the full API key: never cache them.
    r.addHook('onSend', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
    });
    const common = { tags, security: bearerSecurity };

    r.get('/projects', {
      schema: { ...common, operationId: 'listProjects', summary: 'List the projects you own or are a member of (API keys masked)', response: { 200: ListOf(S.Project), ...errorResponses(401) } },
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
        response: { 200: S.Project, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    }, async (req) => projects.rename(req.userId, req.params.id, cleanName(req.body.name)));

    r.delete('/projects/:id', {
      schema: {
        ...common, operationId: 'deleteProject', summary: 'Delete a project and everything in it',
        description: 'Irreversible: the project, its logs, alert rules and alert history are deleted in one transaction.',
        params: IdParams, response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(401, 403, 404) },
      },
    }, async (req, reply) => {
      await projects.remove(req.userId, req.params.id);
      return reply.status(204).send(null);
    });

    r.post('/projects/:id/rotate-key', {
      schema: {
        ...common, operationId: 'rotateProjectKey', summary: 'Replace the project\'s API key',
        description: 'The old key is refused from the moment this answers, on every node.',
        params: IdParams, response: { 200: S.RotatedKey, ...errorResponses(401, 403, 404) },
      },
    }, async (req) => projects.rotateKey(req.userId, req.params.id));

    // Members, invitations and notification settings (docs/api.md, "Teams: members, roles and invitations").
    const members_ = { ...common, tags: ['Members'] };
    r.get('/projects/:id/members', {
      schema: { ...members_, operationId: 'listMembers', summary: 'The project\'s members, the owner first', params: IdParams, response: { 200: ListOf(S.Member), ...errorResponses(401, 404) } },
    }, async (req) => ({ data: await members.list(req.userId, req.params.id) }));

    r.put('/projects/:id/members/:userId', {
      schema: {
        ...members_, operationId: 'setMemberRole', summary: 'Change a member\'s role (owner only)',
        params: S.MemberParams, body: S.RoleBody,
        response: { 200: S.Member, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    }, async (req) => members.setRole(req.userId, req.params.id, req.params.userId, req.body.role as 'admin' | 'member'));

    r.delete('/projects/:id/members/:userId', {
      schema: {
        ...members_, operationId: 'removeMember', summary: 'Remove a member, or leave (your own user id)',
        description: 'Admins remove members, only the owner removes admins; anyone but the owner may leave (the owner transfers first: 400 at /userId). The removed user\'s live tails of the project end at once.',
        params: S.MemberParams, response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 401, 403, 404) },
      },
    }, async (req, reply) => {
      await members.remove(req.userId, req.params.id, req.params.userId);
      return reply.status(204).send(null);
    });

    r.post('/projects/:id/transfer', {
      schema: {
        ...members_, operationId: 'transferProject', summary: 'Hand the project to one of its admins (owner only)',
        description: 'You become an admin. A non-member is 404, a plain member 400 at /userId. Allowed past the new owner\'s project cap.',
        params: IdParams, body: S.TransferBody,
        response: { 200: S.Project, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    }, async (req) => members.transfer(req.userId, req.params.id, req.body.userId));

    r.post('/projects/:id/invitations', {
      schema: {
        ...members_, operationId: 'createInvitation', summary: 'Invite someone by email',
        description: 'Admins invite members; only the owner invites admins. The mail holds `<PUBLIC_URL>/invitations#token=<token>`, good once for 7 days, for that email only. A project sends at most 20 invitations an hour (429 with Retry-After).',
        params: IdParams, body: S.InvitationBody,
        response: { 201: S.Invitation, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    }, async (req, reply) => reply.status(201).send(await members.invite(req.userId, req.params.id, { email: req.body.email, role: req.body.role as 'admin' | 'member' })));

    r.get('/projects/:id/invitations', {
      schema: { ...members_, operationId: 'listInvitations', summary: 'Pending invitations (admin)', params: IdParams, response: { 200: ListOf(S.Invitation), ...errorResponses(401, 403, 404) } },
    }, async (req) => ({ data: await members.invitations(req.userId, req.params.id) }));

    r.delete('/projects/:id/invitations/:invId', {
      schema: {
        ...members_, operationId: 'revokeInvitation', summary: 'Revoke a pending invitation (admin; an admin invitation: owner)',
        params: S.InvitationParams, response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(401, 403, 404) },
      },
    }, async (req, reply) => {
      await members.revokeInvitation(req.userId, req.params.id, req.params.invId);
      return reply.status(204).send(null);
    });

    r.post('/invitations/accept', {
      schema: {
        ...members_, operationId: 'acceptInvitation', summary: 'Join a project with an invitation',
        description: 'Signed in with the invited email. An unknown, used, expired or other-email token is 404, and the invitation stays pending. A member already keeps their role.',
        body: S.AcceptBody,
        response: { 200: S.Accepted, ...errorResponses(400, 401, 404, 413, 415) },
      },
    }, async (req) => members.accept(req.userId, req.body.token));

    r.get('/projects/:id/notifications', {
      schema: { ...members_, operationId: 'getProjectNotifications', summary: 'Whether you muted the project\'s alert notifications', params: IdParams, response: { 200: S.Notifications, ...errorResponses(401, 404) } },
    }, async (req) => members.muted(req.userId, req.params.id));

    r.put('/projects/:id/notifications', {
      schema: {
        ...members_, operationId: 'setProjectNotifications', summary: 'Mute or unmute the project\'s alert notifications for you',
        params: IdParams, body: S.Notifications,
        response: { 200: S.Notifications, ...errorResponses(400, 401, 404, 413, 415) },
      },
    }, async (req) => members.setMuted(req.userId, req.params.id, req.body.muted));
  };
}
