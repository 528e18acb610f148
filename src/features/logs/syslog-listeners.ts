/**
 * The syslog listeners (docs/integrations.md, "Syslog"): TCP (RFC 6587 framing), UDP (a message a
 * datagram) and TLS, each off until its port is set. Messages are read (ingest/syslog.ts), grouped
 * by project key, and stored through the same ingest path as POST /v1/logs, a batch per key at
 * least every FLUSH_MS: syslog has no acknowledgement, so a message received is committed within
 * a second, and `stop` commits everything received before it returns.
 *
 * What one sender can hold: a TCP or TLS connection holds at most one message's bytes while it
 * waits for the rest (64 KiB), and at most PAUSE_AT messages not yet committed: past that its
 * socket is paused until they are (TCP's own back-pressure slows the sender; nothing is dropped),
 * which is also how a sender over its plan's rate is slowed. A UDP message over the rate, or with
 * the server overloaded, has no sender to slow: it is dropped and counted.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../metrics.js';
import type { ProjectsService } from '../projects/service.js';
import type { BodyItem } from './ingest/body.js';
import { MAX_SYSLOG_BYTES, parseSyslog, SyslogFramer } from './ingest/syslog.js';
import type { LogsService } from './service.js';

/** A batch per key is committed at least this often. */
const FLUSH_MS = 200;
/** A key's batch is committed at once when it holds this many messages. */
const BATCH_MESSAGES = 2000;
/** A connection with this many messages not yet committed is paused until they are. */
const PAUSE_AT = 4000;
/** Datagrams waiting for their commit, at most: past it UDP messages are dropped and counted (a datagram has no sender to slow). */
export const MAX_PENDING_DATAGRAMS = 50_000;
/** Connections at once, per listener. */
export const MAX_SYSLOG_CONNECTIONS = 4096;
/** How long a key's check is remembered (a revoked key stops working within this). */
const KEY_CACHE_MS = 10_000;
/** A reason's first refusal is logged, then at most one a minute. */
const LOG_EVERY_MS = 60_000;

type Transport = 'tcp' | 'udp' | 'tls';

/** A connection's share of what waits: its messages not yet committed, and a way to pause it. */
interface Sender {
  waiting: number;
  pause(): void;
  resume(): void;
}

interface Pending {
  item: BodyItem;
  sender: Sender | undefined;
}

export interface SyslogListeners {
  /** Starts the configured listeners; the ports they listen on (a port of 0 in the configuration takes a free one). */
  start(): Promise<{ tcp?: number; udp?: number; tls?: number }>;
  /** Stops listening and reading, and commits every message received so far. */
  stop(): Promise<void>;
  /** Open connections, and the bytes they hold for messages not yet whole (each at most MAX_SYSLOG_BYTES). */
  stats(): { connections: number; heldBytes: number };
}

