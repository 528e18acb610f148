/**
 * Made-up API keys. A key's checksum was a CRC32, so anyone could compute keys that passed it, and
 * each cost a database lookup; the syslog UDP listener's flush looked them all up at once. A flood
 * of them froze the server: the bystander's /healthz waited up to 35 s on SQLite (every release of
 * Kysely's connection lock woke every waiting query, O(N²)), 11 s on PostgreSQL (thousands of
 * lookups queued in the pool ahead of every tenant's queries). Now a new key's checksum is keyed
 * with the server's secret, a key with only a CRC32 reaches the database only when it is one that
 * was handed out, an unknown key is remembered as such, and the SQLite connection is handed to one
 * waiter at a time. Keys handed out with a CRC32 still work, and a rotation on one node is obeyed by
 * every other at once.
 */
import dgram from 'node:dgram';
import { expect, it } from 'vitest';
import { beside, expectUnharmed } from './hostile.js';
import { createProject, describeEngines, errorOf, ingest, ISSUED_SECRETS, request, signup, startServer, useServer, waitFor, type StoredLog, type TestServer } from './harness.js';
import * as listeners from '../src/features/logs/syslog-listeners.js';
import { encryptApiKey, hashApiKey, legacyApiKey } from '../src/features/projects/api-keys.js';
import { replaceApiKey } from '../src/features/projects/repository.js';
import { deriveKey, resolveSecretKey } from '../src/secrets.js';

const METRICS_TOKEN = 'scrape-hostile-keys';
const SYSLOG_ENV = { SYSLOG_UDP_PORT: '0', SYSLOG_HOST: '127.0.0.1', METRICS_TOKEN };

const lookups = (s: TestServer) => s.app.services.projects.keyLookups();
const udpPort = (s: TestServer) => s.app.services.syslogPorts.udp!;

async function metric(s: TestServer, name: string): Promise<number> {
  const res = await request(s.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  let total = 0;
  for (const line of res.text.split('\n')) if (line.startsWith(name)) total += Number(line.split(' ').pop());
  return total;
}

const syslogLine = (key: string, text: string) => `<14>1 - attacker app - - [loglane@53595 key="${key}"] ${text}`;

/** Sends the datagrams from `from` (a loopback address), `perTurn` at a time. */
async function sendDatagrams(port: number, from: string, messages: string[], perTurn = 100): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, from, resolve));
  try {
    for (let i = 0; i < messages.length; i += perTurn) {
      await Promise.all(messages.slice(i, i + perTurn).map((m) => new Promise<void>((resolve, reject) => socket.send(m, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())))));
      // sleep: the attacker paces its datagrams a little, so that the kernel's receive buffer, not the server, is never what drops them
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    socket.close();
  }
}

/** Replaces the project's key with `key` (digest and ciphertext), as a server that still made CRC32 keys stored one. */
async function storeLegacyKey(s: TestServer, projectId: string, key: string): Promise<void> {
  const sealed = encryptApiKey(deriveKey(resolveSecretKey(s.config).key, 'api-key-encryption'), projectId, key);
  await replaceApiKey(s.database.db, projectId, { hash: hashApiKey(key), ciphertext: sealed }, s.clock.now());
}

async function search(s: TestServer, token: string, projectId: string, q: string): Promise<StoredLog[]> {
  const res = await request(s.url, 'GET', `/v1/projects/${projectId}/logs?limit=100&query=${encodeURIComponent(q)}`, { token });
  expect(res.status).toBe(200);
  return (res.body as { data: StoredLog[] }).data;
}

