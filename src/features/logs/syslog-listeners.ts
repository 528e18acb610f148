/**
 * The syslog listeners (docs/integrations.md, "Syslog"): TCP (RFC 6587 framing), UDP (a message a
 * datagram) and TLS, each off until its port is set. Messages are read (ingest/syslog.ts), grouped
 * by project key, and stored through the same ingest path as POST /v1/logs: syslog has no
 * acknowledgement, so a message received is committed within a second when its plan's rate allows,
 * and `stop` commits (or counts away) everything received before it returns.
 *
 * What one sender, or one key, can hold (SYSLOG_LIMITS, each figure there):
 * - A key's messages waiting for their commit form its backlog, committed in slices the plan's
 *   rate bucket can always take (a bucket holds at least 10,000 logs; a slice is at most 2,000
 *   messages and 4 MiB), one slice per key per flush. A slice refused for the rate or the load goes
 *   back to the front and is tried again after the wait the refusal named; a slice is never larger
 *   than what the bucket could ever admit, so it always goes in the end.
 * - A key's backlog is bounded in messages and bytes: when full, every connection with messages in
 *   it is paused (TCP's own back-pressure slows the senders; nothing is dropped) until a slice is
 *   committed. A connection, and an address (all its connections), have bounds of their own on
 *   messages and bytes waiting, past which only they are paused: one address never reaches the bound
 *   of all streamed messages together, past which every connection is paused. A datagram past a
 *   bound, or for a key waiting out its rate, has no sender to slow: it is dropped and counted.
 * - What a closed connection leaves waits like the rest, but at most ORPHAN_WAIT after the close:
 *   past that it is dropped and counted, never held for ever.
 * - Connections: at most a number per client address (an IPv6 client's /64) as well as per listener;
 *   a connection that has sent no complete message within FIRST_MESSAGE ms is closed (for TLS the
 *   handshake is part of that; one we paused meanwhile gets its time again), and any other after
 *   IDLE ms without a byte (unless it is paused by us). TLS handshakes are rate-limited per address,
 *   and datagrams too, before they are read.
 * - Keys: one surely no project's (projects.keyCouldExist) is refused as it is read. Each other is
 *   looked up at most once per KEY_CACHE (known) or UNKNOWN_KEY_CACHE (unknown or refused: messages
 *   carrying it are counted away at once), and a flush looks up at most LOOKUPS_PER_FLUSH keys not
 *   yet known, at most LOOKUPS_PER_ADDRESS of them first sent from one address: the rest wait for
 *   the next flush, so one sender's made-up keys cannot hold up a new tenant's.
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
import { decodeSyslog, MAX_SYSLOG_BYTES, parseSyslog, SyslogFramer } from './ingest/syslog.js';
import type { LogsService } from './service.js';

/**
 * The listeners' bounds. Read when used, so a test may lower a time or a rate for the length of a
 * test (and put it back); nothing else changes them.
 */
