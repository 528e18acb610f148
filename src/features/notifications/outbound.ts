/**
 * Requests the server makes to URLs its users give (webhook and Slack destinations), kept from
 * being aimed at the server's own network (CONTRACT, "Alert state, silence alerts, destinations"):
 * - the URL must be `https:` without credentials, and its host must not be `localhost`,
 *   `*.localhost` or an address in a private, loopback, link-local, shared or mapped range. WHATWG
 *   URL parsing has already turned `https://2130706433/` and `https://0x7f.1/` into 127.0.0.1, and
 *   `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`, so each is refused like the dotted form;
 * - at save the literal host is checked; at each send every address the name resolves to, and the
 *   request then goes to the address checked (no second lookup for a rebinding answer to slip in);
 * - redirects are not followed (a 3xx is a failure), and a request has 5 s in all.
 * Origins listed in WEBHOOK_ALLOWED_ORIGINS skip these checks, plain `http:` included (tests list
 * their local receiver; a private deployment its internal hooks).
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

const BLOCKED = new net.BlockList();
for (const [address, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  BLOCKED.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [['::', 128], ['::1', 128], ['fe80::', 10], ['fc00::', 7], ['::ffff:0:0', 96]] as const) BLOCKED.addSubnet(address, prefix, 'ipv6');

/** Whether an IP address (v4 or v6, without brackets) is one the server must not send to. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
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

const TIMEOUT_MS = 5000;
/** The most of a response body read (and thrown away). */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs `body` as JSON to `url` under the rules above: the host's every resolved address is
 * checked and the connection goes to the first one. Resolves with the status (any, 3xx included:
 * nothing is followed); rejects with RefusedError, or on a network error or the 5 s timeout.
 */
export async function postJson(url: string, body: string, headers: Record<string, string>, allowed: readonly string[]): Promise<PostResult> {
  const refused = refusedUrl(url, allowed);
  if (refused) throw new RefusedError(`the URL ${refused}`);
  await slot();
  try {
    return await post(new URL(url), body, headers, allowed, Date.now() + TIMEOUT_MS);
  } finally {
    release();
  }
}

/** Outbound requests at once, over every tenant: a lookup holds one of libuv's few threads. */
const MAX_IN_FLIGHT = 16;
let inFlight = 0;
const waiting: (() => void)[] = [];
const slot = (): Promise<void> => {
  if (inFlight < MAX_IN_FLIGHT) {
    inFlight++;
    return Promise.resolve();
  }
  return new Promise((resolve) => waiting.push(resolve));
};
const release = () => {
  const next = waiting.shift();
  if (next) next();
  else inFlight--;
};

async function post(target: URL, body: string, headers: Record<string, string>, allowed: readonly string[], deadline: number): Promise<PostResult> {
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
        timer = setTimeout(() => reject(new Error(`${host} did not resolve within ${TIMEOUT_MS / 1000} s`)), deadline - Date.now());
      }),
    ]).finally(() => clearTimeout(timer));
    if (found.length === 0) throw new Error(`${host} has no address`);
    if (!isAllowedOrigin(target, allowed)) {
      const bad = found.find((a) => isBlockedAddress(a.address));
      if (bad) throw new RefusedError(`${host} resolves to ${bad.address}, a private, loopback or link-local address`);
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
        timeout: left,
        signal: AbortSignal.timeout(left),
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
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => reject(err.name === 'AbortError' || err.name === 'TimeoutError' ? new Error(`no answer within ${TIMEOUT_MS / 1000} s`) : err));
    req.end(body);
  });
}