describeEngines('hostile keys', (engine) => {
  const s = useServer(engine, { env: SYSLOG_ENV });

  it('HTTP: 2,000 ingest requests with made-up keys that pass a CRC32 (the old forgery), 8 at a time: every one 401 INVALID_API_KEY, none looked up in the database, the bystander unharmed', async () => {
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    const forged = Array.from({ length: 2000 }, legacyApiKey);
    const before = lookups(s);

    const { result, report } = await beside(
      s,
      vp.apiKey,
      async () => {
        const answers: { status: number; code: string }[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < forged.length) {
              const res = await ingest(s, forged[next++]!, [{ message: 'forged' }]);
              answers.push({ status: res.status, code: res.status >= 400 ? errorOf(res).code : '' });
            }
          }),
        );
        return answers;
      },
      { label: 'made-up keys over HTTP ingest', minMs: 2000 },
    );
    const after = lookups(s);
    console.log(`[hostile ${engine}] made-up keys over HTTP: ${result.length} requests, ${after.keys - before.keys} keys looked up in ${after.statements - before.statements} statements (the bystander made ${report.requests} requests)`);

    expect(result).toHaveLength(forged.length);
    for (const answer of result) expect(answer).toEqual({ status: 401, code: 'INVALID_API_KEY' });
    // The bystander's own key is looked up once a request; not one of the 2,000 made-up keys is.
    expect(after.keys - before.keys).toBeLessThanOrEqual(report.requests);
    expect(after.scans - before.scans).toBeLessThanOrEqual(1);
    expectUnharmed(report);
    const stored = await s.request('GET', `/v1/projects/${vp.id}`, { token: victim.accessToken });
    expect(stored.body.logCount).toBe(report.acknowledgedLogs);
  }, 120_000);

  it('UDP syslog: 3,000 datagrams from 6 addresses, each with its own made-up key, looked up in one flush: every message counted as bad_key, none looked up in the database, the bystander unharmed, a real key\'s message stored after', async () => {
    const victim = await signup(s);
    const vp = await createProject(s, victim, 'bystander');
    const sender = await signup(s);
    const sp = await createProject(s, sender, 'real syslog sender');
    const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'];
    const perAddress = 500;
    const attack = addresses.map((_, a) => Array.from({ length: perAddress }, (_, i) => syslogLine(legacyApiKey(), `forged ${a}-${i}`)));

    // The listener's own bound on lookups per flush is lifted: every made-up key goes to the
    // projects service in one flush, as it did when the flood froze the server.
    const limits = (listeners as { SYSLOG_LIMITS?: Record<string, number> }).SYSLOG_LIMITS;
    const saved = limits ? { ...limits } : undefined;
    if (limits) Object.assign(limits, { lookupsPerFlush: 1_000_000, lookupsPerAddress: 1_000_000 });
    try {
      const received0 = await metric(s, 'loglane_syslog_messages_total{transport="udp"}');
      const badKey0 = await metric(s, 'loglane_syslog_rejected_total{reason="bad_key"}');
      const before = lookups(s);

      const { result, report } = await beside(
        s,
        vp.apiKey,
        async () => {
          await Promise.all(addresses.map((from, a) => sendDatagrams(udpPort(s), from, attack[a]!)));
          // Every datagram the listener read is counted away as a bad key (once it has read them all:
          // what it has read stays the same from one look to the next).
          let lastReceived = -1;
          return waitFor(
            async () => {
              const badKey = (await metric(s, 'loglane_syslog_rejected_total{reason="bad_key"}')) - badKey0;
              const received = (await metric(s, 'loglane_syslog_messages_total{transport="udp"}')) - received0;
              const settled = received === lastReceived;
              lastReceived = received;
              return settled && received > 0 && badKey >= received && { received, badKey };
            },
            60_000,
            'every datagram read to be counted as bad_key',
            100,
          );
        },
        { label: 'made-up keys over syslog UDP', minMs: 2000 },
      );
      const after = lookups(s);
      console.log(`[hostile ${engine}] made-up keys over syslog UDP: ${result.received} of ${addresses.length * perAddress} datagrams read, ${result.badKey} counted as bad_key, ${after.keys - before.keys} keys looked up in ${after.statements - before.statements} statements (the bystander made ${report.requests} requests)`);

      // The loopback may drop a few datagrams before the listener reads them, never most.
      expect(result.received).toBeGreaterThan((addresses.length * perAddress) / 2);
      expect(result.badKey).toBe(result.received);
      expect(after.keys - before.keys).toBeLessThanOrEqual(report.requests);
      expect(after.scans - before.scans).toBeLessThanOrEqual(1);
      expectUnharmed(report);
      const stored = await s.request('GET', `/v1/projects/${vp.id}`, { token: victim.accessToken });
      expect(stored.body.logCount).toBe(report.acknowledgedLogs);
    } finally {
      if (limits && saved) Object.assign(limits, saved);
    }

    // The listener goes on: a message under a real key is stored.
    await sendDatagrams(udpPort(s), '127.0.0.1', [syslogLine(sp.apiKey, 'after the made-up keys')]);
    await waitFor(async () => (await search(s, sender.accessToken, sp.id, '"after the made-up keys"')).length === 1, 15_000, 'the real key\'s message to be stored');
  }, 180_000);

  it('a key handed out with a CRC32 checksum (before they were keyed) still ingests, over HTTP and syslog, on a node started after it; rotated on one node it is refused by the other at once, and the new key works on both', async () => {
    const owner = await signup(s);
    const p = await createProject(s, owner, 'old key');
    const old = legacyApiKey();
    ISSUED_SECRETS.add(old);
    await storeLegacyKey(s, p.id, old);

    const b = await startServer(engine, { shareWith: s, env: SYSLOG_ENV });
    try {
      const before = lookups(b);
      expect((await ingest(b, old, [{ message: 'sent with the old key' }])).status).toBe(202);
      await sendDatagrams(udpPort(b), '127.0.0.1', [syslogLine(old, 'syslog with the old key')]);
      await waitFor(async () => (await search(s, owner.accessToken, p.id, '"syslog with the old key"')).length === 1, 15_000, 'the old key\'s syslog message to be stored');
      // Looked up in the database (the key itself decides), the set of old keys read only at b's start.
      expect(lookups(b).keys - before.keys).toBeGreaterThan(0);
      expect(lookups(b).scans - before.scans).toBe(0);

      const rotated = await s.request('POST', `/v1/projects/${p.id}/rotate-key`, { token: owner.accessToken });
      expect(rotated.status).toBe(200);
      const fresh = rotated.body.apiKey;
      ISSUED_SECRETS.add(fresh);
      const refused = await ingest(b, old, [{ message: 'the old key after its rotation' }]);
      expect(refused.status).toBe(401);
      expect(errorOf(refused).code).toBe('INVALID_API_KEY');
      expect(await b.app.services.projects.verifyApiKey(old)).toEqual({ ok: false, reason: 'unknown' });
      for (const node of [s, b]) expect((await ingest(node, fresh, [{ message: 'the new key' }])).status).toBe(202);

      // And a key with a keyed checksum, rotated on b, is refused by s at once.
      const again = await b.request('POST', `/v1/projects/${p.id}/rotate-key`, { token: owner.accessToken });
      expect(again.status).toBe(200);
      ISSUED_SECRETS.add(again.body.apiKey);
      expect((await ingest(s, fresh, [{ message: 'rotated away' }])).status).toBe(401);
      expect((await ingest(s, again.body.apiKey, [{ message: 'the newest key' }])).status).toBe(202);
    } finally {
      await b.close();
    }
  }, 120_000);
});
