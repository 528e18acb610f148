/**
 * Issue 25, findings 5, 6 (firing rate) and 7 (outbound): one account's alert destinations must
 * cost no other tenant anything. An attacker on a free plan points 20 webhook destinations at
 * servers that never answer (half accept the TCP connection and say nothing, half read the request
 * and never end the response) and fires a 0 s-cooldown rule on every log it sends; meanwhile a
 * victim's rule fires, and its webhook and its email must both be delivered. The attacker's
 * notifications are counted against the per-rule and per-project budgets, and its requests against
 * the per-destination circuit breaker. Also: the IPv6 (and IPv4) special ranges refused as
 * destinations, send errors that never show a resolved address, and a deleted member's id left in
 * no delivery's state. Both engines; real HTTP servers and a real SMTP server, in-process.
 */
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAKER_FAILURES, BREAKER_MAX_OPEN_MS, BREAKER_OPEN_MS, Breakers, describeSendError, FairLimiter, isBlockedAddress } from '../src/features/notifications/outbound.js';
import { PROJECT_NOTIFICATIONS_PER_MINUTE, RULE_NOTIFICATIONS_PER_MINUTE } from '../src/features/alerts/service.js';
import { createProject, describeEngines, errorOf, ingest, setPlan, signup, useAccount, useProject, useServer, waitFor, type Account } from './harness.js';
import { beside, expectUnharmed } from './hostile.js';
import { startSmtpSink } from './sinks.js';
import { addMember, scanDatabase } from './teams-helpers.js';

const PUBLIC_URL = 'https://logs.example.com';
const DESTINATIONS = 20;
const ATTACK_INGESTS = 94;

