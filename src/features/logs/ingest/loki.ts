/**
 * Grafana Loki's push API (docs/integrations.md, "Grafana Loki push"): `POST /loki/api/v1/push` in
 * JSON, or as Loki's protobuf `logproto.PushRequest` compressed with snappy (Promtail, Grafana
 * Alloy, winston-loki). Each entry of each stream is one log: its line is the message (a line that
 * is a JSON object, as pino-loki and Docker send, is read as a record), its labels and structured
 * metadata are metadata, and they name the level and the source. No HTTP and no storage here: the
 * routes (loki-routes.ts) store the logs through the ingest path.
 */
import protobuf from 'protobufjs';
import { AppError } from '../../../errors.js';
import { MAX_BODY_BYTES, MAX_LOGS_PER_REQUEST, type BodyItem } from './body.js';
import { put, readRecord, timeOfMs } from './record.js';
import { snappyUncompress, SnappyError } from './snappy.js';

/** Loki's push request (logproto.PushRequest), the fields Loglane reads: senders' tests and the bench encode with it too. */
export const LOKI_PUSH_PROTO = `
syntax = "proto3";
package logproto;
message PushRequest { repeated StreamAdapter streams = 1; }
message StreamAdapter { string labels = 1; repeated EntryAdapter entries = 2; uint64 hash = 3; }
message EntryAdapter { Timestamp timestamp = 1; string line = 2; repeated LabelPairAdapter structuredMetadata = 3; }
message LabelPairAdapter { string name = 1; string value = 2; }
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
`;
export const PushRequest = protobuf.parse(LOKI_PUSH_PROTO, { keepCase: true }).root.lookupType('logproto.PushRequest');

/** Where a stream's labels name the source, in order; then `source`. */
const SOURCE_LABELS = ['service_name', 'job', 'app'];
/** Where labels, structured metadata or a JSON line name the level, in order. */
const LEVEL_FIELDS = ['level', 'detected_level', 'severity', 'lvl', 'log.level'];

/** One entry, as either encoding gives it. */
interface Entry {
  /** Epoch nanoseconds, exactly (a string of digits), or why the entry's time cannot be read; or, from protobuf, `ms`. */
  ns: string | { error: string } | { ms: number };
  line: unknown;
  metadata: Record<string, string>;
}

/** Labels in Prometheus' text form, `{job="api", level="info"}` (values with \\" \\\\ \\n escapes). */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let at = 0;
  const skip = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const bad = () => new AppError('VALIDATION_ERROR', `The stream's labels are not valid: ${text.slice(0, 200)}`);
  skip();
  if (text[at] !== '{') throw bad();
  at++;
  skip();
  if (text[at] === '}') {
    at++;
    skip();
    if (at !== text.length) throw bad();
    return labels;
  }
  for (;;) {
    skip();
    const name = /^[a-zA-Z_][a-zA-Z0-9_.]*/.exec(text.slice(at, at + 1024))?.[0];
    if (!name) throw bad();
    at += name.length;
    skip();
    if (text[at] !== '=') throw bad();
    at++;
    skip();
    if (text[at] !== '"') throw bad();
    at++;
    let value = '';
    for (;;) {
      if (at >= text.length) throw bad();
      const c = text[at++]!;
      if (c === '"') break;
      if (c === '\\') {
        const e = text[at++];
        value += e === 'n' ? '\n' : e === 't' ? '\t' : (e ?? '');
      } else value += c;
    }
    put(labels, name, value);
    skip();
    if (text[at] === ',') {
      at++;
      continue;
    }
    if (text[at] === '}') {
      at++;
      skip();
      if (at !== text.length) throw bad();
      return labels;
    }
    throw bad();
  }
}

