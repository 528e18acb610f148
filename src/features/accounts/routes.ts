import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../errors.js';
import { bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import type { AccountsService } from './service.js';
import * as S from './schemas.js';
import type { preHandlerAsyncHookHandler } from 'fastify';

const tags = ['Accounts'];

export function accountsRoutes(deps: { accounts: AccountsService; requireUser: preHandlerAsyncHookHandler }) {
  const { accounts, requireUser } = deps;
  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    // Token responses must not be cached by browsers or proxies (RFC 6749 §5.1).
    r.addHook('onSend', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
    });

    r.post('/auth/signup', {
      schema: {
        operationId: 'signup', tags, summary: 'Create an account',
        description: 'Creates an account on DEFAULT_PLAN and signs it in. Emails are unique, compared case-insensitively.',
        body: S.SignupBody,
        response: { 201: S.SessionResponse, ...errorResponses(400, 409, 413, 415) },
      },
    }, async (req, reply) => reply.status(201).send(await accounts.signup(req.body)));

    r.post('/auth/login', {
      schema: {
        operationId: 'login', tags, summary: 'Sign in',
        description: 'Unknown email and wrong password answer the same 401. After LOGIN_MAX_ATTEMPTS failures for one email within LOGIN_WINDOW (or LOGIN_MAX_ATTEMPTS_PER_IP from one address), logins answer 429 with Retry-After until the window passes.',
        body: S.LoginBody,
        response: { 200: S.SessionResponse, ...errorResponses(400, 401, 413, 415, 429) },
      },
    }, async (req) => accounts.login(req.body, req.ip));

    r.post('/auth/refresh', {
      schema: {
        operationId: 'refresh', tags, summary: 'Trade a refresh token for a new token pair',
        description: 'Refresh tokens are single-use. Presenting one that was already used revokes every token of that login (reuse detection, RFC 9700 §4.14.2); concurrent refreshes with one token count as reuse.',
        body: S.RefreshBody,
        response: { 200: S.TokenPairResponse, ...errorResponses(400, 401, 413, 415) },
      },
    }, async (req) => accounts.refresh(req.body.refreshToken));

    r.post('/auth/logout', {
      preHandler: requireUser,
      schema: {
        operationId: 'logout', tags, summary: 'Sign out', security: bearerSecurity,
        description: 'Revokes the login the refresh token belongs to. Answers 204 whether or not it was still valid, and never touches another user\'s tokens. Access tokens already issued stay valid until they expire (ACCESS_TOKEN_EXPIRY).',
        body: S.RefreshBody,
        response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 401, 413, 415) },
      },
    }, async (req, reply) => {
      await accounts.logout(req.userId, req.body.refreshToken);
      return reply.status(204).send(null);
    });

    r.get('/auth/me', {
      preHandler: requireUser,
      schema: {
        operationId: 'me', tags, summary: 'The signed-in user and their subscription', security: bearerSecurity,
        response: { 200: S.Me, ...errorResponses(401) },
      },
    }, async (req) => {
      const me = await accounts.me(req.userId);
      if (!me) throw new AppError('UNAUTHORIZED', 'The access token is not valid.');
      return me;
    });
  };
}