/** A TCP server that accepts every connection, reads what it is sent and never writes a byte. */
async function startSilent() {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    get requests() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An HTTP server that reads each request and never ends its response (`/ok` answers 200 at once). */
async function startHttp() {
  const got: { path: string; body: string }[] = [];
  let hung = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      if (req.url?.startsWith('/ok')) res.writeHead(200).end('ok');
      else hung++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    got,
    origin: `http://127.0.0.1:${port}`,
    get requests() {
      return hung;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describeEngines('hostile outbound: one account\'s destinations delay no other tenant\'s alerts', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let silent: Awaited<ReturnType<typeof startSilent>>;
  let blackhole: Awaited<ReturnType<typeof startHttp>>;
  let victimHooks: Awaited<ReturnType<typeof startHttp>>;
  let closed: number;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    silent = await startSilent();
    blackhole = await startHttp();
    victimHooks = await startHttp();
    closed = await closedPort();
  });
  // afterAll hooks run in reverse: this one, declared before the server, runs after it has closed.
  afterAll(async () => {
    await victimHooks?.close();
    await smtp?.close();
  });
  const s = useServer(engine, () => ({
    env: {
      SMTP_URL: smtp.url,
      PUBLIC_URL,
      ALERT_EMAIL_FROM: 'Loglane <alerts@loglane.test>',
      WEBHOOK_ALLOWED_ORIGINS: [silent.origin, blackhole.origin, victimHooks.origin, `http://127.0.0.1:${closed}`].join(','),
    },
  }));
  // Declared after the server, so it runs before the server closes: the hanging peers go first, and
  // the server's requests to them end at once instead of at their timeout.
  afterAll(async () => {
    await silent?.close();
    await blackhole?.close();
  });
  const bystander = useProject(s, useAccount(s), 'bystander');

  const history = async (account: Account, ruleId: string) => (await s.request('GET', `/v1/alerts/${ruleId}/history?limit=100`, { token: account.accessToken })).body.data as { kind: string; deliveries: { channel: string; status: string; error?: string }[] }[];
  const allHistory = async (account: Account, ruleId: string) => {
    const out: { deliveries: { channel: string; status: string; error?: string }[] }[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: { data: typeof out; nextCursor: string | null } = (await s.request('GET', `/v1/alerts/${ruleId}/history?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: account.accessToken })).body;
      out.push(...page.data);
      cursor = page.nextCursor;
      if (!cursor) return out;
    }
  };

  it('20 destinations that never answer and a 0 s-cooldown rule: the victim\'s webhook and email are delivered, the attacker\'s notifications stay within their budgets', async () => {
    // The attacker: a free account, its one project, 20 webhooks that hang, a rule that fires on every log.
    const attacker = await signup(s);
    const ap = await createProject(s, attacker, 'hostile hooks');
    for (let i = 0; i < DESTINATIONS; i++) {
      const url = i % 2 === 0 ? `${silent.origin}/silent-${i}` : `${blackhole.origin}/hang-${i}`;
      const res = await s.request('POST', `/v1/projects/${ap.id}/destinations`, { token: attacker.accessToken, body: { type: 'webhook', name: `hang ${i}`, url } });
      expect(res.status, res.text).toBe(201);
    }
    const attackRule = await s.request('POST', '/v1/alerts', { token: attacker.accessToken, body: { projectId: ap.id, name: 'every log', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['webhook'], cooldown: '0s' } });
    expect(attackRule.status, attackRule.text).toBe(201);

    // The victim: another free account with a webhook and email.
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'victim shop');
    expect((await s.request('POST', `/v1/projects/${vp.id}/destinations`, { token: victim.accessToken, body: { type: 'webhook', name: 'on-call', url: `${victimHooks.origin}/ok/victim` } })).status).toBe(201);
    const victimRule = await s.request('POST', '/v1/alerts', { token: victim.accessToken, body: { projectId: vp.id, name: 'victim checkout errors', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['webhook', 'email'] } });
    expect(victimRule.status, victimRule.text).toBe(201);

    let attackStarted = 0;
    let victimMs = 0;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const { report } = await beside(
      s,
      bystander.apiKey,
      async () => {
        attackStarted = Date.now();
        const sending = (async () => {
          for (let i = 0; i < ATTACK_INGESTS; i++) {
            const res = await ingest(s, ap.apiKey, [{ level: 'error', message: `attack ${i}` }]);
            expect(res.status).toBe(202);
            // sleep: pacing, as the attack was made (94 one-log ingests in ~10 s); nothing waits on it.
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        // The attacker's firings pile up first ...
        await waitFor(async () => (await history(attacker, attackRule.body.id)).length >= 20, 30_000, 'the attacker\'s first 20 firings');
        // ... then the victim's rule fires.
        const t0 = Date.now();
        expect((await ingest(s, vp.apiKey, [{ level: 'error', message: 'card declined' }])).status).toBe(202);
        await waitFor(() => victimHooks.got.some((r) => r.path === '/ok/victim'), 30_000, 'the victim\'s webhook');
        await waitFor(() => smtp.mails.some((m) => m.to.includes(victim.email) && m.subject.includes('victim checkout errors')), 30_000, 'the victim\'s alert mail');
        victimMs = Date.now() - t0;
        await sending;
      },
      { label: 'alert destinations that never answer' },
    );
    loop.disable();
    expectUnharmed(report);
    const elapsedMs = Date.now() - attackStarted;
    console.log(
      `[hostile ${engine}] victim webhook and mail delivered ${victimMs} ms after its log, beside the attacker's hanging destinations; attacker requests: ${silent.requests + blackhole.requests} in ${elapsedMs} ms; event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
    );

    const victimEntry = (await history(victim, victimRule.body.id))[0]!;
    await waitFor(async () => ((await history(victim, victimRule.body.id))[0]!.deliveries.every((d) => d.status === 'sent') ? true : undefined), 10_000, 'the victim\'s deliveries recorded as sent');
    expect(victimEntry).toBeDefined();

    // The attacker: every log wrote its entry (history is the record), but only a budget of them notified.
    const entries = await allHistory(attacker, attackRule.body.id);
    expect(entries.length).toBeGreaterThanOrEqual(ATTACK_INGESTS / 2);
    const notified = entries.filter((e) => !e.deliveries.every((d) => d.status === 'skipped' && (d.error ?? '').startsWith('rate limited')));
    const minutes = Math.ceil(elapsedMs / 60_000);
    expect(notified.length).toBeLessThanOrEqual(RULE_NOTIFICATIONS_PER_MINUTE * minutes);
    expect(notified.length).toBeLessThanOrEqual(PROJECT_NOTIFICATIONS_PER_MINUTE * minutes);
    const limited = entries.find((e) => e.deliveries.some((d) => (d.error ?? '').startsWith('rate limited')))!;
    expect(limited.deliveries[0]!.error).toMatch(/^rate limited: /);
    // Each hanging destination is tried BREAKER_FAILURES times in a row, then left alone for its open period (then one probe each time it runs out).
    const requests = silent.requests + blackhole.requests;
    expect(requests).toBeLessThanOrEqual(DESTINATIONS * (BREAKER_FAILURES + Math.ceil(elapsedMs / BREAKER_OPEN_MS)));
  }, 180_000);

  it('a project\'s rules together notify at most PROJECT_NOTIFICATIONS_PER_MINUTE times a minute, each rule at most RULE_NOTIFICATIONS_PER_MINUTE; the rest are written, skipped as rate limited', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'enterprise');
    const p = await createProject(s, a, 'many rules');
    expect((await s.request('POST', `/v1/projects/${p.id}/destinations`, { token: a.accessToken, body: { type: 'webhook', name: 'hook', url: `${victimHooks.origin}/ok/budget-${p.id}` } })).status).toBe(201);
    const RULES = 4;
    const LOGS = 12;
    const rules: string[] = [];
    for (let i = 0; i < RULES; i++) {
      const res = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: `budget ${i}`, condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['webhook'], cooldown: '0s' } });
      expect(res.status, res.text).toBe(201);
      rules.push(res.body.id);
    }
    const started = Date.now();
    // Every log fires every rule: 48 entries.
    for (let i = 0; i < LOGS; i++) {
      expect((await ingest(s, p.apiKey, [{ level: 'error', message: `budget ${i}` }])).status).toBe(202);
      await waitFor(async () => {
        for (const id of rules) if ((await history(a, id)).length < i + 1) return undefined;
        return true;
      }, 15_000, `log ${i}'s entries`);
    }
    const entries = (await Promise.all(rules.map((id) => allHistory(a, id)))).map((list) => list.map((e) => e.deliveries[0]!));
    const minutes = Math.ceil((Date.now() - started) / 60_000);
    expect(entries.flat()).toHaveLength(RULES * LOGS);
    const notified = entries.map((list) => list.filter((d) => !(d.error ?? '').startsWith('rate limited')).length);
    for (const n of notified) expect(n).toBeLessThanOrEqual(RULE_NOTIFICATIONS_PER_MINUTE * minutes);
    const total = notified.reduce((x, y) => x + y, 0);
    expect(total).toBeLessThanOrEqual(PROJECT_NOTIFICATIONS_PER_MINUTE * minutes);
    if (minutes === 1) expect(total).toBe(PROJECT_NOTIFICATIONS_PER_MINUTE);
    const limited = entries.flat().filter((d) => (d.error ?? '').startsWith('rate limited'));
    for (const d of limited) {
      expect(d.status).toBe('skipped');
      expect(d.error).toMatch(/^rate limited: (this rule notified 10 times|the project's alerts notified 30 times) in the last minute$/);
    }
    // What reached the destination: one POST per notified entry, no more.
    await waitFor(() => victimHooks.got.filter((r) => r.path === `/ok/budget-${p.id}`).length >= total, 15_000, 'the notified entries\' webhooks');
    expect(victimHooks.got.filter((r) => r.path === `/ok/budget-${p.id}`).length).toBe(total);
  }, 120_000);

  it('send errors name no address: a refused resolution and a refused connection say what happened without the IP', async () => {
    const a = await signup(s);
    const p = await createProject(s, a, 'errors');
    // This machine's name resolves to a loopback or private address (a send refuses it).
    const hostname = os.hostname();
    expect((await s.request('POST', `/v1/projects/${p.id}/destinations`, { token: a.accessToken, body: { type: 'webhook', name: 'by name', url: `https://${hostname}/hook` } })).status).toBe(201);
    expect((await s.request('POST', `/v1/projects/${p.id}/destinations`, { token: a.accessToken, body: { type: 'webhook', name: 'closed', url: `http://127.0.0.1:${closed}/hook` } })).status).toBe(201);
    const rule = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'errors', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['webhook'] } });
    const res = await s.request('POST', `/v1/alerts/${rule.body.id}/test`, { token: a.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.deliveries).toHaveLength(1);
    const error = res.body.deliveries[0]!.error ?? '';
    expect(error).toContain('by name: refused: ');
    expect(error).toContain('closed: connection refused');
    // No IPv4 or IPv6 address in the text the user sees.
    expect(error).not.toMatch(/\b\d{1,3}(\.\d{1,3}){3}\b/);
    expect(error).not.toMatch(/\b[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}\b/i);
  }, 60_000);

  it('refuses destinations in the special IPv6 and IPv4 ranges (NAT64, 6to4, IPv4-compatible, multicast, site-local, Teredo, documentation, reserved)', async () => {
    const a = await signup(s);
    const p = await createProject(s, a, 'ranges');
    for (const host of ['[::7f00:1]', '[64:ff9b::a00:1]', '[64:ff9b:1::1]', '[2002:7f00:1::1]', '[ff02::1]', '[fec0::1]', '[2001::1]', '[2001:db8::1]', '[100::1]', '224.0.0.1', '240.0.0.1', '255.255.255.255', '198.18.0.1', '192.0.0.8']) {
      const res = await s.request('POST', `/v1/projects/${p.id}/destinations`, { token: a.accessToken, body: { type: 'webhook', url: `https://${host}/hook` } });
      expect(res.status, host).toBe(400);
      expect((errorOf(res).details as { path: string }[])[0]!.path).toBe('/url');
    }
    // An ordinary public address is still accepted.
    expect((await s.request('POST', `/v1/projects/${p.id}/destinations`, { token: a.accessToken, body: { type: 'webhook', url: 'https://[2606:4700::1111]/hook' } })).status).toBe(201);
  });

  it('a member who deletes the account leaves its id in no delivery\'s state', async () => {
    const owner = await signup(s);
    const member = await signup(s);
    const p = await createProject(s, owner, 'team alerts');
    await addMember(s, smtp, owner, { id: p.id, name: 'team alerts' }, member, 'member', PUBLIC_URL);
    const rule = await s.request('POST', '/v1/alerts', { token: owner.accessToken, body: { projectId: p.id, name: 'team fires', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['email'] } });
    expect((await ingest(s, p.apiKey, [{ level: 'error', message: 'boom' }])).status).toBe(202);
    await waitFor(async () => ((await history(owner, rule.body.id))[0]?.deliveries.every((d) => d.status === 'sent') ? true : undefined), 10_000, 'the firing mailed');
    expect(smtp.mails.some((m) => m.to.includes(member.email) && m.subject.includes('team fires'))).toBe(true);
    // A delivery still pending (held by a node for a minute) whose mail already reached both.
    const delivery = await s.database.db.selectFrom('alert_deliveries').innerJoin('alert_history', 'alert_history.id', 'alert_deliveries.history_id').select('alert_deliveries.id').where('alert_history.rule_id', '=', rule.body.id).executeTakeFirstOrThrow();
    await s.database.db.updateTable('alert_deliveries').set({ status: 'pending', state: JSON.stringify({ done: [owner.id, member.id] }), locked_until: s.clock.now() + 60_000 }).where('id', '=', delivery.id).execute();
    expect((await s.request('DELETE', '/v1/account', { token: member.accessToken, body: { password: member.password } })).status).toBe(204);
    const holding = (await scanDatabase(s)).filter((c) => c.text.includes(member.id)).map((c) => `${c.table}.${c.column}`);
    expect(holding).toEqual([]);
    const pending = await s.database.db.selectFrom('alert_deliveries').select('state').where('id', '=', delivery.id).executeTakeFirstOrThrow();
    expect(JSON.parse(pending.state!)).toEqual({ done: [owner.id] });
  }, 60_000);
});

