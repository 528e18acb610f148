/**
 * Issue 28: the syslog listeners, driven by util-linux `logger` (RFC 5424 over TCP with octet
 * counting and over UDP, RFC 3164), on both engines: each message is read back through the search
 * API with its fields checked. A node with SYSLOG_DEFAULT_KEY stores what carries no key; a message
 * with a wrong key or none is counted, not stored; a graceful shutdown in the middle of a TCP stream
 * commits every message the server had read. rsyslog (Debian's) relays to the TCP listener with a
 * template that adds the key.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import net from 'node:net';
import os from 'node:os';
import { promisify } from 'node:util';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { createSyslogListeners, SYSLOG_LIMITS } from '../src/features/logs/syslog-listeners.js';
import { describeEngines, request, startServer, useAccount, useProject, useServer, waitFor, type TestServer, type StoredLog } from './harness.js';

const run = promisify(execFile);


async function search(s: TestServer, token: string, projectId: string, q: string): Promise<StoredLog[]> {
  const res = await request(s.url, 'GET', `/v1/projects/${projectId}/logs?limit=100&query=${encodeURIComponent(q)}`, { token });
  expect(res.status).toBe(200);
  return (res.body as { data: StoredLog[] }).data;
}

const ports = (s: TestServer) => (s.app as unknown as { services: { syslogPorts: { tcp?: number; udp?: number } } }).services.syslogPorts;

async function metric(s: TestServer, name: string): Promise<number> {
  const res = await request(s.url, 'GET', '/metrics', { headers: { authorization: 'Bearer scrape-syslog' } });
  let total = 0;
  for (const line of res.text.split('\n')) if (line.startsWith(name)) total += Number(line.split(' ').pop());
  return total;
}

const SYSLOG_ENV = { SYSLOG_TCP_PORT: '0', SYSLOG_UDP_PORT: '0', SYSLOG_HOST: '127.0.0.1', METRICS_TOKEN: 'scrape-syslog' };

describeEngines('syslog', (engine) => {
  const s = useServer(engine, { env: SYSLOG_ENV });
  const account = useAccount(s);
  const project = useProject(s, account);
  // A second node on the same database, whose default key is the project's: for senders that cannot add structured data.
  const withDefault = useServer(engine, () => ({ shareWith: s, env: { ...SYSLOG_ENV, SYSLOG_DEFAULT_KEY: project.apiKey } }));

  const logger = (args: string[]) => run('logger', args);
  const keyArgs = () => ['--sd-id', 'loglane@53595', '--sd-param', `key="${project.apiKey}"`];

  it('RFC 5424 over TCP with octet counting: every field where it belongs', async () => {
    const before = Date.now();
    await logger(['--server', '127.0.0.1', '--port', String(ports(s).tcp), '--tcp', '--octet-count', '--rfc5424', ...keyArgs(), '--tag', 'billing', '--id=4242', '--msgid', 'INV1', '-p', 'local0.err', 'invoice 77 could not be sent']);
    const [log] = await waitFor(async () => {
      const found = await search(s, account.accessToken, project.id, '"invoice 77"');
      return found.length > 0 && found;
    });
    expect(log).toMatchObject({ message: 'invoice 77 could not be sent', level: 'error', source: 'billing', metadata: { facility: 'local0', hostname: os.hostname(), procid: '4242', msgid: 'INV1' } });
    expect(Math.abs(Date.parse(log!.timestamp) - before)).toBeLessThan(60_000);
    // logger's own structured data is kept; the key is not.
    expect(log!.metadata.sd).toHaveProperty('timeQuality');
    expect(JSON.stringify(log)).not.toContain(project.apiKey);
  });

  it('RFC 5424 over UDP', async () => {
    await logger(['-n', '127.0.0.1', '-P', String(ports(s).udp), '-d', '--rfc5424', ...keyArgs(), '-t', 'edge', '-p', 'daemon.warning', 'udp datagram 1']);
    const [log] = await waitFor(async () => {
      const found = await search(s, account.accessToken, project.id, '"udp datagram 1"');
      return found.length > 0 && found;
    });
    expect(log).toMatchObject({ level: 'warn', source: 'edge', metadata: { facility: 'daemon' } });
  });

  it('RFC 3164 without a key is stored under SYSLOG_DEFAULT_KEY, and counted away where there is none', async () => {
    await logger(['-n', '127.0.0.1', '-P', String(ports(withDefault).udp), '-d', '--rfc3164', '-t', 'cron', '-p', 'cron.notice', 'bsd style line']);
    const [log] = await waitFor(async () => {
      const found = await search(s, account.accessToken, project.id, '"bsd style line"');
      return found.length > 0 && found;
    });
    expect(log).toMatchObject({ level: 'info', source: 'cron', metadata: { facility: 'cron', hostname: os.hostname() } });

    const noKeyBefore = await metric(s, 'loglane_syslog_rejected_total{reason="no_key"}');
    await logger(['-n', '127.0.0.1', '-P', String(ports(s).tcp), '-T', '--rfc3164', '-t', 'cron', 'no key here']);
    await waitFor(async () => (await metric(s, 'loglane_syslog_rejected_total{reason="no_key"}')) === noKeyBefore + 1);
    const badKeyBefore = await metric(s, 'loglane_syslog_rejected_total{reason="bad_key"}');
    await logger(['-n', '127.0.0.1', '-P', String(ports(s).tcp), '-T', '--octet-count', '--rfc5424', '--sd-id', 'loglane@53595', '--sd-param', 'key="llk_wrong"', 'wrong key here']);
    await waitFor(async () => (await metric(s, 'loglane_syslog_rejected_total{reason="bad_key"}')) === badKeyBefore + 1, 5000);
    expect(await search(s, account.accessToken, project.id, '"key here"')).toEqual([]);
  });

  it('a graceful shutdown in the middle of a TCP stream commits every message it had read', async () => {
    const node = await startServer(engine, { shareWith: s, env: SYSLOG_ENV });
    let closed = false;
    try {
      const socket = net.connect(ports(node).tcp!, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      const n = 3000;
      let text = '';
      for (let i = 0; i < n; i++) {
        const msg = `<14>1 - host shut - - [loglane key="${project.apiKey}"] shutdown stream ${i}`;
        text += `${Buffer.byteLength(msg)} ${msg}`;
      }
      // The last message is cut in the middle: the server has read only part of it.
      const cut = `<14>1 - host shut - - [loglane key="${project.apiKey}"] never whole`;
      socket.write(text + `${Buffer.byteLength(cut)} ${cut.slice(0, 20)}`);
      await waitFor(async () => (await metric(node, 'loglane_syslog_messages_total')) >= n, 10_000);
      await node.app.close();
      closed = true;
      socket.destroy();
      const stored = await search(s, account.accessToken, project.id, 'shutdown stream');
      // The messages carry no time of their own: they are stamped on receipt, within the last minutes.
      const from = new Date(Date.now() - 600_000).toISOString();
      const stats = await request(s.url, 'GET', `/v1/projects/${project.id}/logs/stats?query=${encodeURIComponent('source:shut')}&from=${from}&interval=1h`, { token: account.accessToken });
      expect(stats.status).toBe(200);
      const count = (stats.body as { buckets: { total: number }[] }).buckets.reduce((a, b) => a + b.total, 0);
      expect(stored.length).toBe(100);
      expect(count).toBe(n);
    } finally {
      if (!closed) await node.app.close();
      await node.database.close().catch(() => {});
    }
  });
});

describe('syslog listeners are off until configured', () => {
  const s = useServer('sqlite');
  it('start nothing without a port', () => {
    expect(ports(s)).toEqual({});
  });
});

/** A free TCP port on 127.0.0.1 (taken and given back). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

describeEngines('syslog relayed by rsyslog', (engine) => {
  const s = useServer(engine, { env: SYSLOG_ENV });
  const account = useAccount(s);
  const project = useProject(s, account);

  it('rsyslog forwards over TCP with a template that adds the key, and every field arrives', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'loglane-rsyslog-'));
    const inPort = await freePort();
    const conf = `
global(workDirectory="${dir}")
module(load="imtcp")
input(type="imtcp" port="${inPort}" address="127.0.0.1")
template(name="LoglaneFormat" type="string" string="<%PRI%>1 %TIMESTAMP:::date-rfc3339% %HOSTNAME% %APP-NAME% %PROCID% %MSGID% [loglane@53595 key=\\"${project.apiKey}\\"] %msg%\\n")
action(type="omfwd" target="127.0.0.1" port="${ports(s).tcp}" protocol="tcp" TCP_Framing="octet-counted" template="LoglaneFormat")
`;
    await fs.writeFile(path.join(dir, 'rsyslog.conf'), conf);
    const rsyslog = spawn('/usr/sbin/rsyslogd', ['-n', '-f', path.join(dir, 'rsyslog.conf'), '-i', path.join(dir, 'rsyslogd.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    rsyslog.stdout.on('data', (d: Buffer) => (output += d.toString()));
    rsyslog.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      // rsyslog listens once it has read its configuration.
      await waitFor(
        () =>
          new Promise<boolean>((resolve) => {
            const probe = net.connect(inPort, '127.0.0.1', () => {
              probe.destroy();
              resolve(true);
            });
            probe.on('error', () => resolve(false));
          }),
        10_000,
        `rsyslogd listening (its output: ${output})`,
      );
      await run('logger', ['-n', '127.0.0.1', '-P', String(inPort), '-T', '--rfc5424', '-t', 'relayed-app', '--id=99', '--msgid', 'R1', '-p', 'mail.crit', 'relayed through rsyslog']);
      const [log] = await waitFor(async () => {
        const found = await search(s, account.accessToken, project.id, '"relayed through rsyslog"');
        return found.length > 0 && found;
      }, 15_000, `the relayed message (rsyslogd said: ${output})`);
      expect(log).toMatchObject({ message: 'relayed through rsyslog', level: 'fatal', source: 'relayed-app', metadata: { facility: 'mail', hostname: os.hostname(), procid: '99', msgid: 'R1' } });
      expect(JSON.stringify(log)).not.toContain(project.apiKey);
    } finally {
      rsyslog.kill('SIGTERM');
      await new Promise((r) => rsyslog.once('exit', r));
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describeEngines('syslog over TLS', (engine) => {
  let dir = '';
  // The listener's certificate, made before the server starts (hooks run in the order declared).
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'loglane-tls-'));
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')]);
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });
  const s = useServer(engine, () => ({ env: { SYSLOG_TLS_PORT: '0', SYSLOG_HOST: '127.0.0.1', SYSLOG_TLS_CERT: path.join(dir, 'cert.pem'), SYSLOG_TLS_KEY: path.join(dir, 'key.pem') } }));
  const account = useAccount(s);
  const project = useProject(s, account);

  it('takes octet-counted RFC 5424 messages over TLS', async () => {
    const port = (s.app as unknown as { services: { syslogPorts: { tls?: number } } }).services.syslogPorts.tls!;
    const ca = await fs.readFile(path.join(dir, 'cert.pem'));
    const socket = tls.connect({ port, host: '127.0.0.1', ca, servername: '127.0.0.1', checkServerIdentity: () => undefined });
    await new Promise((r, j) => socket.once('secureConnect', r).once('error', j));
    const msg = `<30>1 2026-11-28T12:00:00.500Z tls-host secure-app 7 - [loglane key="${project.apiKey}"] over tls`;
    socket.end(`${Buffer.byteLength(msg)} ${msg}`);
    const [log] = await waitFor(async () => {
      const found = await search(s, account.accessToken, project.id, '"over tls"');
      return found.length > 0 && found;
    });
    expect(log).toMatchObject({ message: 'over tls', level: 'info', source: 'secure-app', timestamp: '2026-11-28T12:00:00.500Z', metadata: { facility: 'daemon', hostname: 'tls-host', procid: '7' } });
  });
});

describe('syslog: slow and idle connections', () => {
  const s = useServer('sqlite', { env: SYSLOG_ENV });
  const account = useAccount(s);
  const project = useProject(s, account);
  const stats = () => (s.app as unknown as { services: { syslogStats: () => { connections: number; heldBytes: number } } }).services.syslogStats();

  it('1,000 connections each holding most of a message hold at most a message each, and others are still served', async () => {
    const clients: net.Socket[] = [];
    try {
      const partial = Buffer.alloc(60 * 1024, 0x61);
      for (let i = 0; i < 1000; i++) {
        // From four addresses: one address may hold at most 256 connections (test/hostile-syslog.test.ts).
        const c = net.connect({ port: ports(s).tcp!, host: '127.0.0.1', localAddress: `127.0.0.${10 + (i % 4)}` });
        c.on('error', () => {});
        clients.push(c);
        // A message that never ends (no newline), and one that claims far more than it sends.
        c.write(i % 2 === 0 ? partial : Buffer.concat([Buffer.from('999999999 '), partial]));
      }
      await waitFor(() => stats().connections === 1000 && stats().heldBytes >= 1000 * partial.length, 20_000, '1,000 connections holding their partial messages');
      expect(stats().heldBytes).toBeLessThanOrEqual(1000 * (64 * 1024 + 12));
      // Meanwhile another sender's message is stored.
      await run('logger', ['-n', '127.0.0.1', '-P', String(ports(s).tcp), '-T', '--octet-count', '--rfc5424', '--sd-id', 'loglane@53595', '--sd-param', `key="${project.apiKey}"`, 'still served']);
      await waitFor(async () => (await search(s, account.accessToken, project.id, '"still served"')).length === 1);
    } finally {
      for (const c of clients) c.destroy();
    }
    await waitFor(() => stats().connections === 0, 10_000, 'the connections closed');
    expect(stats().heldBytes).toBe(0);
  });
});

describeEngines('syslog over the plan\'s rate', (engine) => {
  // 2,000 logs a second (a burst of 10,000 first): a TCP sender is slowed, a UDP one loses what is over.
  const s = useServer(engine, { env: { ...SYSLOG_ENV, INGEST_RATE_FREE: '2000' } });
  const account = useAccount(s);
  const project = useProject(s, account);

  it('a TCP sender over the rate is slowed, not dropped: every message is stored', async () => {
    const n = 16_000;
    const socket = net.connect(ports(s).tcp!, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    for (let i = 0; i < n; i++) {
      const msg = `<14>1 - host paced - - [loglane key="${project.apiKey}"] paced ${i}`;
      text += `${Buffer.byteLength(msg)} ${msg}`;
    }
    socket.end(text);
    const from = new Date(Date.now() - 600_000).toISOString();
    const stored = async () => {
      const res = await request(s.url, 'GET', `/v1/projects/${project.id}/logs/stats?query=${encodeURIComponent('source:paced')}&from=${from}&interval=1h`, { token: account.accessToken });
      return (res.body as { buckets: { total: number }[] }).buckets.reduce((a, b) => a + b.total, 0);
    };
    await waitFor(async () => (await stored()) === n, 30_000, `all ${n} messages stored`);
    expect(await metric(s, 'loglane_syslog_rejected_total{reason="dropped"}')).toBe(0);
  });

  it('UDP over the rate: what is over is dropped and counted', async () => {
    const droppedBefore = await metric(s, 'loglane_syslog_rejected_total{reason="dropped"}');
    const { createSocket } = await import('node:dgram');
    const udp = createSocket('udp4');
    // 14,000 against the free plan's bucket of 10,000 (1,000 a second): sent a thousand at a time
    // without waiting for each, so that a busy machine's slow sending cannot let the bucket refill
    // by the 4,000 that are over it.
    const n = 14_000;
    for (let i = 0; i < n; i += 1000) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, k) => {
          const msg = Buffer.from(`<14>1 - host burst - - [loglane key="${project.apiKey}"] burst ${i + k}`);
          return new Promise<void>((r, j) => udp.send(msg, ports(s).udp!, '127.0.0.1', (err) => (err ? j(err) : r())));
        }),
      );
    }
    udp.close();
    // Some are over the rate: counted as dropped, never stored, never an error.
    await waitFor(async () => (await metric(s, 'loglane_syslog_rejected_total{reason="dropped"}')) > droppedBefore, 10_000, 'datagrams over the rate counted');
  });
});

describe('syslog: a batch too large for one request', () => {
  it('is halved, and when the first half is refused for the rate the second goes back behind it untried: the messages are stored in the order they were sent', async () => {
    const stored: string[] = [];
    let rateRefusals = 0;
    const counter = { inc: () => {} };
    const logs = {
      // At most 2 logs a request; the first request that fits is refused for the rate, once.
      async ingest(_projectId: string, _plan: string, items: { value: { message: string } }[]) {
        if (items.length > 2) throw new AppError('PAYLOAD_TOO_LARGE', 'too many');
        if (rateRefusals === 0) {
          rateRefusals++;
          throw new AppError('RATE_LIMITED', 'over the rate', { retryAfter: 0 });
        }
        for (const item of items) stored.push(item.value.message);
        return { result: { accepted: items.length, rejected: [] } };
      },
    };
    const projects = {
      keyCouldExist: () => true,
      verifyApiKey: async () => ({ ok: true, projectId: 'p', plan: 'free' }),
    };
    const quiet = { warn() {}, info() {}, error() {} };
    const listeners = createSyslogListeners({
      config: { host: '127.0.0.1', tcpPort: 0, udpPort: undefined, tlsPort: undefined, tlsCert: undefined, tlsKey: undefined, defaultKey: undefined },
      logs: logs as never,
      projects: projects as never,
      metrics: { syslogMessages: counter, syslogRejected: counter, logsAccepted: counter } as never,
      log: quiet as never,
      now: () => Date.now(),
    });
    const saved = SYSLOG_LIMITS.sliceMessages;
    SYSLOG_LIMITS.sliceMessages = 8;
    try {
      const { tcp } = await listeners.start();
      const socket = net.connect(tcp!, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      let text = '';
      for (let i = 0; i < 8; i++) {
        const msg = `<14>1 - host order - - [loglane key="llk_ordered"] m${i}`;
        text += `${Buffer.byteLength(msg)} ${msg}`;
      }
      socket.end(text);
      await waitFor(() => stored.length === 8, 10_000, 'all 8 stored');
      expect(rateRefusals).toBe(1);
      expect(stored).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    } finally {
      SYSLOG_LIMITS.sliceMessages = saved;
      await listeners.stop();
    }
  });
});