/** A protobuf body, snappy-compressed unless `compressed` is false; a body that is neither is a 400. */
export function decodeProtobufPush(body: Buffer, compressed: boolean): { labels: Record<string, string>; entries: Entry[] }[] {
  let raw: Uint8Array = body;
  if (compressed) {
    try {
      raw = snappyUncompress(body, MAX_BODY_BYTES);
    } catch (err) {
      if (err instanceof SnappyError && /more than/.test(err.message)) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
      throw new AppError('VALIDATION_ERROR', `The body is not snappy-compressed protobuf (${err instanceof Error ? err.message : 'undecodable'}).`);
    }
  }
  let message: { streams?: { labels?: string; entries?: { timestamp?: { seconds?: number; nanos?: number }; line?: string; structuredMetadata?: { name?: string; value?: string }[] }[] }[] };
  try {
    // Seconds as numbers: exact up to 2^53, far past any time a log can have.
    message = PushRequest.toObject(PushRequest.decode(raw), { longs: Number, defaults: false }) as typeof message;
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `The body is not a Loki PushRequest (${err instanceof Error ? err.message : 'undecodable'}).`);
  }
  return (message.streams ?? []).map((s) => ({
    labels: parseLabels(s.labels ?? '{}'),
    entries: (s.entries ?? []).map((e) => ({
      ns: { ms: (e.timestamp?.seconds ?? 0) * 1000 + Math.floor((e.timestamp?.nanos ?? 0) / 1e6) },
      line: e.line ?? '',
      metadata: e.structuredMetadata?.length ? Object.fromEntries(e.structuredMetadata.map((p) => [p.name ?? '', p.value ?? ''])) : {},
    })),
  }));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON body: `{"streams": [{"stream": {labels}, "values": [["<ns>", "<line>", {metadata}?]]}]}`. */
export function decodeJsonPush(body: Buffer): { labels: Record<string, string>; entries: Entry[] }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  if (!isObject(parsed) || !Array.isArray(parsed.streams)) throw new AppError('VALIDATION_ERROR', 'The body must be {"streams": [...]}.');
  return parsed.streams.map((s: unknown) => {
    if (!isObject(s) || !Array.isArray(s.values)) throw new AppError('VALIDATION_ERROR', 'Each stream must be {"stream": {labels}, "values": [...]}.');
    const labels: Record<string, string> = {};
    if (s.stream !== undefined && s.stream !== null) {
      if (!isObject(s.stream)) throw new AppError('VALIDATION_ERROR', 'A stream\'s "stream" must be an object of labels.');
      for (const [k, v] of Object.entries(s.stream)) put(labels, k, typeof v === 'string' ? v : JSON.stringify(v));
    }
    const entries: Entry[] = s.values.map((v: unknown): Entry => {
      if (!Array.isArray(v) || v.length < 2) return { ns: { error: 'an entry must be ["<unix epoch in nanoseconds>", "<line>"]' }, line: undefined, metadata: {} };
      const [ts, line, meta] = v as unknown[];
      const digits = typeof ts === 'string' ? ts.trim() : typeof ts === 'number' && Number.isSafeInteger(ts) ? String(ts) : '';
      const metadata: Record<string, string> = {};
      if (isObject(meta)) for (const [k, val] of Object.entries(meta)) put(metadata, k, typeof val === 'string' ? val : JSON.stringify(val));
      return { ns: /^\d{1,25}$/.test(digits) ? digits : { error: 'the entry\'s time must be a string of Unix epoch nanoseconds' }, line, metadata };
    });
    return { labels, entries };
  });
}

/** The logs of a push, in order: each entry a log object, or why it cannot be one. */
export function pushItems(streams: { labels: Record<string, string>; entries: Entry[] }[]): BodyItem[] {
  const items: BodyItem[] = [];
  for (const { labels, entries } of streams) {
    for (const entry of entries) {
      if (items.length === MAX_LOGS_PER_REQUEST) throw new AppError('PAYLOAD_TOO_LARGE', `A push carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} entries. Send smaller batches.`);
      if (typeof entry.ns !== 'string' && 'error' in entry.ns) {
        items.push({ error: entry.ns.error });
        continue;
      }
      if (typeof entry.line !== 'string') {
        items.push({ error: 'the entry\'s line must be a string' });
        continue;
      }
      // A line that is a JSON object (a pino or bunyan line) is read as a record; labels and structured metadata are merged over it.
      let record: Record<string, unknown> | undefined;
      if (entry.line.trimStart().startsWith('{')) {
        try {
          const parsed: unknown = JSON.parse(entry.line);
          if (isObject(parsed)) record = parsed;
        } catch {
          // Text after all.
        }
      }
      const fields = record ? { ...record, ...labels, ...entry.metadata } : { ...labels, ...entry.metadata, message: entry.line };
      const log = readRecord(fields, { sourceFields: SOURCE_LABELS, levelFields: LEVEL_FIELDS });
      // The entry's own time, exactly to the millisecond (the digits but the last six); the line's time field, if any, was read and is replaced.
      const ns = entry.ns;
      log.timestamp = typeof ns === 'string' ? (timeOfMs(ns.length > 6 ? Number(ns.slice(0, -6)) : 0) ?? ns) : (timeOfMs(ns.ms) ?? String(ns.ms));
      items.push({ value: log });
    }
  }
  return items;
}