describe('outbound address rules and error texts', () => {
  it('blocks every special-purpose range, IPv6 forms of IPv4 included', () => {
    const blocked = [
      '::7f00:1', '::a00:1', '::1:2', // IPv4-compatible ::/96
      '64:ff9b::7f00:1', '64:ff9b::808:808', // NAT64 64:ff9b::/96 (any embedded address: a NAT64 gateway reaches it from inside)
      '64:ff9b:1::1', // local-use NAT64 64:ff9b:1::/48
      '2002:7f00:1::1', '2002:808:808::1', // 6to4 2002::/16
      'ff02::1', 'ff05::2', 'ff0e::1', // multicast ff00::/8
      'fec0::1', 'feff::1', // site-local fec0::/10
      '2001::1', '2001:0:4136:e378::1', // Teredo 2001::/32
      '2001:db8::1', '3fff::1', // documentation
      '100::1', // discard-only 100::/64
      '::ffff:0:7f00:1', // IPv4-translated ::ffff:0:0:0/96
      '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '192.88.99.1',
    ];
    for (const a of blocked) expect(isBlockedAddress(a), a).toBe(true);
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700::1111', '2a00:1450:4001::1']) expect(isBlockedAddress(a), a).toBe(false);
  });

  it('describes a network error by what happened, never by the address it reached', () => {
    const err = (code: string, message: string) => Object.assign(new Error(message), { code });
    expect(describeSendError(err('ECONNREFUSED', 'connect ECONNREFUSED 10.1.2.3:443'))).toBe('connection refused');
    expect(describeSendError(err('ENOTFOUND', 'getaddrinfo ENOTFOUND internal.corp'))).toBe('the name does not resolve');
    expect(describeSendError(err('EHOSTUNREACH', 'connect EHOSTUNREACH fd00::1:443'))).toBe('host unreachable');
    expect(describeSendError(err('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames: IP: 10.0.0.1 is not in the cert's list"))).toBe('TLS certificate does not match the host');
    expect(describeSendError(err('EWHATEVER', 'something 10.0.0.1'))).toBe('network error (EWHATEVER)');
  });

  it('a project with every one of its slots held and 100 requests queued delays no other project: its first request starts at once, and freed slots go round-robin', async () => {
    const limiter = new FairLimiter(8, 16);
    for (let i = 0; i < 8; i++) await limiter.acquire('attacker');
    const queued = Array.from({ length: 100 }, () => limiter.acquire('attacker'));
    expect(limiter.waiting('attacker')).toBe(100);
    // Not queued behind the attacker: granted in the same turn.
    let granted = false;
    void limiter.acquire('victim').then(() => (granted = true));
    await Promise.resolve();
    expect(granted).toBe(true);
    expect(limiter.running('victim')).toBe(1);
    // The server's cap: past 16 in all, a third project waits, and gets the next freed slot before the attacker's queue does.
    for (let i = 0; i < 7; i++) await limiter.acquire('victim');
    let third = false;
    void limiter.acquire('third').then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    limiter.release('victim');
    await Promise.resolve();
    expect(third).toBe(true);
    expect(limiter.waiting('attacker')).toBe(100);
    limiter.close(new Error('stopping'));
    await Promise.allSettled(queued);
  });

  it('a destination that failed BREAKER_FAILURES times in a row is left alone, tried once when its period ends, and left twice as long if that fails', () => {
    let t = 1_000_000;
    const b = new Breakers(() => t);
    for (let i = 0; i < BREAKER_FAILURES - 1; i++) {
      expect(b.blockedUntil('dst_a')).toBeUndefined();
      b.failed('dst_a');
    }
    expect(b.blockedUntil('dst_a')).toBeUndefined();
    b.failed('dst_a');
    expect(b.blockedUntil('dst_a')).toBe(t + BREAKER_OPEN_MS);
    expect(b.blockedUntil('dst_other')).toBeUndefined();
    // Requests sent before it opened that fail late do not lengthen the period.
    b.failed('dst_a');
    b.failed('dst_a');
    expect(b.blockedUntil('dst_a')).toBe(t + BREAKER_OPEN_MS);
    t += BREAKER_OPEN_MS;
    // One trial; the others keep away while it runs.
    expect(b.blockedUntil('dst_a')).toBeUndefined();
    expect(b.blockedUntil('dst_a')).toBeGreaterThan(t);
    b.failed('dst_a');
    expect(b.blockedUntil('dst_a')).toBe(t + 2 * BREAKER_OPEN_MS);
    for (let i = 0; i < 10; i++) {
      t += BREAKER_MAX_OPEN_MS;
      expect(b.blockedUntil('dst_a')).toBeUndefined();
      b.failed('dst_a');
    }
    expect(b.blockedUntil('dst_a')).toBe(t + BREAKER_MAX_OPEN_MS);
    t += BREAKER_MAX_OPEN_MS;
    expect(b.blockedUntil('dst_a')).toBeUndefined();
    b.succeeded('dst_a');
    expect(b.blockedUntil('dst_a')).toBeUndefined();
    b.failed('dst_a');
    expect(b.blockedUntil('dst_a')).toBeUndefined();
  });
});
