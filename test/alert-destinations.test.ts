/**
 * Issue 17: webhook and Slack destinations. A local receiver, admitted through the operator's
 * allow-list (WEBHOOK_ALLOWED_ORIGINS), gets the signed webhook and the Slack message of a rule's
 * triggered and resolved entries and of a test; destination URLs aimed at the server's own network
 * are refused when saved, and again at each send (a literal address, a name that resolves to
 * loopback, a redirect), with not one request reaching a local trap server.
 */
import { createHmac } from 'node:crypto';
import dns from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isBlockedAddress } from '../src/features/notifications/outbound.js';
import { createProject, describeEngines, errorOf, ingest, signup, useAccount, useServer, waitFor } from './harness.js';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP server that records what it is sent; `/fail` answers 500, `/redirect` 302 to `location`. */
async function startReceiver(location = 'http://127.0.0.1:9/') {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url?.startsWith('/fail')) res.writeHead(500).end('no');
      else if (req.url?.startsWith('/redirect')) res.writeHead(302, { location }).end();
      else res.writeHead(200).end('ok');
    });
  });
  // Connections, not only requests: a TLS handshake to this plain server would make no request.
  const seen = { connections: 0 };
  server.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { got, seen, port, origin: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Verifies `Loglane-Signature` as a receiver would (docs/alerts.md). */
function verified(secret: string, header: string | undefined, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex');
  return expected === m[2] && Math.abs(Date.now() / 1000 - Number(m[1])) < 300;
}

describeEngines('alert destinations: webhooks and Slack', (engine) => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let trap: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    trap = await startReceiver();
    receiver = await startReceiver(`http://127.0.0.1:${trap.port}/redirected`);
  });
  // Declared before the server: afterAll hooks run in reverse, so the receivers close after it.
  afterAll(async () => {
    await receiver?.close();
    await trap?.close();
  });
  const s = useServer(engine, () => ({ env: { WEBHOOK_ALLOWED_ORIGINS: receiver.origin, PUBLIC_URL: 'https://logs.example.com', DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2', ALERT_CLOCK_INTERVAL: '10s' } }));
  const a = useAccount(s, { plan: 'enterprise' });

  const history = async (id: string) => (await s.request('GET', `/v1/alerts/${id}/history`, { token: a.accessToken })).body.data as any[];
  const settled = (id: string, n: number) =>
    waitFor(async () => {
      const entries = await history(id);
      return entries.length === n && entries.every((e) => e.deliveries.every((d: { status: string }) => d.status !== 'pending')) ? entries : undefined;
    }, 8000);
  const addDestination = async (projectId: string, body: Record<string, unknown>, account = a) => s.request('POST', `/v1/projects/${projectId}/destinations`, { token: account.accessToken, body });

  it('a rule notifies every webhook (signed) and Slack destination of its project when it fires and when it resolves', async () => {
    const p = await createProject(s, a, 'Shop');
    const hook = await addDestination(p.id, { type: 'webhook', name: 'on-call', url: `${receiver.origin}/hook` });
    expect(hook.status, hook.text).toBe(201);
    expect(hook.body).toEqual({ id: expect.stringMatching(/^dst_/), type: 'webhook', name: 'on-call', url: `${receiver.origin}/hook`, createdAt: expect.any(String), secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{32}$/) });
    const slack = await addDestination(p.id, { type: 'slack', url: `${receiver.origin}/slack` });
    expect(slack.status, slack.text).toBe(201);
    expect(slack.body.secret).toBeUndefined();
    expect(slack.body.name).toBe(`slack 127.0.0.1:${receiver.port}`);
    // Listed without the secret; the database holds it sealed only.
    const listed = (await s.request('GET', `/v1/projects/${p.id}/destinations`, { token: a.accessToken })).body.data;
    expect(listed.map((d: { id: string }) => d.id)).toEqual([hook.body.id, slack.body.id]);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    const stored = await s.database.db.selectFrom('alert_destinations').selectAll().where('project_id', '=', p.id).execute();
    expect(JSON.stringify(stored)).not.toContain(hook.body.secret);

    const rule = (await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'Checkout errors', condition: { level: 'error', threshold: 1, window: '10s' }, channels: ['webhook', 'slack'], cooldown: '1h' } })).body;
    const before = receiver.got.length;
    expect((await ingest(s, p.apiKey, [{ level: 'error', message: 'card declined', timestamp: new Date(s.clock.now()).toISOString() }])).status).toBe(202);
    await s.app.services.alertsCaughtUp();
    await settled(rule.id, 1);
    s.clock.advance(11_000);
    await s.app.services.alerts.tick();
    s.clock.advance(11_000);
    await s.app.services.alerts.tick();
    const entries = await settled(rule.id, 2);
    expect(entries.map((e) => e.kind)).toEqual(['resolved', 'triggered']);
    for (const e of entries) expect(e.deliveries).toEqual([{ channel: 'slack', status: 'sent' }, { channel: 'webhook', status: 'sent' }]);

    const hooks = receiver.got.slice(before).filter((r) => r.path === '/hook');
    expect(hooks).toHaveLength(2);
    for (const h of hooks) {
      expect(h.headers['content-type']).toBe('application/json');
      expect(verified(hook.body.secret!, h.headers['loglane-signature'] as string, h.body)).toBe(true);
      expect(verified('whsec_wrong', h.headers['loglane-signature'] as string, h.body)).toBe(false);
    }
    const [fired, resolved] = hooks.map((h) => JSON.parse(h.body));
    expect(fired).toMatchObject({
      type: 'alert.triggered',
      alert: { id: rule.id, name: 'Checkout errors', projectId: p.id, condition: { level: 'error', threshold: 1, window: '10s', comparison: 'above' } },
      state: 'firing',
      matchedCount: 1,
      threshold: 1,
      window: '10s',
      url: `https://logs.example.com/alerts/${rule.id}`,
    });
    expect(fired.sample.map((l: { message: string }) => l.message)).toEqual(['card declined']);
    expect(resolved).toMatchObject({ type: 'alert.resolved', state: 'ok', matchedCount: 0, sample: [] });
    const slacks = receiver.got.slice(before).filter((r) => r.path === '/slack').map((r) => JSON.parse(r.body));
    expect(slacks).toHaveLength(2);
    expect(slacks[0].text).toContain('Checkout errors fired');
    expect(slacks[0].blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Checkout errors fired' } });
    expect(JSON.stringify(slacks[0].blocks)).toContain('card declined');
    expect(slacks[1].text).toContain('Checkout errors resolved');
  });

  it('the test endpoint sends on every channel now, writes no entry, and reports each outcome', async () => {
    const p = await createProject(s, a, 'Tests');
    const rule = (await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'Try me', condition: { level: 'warn', threshold: 5, window: '5m' }, channels: ['email', 'webhook', 'slack'] } })).body;
    // No destinations yet: skipped; no SMTP_URL here: email skipped too.
    const none = await s.request('POST', `/v1/alerts/${rule.id}/test`, { token: a.accessToken });
    expect(none.status, none.text).toBe(200);
    expect(none.body.deliveries).toEqual([
      { channel: 'email', status: 'skipped', error: 'email is not configured on this server (SMTP_URL)' },
      { channel: 'webhook', status: 'skipped', error: 'no destinations' },
      { channel: 'slack', status: 'skipped', error: 'no destinations' },
    ]);
    const hook = (await addDestination(p.id, { type: 'webhook', name: 'good', url: `${receiver.origin}/hook?test` })).body;
    const secret = hook.secret;
    if (secret === undefined) throw new Error('a webhook destination is created with its signing secret');
    await addDestination(p.id, { type: 'webhook', name: 'broken', url: `${receiver.origin}/fail` });
    await addDestination(p.id, { type: 'slack', url: `${receiver.origin}/slack?test` });
    expect((await ingest(s, p.apiKey, [{ level: 'warn', message: 'disk at 91%', timestamp: new Date(s.clock.now()).toISOString() }])).status).toBe(202);
    await s.app.services.alertsCaughtUp();
    const before = receiver.got.length;
    const res = await s.request('POST', `/v1/alerts/${rule.id}/test`, { token: a.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.deliveries).toEqual([
      { channel: 'email', status: 'skipped', error: 'email is not configured on this server (SMTP_URL)' },
      { channel: 'webhook', status: 'failed', error: 'broken: answered 500' },
      { channel: 'slack', status: 'sent' },
    ]);
    const sent = receiver.got.slice(before);
    // One attempt per destination.
    expect(sent.map((r) => r.path).sort()).toEqual(['/fail', '/hook?test', '/slack?test']);
    const body = JSON.parse(sent.find((r) => r.path === '/hook?test')!.body);
    expect(body).toMatchObject({ type: 'alert.test', state: 'ok', matchedCount: 1, threshold: 5, window: '5m' });
    expect(body.sample.map((l: { message: string }) => l.message)).toEqual(['disk at 91%']);
    const signed = sent.find((r) => r.path === '/hook?test')!;
    expect(verified(secret, signed.headers['loglane-signature'] as string, signed.body)).toBe(true);
    expect(await history(rule.id)).toEqual([]);
  });

  it('refuses destination URLs aimed at this machine or a private network, when saved and when sent; not one request reaches them', async () => {
    const p = await createProject(s, a, 'SSRF');
    const t = trap.port;
    const refusedAtSave = [
      `http://example.com/hook`,
      `https://localhost:${t}/x`,
      `https://api.localhost/x`,
      `https://127.0.0.1:${t}/x`,
      `https://127.1:${t}/x`,
      `https://2130706433:${t}/x`,
      `https://0x7f000001:${t}/x`,
      `https://0177.0.0.1:${t}/x`,
      `https://10.1.2.3/x`,
      `https://172.20.0.1/x`,
      `https://192.168.1.1/x`,
      `https://100.64.0.1/x`,
      `https://169.254.169.254/latest/meta-data`,
      `https://0.0.0.0:${t}/x`,
      `https://[::1]:${t}/x`,
      `https://[::]/x`,
      `https://[::ffff:127.0.0.1]:${t}/x`,
      `https://[::ffff:a9fe:a9fe]/x`,
      `https://[fe80::1]/x`,
      `https://[fd00::1]/x`,
      `https://user:secret@hooks.example.com/x`,
      `not a url`,
    ];
    for (const url of refusedAtSave) {
      const res = await addDestination(p.id, { type: 'webhook', url });
      expect(res.status, url).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
      expect((errorOf(res).details as { path: string }[])[0]!.path).toBe('/url');
    }
    expect((await addDestination(p.id, { type: 'pager', url: 'https://hooks.example.com/x' })).status).toBe(400);

    // At send: this machine's name resolves to a loopback (or private) address; a destination
    // saved with a literal address before the rules (inserted here); and a redirect to loopback.
    const hostname = os.hostname();
    const resolved = await dns.lookup(hostname, { all: true });
    expect(resolved.some((r) => isBlockedAddress(r.address)), `${hostname} resolves to ${JSON.stringify(resolved)}`).toBe(true);
    expect((await addDestination(p.id, { type: 'webhook', name: 'by name', url: `https://${hostname}:${t}/by-name` })).status).toBe(201);
    await s.database.db.insertInto('alert_destinations').values({ id: 'dst_00000000000000000000000000', project_id: p.id, type: 'webhook', name: 'literal', url: `http://127.0.0.1:${t}/literal`, secret_sealed: null, created_at: 0 }).execute();
    expect((await addDestination(p.id, { type: 'slack', name: 'redirect', url: `${receiver.origin}/redirect` })).status).toBe(201);
    const rule = (await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'Aimed inward', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['webhook', 'slack'] } })).body;
    expect((await ingest(s, p.apiKey, [{ level: 'error', message: 'x', timestamp: new Date(s.clock.now()).toISOString() }])).status).toBe(202);
    await s.app.services.alertsCaughtUp();
    const [entry] = await settled(rule.id, 1);
    const byChannel = Object.fromEntries(entry.deliveries.map((d: { channel: string; status: string; error: string }) => [d.channel, d]));
    expect(byChannel.webhook.status).toBe('failed');
    expect(byChannel.webhook.error).toContain('by name: refused');
    expect(byChannel.webhook.error).toContain('literal: refused');
    expect(byChannel.slack).toEqual({ channel: 'slack', status: 'failed', error: 'redirect: answered 302 (redirects are not followed)' });
    const test = await s.request('POST', `/v1/alerts/${rule.id}/test`, { token: a.accessToken });
    expect(test.body.deliveries.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed']);
    expect(trap.got).toEqual([]);
    expect(trap.seen.connections).toBe(0);
  });

  it("another user's project and destinations are 404; a project holds at most 20 destinations", async () => {
    const p = await createProject(s, a, 'Mine');
    const mine = (await addDestination(p.id, { type: 'webhook', url: `${receiver.origin}/hook` })).body;
    const b = await signup(s);
    expect((await addDestination(p.id, { type: 'webhook', url: `${receiver.origin}/hook` }, b)).status).toBe(404);
    expect((await s.request('GET', `/v1/projects/${p.id}/destinations`, { token: b.accessToken })).status).toBe(404);
    expect((await s.request('DELETE', `/v1/projects/${p.id}/destinations/${mine.id}`, { token: b.accessToken })).status).toBe(404);
    const theirs = await createProject(s, b, 'Theirs');
    expect((await s.request('DELETE', `/v1/projects/${theirs.id}/destinations/${mine.id}`, { token: b.accessToken })).status).toBe(404);
    expect((await s.request('DELETE', `/v1/projects/${p.id}/destinations/${mine.id}`, { token: a.accessToken })).status).toBe(204);
    expect((await s.request('DELETE', `/v1/projects/${p.id}/destinations/${mine.id}`, { token: a.accessToken })).status).toBe(404);
    for (let i = 0; i < 20; i++) expect((await addDestination(p.id, { type: 'slack', url: `${receiver.origin}/slack/${i}` })).status).toBe(201);
    expect((await addDestination(p.id, { type: 'slack', url: `${receiver.origin}/slack/21` })).status).toBe(400);
  });
});
