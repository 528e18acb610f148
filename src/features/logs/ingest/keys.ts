/**
 * The project key of a request from a shipper, in whichever form its client sends it
 * (docs/integrations.md): `X-API-Key: <key>`, `Authorization: Bearer <key>`, `Authorization:
 * Basic` with the key as the password (any user name), `Authorization: ApiKey <key>` (or the key
 * base64-encoded as `id:key`, as Elasticsearch clients send an API key id and secret), and
 * `Authorization: Splunk <key>` (HEC). Never a query parameter.
 */
import type { FastifyRequest } from 'fastify';
import { API_KEY_PREFIX } from '../../projects/api-keys.js';

/** The text after `id:` of a base64 `id:secret`, or undefined when `value` is no such thing. */
function secretOfPair(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/=_-]+$/.test(value)) return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

export function shipperKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  const auth = request.headers.authorization;
  if (typeof auth !== 'string') return undefined;
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(auth);
  if (!match) return undefined;
  const scheme = match[1]!.toLowerCase();
  const value = match[2]!;
  if (scheme === 'bearer' || scheme === 'splunk') return value;
  if (scheme === 'basic') return secretOfPair(value);
  if (scheme === 'apikey') return value.startsWith(API_KEY_PREFIX) ? value : (secretOfPair(value) ?? value);
  return undefined;
}
