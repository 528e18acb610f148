import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../errors.js';
import { bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, ListOf } from '../../http/schemas.js';
import { clearRefreshCookie, refreshTokenFromCookie, setRefreshCookie, wantsCookie } from '../../http/cookies.js';
import type { AccountsService } from './service.js';
import * as S from './schemas.js';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';

const tags = ['Accounts'];

const COOKIE_NOTE = ' With `X-Refresh-Token-Transport: cookie` (the web console), the refresh token is set as the HttpOnly, SameSite=Strict `loglane_refresh` cookie scoped to /v1/auth and left out of the body.';

export function accountsRoutes(deps: { accounts: AccountsService; requireUser: preHandlerAsyncHookHandler; refreshTokenTtlMs: number }) {
  const { accounts, requireUser, refreshTokenTtlMs } = deps;
  const cookieMaxAge = refreshTokenTtlMs / 1000;

  /** In cookie mode, moves the refresh token from the body into the cookie. */
  function issue<T extends { refreshToken?: string }>(req: FastifyRequest, reply: FastifyReply, session: T, cookie: boolean): T {
    if (!cookie || session.refreshToken === undefined) return session;
    setRefreshCookie(req, reply, session.refreshToken, cookieMaxAge);
    const { refreshToken: _moved, ...rest } = session;
    return rest as T;
  }

  /** The refresh token of a refresh or logout: the body's, else the console's cookie. */
  function presented(req: FastifyRequest, body: { refreshToken?: string } | undefined): { token: string; fromCookie: boolean } {
    if (body?.refreshToken !== undefined) return { token: body.refreshToken, fromCookie: false };
    const cookie = refreshTokenFromCookie(req);
    if (cookie) return { token: cookie, fromCookie: true };
    // Word for word what the body schema answered before the cookie existed.
    throw new AppError('VALIDATION_ERROR', "The request body is not valid: refreshToken must have required property 'refreshToken'.", {
      details: [{ path: '/refreshToken', message: "must have required property 'refreshToken'" }],
    });
  }

  const clientOf = (req: FastifyRequest) => ({ userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : undefined, ip: req.ip });

  return async function (app: FastifyInstance) {
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    // Token responses must not be cached by browsers or proxies (RFC 6749 §5.1).
    r.addHook('onSend', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
    });

    r.post('/auth/signup', {
      schema: {
        operationId: 'signup', tags, summary: 'Create an account',
        description: 'Creates an account on DEFAULT_PLAN and signs it in. Emails are unique, compared case-insensitively. One client address (an IPv6 client\'s /64) creates at most SIGNUP_MAX_PER_IP accounts per SIGNUP_WINDOW; past that, 429 with Retry-After until the window passes. A refused sign-up (such as a taken email) does not count.' + COOKIE_NOTE,
        headers: S.TransportHeaders,
        body: S.SignupBody,
        response: { 201: S.SessionResponse, ...errorResponses(400, 409, 413, 415, 429) },
      },
    }, async (req, reply) => reply.status(201).send(issue(req, reply, await accounts.signup(req.body, clientOf(req)), wantsCookie(req))));

    r.post('/auth/login', {
      schema: {
        operationId: 'login', tags, summary: 'Sign in',
        description: 'Unknown email and wrong password answer the same 401. After LOGIN_MAX_ATTEMPTS failures for one email within LOGIN_WINDOW (or LOGIN_MAX_ATTEMPTS_PER_IP from one address), logins answer 429 with Retry-After until the window passes.' + COOKIE_NOTE,
        headers: S.TransportHeaders,
        body: S.LoginBody,
        response: { 200: S.SessionResponse, ...errorResponses(400, 401, 413, 415, 429) },
      },
    }, async (req, reply) => issue(req, reply, await accounts.login(req.body, req.ip, clientOf(req)), wantsCookie(req)));

    // Refresh and logout take their token from the cookie when the body has none, so a console can
    // send `{}`, or no body at all (even with Content-Type: application/json), and both mean "{}".
    await r.register(async (sub) => {
      const t = sub.withTypeProvider<TypeBoxTypeProvider>();
      const parseJson = sub.getDefaultJsonParser('error', 'error');
      sub.removeContentTypeParser('application/json');
      sub.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
        if (body.length === 0) return done(null, undefined);
        parseJson(req, body.toString(), done);
      });
      t.addHook('preValidation', async (req) => {
        if (req.body === undefined) req.body = {};
      });

      t.post('/auth/refresh', {
        schema: {
          operationId: 'refresh', tags, summary: 'Trade a refresh token for a new token pair',
          description: 'Refresh tokens are single-use. Presenting one that was already used revokes every token of that login (reuse detection, RFC 9700 §4.14.2); concurrent refreshes with one token count as reuse. The token comes from the body or, when the body has none, from the `loglane_refresh` cookie; a token from the cookie is replaced in the cookie, and a refused one clears it.' + COOKIE_NOTE,
          headers: S.TransportHeaders,
          body: S.RefreshBody,
          response: { 200: S.TokenPairResponse, ...errorResponses(400, 401, 413, 415) },
        },
      }, async (req, reply) => {
        const { token, fromCookie } = presented(req, req.body);
        try {
          return issue(req, reply, await accounts.refresh(token), fromCookie || wantsCookie(req));
        } catch (err) {
          if (fromCookie) clearRefreshCookie(req, reply);
          throw err;
        }
      });

      t.post('/auth/logout', {
        preHandler: requireUser,
        schema: {
          operationId: 'logout', tags, summary: 'Sign out', security: bearerSecurity,
          description: 'Revokes the login the refresh token belongs to. Answers 204 whether or not it was still valid, and never touches another user\'s tokens. Access tokens already issued stay valid until they expire (ACCESS_TOKEN_EXPIRY). The token comes from the body or, when the body has none, from the `loglane_refresh` cookie, which the answer clears.',
          body: S.RefreshBody,
          response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 401, 413, 415) },
        },
      }, async (req, reply) => {
        const { token } = presented(req, req.body);
        await accounts.logout(req.userId, token);
        clearRefreshCookie(req, reply);
        return reply.status(204).send(null);
      });
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

    r.post('/auth/password', {
      preHandler: requireUser,
      schema: {
        operationId: 'changePassword', tags, summary: 'Change your password', security: bearerSecurity,
        description: 'Every other login of the account ends (its refresh token fails); this one stays. Access tokens already issued stay valid until they expire. A wrong current password is 401 INVALID_CREDENTIALS, and counts against the login throttle.',
        body: S.ChangePasswordBody,
        response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 401, 413, 415, 429) },
      },
    }, async (req, reply) => {
      await accounts.changePassword(req.userId, req.sessionId, req.body, req.ip);
      return reply.status(204).send(null);
    });

    r.post('/auth/password-reset', {
      schema: {
        operationId: 'requestPasswordReset', tags, summary: 'Mail a password reset link',
        description: 'Answers 202 `{}` whether or not the email has an account. An account gets a mail with `<PUBLIC_URL>/reset-password#token=<token>`, good once for 30 minutes. Requests are throttled per email and per address like logins, on their own counter.',
        body: S.ResetRequestBody,
        response: { 202: S.Accepted, ...errorResponses(400, 413, 415, 429) },
      },
    }, async (req, reply) => {
      await accounts.requestPasswordReset(req.body, req.ip);
      return reply.status(202).send({});
    });

    r.post('/auth/password-reset/confirm', {
      schema: {
        operationId: 'confirmPasswordReset', tags, summary: 'Set a new password with a reset token',
        description: 'Every login of the account ends. An unknown, used or expired token is 400 VALIDATION_ERROR at /token; a body refused by its schema does not use the token.',
        body: S.ResetConfirmBody,
        response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 413, 415) },
      },
    }, async (req, reply) => {
      await accounts.confirmPasswordReset(req.body);
      return reply.status(204).send(null);
    });

    r.get('/auth/sessions', {
      preHandler: requireUser,
      schema: {
        operationId: 'listSessions', tags, summary: 'Your logins', security: bearerSecurity,
        description: 'One per signup or login that can still refresh, newest first; `lastUsedAt` moves on each refresh.',
        response: { 200: ListOf(S.Session), ...errorResponses(401) },
      },
    }, async (req) => ({ data: await accounts.sessions(req.userId, req.sessionId) }));

    r.delete('/auth/sessions/:id', {
      preHandler: requireUser,
      schema: {
        operationId: 'revokeSession', tags, summary: 'Sign out one login', security: bearerSecurity,
        description: 'That login\'s refresh token then fails with INVALID_REFRESH_TOKEN, and its live tails end.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(401, 404) },
      },
    }, async (req, reply) => {
      await accounts.revokeSession(req.userId, req.params.id);
      return reply.status(204).send(null);
    });

    r.delete('/account', {
      preHandler: requireUser,
      schema: {
        operationId: 'deleteAccount', tags, summary: 'Delete your account for good', security: bearerSecurity,
        description: 'Needs the password. The account, the projects it owns with everything in them, its push subscriptions, logins and memberships are deleted; its access tokens answer 401 at once; the email can sign up again.',
        body: S.DeleteAccountBody,
        response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 401, 413, 415, 429) },
      },
    }, async (req, reply) => {
      await accounts.deleteAccount(req.userId, req.body, req.ip);
      return reply.status(204).send(null);
    });
  };
}
