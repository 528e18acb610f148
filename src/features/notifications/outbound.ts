/**
 * Requests the server makes to URLs its users give (webhook and Slack destinations), kept from
 * being aimed at the server's own network, and kept from letting one tenant's slow destinations
 * delay another's (docs/alerts.md, "What the server will not send to" and "How often a rule
 * notifies, and what one project's destinations cost others"):
 * - the URL must be `https:` without credentials, and its host must not be `localhost`,
 *   `*.localhost` or an address in a private, loopback, link-local, shared, multicast, reserved,
 *   documentation or IPv4-embedding range (BLOCKED below). WHATWG URL parsing has already turned
 *   `https://2130706433/` and `https://0x7f.1/` into 127.0.0.1, and `[::ffff:127.0.0.1]` into
 *   `[::ffff:7f00:1]`, so each is refused like the dotted form;
 * - at save the literal host is checked; at each send every address the name resolves to, and the
 *   request then goes to the address checked (no second lookup for a rebinding answer to slip in);
 * - redirects are not followed (a 3xx is a failure); a connection has 3 s to open and a request
 *   5 s in all;
 * - errors say what happened ("connection refused"), never the address a name resolved to;
 * - each project has its own PROJECT_REQUESTS requests in flight, all projects MAX_REQUESTS, taken
 *   round-robin across the projects waiting, so a project whose destinations hang waits behind its
 *   own requests only;
 * - a destination that failed BREAKER_FAILURES times in a row (timeouts, network errors, 5xx) is
 *   not tried for BREAKER_OPEN_MS, doubling up to BREAKER_MAX_OPEN_MS while it keeps failing; one
 *   request then tries it again. Kept per server process.
 * Origins listed in WEBHOOK_ALLOWED_ORIGINS skip the address checks, plain `http:` included (tests
 * list their local receiver; a private deployment its internal hooks).
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

// Two lists: Node's BlockList also checks an IPv4 address against IPv6 rules (through its
// IPv4-compatible and mapped forms), which would let ::/96 block every IPv4 address.
const BLOCKED_V4 = new net.BlockList();
const BLOCKED_V6 = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255
] as const) {
  BLOCKED_V4.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d)
  ['::ffff:0:0', 96], // IPv4-mapped
  ['::ffff:0:0:0', 96], // IPv4-translated
  ['64:ff9b::', 96], // NAT64: a gateway would reach any IPv4 address, private ones included
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo (embeds an IPv4 address)
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID
  ['2001:20::', 28], // ORCHIDv2
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED_V6.addSubnet(address, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, without brackets) is one the server must not send to. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  return family === 4 ? BLOCKED_V4.check(address, 'ipv4') : BLOCKED_V6.check(address, 'ipv6');
}

/** Whether the URL's origin is on the operator's allow-list (exactly: scheme, host and port). */
export function isAllowedOrigin(url: URL, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    try {
      return new URL(entry).origin === url.origin;
    } catch {
      return false;
    }
  });
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

/** Why a destination URL is refused when saved (its literal host), or undefined when it may be saved. */
export function refusedUrl(text: string, allowed: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not hold a user name or password';
  if (isAllowedOrigin(url, allowed)) return undefined;
  if (url.protocol !== 'https:') return 'must be https';
  const host = hostOf(url);
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.') return 'must not point at this machine (localhost)';
  if (net.isIP(host) !== 0 && isBlockedAddress(host)) return 'must not point at a private, loopback or link-local address';
  return undefined;
}

export interface PostResult {
  status: number;
}

/** A request refused before it was sent (the URL or an address it resolves to). */
export class RefusedError extends Error {}

/** A request that failed, its message fit to show the destination's owner (no resolved address). */
export class SendError extends Error {}

export const TIMEOUT_MS = 5000;
/** How long a connection has to open (TCP); the TLS handshake and the answer count against TIMEOUT_MS. */
export const CONNECT_TIMEOUT_MS = 3000;
/** The most of a response body read (and thrown away). */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Requests in flight at once for one project, and for all projects of this process. */
export const PROJECT_REQUESTS = 8;
export const MAX_REQUESTS = 64;
/** Failures in a row (timeouts, network errors, 5xx, 408, 429) after which a destination is left alone. */
export const BREAKER_FAILURES = 3;
/** How long it is left alone the first time; doubled each time its trial request fails too, up to the maximum. */
export const BREAKER_OPEN_MS = 30_000;
export const BREAKER_MAX_OPEN_MS = 10 * 60_000;
/** Destinations whose failures are remembered (the oldest are forgotten past it). */
const MAX_BREAKERS = 10_000;

