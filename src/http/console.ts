import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';

/** dist/web at the package root, found from src/http (tests, tsx) or dist/http (npm start) alike. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../dist/web', import.meta.url));

/**
 * No inline script or style, nothing from another origin, never framed. Only console responses
 * carry it: Swagger UI at /docs needs its own inline bootstrap.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Paths that belong to the server, never to the console's fallback. */
const SERVER_PATHS = /^\/(v1|docs|healthz|readyz|metrics)(\/|$)/;

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
  immutable: boolean;
}

function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const file = path.join(folder, name);
      if (statSync(file).isDirectory()) {
        walk(file);
        continue;
      }
      const urlPath = `/${path.relative(dir, file).split(path.sep).join('/')}`;
      const body = readFileSync(file);
      const type = TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
      const compressible = /text|javascript|json|svg/.test(type) && body.length > 1024;
      assets.set(urlPath, {
        body,
        gzip: compressible ? gzipSync(body, { level: 9 }) : undefined,
        type,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        // Vite puts a content hash in every name under /assets/.
        immutable: urlPath.startsWith('/assets/'),
      });
    }
  };
  walk(dir);
  return assets;
}

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONSOLE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  securityHeaders(reply);
  reply.header('content-type', asset.type);
  reply.header('etag', asset.etag);
  reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  reply.header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
  const gzip = asset.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (gzip) reply.header('content-encoding', 'gzip');
  return reply.send(gzip ? asset.gzip : asset.body);
}

/**
 * Serves the built console (dist/web) at `/`: files as they are, and index.html for any other
 * page path a browser asks for, so a reload of /projects/… works. Paths of the API keep their
 * JSON 404.
 */
export function consoleRoutes(options: { dir?: string } = {}) {
  const dir = options.dir ?? DEFAULT_CONSOLE_DIR;
  return async function (app: FastifyInstance) {
    const built = existsSync(path.join(dir, 'index.html'));
    const assets = built ? loadAssets(dir) : new Map<string, Asset>();
    const index = assets.get('/index.html');
    if (!built) app.log.warn({ dir }, 'the web console is not built (npm run build); / explains how');

    app.get('/*', { schema: { hide: true } }, async (request, reply) => {
      const urlPath = decodeURIComponent(request.url.split('?')[0] ?? '/');
      const notFound = () => sendError(reply, request, { status: 404, code: 'NOT_FOUND', message: `No route ${request.method} ${urlPath}.` });
      if (SERVER_PATHS.test(urlPath)) return notFound();
      const asset = assets.get(urlPath === '/' ? '/index.html' : urlPath);
      if (asset) return send(request, reply, asset);
      // A page of the app (no file extension) asked for by a browser gets the app.
      const wantsPage = /text\/html/.test(String(request.headers.accept ?? '')) && !/\.[a-z0-9]+$/i.test(urlPath);
      if (wantsPage && index) return send(request, reply, index);
      if (wantsPage || urlPath === '/') {
        securityHeaders(reply);
        return reply
          .type('text/plain; charset=utf-8')
          .header('cache-control', 'no-cache')
          .send('The Loglane web console is not built. Run `npm run build` (npm start does it), then reload.\nThe API is served at /v1 and documented at /docs.\n');
      }
      return notFound();
    });
  };
}
