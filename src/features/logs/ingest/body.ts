import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { AppError } from '../../../errors.js';

/** docs/api.md, "Log ingestion": at most 5 MiB after decompression and 10,000 logs per request. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
export const MAX_LOGS_PER_REQUEST = 10_000;

export const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/json-lines'];
export const JSON_TYPES = ['application/json'];

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);

/** Whether a Content-Encoding leaves the body as it is (none given, empty, or `identity`). */
export function isIdentityEncoding(encoding: string | undefined): boolean {
  const enc = (encoding ?? '').trim().toLowerCase();
  return enc === '' || enc === 'identity';
}

/** Bytes this process has inflated from request bodies: tests check that a refused inflation stopped early. */
export const inflation = { bytes: 0 };

const tooLargeDecoded = () => new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');

/**
 * Undoes `Content-Encoding`. Inflation stops at MAX_BODY_BYTES, so a zip bomb costs at most that
 * much memory and ends as a quick 413. With `grew`, the body is inflated a chunk at a time and
 * `grew` is told its size so far after each chunk (the request's claim on the in-flight bytes
 * grows with it); when `grew` throws (429/503: the project or the server has too much in flight),
 * inflation stops there with that error.
 */
export async function decodeBody(raw: Buffer, encoding: string | undefined, grew?: (bytes: number) => void): Promise<Buffer> {
  if (isIdentityEncoding(encoding)) return raw;
  const enc = encoding!.trim().toLowerCase();
  if (enc !== 'gzip' && enc !== 'x-gzip' && enc !== 'deflate') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding "${enc}" is not supported; send gzip, deflate or no encoding.`);
  }
  if (grew) return inflateGrowing(raw, enc, grew);
  try {
    const body = await (enc === 'deflate' ? inflate : gunzip)(raw, { maxOutputLength: MAX_BODY_BYTES });
    inflation.bytes += body.length;
    return body;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw tooLargeDecoded();
    throw new AppError('VALIDATION_ERROR', `The body is not valid ${enc} data.`);
  }
}

function inflateGrowing(raw: Buffer, enc: string, grew: (bytes: number) => void): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const z = enc === 'deflate' ? zlib.createInflate() : zlib.createGunzip();
    const chunks: Buffer[] = [];
    let total = 0;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      z.destroy();
      reject(err);
    };
    z.on('data', (chunk: Buffer) => {
      if (failed) return;
      total += chunk.length;
      inflation.bytes += chunk.length;
      if (total > MAX_BODY_BYTES) return fail(tooLargeDecoded());
      try {
        grew(total);
      } catch (err) {
        return fail(err);
      }
      chunks.push(chunk);
    });
    z.on('error', () => fail(new AppError('VALIDATION_ERROR', `The body is not valid ${enc} data.`)));
    z.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks, total));
    });
    z.end(raw);
  });
}

/**
 * An item of the batch: a parsed value, or why its NDJSON line could not be parsed. `leastBytes`,
 * when given, is a lower bound of the characters its log will come to, known before it is
 * normalised (an OTLP record's share of attributes that every record of its scope carries), so a
 * request too large for the ingest queue is refused before any of its logs is built.
 */
export type BodyItem = { value: unknown; leastBytes?: number } | { error: string };

function tooMany(n: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `A request carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} logs; this one has ${n.toLocaleString('en')}. Split it into smaller batches.`);
}

/** Splits a decoded body into log items: one object, an array, `{"logs": [...]}`, or NDJSON lines. */
export function parseBody(body: Buffer, ndjson: boolean): BodyItem[] {
  if (body.length > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB.');
  const text = body.toString('utf8');
  if (ndjson) {
    const items: BodyItem[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      if (items.length === MAX_LOGS_PER_REQUEST) throw tooMany(text.split('\n').filter((l) => l.trim() !== '').length);
      try {
        items.push({ value: JSON.parse(line) });
      } catch {
        items.push({ error: 'this line is not valid JSON' });
      }
    }
    if (items.length === 0) throw new AppError('VALIDATION_ERROR', 'The body holds no logs.');
    return items;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body is not valid JSON. Send one log object, an array of them, {"logs": [...]}, or NDJSON with Content-Type: application/x-ndjson.');
  }
  let list: unknown[];
  if (Array.isArray(parsed)) list = parsed;
  else if (typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { logs?: unknown }).logs) && !('message' in parsed)) list = (parsed as { logs: unknown[] }).logs;
  else if (typeof parsed === 'object' && parsed !== null) list = [parsed];
  else throw new AppError('VALIDATION_ERROR', 'The body must be a log object, an array of them, or {"logs": [...]}.');
  if (list.length === 0) throw new AppError('VALIDATION_ERROR', 'The body holds no logs.');
  if (list.length > MAX_LOGS_PER_REQUEST) throw tooMany(list.length);
  return list.map((value) => ({ value }));
}
