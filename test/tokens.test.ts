import { randomBytes } from 'node:crypto';
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { beforeAll, expect, it } from 'vitest';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER } from '../src/features/accounts/tokens.js';
import { deriveKey, resolveSecretKey } from '../src/secrets.js';
import { describeEngines, errorOf, signup, useServer } from './harness.js';

describeEngines('access and refresh tokens', (engine) => {
  // Short lifetimes, set through the settings, so expiry is reached by moving the clock.
  const s = useServer(engine, { env: { ACCESS_TOKEN_EXPIRY: '60s', REFRESH_TOKEN_EXPIRY: '10m' } });
  let key: Buffer;
  beforeAll(() => {
    key = deriveKey(resolveSecretKey(s.config).key, 'jwt-signing');
  });

  const me = (token: string) => s.request('GET', '/v1/auth/me', { token });

  /** A token signed with the server's real key, shaped as the test says. */
  async function craft(userId: string, opts: { typ?: string; alg?: string; iss?: string; aud?: string; exp?: number; signKey?: Uint8Array } = {}) {
    const nowSec = Math.floor(s.clock.now() / 1000);
    return new SignJWT({ sid: 'rtf_x' })
      .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: opts.typ ?? 'at+jwt' })
      .setSubject(userId)
      .setIssuer(opts.iss ?? ACCESS_TOKEN_ISSUER)
      .setAudience(opts.aud ?? ACCESS_TOKEN_AUDIENCE)
      .setIssuedAt(nowSec - 10)
      .setExpirationTime(opts.exp ?? nowSec + 60)
      .sign(opts.signKey ?? key);
  }

  it('a token crafted exactly like ours is accepted (so the forgeries below fail for their flaw alone)', async () => {
    const a = await signup(s);
    expect((await me(await craft(a.id))).status).toBe(200);
  });

  it('the issued access token pins HS256, at+jwt, issuer, audience and the configured lifetime', async () => {
    const a = await signup(s);
    const [header] = a.accessToken.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'at+jwt' });
    const claims = decodeJwt(a.accessToken);
    expect(claims).toMatchObject({ sub: a.id, iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE });
    expect(claims.exp! - claims.iat!).toBe(60);
  });

  it('forged access tokens are all 401 UNAUTHORIZED', async () => {
    const a = await signup(s);
    const b = await signup(s);
    const [h, , sig] = a.accessToken.split('.');
    const payload = { ...decodeJwt(a.accessToken), sub: b.id };
    const forgeries: Record<string, string> = {
      'alg none': new UnsecuredJWT({ sid: 'x' }).setSubject(a.id).setIssuer(ACCESS_TOKEN_ISSUER).setAudience(ACCESS_TOKEN_AUDIENCE).setIssuedAt().setExpirationTime('5m').encode(),
      'alg none with typ': `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${a.accessToken.split('.')[1]}.`,
      'wrong key': await craft(a.id, { signKey: randomBytes(32) }),
      'tampered payload': `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`,
      'signature stripped': `${h}.${a.accessToken.split('.')[1]}.`,
      'wrong type (plain JWT)': await craft(a.id, { typ: 'JWT' }),
      'wrong type (refresh)': await craft(a.id, { typ: 'rt+jwt' }),
      'another algorithm with the right key': await craft(a.id, { alg: 'HS512' }),
      'wrong audience': await craft(a.id, { aud: 'someone-else' }),
      'wrong issuer': await craft(a.id, { iss: 'evil' }),
      'refresh token used as access token': a.refreshToken,
    };
    for (const [name, token] of Object.entries(forgeries)) {
      const res = await me(token);
      expect(res.status, name).toBe(401);
      expect(errorOf(res).code, name).toBe('UNAUTHORIZED');
    }
  });

  it('an expired but genuine token is 401 TOKEN_EXPIRED; an expired forgery is 401 UNAUTHORIZED', async () => {
    const a = await signup(s);
    const past = Math.floor(s.clock.now() / 1000) - 61;
    const expired = await me(await craft(a.id, { exp: past }));
    expect(expired.status).toBe(401);
    expect(errorOf(expired).code).toBe('TOKEN_EXPIRED');
    const forged = await me(await craft(a.id, { exp: past, signKey: randomBytes(32) }));
    expect(errorOf(forged).code).toBe('UNAUTHORIZED');
  });

  it('an issued access token expires after ACCESS_TOKEN_EXPIRY and refresh brings a working one', async () => {
    const a = await signup(s);
    expect((await me(a.accessToken)).status).toBe(200);
    s.clock.advance(61_000);
    const res = await me(a.accessToken);
    expect(res.status).toBe(401);
    expect(errorOf(res).code).toBe('TOKEN_EXPIRED');
    const refreshed = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect((await me(refreshed.body.accessToken)).status).toBe(200);
  });

  it('a refresh token expires after REFRESH_TOKEN_EXPIRY', async () => {
    const a = await signup(s);
    s.clock.advance(10 * 60_000 + 1_000);
    const res = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } });
    expect(res.status).toBe(401);
    expect(errorOf(res).code).toBe('INVALID_REFRESH_TOKEN');
  });
});
