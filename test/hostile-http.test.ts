/**
 * Issue 14, findings 7, 11, 12 and 14: hostile input at the HTTP layer, on both engines.
 * - 7/11: NUL and ill-formed UTF-16 (lone surrogates) in any text a client sends are one 400 at the
 *   JSON pointer of the string, on every route but log ingestion (which stores U+FFFD instead).
 * - 12: errors of Node's HTTP parser (431, broken Content-Length) answer in the error body
 *   (docs/api.md, "The error body").
 * - 14: a body over the limit gets its 413 — readable — even when the client writes all of it.
 * Raw JSON text is sent where escapes matter: JSON.stringify would keep `\ud800` as an escape, but
 * fetch would encode a lone surrogate in a string body as U+FFFD before it left the client.
 */
import { createECDH, randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { describeEngines, errorOf, ingest, useAccount, useProject, useServer } from './harness.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `payload` on a fresh TCP connection and reads the first response, until the server closes. */
function rawRequest(url: string, payload: string | Buffer): Promise<RawResponse & { writeError?: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let writeError: string | undefined;
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A write refused after the server stopped reading; what was read so far still counts.
      writeError = err.code ?? err.message;
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const cut = text.indexOf('\r\n\r\n');
      if (cut < 0) return reject(new Error(`no HTTP response (${writeError ?? 'closed'}): ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, cut).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? NaN);
      const rest = Buffer.from(text.slice(cut + 4), 'utf8');
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: (Number.isFinite(length) ? rest.subarray(0, length) : rest).toString('utf8'), writeError });
    });
    socket.write(payload);
  });
}

/** Asserts the error body (docs/api.md, "The error body") on a raw response and returns its error. */
function rawError(res: RawResponse) {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as { error: { code: string; message: string; requestId: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.requestId).toMatch(/^req_[0-9a-f]{16}$/);
  expect(res.headers['x-request-id']).toBe(body.error.requestId);
  expect(body.error.message.length).toBeGreaterThan(10);
  return body.error;
}

/**
 * POSTs `size` bytes of JSON with node:http, writing all of it, and reads the answer. Fails if the
 * connection breaks (EPIPE, ECONNRESET) before the whole answer was read.
 */
function postLarge(url: string, path: string, size: number, headers: Record<string, string>): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const prefix = '{"name":"';
  const suffix = '"}';
  const body = Buffer.alloc(size, 'x');
  body.write(prefix, 0);
  body.write(suffix, size - suffix.length);
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port: Number(port), path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(size), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const p256dh = () => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return ecdh.getPublicKey().toString('base64url');
};

describeEngines('hostile HTTP input', (engine) => {
  const s = useServer(engine, { env: { PUSH_ALLOWED_ORIGINS: 'https://push.example.test' } });
  const a = useAccount(s, { plan: 'enterprise' });
  const project = useProject(s, a);
  let alertId: string;

  beforeAll(async () => {
    const rule = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: project.id, name: 'r', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['email'] } });
    expect(rule.status).toBe(201);
    alertId = rule.body.id;
  });

  const send = (method: string, path: string, raw: string) => s.request(method, path, { raw, token: a.accessToken, headers: { 'content-type': 'application/json' } });
  const expect400At = (res: Awaited<ReturnType<typeof send>>, path: string, what: RegExp) => {
    expect(res.status, res.text).toBe(400);
    const err = errorOf(res);
    expect(err.code).toBe('VALIDATION_ERROR');
    expect((err.details as { path: string; message: string }[])[0]).toEqual({ path, message: expect.stringMatching(what) });
    expect(err.message).toMatch(what);
  };
  const NUL = /NUL \(U\+0000\)/;
  const LONE = /lone surrogate \(U\+D[89A-F][0-9A-F]{2}\)/;

  it('NUL in any stored text field is a 400 at its JSON pointer, never a 500 (finding 7)', async () => {
    const condition = (pattern: string) => `{"level":"error","threshold":1,"window":"1m","pattern":"${pattern}"}`;
    expect400At(await send('POST', '/v1/alerts', `{"projectId":"${project.id}","name":"n","condition":${condition('a\\u0000b')},"channels":["email"]}`), '/condition/pattern', NUL);
    expect400At(await send('PUT', `/v1/alerts/${alertId}`, `{"condition":${condition('x\\u0000')}}`), '/condition/pattern', NUL);
    const keys = `{"p256dh":"${p256dh()}","auth":"${randomBytes(16).toString('base64url')}"}`;
    expect400At(await send('POST', '/v1/push/subscriptions', `{"endpoint":"https://push.example.test/s\\u0000x","keys":${keys}}`), '/endpoint', NUL);
    expect400At(await send('POST', '/v1/projects', '{"name":"ok","x\\u0000y":1}'), '/x\\u0000y', NUL);
    expect400At(await send('PUT', `/v1/projects/${project.id}`, '{"name":"\\u0000"}'), '/name', NUL);
    // The same endpoint without the NUL is fine: the rule is about the character, not the field.
    const ok = await send('POST', '/v1/push/subscriptions', `{"endpoint":"https://push.example.test/sx","keys":${keys}}`);
    expect(ok.status, ok.text).toBe(201);
  });

  it('lone surrogates in any text input are a 400, and a proper pair is stored as sent (finding 11)', async () => {
    const before = (await s.request('GET', `/v1/alerts?projectId=${project.id}`, { token: a.accessToken })).body.data.length;
    const rule = (name: string) => `{"projectId":"${project.id}","name":"${name}","condition":{"level":"error","threshold":1,"window":"1m"},"channels":["email"]}`;
    expect400At(await send('POST', '/v1/alerts', rule('x\\ud800')), '/name', LONE);
    expect400At(await send('POST', '/v1/alerts', rule('\\udfffx')), '/name', LONE);
    expect400At(await send('PUT', `/v1/alerts/${alertId}`, '{"channels":["email","\\udc00"]}'), '/channels/1', LONE);
    expect400At(await send('POST', '/v1/projects', '{"name":"a\\ud83d"}'), '/name', LONE);
    expect400At(await send('POST', '/v1/projects', '{"name":"ok","\\ud800":1}'), '/\\ud800', LONE);
    // A reversed pair is two lone surrogates.
    expect400At(await send('POST', '/v1/projects', '{"name":"\\ude00\\ud83d"}'), '/name', LONE);
    expect((await s.request('GET', `/v1/alerts?projectId=${project.id}`, { token: a.accessToken })).body.data.length).toBe(before);

    const pair = await send('POST', '/v1/alerts', rule('fire \\ud83d\\udd25'));
    expect(pair.status, pair.text).toBe(201);
    expect(pair.body.name).toBe('fire 🔥');
    const stored = await s.request('GET', `/v1/alerts/${pair.body.id}`, { token: a.accessToken });
    expect(stored.body.name).toBe('fire 🔥');
  });

  it('query strings follow the same rule, with their part in the path; a path parameter that breaks it is not found', async () => {
    const q = await s.request('GET', `/v1/projects/${project.id}/logs?q=a%00b`, { token: a.accessToken });
    expect400At(q, 'querystring:/q', NUL);
    const query = await s.request('GET', `/v1/projects/${project.id}/logs?query=level%3Aerror%00`, { token: a.accessToken });
    expect400At(query, 'querystring:/query', NUL);
    const alerts = await s.request('GET', '/v1/alerts?projectId=%00', { token: a.accessToken });
    expect400At(alerts, 'querystring:/projectId', NUL);
    // A path parameter names a resource: one that cannot exist is not found, as any id of the wrong shape.
    for (const path of ['/v1/alerts/alt_%00', `/v1/projects/${project.id}%00`, '/v1/push/subscriptions/psub_%00']) {
      const param = await s.request(path.startsWith('/v1/push') ? 'DELETE' : 'GET', path, { token: a.accessToken });
      expect(param.status, path).toBe(404);
      expect(errorOf(param).code).toBe('NOT_FOUND');
    }
  });

  it('passwords and emails are text inputs too: no NUL or lone surrogate reaches the account code', async () => {
    const signupRes = await s.request('POST', '/v1/auth/signup', { raw: `{"email":"${randomBytes(4).toString('hex')}@example.com","password":"longpassword\\ud800"}`, headers: { 'content-type': 'application/json' } });
    expect400At(signupRes, '/password', LONE);
    const login = await s.request('POST', '/v1/auth/login', { raw: `{"email":"${a.email}","password":"a\\u0000b"}`, headers: { 'content-type': 'application/json' } });
    expect400At(login, '/password', NUL);
  });

  // What exactly takes their place is the ingest path's business (features/logs/ingest/normalise.ts);
  // here: such a log is accepted, and nothing of it is stored as NUL or as a lone surrogate.
  it('log ingestion is exempt: NUL and lone surrogates in a log are accepted, not refused', async () => {
    const res = await s.request('POST', '/v1/logs', { raw: '[{"message":"nul\\u0000 lone\\ud800 end","metadata":{"k\\u0000":"v\\udfff"}}]', headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey } });
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(1);
    const logs = await s.request('GET', `/v1/projects/${project.id}/logs?q=lone`, { token: a.accessToken });
    expect(logs.body.data).toHaveLength(1);
    const message: string = logs.body.data[0]!.message;
    // One U+FFFD for each, the same on both engines.
    expect(message).toBe('nul\ufffd lone\ufffd end');
    expect(message.includes('\u0000') || !message.isWellFormed()).toBe(false);
    // OTLP too.
    const otlp = await s.request('POST', '/v1/otlp/v1/logs', { raw: '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"otlp\\u0000 lone\\ud800"}}]}]}]}', headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey } });
    expect(otlp.status, otlp.text).toBe(200);
    const fromOtlp = await s.request('GET', `/v1/projects/${project.id}/logs?q=otlp`, { token: a.accessToken });
    expect(fromOtlp.body.data.map((l: { message: string }) => l.message)).toEqual(['otlp\ufffd lone\ufffd']);
  });

  it('errors of the HTTP parser answer in the error body with a request id (finding 12)', async () => {
    const { host } = new URL(s.url);
    // 80 KB of one header: 431.
    const header = await rawRequest(s.url, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'a'.repeat(80 * 1024)}\r\n\r\n`);
    expect(header.status).toBe(431);
    expect(rawError(header).code).toBe('VALIDATION_ERROR');
    // A 60 KB URL: 431 too (the request line counts toward the same limit).
    const url = await rawRequest(s.url, `GET /v1/projects?q=${'b'.repeat(60 * 1024)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(url.status).toBe(431);
    expect(rawError(url).code).toBe('VALIDATION_ERROR');
    // Content-Length trouble: two different values, not a number, beside Transfer-Encoding.
    const body = '{"email":"a@b.co","password":"long enough"}';
    for (const framing of [
      `Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}`,
      'Content-Length: abc',
      `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked`,
    ]) {
      const res = await rawRequest(s.url, `POST /v1/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n${body}`);
      expect(res.status, framing).toBe(400);
      expect(rawError(res).code).toBe('VALIDATION_ERROR');
    }
    // A Content-Length shorter than the body: the first request is answered, the rest is not HTTP.
    const short = await rawRequest(s.url, `POST /v1/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n${body}`);
    expect(short.status).toBe(400);
    rawError(short);
    // The server is unharmed.
    expect((await s.request('GET', '/healthz')).status).toBe(200);
  });

  const RUNS = 20;
  const SIX_MIB = 6 * 1024 * 1024;

  it(`a 6 MiB body gets a readable 413 in the error body, every time (finding 14, ${RUNS} runs each)`, async () => {
    const routes: [string, Record<string, string>][] = [
      ['/v1/projects', { authorization: `Bearer ${a.accessToken}` }],
      ['/v1/logs', { 'x-api-key': project.apiKey }],
    ];
    for (const [path, headers] of routes) {
      for (let run = 0; run < RUNS; run++) {
        const res = await postLarge(s.url, path, SIX_MIB, headers);
        expect(res.status, `${path} run ${run}`).toBe(413);
        const err = JSON.parse(res.body).error;
        expect(err.code).toBe('PAYLOAD_TOO_LARGE');
        expect(res.headers['x-request-id']).toBe(err.requestId);
      }
    }
    // The same with a raw socket that writes every byte before it reads.
    const { host } = new URL(s.url);
    const head = `POST /v1/projects HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${a.accessToken}\r\nContent-Type: application/json\r\nContent-Length: ${SIX_MIB}\r\nConnection: close\r\n\r\n`;
    const raw = await rawRequest(s.url, Buffer.concat([Buffer.from(head), Buffer.alloc(SIX_MIB, 'x')]));
    expect(raw.writeError).toBeUndefined();
    expect(raw.status).toBe(413);
    expect(rawError(raw).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('an early answer to an unread body (401 before reading it) is readable too', async () => {
    for (let run = 0; run < 5; run++) {
      const res = await postLarge(s.url, '/v1/logs', 4 * 1024 * 1024, { 'x-api-key': 'llk_not_a_key' });
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.code).toBe('INVALID_API_KEY');
    }
    // Ingestion still works with the real key.
    expect((await ingest(s, project.apiKey, { message: 'after' })).status).toBe(202);
  });
});