/** What a network error says to the destination's owner: what happened, never the address involved. */
export function describeSendError(err: unknown): string {
  if (err instanceof RefusedError || err instanceof SendError) return err.message;
  const code = String((err as { code?: unknown })?.code ?? '');
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EPIPE':
      return 'connection closed';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'ENOTFOUND':
    case 'ENODATA':
      return 'the name does not resolve';
    case 'EAI_AGAIN':
      return 'the name could not be resolved now';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return 'TLS certificate does not match the host';
    case 'CERT_HAS_EXPIRED':
      return 'TLS certificate expired';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'TLS certificate not trusted';
    case 'EPROTO':
      return 'TLS handshake failed';
    case 'ERR_STREAM_PREMATURE_CLOSE':
      return 'connection closed';
  }
  if ((err as Error)?.name === 'AbortError' || (err as Error)?.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  return code ? `network error (${code})` : 'network error';
}

/**
 * Slots for requests: at most `perKey` at once for a key (a project), `max` in all; a freed slot
 * goes to the next key waiting, round-robin, so a key with a long queue delays only itself.
 */
export class FairLimiter {
  #running = new Map<string, number>();
  #total = 0;
  #queues = new Map<string, { resolve: () => void; reject: (err: Error) => void }[]>();
  #closed: Error | undefined;

  constructor(
    readonly perKey: number,
    readonly max: number,
  ) {}

