import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { randomToken } from '../../secrets.js';

export const ACCESS_TOKEN_ISSUER = 'loglane';
export const ACCESS_TOKEN_AUDIENCE = 'loglane-api';
/** RFC 9068's media type for access tokens: no other JWT we might ever issue carries it. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
const ALGORITHM = 'HS256';

/** A valid token's user, login (`sid`: the refresh-token family) and expiry (epoch ms). */
export type VerifyResult = { ok: true; userId: string; sessionId: string; expiresAt: number } | { ok: false; reason: 'expired' | 'invalid' };

export interface AccessTokens {
  issue(userId: string, sessionId: string): Promise<string>;
  verify(token: string): Promise<VerifyResult>;
}

/**
 * Access tokens: HS256 JWTs with a 256-bit derived key. Verification pins the algorithm and checks
 * the signature first, then exp, iss, aud and the `typ` header.
 */
export function createAccessTokens(key: Uint8Array, ttlMs: number, now: () => number): AccessTokens {
  return {
    async issue(userId, sessionId) {
      const iat = Math.floor(now() / 1000);
      return new SignJWT({ sid: sessionId })
        .setProtectedHeader({ alg: ALGORITHM, typ: ACCESS_TOKEN_TYPE })
        .setSubject(userId)
        .setIssuer(ACCESS_TOKEN_ISSUER)
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(iat + Math.max(1, Math.round(ttlMs / 1000)))
        .setJti(randomToken(12))
        .sign(key);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [ALGORITHM],
          issuer: ACCESS_TOKEN_ISSUER,
          audience: ACCESS_TOKEN_AUDIENCE,
          typ: ACCESS_TOKEN_TYPE,
          requiredClaims: ['sub', 'exp', 'iat'],
          currentDate: new Date(now()),
        });
        if (typeof payload.sub !== 'string' || !payload.sub.startsWith('usr_') || typeof payload.sid !== 'string') {
          return { ok: false, reason: 'invalid' };
        }
        return { ok: true, userId: payload.sub, sessionId: payload.sid, expiresAt: payload.exp! * 1000 };
      } catch (err) {
        // jose reports expiry only once the signature has been verified.
        if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
        return { ok: false, reason: 'invalid' };
      }
    },
  };
}