export const SYSLOG_LIMITS = {
  /** A key's slices are committed at least this often. */
  flushMs: 200,
  /** A key's backlog is committed in slices of at most this many messages… */
  sliceMessages: 2000,
  /** …and this many bytes of message text. */
  sliceBytes: 4 * 1024 * 1024,
  /** A key's backlog, at most (its connections are paused past it; datagrams dropped). */
  keyMessages: 10_000,
  keyBytes: 16 * 1024 * 1024,
  /** All streamed messages waiting, every key together (every connection is paused past it). */
  streamMessages: 100_000,
  streamBytes: 128 * 1024 * 1024,
  /** Streamed messages waiting from one connection (it is paused past it)… */
  connectionMessages: 5_000,
  connectionBytes: 8 * 1024 * 1024,
  /** …and from one address, all its connections together (all of them paused past it): one address never reaches the bound of all streams. */
  addressMessages: 20_000,
  addressBytes: 32 * 1024 * 1024,
  /** All datagrams waiting, every key together (dropped past it). */
  datagramMessages: 50_000,
  datagramBytes: 64 * 1024 * 1024,
  /** Keys waiting with a backlog at once: a datagram of a further key is dropped. */
  waitingKeys: 10_000,
  /** How long the messages of a closed connection may wait for their rate before they are dropped and counted. */
  orphanWaitMs: 30_000,
  /** Connections at once per listener, all clients together… */
  connections: 4096,
  /** …and from one address (an IPv6 client's /64). */
  connectionsPerAddress: 256,
  /** A connection that has sent no complete message (TLS: finished no handshake) within this is closed. */
  firstMessageMs: 30_000,
  /** A connection that has sent nothing for this long is closed (one we paused is not idle). */
  idleMs: 15 * 60_000,
  /** TLS handshakes one address may start, a second (and at once, as a burst). */
  tlsHandshakesPerSecond: 20,
  tlsHandshakeBurst: 40,
  /** Datagrams one address may send, a second (and at once, as a burst); checked before reading. */
  datagramsPerSecond: 10_000,
  datagramBurst: 20_000,
  /** Addresses whose datagram and handshake rates are remembered (the oldest is forgotten). */
  addresses: 10_000,
  /** Keys not yet known that one flush looks up, in all, and first sent from one address. */
  lookupsPerFlush: 64,
  lookupsPerAddress: 8,
  /** How long a key's check is remembered when it is a project's (a revoked key stops working within this)… */
  keyCacheMs: 10_000,
  /** …and when it is not (unknown or revoked): messages carrying it are counted away without a lookup. */
  unknownKeyCacheMs: 60_000,
  /** Keys remembered, each kind. */
  knownKeys: 10_000,
  unknownKeys: 50_000,
};

/** Connections at once, per listener. */
export const MAX_SYSLOG_CONNECTIONS = SYSLOG_LIMITS.connections;
/** Datagrams waiting for their commit, at most. */
export const MAX_PENDING_DATAGRAMS = SYSLOG_LIMITS.datagramMessages;
/** A reason's first refusal is logged, then at most one a minute. */
const LOG_EVERY_MS = 60_000;
/** What a waiting message is counted as beyond its text (its log's object). */
const MESSAGE_OVERHEAD = 200;

type Transport = 'tcp' | 'udp' | 'tls';
type Reason = 'no_key' | 'bad_key' | 'bad_key_element' | 'refused' | 'dropped' | 'address_rate';

/** A connection: its messages waiting in each key's backlog, and whether we paused it. */
interface Sender {
  socket: net.Socket;
  address: string;
  backlogs: Map<Backlog, number>;
  /** How many of those backlogs are full. */
  fullBacklogs: number;
  paused: boolean;
  closedAt: number | undefined;
  /** Its messages waiting (in any backlog), and their bytes. */
  messages: number;
  bytes: number;
}

/** What one address's connections have waiting, all of them together (closed ones' messages too, while they wait). */
interface AddressLoad {
  messages: number;
  bytes: number;
  full: boolean;
}

interface Pending {
  item: BodyItem;
  sender: Sender | undefined;
  bytes: number;
}

/** A key's messages waiting for their commit, in order; counts include a slice being committed. */
interface Backlog {
  key: string;
  /** Where its first waiting message came from (lookups are shared out by address). */
  address: string;
  items: Pending[];
  messages: number;
  bytes: number;
  full: boolean;
  /** Not tried again before this (a refusal for the rate or the load). */
  notBefore: number;
  /** A slice of it is being committed. */
  busy: boolean;
}

type Check = Awaited<ReturnType<ProjectsService['verifyApiKey']>>;

export interface SyslogStats {
  /** Open connections, and the bytes they hold for messages not yet whole (each at most MAX_SYSLOG_BYTES). */
  connections: number;
  heldBytes: number;
  /** Messages waiting for their commit, and their bytes, streamed and datagrams. */
  streamMessages: number;
  streamBytes: number;
  datagramMessages: number;
  datagramBytes: number;
  /** The largest backlog of one key, in messages and bytes. */
  largestKeyMessages: number;
  largestKeyBytes: number;
  /** The most streamed messages waiting from one connection, and from one address. */
  largestConnectionMessages: number;
  largestAddressMessages: number;
  /** Keys with a backlog, and connections paused by us. */
  waitingKeys: number;
  paused: number;
  /** Keys looked up so far, and the most one flush looked up. */
  lookups: number;
  mostLookupsInAFlush: number;
  /** First-message timeouts that came while we held their silent connection paused, and so started again. */
  silenceDeferred: number;
}

