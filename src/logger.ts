import { pino, type DestinationStream, type Logger } from 'pino';

/** Paths whose values never reach a log line: credentials in headers and bodies. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.refreshToken',
  '*.accessToken',
  '*.apiKey',
  '*.secretKey',
];

const SENSITIVE_QUERY = /key|token|secret|password|auth/i;

/** A URL for the logs, with the values of credential-looking query parameters replaced. */
export function safeUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const name of [...params.keys()]) if (SENSITIVE_QUERY.test(name)) params.set(name, '[Redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      serializers: {
        req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ method: req.method, url: safeUrl(req.url), ip: req.ip }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
    destination,
  );
}
