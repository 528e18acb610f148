import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { AccessTokens } from '../features/accounts/tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user's id, set by requireUser. */
    userId: string;
    /** The login the access token belongs to (its `sid`), set by requireUser. */
    sessionId: string;
    /** When the access token expires (epoch ms), set by requireUser. */
    tokenExpiresAt: number;
  }
}

/** The value of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * A preHandler that accepts only a valid access token of an account that still exists, and sets
 * `request.userId`, `sessionId` and `tokenExpiresAt`. A deleted account's tokens fail at once, on
 * every node (one primary-key lookup per request).
 */
export function requireUser(tokens: AccessTokens, accountExists: (userId: string) => Promise<boolean>): preHandlerAsyncHookHandler {
  return async function requireUserHook(request) {
    const token = bearerToken(request);
    if (!token) throw new AppError('UNAUTHORIZED', 'Authentication required: send an access token as `Authorization: Bearer <token>`.');
    const result = await tokens.verify(token);
    if (!result.ok) {
      throw result.reason === 'expired'
        ? new AppError('TOKEN_EXPIRED', 'The access token has expired; get a new one from POST /v1/auth/refresh.')
        : new AppError('UNAUTHORIZED', 'The access token is not valid.');
    }
    if (!(await accountExists(result.userId))) throw new AppError('UNAUTHORIZED', 'The access token is not valid: its account no longer exists.');
    request.userId = result.userId;
    request.sessionId = result.sessionId;
    request.tokenExpiresAt = result.expiresAt;
  };
}

/** The security requirement for OpenAPI on routes behind requireUser. */
export const bearerSecurity = [{ bearerAuth: [] }];