export interface SyslogListeners {
  /** Starts the configured listeners; the ports they listen on (a port of 0 in the configuration takes a free one). */
  start(): Promise<{ tcp?: number; udp?: number; tls?: number }>;
  /** Stops listening and reading, and commits (or counts away) every message received so far. */
  stop(): Promise<void>;
  stats(): SyslogStats;
}

/** The address a limit counts by: an IPv4 address, or an IPv6 address's /64. */
export function addressOf(ip: string | undefined): string {
  if (!ip) return '?';
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice(7);
  if (!ip.includes(':')) return ip;
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':') + '::/64';
}

/** Token buckets per address, at most `SYSLOG_LIMITS.addresses` of them (the least recently used is forgotten). */
class AddressRates {
  #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly now: () => number) {}

  take(address: string, rate: number, burst: number): boolean {
    const t = this.now();
    let bucket = this.#buckets.get(address);
    if (bucket) this.#buckets.delete(address);
    else bucket = { tokens: burst, at: t };
    bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * rate);
    bucket.at = t;
    this.#buckets.set(address, bucket);
    if (this.#buckets.size > SYSLOG_LIMITS.addresses) this.#buckets.delete(this.#buckets.keys().next().value!);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

export function createSyslogListeners(deps: { config: Config['syslog']; logs: LogsService; projects: ProjectsService; metrics: Metrics; log: FastifyBaseLogger; now: () => number }): SyslogListeners {
  const { config, logs, projects, metrics, log, now } = deps;
  const L = SYSLOG_LIMITS;
  const backlogs = new Map<string, Backlog>();
  const known = new Map<string, { at: number; check: Check & { ok: true } }>();
  const unknown = new Map<string, number>();
  const lastLogged = new Map<string, number>();
  /** Open connections, each with what ends it (its last bytes read as messages) and its framer. */
  const sockets = new Map<net.Socket, () => void>();
  /** Every accepted connection, a TLS one from before its handshake (stop closes them all). */
  const rawSockets = new Set<net.Socket>();
  /** Streamed messages waiting, by the address they came from. */
  const addressLoads = new Map<string, AddressLoad>();
  const senders = new Set<Sender>();
  const framers = new Map<net.Socket, SyslogFramer>();
  /** Connections open per address (TCP and TLS counted apart: each listener has its own). */
  const perAddress = { tcp: new Map<string, number>(), tls: new Map<string, number>() };
  const datagramRates = new AddressRates(now);
  const handshakeRates = new AddressRates(now);
  const servers: (net.Server | dgram.Socket)[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  const held = { streamMessages: 0, streamBytes: 0, datagramMessages: 0, datagramBytes: 0 };
  let streamsFull = false;
  let lookups = 0;
  let mostLookupsInAFlush = 0;
  let silenceDeferred = 0;
  let stopping = false;

  function refuse(reason: Reason, n: number, detail: string): void {
    metrics.syslogRejected.inc({ reason }, n);
    const last = lastLogged.get(reason) ?? 0;
    if (now() - last >= LOG_EVERY_MS) {
      lastLogged.set(reason, now());
      log.warn({ reason, messages: n }, `syslog messages not stored: ${detail}`);
    }
  }

  function note(what: string, detail: string, fields: Record<string, unknown>): void {
    const last = lastLogged.get(what) ?? 0;
    if (now() - last >= LOG_EVERY_MS) {
      lastLogged.set(what, now());
      log.warn(fields, detail);
    }
  }

  // Pausing: a connection is paused while any backlog it has messages in is full, while it or its
  // address has as many messages waiting as one connection or address may, or while all streamed
  // messages together are past their bound; resumed when none holds.
  function blocked(s: Sender): boolean {
    return streamsFull || s.fullBacklogs > 0 || s.messages >= L.connectionMessages || s.bytes >= L.connectionBytes || addressLoads.get(s.address)?.full === true;
  }
  /** A connection's and its address's waiting messages grow (n > 0) or shrink; its address's connections are reconsidered when the address fills or empties. */
  function load(s: Sender, n: number, bytes: number): void {
    s.messages += n;
    s.bytes += bytes;
    let a = addressLoads.get(s.address);
    if (!a) addressLoads.set(s.address, (a = { messages: 0, bytes: 0, full: false }));
    a.messages += n;
    a.bytes += bytes;
    const full = a.messages >= L.addressMessages || a.bytes >= L.addressBytes;
    if (a.messages <= 0) addressLoads.delete(s.address);
    if (full !== a.full) {
      a.full = full;
      for (const other of senders) if (other.address === s.address) reconsider(other);
    }
  }
  function reconsider(s: Sender): void {
    if (s.closedAt !== undefined) return;
    const b = blocked(s);
    if (b && !s.paused) {
      s.paused = true;
      s.socket.pause();
    } else if (!b && s.paused) {
      s.paused = false;
      s.socket.resume();
    }
  }
  function checkFull(b: Backlog): void {
    const full = b.messages >= L.keyMessages || b.bytes >= L.keyBytes;
    if (full !== b.full) {
      b.full = full;
      // Every connection with messages in this backlog (the slice being committed holds none of
      // its senders back: they wait for it as the rest do).
      for (const s of senders) {
        if (!s.backlogs.has(b)) continue;
        s.fullBacklogs += full ? 1 : -1;
        reconsider(s);
      }
    }
    const streams = held.streamMessages >= L.streamMessages || held.streamBytes >= L.streamBytes;
    if (streams !== streamsFull) {
      streamsFull = streams;
      for (const s of senders) reconsider(s);
    }
  }

  function knownCheck(key: string): Check | undefined {
    const k = known.get(key);
    if (k && now() - k.at < L.keyCacheMs) return k.check;
    const u = unknown.get(key);
    if (u !== undefined && now() - u < L.unknownKeyCacheMs) return { ok: false, reason: 'unknown' };
    return undefined;
  }
  function remember(key: string, check: Check): void {
    if (check.ok) {
      known.delete(key);
      known.set(key, { at: now(), check });
      if (known.size > L.knownKeys) known.delete(known.keys().next().value!);
    } else {
      known.delete(key);
      unknown.delete(key);
      unknown.set(key, now());
      if (unknown.size > L.unknownKeys) unknown.delete(unknown.keys().next().value!);
    }
  }

  /** Reads one message and queues it under its key. */
  function receive(bytes: Buffer, truncated: boolean, transport: Transport, sender: Sender | undefined, address: string): void {
    metrics.syslogMessages.inc({ transport });
    const parsed = parseSyslog(decodeSyslog(bytes, truncated), now(), truncated);
    if (parsed.keyProblem !== undefined) {
      refuse('bad_key_element', 1, `${parsed.keyProblem}: the message is not stored, under its key or SYSLOG_DEFAULT_KEY`);
      return;
    }
    const k = parsed.key ?? config.defaultKey;
    if (k === undefined) {
      refuse('no_key', 1, 'a message carried no key ([loglane@… key="…"] in its structured data) and SYSLOG_DEFAULT_KEY is not set');
      return;
    }
    const cached = knownCheck(k);
    // A key that is surely no project's (its shape or checksum says so) is refused without waiting for a lookup.
    if ((cached && !cached.ok) || (!cached && !projects.keyCouldExist(k))) {
      refuse('bad_key', 1, 'a message carried a key that is not a project\'s');
      return;
    }
    const size = bytes.length + MESSAGE_OVERHEAD;
    let b = backlogs.get(k);
    if (!sender) {
      // A datagram has no sender to slow: past a bound, or for a key waiting out its rate, it is dropped.
      const why =
        held.datagramMessages >= L.datagramMessages || held.datagramBytes + size > L.datagramBytes
          ? 'datagrams arrived faster than they could be stored'
          : b && (b.full || b.notBefore > now())
            ? 'datagrams of a key over its plan rate (or waiting for the store)'
            : !b && backlogs.size >= L.waitingKeys
              ? 'datagrams of too many keys at once'
              : undefined;
      if (why) {
        refuse('dropped', 1, why);
        return;
      }
    }
    if (!b) backlogs.set(k, (b = { key: k, address, items: [], messages: 0, bytes: 0, full: false, notBefore: 0, busy: false }));
    b.items.push({ item: { value: parsed.log }, sender, bytes: size });
    b.messages++;
    b.bytes += size;
    if (sender) {
      held.streamMessages++;
      held.streamBytes += size;
      load(sender, 1, size);
      const mine = sender.backlogs.get(b) ?? 0;
      sender.backlogs.set(b, mine + 1);
      if (mine === 0 && b.full) sender.fullBacklogs++;
    } else {
      held.datagramMessages++;
      held.datagramBytes += size;
    }
    checkFull(b);
    if (sender) reconsider(sender);
    if (b.items.length >= L.sliceMessages && !b.busy && b.notBefore <= now()) void flush();
  }

  /** Messages done with (committed, or counted away): their backlog and their senders let go of them. */
  function settle(b: Backlog, pending: Pending[]): void {
    const touched = new Set<Sender>();
    for (const p of pending) {
      b.messages--;
      b.bytes -= p.bytes;
      const s = p.sender;
      if (!s) {
        held.datagramMessages--;
        held.datagramBytes -= p.bytes;
        continue;
      }
      held.streamMessages--;
      held.streamBytes -= p.bytes;
      load(s, -1, -p.bytes);
      const left = (s.backlogs.get(b) ?? 1) - 1;
      if (left > 0) s.backlogs.set(b, left);
      else {
        s.backlogs.delete(b);
        if (b.full) s.fullBacklogs--;
      }
      touched.add(s);
    }
    if (b.messages === 0 && b.items.length === 0 && !b.busy && backlogs.get(b.key) === b) backlogs.delete(b.key);
    checkFull(b);
    for (const s of touched) reconsider(s);
  }

  /** Takes the next slice off a backlog: at most sliceMessages messages and sliceBytes bytes (one at least). */
  function sliceOf(b: Backlog): Pending[] {
    let n = 0;
    let bytes = 0;
    while (n < b.items.length && n < L.sliceMessages && (n === 0 || bytes + b.items[n]!.bytes <= L.sliceBytes)) bytes += b.items[n++]!.bytes;
    return b.items.splice(0, n);
  }

  /** Drops (and counts) the messages of connections closed longer than orphanWaitMs ago. */
  function dropOrphans(b: Backlog): void {
    const t = now();
    const orphans: Pending[] = [];
    const kept: Pending[] = [];
    for (const p of b.items) {
      if (p.sender?.closedAt !== undefined && t - p.sender.closedAt >= L.orphanWaitMs) orphans.push(p);
      else kept.push(p);
    }
    if (orphans.length === 0) return;
    b.items = kept;
    refuse('dropped', orphans.length, 'their connection closed and they waited longer than its messages may for their plan rate');
    settle(b, orphans);
  }

  /**
   * Commits one slice of a key's backlog; a slice refused for the rate or the load goes back to wait
   * (streams) or is dropped (datagrams). True when some of it went back to the front of the backlog.
   */
  async function commit(b: Backlog, check: Check & { ok: true }, pending: Pending[]): Promise<boolean> {
    try {
      const { result } = await logs.ingest(check.projectId, check.plan, pending.map((p) => p.item));
      if (result.rejected.length > 0) refuse('refused', result.rejected.length, result.rejected[0]!.message);
      metrics.logsAccepted.inc({ endpoint: 'syslog' }, result.accepted);
      settle(b, pending);
      return false;
    } catch (err) {
      if (err instanceof AppError && err.code === 'VALIDATION_ERROR') {
        refuse('refused', pending.length, err.message);
        settle(b, pending);
        return false;
      }
      if (err instanceof AppError && err.code === 'INVALID_API_KEY') {
        remember(b.key, { ok: false, reason: 'unknown' });
        refuse('bad_key', pending.length, 'a message carried a key whose project no longer exists');
        settle(b, pending);
        return false;
      }
      const app = err instanceof AppError ? err : undefined;
      if (!app) log.warn({ err }, 'syslog messages could not be stored; retrying');
      // Messages of a stream wait (their senders are paused while the backlog is full); datagrams cannot.
      const streamed = pending.filter((p) => p.sender !== undefined);
      const datagrams = pending.filter((p) => p.sender === undefined);
      if (datagrams.length > 0) {
        refuse('dropped', datagrams.length, app ? app.message : 'the store failed');
        settle(b, datagrams);
      }
      if (streamed.length === 0) return false;
      if (app?.code === 'PAYLOAD_TOO_LARGE' && streamed.length > 1) {
        // Too much for one batch: halves, each on its own, in order. When (some of) the first goes
        // back to wait, the second goes back behind it untried, so it is never stored ahead of it.
        const half = Math.ceil(streamed.length / 2);
        const firstHalf = streamed.slice(0, half);
        const secondHalf = streamed.slice(half);
        if (!(await commit(b, check, firstHalf))) return commit(b, check, secondHalf);
        const mine = new Set(firstHalf);
        let at = 0;
        while (at < b.items.length && mine.has(b.items[at]!)) at++;
        b.items.splice(at, 0, ...secondHalf);
        dropOrphans(b);
        return true;
      }
      if (stopping || streamed.length === 1 && app?.code === 'PAYLOAD_TOO_LARGE') {
        refuse('dropped', streamed.length, stopping ? 'the server stopped while they waited for their plan rate or the store' : app!.message);
        settle(b, streamed);
        return false;
      }
      b.notBefore = now() + Math.min(5000, app?.retryAfter !== undefined ? app.retryAfter * 1000 : 1000);
      b.items.unshift(...streamed);
      dropOrphans(b);
      return true;
    }
  }

  /** Looks up the keys given, at most lookupsPerFlush (unless stopping), shared out by the address each was first sent from. */
  async function lookUp(waiting: Backlog[]): Promise<void> {
    const byAddress = new Map<string, Backlog[]>();
    for (const b of waiting) {
      let list = byAddress.get(b.address);
      if (!list) byAddress.set(b.address, (list = []));
      list.push(b);
    }
    const chosen: Backlog[] = [];
    const perAddressLimit = stopping ? Infinity : L.lookupsPerAddress;
    const total = stopping ? Infinity : L.lookupsPerFlush;
    for (let round = 0; round < perAddressLimit && chosen.length < total; round++) {
      let any = false;
      for (const list of byAddress.values()) {
        if (round < list.length && chosen.length < total) {
          chosen.push(list[round]!);
          any = true;
        }
      }
      if (!any) break;
    }
    if (chosen.length === 0) return;
    mostLookupsInAFlush = Math.max(mostLookupsInAFlush, chosen.length);
    lookups += chosen.length;
    try {
      // In one go where the projects service can look up many keys at once.
      const many = (projects as { verifyApiKeys?: (keys: Iterable<string>) => Promise<Map<string, Check>> }).verifyApiKeys;
      const checks = many ? await many.call(projects, chosen.map((b) => b.key)) : new Map(await Promise.all(chosen.map(async (b) => [b.key, await projects.verifyApiKey(b.key)] as const)));
      for (const b of chosen) {
        const check = checks.get(b.key);
        if (check) remember(b.key, check);
      }
    } catch (err) {
      // The database: the keys are tried again after a wait, their datagrams counted away.
      log.warn({ err }, 'syslog keys could not be checked; retrying');
      for (const b of chosen) {
        b.notBefore = now() + 1000;
        const datagrams = b.items.filter((p) => p.sender === undefined);
        if (datagrams.length > 0) {
          b.items = b.items.filter((p) => p.sender !== undefined);
          refuse('dropped', datagrams.length, 'their key could not be checked');
          settle(b, datagrams);
        }
      }
    }
  }

  /** One round: each key that may go commits a slice (each key on its own: one key's wait holds up no other). */
  async function round(): Promise<void> {
    const t = now();
    const ready = [...backlogs.values()].filter((b) => !b.busy && b.items.length > 0 && (stopping || b.notBefore <= t));
    const unchecked = ready.filter((b) => knownCheck(b.key) === undefined);
    const checked = ready.filter((b) => knownCheck(b.key) !== undefined);
    // Keys known go at once; keys looked up go once their check is in.
    await Promise.all([commitAll(checked), lookUp(unchecked).then(() => commitAll(unchecked))]);
  }

  function commitAll(ready: Backlog[]): Promise<unknown> {
    return Promise.all(
      ready.map(async (b) => {
        const check = knownCheck(b.key);
        if (check === undefined) return;
        if (!check.ok) {
          const all = b.items;
          b.items = [];
          refuse('bad_key', all.length, 'a message carried a key that is not a project\'s');
          settle(b, all);
          return;
        }
        b.busy = true;
        try {
          await commit(b, check, sliceOf(b));
        } catch (err) {
          log.error({ err }, 'syslog batch failed');
        } finally {
          b.busy = false;
          if (b.messages === 0 && b.items.length === 0 && backlogs.get(b.key) === b) backlogs.delete(b.key);
        }
      }),
    );
  }

  /** One flush at a time; a flush asked for while one runs shares it. */
  function flush(): Promise<void> {
    flushing ??= (async () => {
      try {
        await round();
      } finally {
        flushing = undefined;
      }
    })();
    return flushing;
  }

  /** Takes a connection's place for its address, or refuses it (closed at once). */
  function admit(socket: net.Socket, transport: 'tcp' | 'tls'): string | undefined {
    const address = addressOf(socket.remoteAddress);
    const counts = perAddress[transport];
    const open = counts.get(address) ?? 0;
    if (stopping || open >= L.connectionsPerAddress) {
      if (!stopping) note(`connections:${transport}`, 'syslog connection refused: its address has as many open as one address may', { transport, limit: L.connectionsPerAddress });
      socket.destroy();
      return undefined;
    }
    counts.set(address, open + 1);
    rawSockets.add(socket);
    socket.once('close', () => {
      rawSockets.delete(socket);
      const n = (counts.get(address) ?? 1) - 1;
      if (n > 0) counts.set(address, n);
      else counts.delete(address);
    });
    return address;
  }

  function onStream(socket: net.Socket, transport: 'tcp' | 'tls', address: string): void {
    if (stopping) {
      socket.destroy();
      return;
    }
    const framer = new SyslogFramer();
    framers.set(socket, framer);
    const sender: Sender = { socket, address, backlogs: new Map(), fullBacklogs: 0, paused: false, closedAt: undefined, messages: 0, bytes: 0 };
    senders.add(sender);
    let ended = false;
    let spoken = false;
    /** Reads a chunk's messages until the connection is paused; what is left goes back to the socket, read once it is resumed. */
    const read = (chunk: Buffer) => {
      const rest = framer.read(chunk, (f) => {
        if (!spoken) {
          spoken = true;
          clearTimeout(first);
          socket.setTimeout(L.idleMs);
        }
        receive(f.bytes, f.truncated, transport, sender, address);
        return stopping || !sender.paused;
      });
      if (rest) socket.unshift(rest);
    };
    const finish = () => {
      if (ended) return;
      ended = true;
      for (const f of framer.end()) receive(f.bytes, f.truncated, transport, sender, address);
    };
    // Silent since it connected (or, for TLS, since its handshake began): closed.
    // One we paused is not silent by its own doing: its time starts again, and it is closed if it is
    // still silent once resumed.
    const first = setTimeout(() => {
      if (spoken) return;
      if (sender.paused) {
        silenceDeferred++;
        first.refresh();
      } else socket.destroy();
    }, L.firstMessageMs);
    first.unref();
    socket.on('timeout', () => {
      // Idle, unless we are the reason it is quiet.
      if (sender.paused) socket.setTimeout(L.idleMs);
      else socket.destroy();
    });
    sockets.set(socket, () => {
      // Read already, held by the stream while it was paused: received, so stored (each chunk once:
      // socket.read() would also hand it to the 'data' listener).
      socket.off('data', read);
      for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) read(chunk);
      finish();
    });
    socket.on('data', read);
    // Paused from the start when its address (or every stream) is past its bound.
    reconsider(sender);
    socket.on('end', () => {
      finish();
      socket.end();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(first);
      sender.closedAt = now();
      senders.delete(sender);
      sockets.delete(socket);
      framers.delete(socket);
    });
  }

  const listen = (server: net.Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.maxConnections = L.connections;
      server.once('error', reject);
      server.listen(port, config.host, () => resolve((server.address() as net.AddressInfo).port));
    });

  return {
    stats() {
      let heldBytes = 0;
      for (const f of framers.values()) heldBytes += f.held;
      let largestKeyMessages = 0;
      let largestKeyBytes = 0;
      for (const b of backlogs.values()) {
        largestKeyMessages = Math.max(largestKeyMessages, b.messages);
        largestKeyBytes = Math.max(largestKeyBytes, b.bytes);
      }
      let paused = 0;
      let largestConnectionMessages = 0;
      for (const s of senders) {
        if (s.paused) paused++;
        largestConnectionMessages = Math.max(largestConnectionMessages, s.messages);
      }
      let largestAddressMessages = 0;
      for (const a of addressLoads.values()) largestAddressMessages = Math.max(largestAddressMessages, a.messages);
      return { connections: framers.size, heldBytes, ...held, largestKeyMessages, largestKeyBytes, largestConnectionMessages, largestAddressMessages, waitingKeys: backlogs.size, paused, lookups, mostLookupsInAFlush, silenceDeferred };
    },

    async start() {
      const ports: { tcp?: number; udp?: number; tls?: number } = {};
      if (config.tcpPort !== undefined) {
        const server = net.createServer((s) => {
          const address = admit(s, 'tcp');
          if (address !== undefined) onStream(s, 'tcp', address);
        });
        servers.push(server);
        ports.tcp = await listen(server, config.tcpPort);
      }
      if (config.tlsPort !== undefined) {
        const server = tls.createServer({ cert: fs.readFileSync(config.tlsCert!), key: fs.readFileSync(config.tlsKey!), handshakeTimeout: L.firstMessageMs }, (s) => {
          if (s.destroyed) return;
          onStream(s, 'tls', addressOf(s.remoteAddress));
        });
        // The raw connection, before its handshake: the address's connections and handshake rate.
        server.on('connection', (raw: net.Socket) => {
          const address = admit(raw, 'tls');
          if (address === undefined) return;
          if (!handshakeRates.take(address, L.tlsHandshakesPerSecond, L.tlsHandshakeBurst)) {
            note('handshakes', 'syslog TLS connection refused: its address starts more handshakes a second than one address may', { limit: L.tlsHandshakesPerSecond });
            raw.destroy();
          }
        });
        server.on('tlsClientError', () => {});
        servers.push(server);
        ports.tls = await listen(server, config.tlsPort);
      }
      if (config.udpPort !== undefined) {
        const socket = dgram.createSocket({ type: config.host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 4 * 1024 * 1024 });
        servers.push(socket);
        socket.on('message', (msg, rinfo) => {
          if (stopping) return;
          // Before anything is read of it: the address's datagram rate.
          const address = addressOf(rinfo.address);
          if (!datagramRates.take(address, L.datagramsPerSecond, L.datagramBurst)) {
            refuse('address_rate', 1, 'an address sent more datagrams a second than one address may');
            return;
          }
          receive(msg.length > MAX_SYSLOG_BYTES ? msg.subarray(0, MAX_SYSLOG_BYTES) : msg, msg.length > MAX_SYSLOG_BYTES, 'udp', undefined, address);
        });
        ports.udp = await new Promise<number>((resolve, reject) => {
          socket.once('error', reject);
          socket.bind(config.udpPort, config.host, () => resolve(socket.address().port));
        });
      }
      if (servers.length > 0) {
        timer = setInterval(() => void flush(), L.flushMs);
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
      // Connections that never became one of those (a TLS handshake under way): closed, so the
      // servers' close does not wait for them.
      for (const raw of rawSockets) raw.destroy();
      rawSockets.clear();
      await closed;
      await flushing;
      // Everything received: every key's backlog, a slice at a time, until none is left (a slice
      // refused now is counted away, not put back).
      for (;;) {
        const left = [...backlogs.values()].filter((b) => b.items.length > 0);
        if (left.length === 0) break;
        const before = held.streamMessages + held.datagramMessages;
        await flush();
        if (held.streamMessages + held.datagramMessages === before) {
          // Nothing moved (the database is gone): counted, not waited for.
          for (const b of left) {
            const all = b.items;
            b.items = [];
            refuse('dropped', all.length, 'the server stopped and they could not be stored');
            settle(b, all);
          }
        }
      }
      await flushing;
    },
  };
}
