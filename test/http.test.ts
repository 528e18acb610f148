import { expect, it } from 'vitest';
import { describeEngines, errorOf, signup, useServer } from './harness.js';

describeEngines('HTTP basics', (engine) => {
  const s = useServer(engine);

  it('healthz and readyz answer 200 without auth', async () => {
    expect((await s.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await s.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', database: engine });
  });

  it('every response carries a request id header', async () => {
    const ids = new Set<string>();
    for (const path of ['/healthz', '/v1/auth/me', '/nowhere']) {
      const id = (await s.request('GET', path)).headers.get('x-request-id');
      expect(id).toMatch(/^req_[0-9a-f]{16}$/);
      ids.add(id!);
    }
    expect(ids.size).toBe(3);
  });

  it('an unknown route is 404 NOT_FOUND in the error body', async () => {
    for (const [method, path] of [['GET', '/v1/nothing'], ['POST', '/v1/auth/nothing'], ['DELETE', '/v1/auth/me']]) {
      const res = await s.request(method!, path!);
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
    }
  });

  it('serves the OpenAPI document generated from the routes, and the docs UI', async () => {
    const res = await s.request('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    for (const path of ['/v1/auth/signup', '/v1/auth/login', '/v1/auth/refresh', '/v1/auth/logout', '/v1/auth/me', '/v1/projects', '/v1/projects/{id}', '/v1/projects/{id}/rotate-key', '/v1/logs', '/v1/projects/{id}/logs', '/v1/projects/{id}/logs/stats', '/v1/projects/{id}/logs/tail', '/v1/alerts', '/v1/alerts/{id}', '/v1/alerts/{id}/history', '/v1/push/vapid-public-key', '/v1/push/subscriptions', '/v1/push/subscriptions/{id}']) {
      expect(Object.keys(res.body.paths)).toContain(path);
    }
    const signupOp = res.body.paths['/v1/auth/signup'].post;
    expect(signupOp.operationId).toBe('signup');
    expect(signupOp.requestBody.content['application/json'].schema.required).toEqual(['email', 'password']);
    expect(Object.keys(signupOp.responses)).toEqual(expect.arrayContaining(['201', '400', '409']));
    expect(res.body.paths['/v1/auth/me'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(JSON.stringify(res.body.components.schemas)).toContain('requestId');

    const docs = await fetch(`${s.url}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('<html');
  });

  it('answers 415 for a body in a content type an endpoint does not take', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await s.request('POST', '/v1/auth/login', { raw: 'email=a&password=b', headers: { 'content-type': type } });
      expect(res.status, type).toBe(415);
      expect(errorOf(res).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
    const res = await s.request('POST', '/v1/auth/signup', { body: { email: 'a@b.co', password: 'x'.repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(errorOf(res).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('an authenticated route still answers for a valid token after other users come and go', async () => {
    const a = await signup(s);
    await signup(s);
    expect((await s.request('GET', '/v1/auth/me', { token: a.accessToken })).body.id).toBe(a.id);
  });
});
