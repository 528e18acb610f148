/**
 * Issue 14, finding 13: `REFRESH_TOKEN_EXPIRY=5s` was refused at start ("between 60s and 365d"),
 * though the spec makes the lifetime configurable. Any positive duration is taken now; a refresh
 * lifetime shorter than the access lifetime starts with a warning, since clients then cannot refresh.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { describeEngines, errorOf, signup, useServer } from './harness.js';

describe('REFRESH_TOKEN_EXPIRY', () => {
  it('takes any positive duration, and refuses zero or nonsense', () => {
    expect(loadConfig({ REFRESH_TOKEN_EXPIRY: '5s' }).refreshTokenTtlMs).toBe(5000);
    expect(loadConfig({ REFRESH_TOKEN_EXPIRY: '1' }).refreshTokenTtlMs).toBe(1000);
    for (const bad of ['0', '0s', '-5s', 'soon']) expect(() => loadConfig({ REFRESH_TOKEN_EXPIRY: bad })).toThrow(ConfigError);
  });
});

describeEngines('a 5-second refresh lifetime', (engine) => {
  const s = useServer(engine, { env: { REFRESH_TOKEN_EXPIRY: '5s' } });

  it('starts, warns that it is shorter than the access lifetime, and refresh tokens live exactly that long', async () => {
    expect(s.logs.some((line) => line.includes('"level":40') && line.includes('REFRESH_TOKEN_EXPIRY is shorter than ACCESS_TOKEN_EXPIRY'))).toBe(true);
    const a = await signup(s);
    s.clock.advance(4000);
    const fresh = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } });
    expect(fresh.status).toBe(200);
    expect(fresh.body.refreshToken).toEqual(expect.any(String));
    s.clock.advance(5001);
    const stale = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: fresh.body.refreshToken } });
    expect(stale.status).toBe(401);
    expect(errorOf(stale).code).toBe('INVALID_REFRESH_TOKEN');
  });
});
