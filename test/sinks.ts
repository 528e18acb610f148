/**
 * Real peers for notifications: an SMTP server (smtp-server, in-process) that keeps what it
 * receives, and an HTTP push service that checks the VAPID signature (RFC 8292) and decrypts the
 * aes128gcm payload (RFC 8291) with the subscription's private key, as a browser's push service
 * and the browser would.
 */
import { createECDH, randomBytes, type ECDH } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ece from 'http_ece';
import { importJWK, jwtVerify } from 'jose';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  from: string;
  to: string[];
  raw: string;
  headers: string;
  subject: string;
}

export async function startSmtpSink() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const headers = raw.split(/\r?\n\r?\n/)[0]!;
        const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(headers)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
        mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw, headers, subject });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    mails,
    url: `smtp://127.0.0.1:${port}?tls=off`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface PushDelivery {
  path: string;
  /** The decrypted payload, parsed. */
  payload: Record<string, unknown>;
  vapidOk: boolean;
  ttl: string | undefined;
}

/** A browser's subscription to the receiver: its keys and the JSON the browser would post to the API. */
export interface BrowserSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  ecdh: ECDH;
}

export async function startPushReceiver() {
  const deliveries: PushDelivery[] = [];
  const requests: string[] = [];
  const subscriptions = new Map<string, BrowserSubscription>();
  /** Paths that answer with a status other than 201 (e.g. 410 Gone). */
  const statusFor = new Map<string, number>();
  let expectedPublicKey: string | undefined;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = req.url ?? '';
      requests.push(path);
      const forced = statusFor.get(path);
      if (forced) {
        res.writeHead(forced).end();
        return;
      }
      const sub = subscriptions.get(path);
      if (!sub) {
        res.writeHead(404).end();
        return;
      }
      let vapidOk = false;
      try {
        const m = /^vapid t=([^,]+),\s*k=(.+)$/.exec(req.headers.authorization ?? '');
        if (m && (!expectedPublicKey || m[2] === expectedPublicKey)) {
          const raw = Buffer.from(m[2]!, 'base64url');
          const key = await importJWK({ kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') }, 'ES256');
          const { payload } = await jwtVerify(m[1]!, key, { algorithms: ['ES256'], audience: new URL(sub.endpoint).origin });
          vapidOk = typeof payload.sub === 'string' && typeof payload.exp === 'number';
        }
      } catch {
        vapidOk = false;
      }
      if (req.headers['content-encoding'] !== 'aes128gcm' || !vapidOk) {
        res.writeHead(401).end();
        deliveries.push({ path, payload: {}, vapidOk, ttl: req.headers.ttl as string | undefined });
        return;
      }
      const plain = ece.decrypt(Buffer.concat(chunks), { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.keys.auth });
      deliveries.push({ path, payload: JSON.parse(plain.toString('utf8')), vapidOk, ttl: req.headers.ttl as string | undefined });
      res.writeHead(201).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    deliveries,
    requests,
    statusFor,
    expectPublicKey(key: string) {
      expectedPublicKey = key;
    },
    /** A new browser subscription at this receiver. */
    subscribe(): BrowserSubscription {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const path = `/push/${randomBytes(8).toString('hex')}`;
      const sub = { endpoint: origin + path, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') }, ecdh };
      subscriptions.set(path, sub);
      return sub;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