  /** Resolves once `key` has a slot (release it with release(key)). */
  acquire(key: string): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (this.#total < this.max && (this.#running.get(key) ?? 0) < this.perKey && !this.#queues.has(key)) {
      this.#take(key);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const q = this.#queues.get(key) ?? [];
      q.push({ resolve, reject });
      this.#queues.set(key, q);
    });
  }

  release(key: string): void {
    const n = (this.#running.get(key) ?? 1) - 1;
    if (n <= 0) this.#running.delete(key);
    else this.#running.set(key, n);
    this.#total--;
    this.#next();
  }

  /** Requests in flight, and waiting, for a key (or all keys). */
  running(key?: string): number {
    return key === undefined ? this.#total : (this.#running.get(key) ?? 0);
  }

  waiting(key: string): number {
    return this.#queues.get(key)?.length ?? 0;
  }

  /** Refuses every request waiting and every later one. */
  close(err: Error): void {
    this.#closed = err;
    for (const q of this.#queues.values()) for (const w of q) w.reject(err);
    this.#queues.clear();
  }

  #take(key: string): void {
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    this.#total++;
  }

  /** Hands free slots to waiting keys, one key after another (a Map keeps the order keys started waiting in). */
  #next(): void {
    let progress = true;
    while (this.#total < this.max && progress) {
      progress = false;
      for (const [key, q] of this.#queues) {
        if (this.#total >= this.max) break;
        if ((this.#running.get(key) ?? 0) >= this.perKey) continue;
        const w = q.shift()!;
        // The key goes to the back of the line.
        this.#queues.delete(key);
        if (q.length > 0) this.#queues.set(key, q);
        this.#take(key);
        w.resolve();
        progress = true;
        break;
      }
    }
  }
}

interface BreakerState {
  /** Failures in a row. */
  failures: number;
  /** Until when the destination is not tried (epoch ms); 0 when it is. */
  openUntil: number;
  /** The open period last used. */
  openMs: number;
  /** A trial request is under way (the period ran out). */
  trial: boolean;
}

/**
 * Per destination, its failures in a row; past BREAKER_FAILURES it is not tried until its open
 * period ends, then one request tries it (others wait while that one runs): a success closes it, a
 * failure opens it again for twice as long (up to BREAKER_MAX_OPEN_MS).
 */
export class Breakers {
  #states = new Map<string, BreakerState>();

  constructor(private readonly now: () => number) {}

  /** Undefined when the destination may be tried now; else until when it is left alone. */
  blockedUntil(id: string): number | undefined {
    const state = this.#states.get(id);
    if (!state || state.failures < BREAKER_FAILURES) return undefined;
    const t = this.now();
    if (t < state.openUntil) return state.openUntil;
    // The trial request: the others keep away while it runs.
    state.openUntil = t + TIMEOUT_MS + CONNECT_TIMEOUT_MS;
    state.trial = true;
    return undefined;
  }

  succeeded(id: string): void {
    this.#states.delete(id);
  }

  failed(id: string): void {
    const state = this.#states.get(id) ?? { failures: 0, openUntil: 0, openMs: 0, trial: false };
    state.failures++;
    if (state.trial) {
      // The trial failed: twice as long.
      state.trial = false;
      state.openMs = Math.min(BREAKER_MAX_OPEN_MS, state.openMs * 2);
      state.openUntil = this.now() + state.openMs;
    } else if (state.failures === BREAKER_FAILURES) {
      state.openMs = BREAKER_OPEN_MS;
      state.openUntil = this.now() + state.openMs;
    }
    // Past the threshold without a trial: a request sent before it opened, which changes nothing.
    this.#states.delete(id);
    this.#states.set(id, state);
    if (this.#states.size > MAX_BREAKERS) this.#states.delete(this.#states.keys().next().value!);
  }
}

export type Outbound = ReturnType<typeof createOutbound>;

/**
 * A process's outbound requests: the per-project slots and the per-destination breakers.
 * `close()` refuses what waits for a slot and cuts the requests in flight (the server is stopping).
 */
export function createOutbound(deps: { now: () => number }) {
  const limiter = new FairLimiter(PROJECT_REQUESTS, MAX_REQUESTS);
  const breakers = new Breakers(deps.now);
  const stopping = new AbortController();
  return {
    breakers,
    limiter,
    /**
     * POSTs `body` as JSON to `url` under the rules above, in one of `projectId`'s slots: the host's
     * every resolved address is checked and the connection goes to the first one. Resolves with the
     * status (any, 3xx included: nothing is followed); rejects with RefusedError, or a SendError
     * (network error, timeout) whose message names no address.
     */
    async postJson(url: string, body: string, headers: Record<string, string>, allowed: readonly string[], projectId: string): Promise<PostResult> {
      const refused = refusedUrl(url, allowed);
      if (refused) throw new RefusedError(`the URL ${refused}`);
      await limiter.acquire(projectId);
      try {
        return await post(new URL(url), body, headers, allowed, Date.now() + TIMEOUT_MS, stopping.signal);
      } catch (err) {
        throw err instanceof RefusedError ? err : new SendError(describeSendError(err));
      } finally {
        limiter.release(projectId);
      }
    },
    close(): void {
      const err = new SendError('the server is stopping');
      limiter.close(err);
      stopping.abort(err);
    },
  };
}

async function post(target: URL, body: string, headers: Record<string, string>, allowed: readonly string[], deadline: number, stopping: AbortSignal): Promise<PostResult> {
  const host = hostOf(target);
  let address: string;
  let family: number;
  if (net.isIP(host) !== 0) {
    address = host;
    family = net.isIP(host);
  } else {
    // The lookup counts against the request's 5 s (the system resolver has no timeout of its own).
    let timer: NodeJS.Timeout | undefined;
    const found = await Promise.race([
      dns.lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SendError(`${host} did not resolve within ${TIMEOUT_MS / 1000} s`)), deadline - Date.now());
      }),
    ]).finally(() => clearTimeout(timer));
    if (found.length === 0) throw new SendError(`${host} has no address`);
    if (!isAllowedOrigin(target, allowed) && found.some((a) => isBlockedAddress(a.address))) {
      // Which address it was stays here: the error is shown to the project's members.
      throw new RefusedError(`${host} resolves to an address that is not allowed (private, loopback, link-local or reserved)`);
    }
    ({ address, family } = found[0]!);
  }
  const client = target.protocol === 'https:' ? https : http;
  const left = Math.max(1, deadline - Date.now());
  return new Promise<PostResult>((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Loglane-Alerts/1', ...headers },
        // The connection goes to the address checked above, whatever a second lookup would say.
        lookup: (_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (options?.all) callback(null, [{ address, family }]);
          else callback(null, address, family);
        },
        // A fresh connection per request: a socket left waiting on a silent peer is no one's to reuse.
        agent: false,
        timeout: left,
        signal: AbortSignal.any([AbortSignal.timeout(left), stopping]),
      } as http.RequestOptions,
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('close', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(new SendError(`no connection within ${CONNECT_TIMEOUT_MS / 1000} s`)), Math.min(CONNECT_TIMEOUT_MS, left));
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.on('timeout', () => req.destroy(new SendError(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => reject(stopping.aborted ? stopping.reason : err));
    req.end(body);
  });
}
