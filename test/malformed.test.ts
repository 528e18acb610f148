import { beforeAll, expect, it } from 'vitest';
import { describeEngines, errorOf, useAccount, useProject, useServer } from './harness.js';

/** Bodies no endpoint should ever answer with a 5xx. */
const RAW_BODIES: [string, string][] = [
  ['not JSON', 'hello'],
  ['truncated JSON', '{"email": "a@b.co", '],
  ['empty', ''],
  ['null', 'null'],
  ['a number', '42'],
  ['a string', '"text"'],
  ['an array', '[{"email":"a@b.co","password":"long enough"}]'],
  ['__proto__ key', '{"__proto__": {"admin": true}, "email": "a@b.co", "password": "long enough"}'],
  ['nested __proto__', '{"email": "a@b.co", "password": {"__proto__": {"x": 1}}}'],
  ['constructor.prototype', '{"constructor": {"prototype": {"admin": true}}}'],
  ['huge string', JSON.stringify({ email: `${'a'.repeat(500_000)}@b.co`, password: 'p'.repeat(400_000), refreshToken: 'r'.repeat(50_000) })],
  ['deep nesting', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`],
  ['wrong types', '{"email": true, "password": [1,2], "refreshToken": {"a": 1}}'],
  ['nulls', '{"email": null, "password": null, "refreshToken": null}'],
  ['unicode', '{"email": "\\u0000\\ud800@例え.jp", "password": "\\u202e\\u0000abcdefgh", "refreshToken": "\\ud83d"}'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('latin1')],
];

/** [method, path (`:id` is replaced by a real project of the caller), authenticated]. */
const ENDPOINTS: [string, string, boolean][] = [
  ['POST', '/v1/auth/signup', false],
  ['POST', '/v1/auth/login', false],
  ['POST', '/v1/auth/refresh', false],
  ['POST', '/v1/auth/logout', true],
  ['GET', '/v1/auth/me', true],
  ['GET', '/v1/projects', true],
  ['POST', '/v1/projects', true],
  ['GET', '/v1/projects/:id', true],
  ['PUT', '/v1/projects/:id', true],
  ['POST', '/v1/projects/:id/rotate-key', true],
  ['POST', '/v1/logs', false],
  ['GET', '/v1/projects/:id/logs', true],
  ['POST', '/v1/alerts', true],
  ['PUT', '/v1/alerts/:alert', true],
  ['POST', '/v1/push/subscriptions', true],
];

describeEngines('malformed input', (engine) => {
  const s = useServer(engine, { env: { LOGIN_MAX_ATTEMPTS_PER_IP: '100000', LOGIN_MAX_ATTEMPTS: '100000' } });
  const a = useAccount(s, { plan: 'enterprise' });
  const project = useProject(s, a);
  let alertId: string;
  beforeAll(async () => {
    const rule = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: project.id, name: 'r', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['email'] } });
    if (rule.status !== 201) throw new Error(`alert rule create failed: ${rule.status} ${rule.text}`);
    alertId = rule.body.id;
  });

  it('no malformed body yields a 5xx on any endpoint, and every error has the error body', async () => {
    for (const [method, path, auth] of ENDPOINTS) {
      for (const [name, raw] of RAW_BODIES) {
        for (const contentType of ['application/json', 'application/json; charset=utf-8', 'text/plain']) {
          const res = await s.request(method, path.replace(':id', project.id).replace(':alert', alertId), { raw: method === 'GET' ? undefined : raw, token: auth ? a.accessToken : undefined, headers: { 'content-type': contentType } });
          const label = `${method} ${path} ${name} (${contentType})`;
          expect(res.status, label).toBeGreaterThanOrEqual(200);
          expect(res.status, label).toBeLessThan(500);
          if (res.status >= 400) errorOf(res);
        }
      }
    }
    // The account was not touched by any of it.
    expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).status).toBe(200);
  });

  it('prototype keys are refused, not merged into objects', async () => {
    const res = await s.request('POST', '/v1/auth/signup', { raw: '{"__proto__": {"polluted": 1}, "email": "p@example.com", "password": "long enough"}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('bad headers are refused cleanly', async () => {
    for (const authorization of ['Bearer ' + 'x'.repeat(10_000), 'Bearer a.b.c', 'Bearer \u00ff', 'bearer  ']) {
      const res = await s.request('GET', '/v1/auth/me', { headers: { authorization } });
      expect(res.status).toBe(401);
      errorOf(res);
    }
  });
});