export function createSyslogListeners(deps: { config: Config['syslog']; logs: LogsService; projects: ProjectsService; metrics: Metrics; log: FastifyBaseLogger; now: () => number }): SyslogListeners {
  const { config, logs, projects, metrics, log, now } = deps;
  const batches = new Map<string, Pending[]>();
  const keys = new Map<string, { at: number; check: Awaited<ReturnType<ProjectsService['verifyApiKey']>> }>();
  const lastLogged = new Map<string, number>();
  /** Open connections, each with what ends it (its last bytes read as messages) and its framer. */
  const sockets = new Map<net.Socket, () => void>();
  const framers = new Map<net.Socket, SyslogFramer>();
  const servers: (net.Server | dgram.Socket)[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  /** Datagrams in `batches` (streams are bounded by pausing their senders). */
  let pendingDatagrams = 0;
  let stopping = false;

  function refuse(reason: 'no_key' | 'bad_key' | 'refused' | 'dropped', n: number, detail: string): void {
    metrics.syslogRejected.inc({ reason }, n);
    const last = lastLogged.get(reason) ?? 0;
    if (now() - last >= LOG_EVERY_MS) {
      lastLogged.set(reason, now());
      log.warn({ reason, messages: n }, `syslog messages not stored: ${detail}`);
    }
  }

  /** Reads one message and queues it under its key. */
  function receive(bytes: Buffer, truncated: boolean, transport: Transport, sender: Sender | undefined): void {
    metrics.syslogMessages.inc({ transport });
    const { key, log: record } = parseSyslog(bytes.toString('utf8'), now(), truncated);
    const k = key ?? config.defaultKey;
    if (k === undefined) {
      refuse('no_key', 1, 'a message carried no key ([loglane@… key="…"] in its structured data) and SYSLOG_DEFAULT_KEY is not set');
      return;
    }
    if (!sender) {
      if (pendingDatagrams >= MAX_PENDING_DATAGRAMS) {
        refuse('dropped', 1, 'datagrams arrived faster than they could be stored');
        return;
      }
      pendingDatagrams++;
    }
    let batch = batches.get(k);
    if (!batch) batches.set(k, (batch = []));
    batch.push({ item: { value: record }, sender });
    if (sender && ++sender.waiting === PAUSE_AT) sender.pause();
    if (batch.length >= BATCH_MESSAGES) void flush();
  }

  async function checkKey(key: string) {
    const cached = keys.get(key);
    if (cached && now() - cached.at < KEY_CACHE_MS) return cached.check;
    const check = await projects.verifyApiKey(key);
    keys.set(key, { at: now(), check });
    if (keys.size > 10_000) keys.delete(keys.keys().next().value!);
    return check;
  }

  function settle(pending: Pending[]): void {
    for (const p of pending) {
      const s = p.sender;
      if (!s) pendingDatagrams--;
      else if (--s.waiting === PAUSE_AT - 1) s.resume();
    }
  }

  /** Keys whose batch was refused for the rate or the load: not tried again before then. */
  const notBefore = new Map<string, number>();

  /** Commits one key's batch; a batch refused for the rate or the load goes back to wait (TCP) or is dropped (UDP). */
  async function commit(key: string, pending: Pending[]): Promise<void> {
    try {
      // A failure here (the database) is one like the store's below: streams wait, datagrams are counted away.
      const check = await checkKey(key);
      if (!check.ok) {
        refuse('bad_key', pending.length, 'a message carried a key that is not a project\'s');
        settle(pending);
        return;
      }
      const { result } = await logs.ingest(check.projectId, check.plan, pending.map((p) => p.item));
      if (result.rejected.length > 0) refuse('refused', result.rejected.length, result.rejected[0]!.message);
      metrics.logsAccepted.inc({ endpoint: 'syslog' }, result.accepted);
      settle(pending);
    } catch (err) {
      if (err instanceof AppError && err.code === 'VALIDATION_ERROR') {
        refuse('refused', pending.length, err.message);
        settle(pending);
        return;
      }
      const app = err instanceof AppError ? err : undefined;
      if (!app) log.warn({ err }, 'syslog messages could not be stored; retrying');
      // Messages of a stream wait (their senders stay paused past PAUSE_AT); datagrams cannot.
      const streamed = pending.filter((p) => p.sender !== undefined);
      const datagrams = pending.filter((p) => p.sender === undefined);
      if (datagrams.length > 0) refuse('dropped', datagrams.length, app ? app.message : 'the store failed');
      settle(datagrams);
      if (streamed.length === 0) return;
      if (app?.code === 'PAYLOAD_TOO_LARGE' && streamed.length > 1) {
        // Too much for one batch: halves, each on its own.
        const half = Math.ceil(streamed.length / 2);
        await commit(key, streamed.slice(0, half));
        await commit(key, streamed.slice(half));
        return;
      }
      if (stopping) {
        refuse('dropped', streamed.length, 'the server stopped while they waited for their plan rate or the store');
        settle(streamed);
        return;
      }
      notBefore.set(key, now() + Math.min(5000, app?.retryAfter !== undefined ? app.retryAfter * 1000 : 1000));
      batches.set(key, [...streamed, ...(batches.get(key) ?? [])]);
    }
  }

  /** Commits every key's batch that may go now, each key on its own (one key's wait holds up no other); one flush at a time. */
  function flush(): Promise<void> {
    flushing ??= (async () => {
      try {
        const round = [...batches].filter(([key]) => stopping || (notBefore.get(key) ?? 0) <= now());
        for (const [key] of round) {
          batches.delete(key);
          notBefore.delete(key);
        }
        await Promise.all(round.map(([key, pending]) => commit(key, pending).catch((err: unknown) => log.error({ err }, 'syslog batch failed'))));
      } finally {
        flushing = undefined;
      }
    })();
    return flushing;
  }

  function onStream(socket: net.Socket, transport: Transport): void {
    if (stopping) {
      socket.destroy();
      return;
    }
    const framer = new SyslogFramer();
    framers.set(socket, framer);
    const sender: Sender = { waiting: 0, pause: () => socket.pause(), resume: () => socket.resume() };
    let ended = false;
    const finish = () => {
      if (ended) return;
      ended = true;
      for (const f of framer.end()) receive(f.bytes, f.truncated, transport, sender);
    };
    sockets.set(socket, () => {
      // Read already, held by the stream while it was paused: received, so stored.
      for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
        for (const f of framer.push(chunk)) receive(f.bytes, f.truncated, transport, sender);
      }
      finish();
    });
    socket.on('data', (chunk: Buffer) => {
      for (const f of framer.push(chunk)) receive(f.bytes, f.truncated, transport, sender);
    });
    socket.on('end', () => {
      finish();
      socket.end();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      framers.delete(socket);
    });
  }

  const listen = (server: net.Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.maxConnections = MAX_SYSLOG_CONNECTIONS;
      server.once('error', reject);
      server.listen(port, config.host, () => resolve((server.address() as net.AddressInfo).port));
    });

  return {
    stats() {
      let heldBytes = 0;
      for (const f of framers.values()) heldBytes += f.held;
      return { connections: framers.size, heldBytes };
    },

    async start() {
      const ports: { tcp?: number; udp?: number; tls?: number } = {};
      if (config.tcpPort !== undefined) {
        const server = net.createServer((s) => onStream(s, 'tcp'));
        servers.push(server);
        ports.tcp = await listen(server, config.tcpPort);
      }
      if (config.tlsPort !== undefined) {
        const server = tls.createServer({ cert: fs.readFileSync(config.tlsCert!), key: fs.readFileSync(config.tlsKey!) }, (s) => onStream(s, 'tls'));
        servers.push(server);
        ports.tls = await listen(server, config.tlsPort);
      }
      if (config.udpPort !== undefined) {
        const socket = dgram.createSocket({ type: config.host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 4 * 1024 * 1024 });
        servers.push(socket);
        socket.on('message', (msg) => {
          if (!stopping) receive(msg.length > MAX_SYSLOG_BYTES ? msg.subarray(0, MAX_SYSLOG_BYTES) : msg, msg.length > MAX_SYSLOG_BYTES, 'udp', undefined);
        });
        ports.udp = await new Promise<number>((resolve, reject) => {
          socket.once('error', reject);
          socket.bind(config.udpPort, config.host, () => resolve(socket.address().port));
        });
      }
      if (servers.length > 0) {
        timer = setInterval(() => void flush(), FLUSH_MS);
        timer.unref();
        log.info({ ...ports, host: config.host }, 'syslog listeners started');
      }
      return ports;
    },

    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      // No new connections or datagrams; what the open connections already sent is read to its end
      // of what has arrived, then they are closed.
      const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => (s instanceof net.Server ? s.close(() => resolve()) : s.close(() => resolve())))));
      for (const [socket, end] of sockets) {
        socket.pause();
        end();
        socket.destroy();
      }
      sockets.clear();
      await closed;
      await flushing;
      await flush();
    },
  };
}
