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
import { heavyWork } from './admission.js';
import { MAX_BODY_BYTES, MAX_LOGS_PER_REQUEST, type BodyItem } from './body.js';
import { NESTED_TOO_DEEP, shallowJson } from './nesting.js';
import { put, readRecord, timeOfMs } from './record.js';
import { snappyLength, snappyUncompress, SnappyError } from './snappy.js';

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
export interface Entry {
  /** Epoch nanoseconds, exactly (a string of digits), or why the entry cannot be read (its time, its metadata); or, from protobuf, `ms`. */
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

/** A push's stream: its labels (or why they cannot be read) and its entries. */
export interface Stream {
  labels: Record<string, string>;
  /** Why the labels cannot be stored (nested too deep): every entry of the stream is refused for it. */
  labelsError?: string;
  entries: Entry[];
}

/**
 * One item of a push, as the decoders give them one at a time: an entry of a stream, or a stream
 * that holds no entries (an item all the same: it costs reading, and the plan's rate). `stream`
 * numbers the push's streams; `bytes` is about what the item took of the body.
 */
interface Unit {
  stream: number;
  labels: Record<string, string>;
  labelsError?: string;
  entry?: Entry;
  bytes: number;
}

const tooMany = () => new AppError('PAYLOAD_TOO_LARGE', `A push carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} entries (a stream with no entries counts as one). Send smaller batches.`);

/** Why a snappy body is refused, as the routes answer it: 413 past 5 MiB decoded, else 400. */
function snappyRefusal(err: unknown): AppError {
  if (err instanceof SnappyError && /more than/.test(err.message)) return new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
  return new AppError('VALIDATION_ERROR', `The body is not snappy-compressed protobuf (${err instanceof Error ? err.message : 'undecodable'}).`);
}

/** The size a snappy body states it decodes to, known before it is decoded (413 past 5 MiB, 400 when unreadable). */
export function snappyDecodedBytes(body: Uint8Array): number {
  let length: number;
  try {
    length = snappyLength(body).length;
  } catch (err) {
    throw snappyRefusal(err);
  }
  if (length > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
  return length;
}

/** A snappy body decompressed (at most 5 MiB), or a 400/413. */
export function unsnappy(body: Uint8Array): Buffer {
  try {
    return snappyUncompress(body, MAX_BODY_BYTES);
  } catch (err) {
    throw snappyRefusal(err);
  }
}

const EntryAdapter = PushRequest.root.lookupType('logproto.EntryAdapter');
type DecodedEntry = { timestamp?: { seconds?: number; nanos?: number }; line?: string; structuredMetadata?: { name?: string; value?: string }[] };

/**
 * The items of a protobuf PushRequest, one at a time, read field by field so that a caller can
 * stop (the item cap) or yield to the event loop between any two: 2.6 million empty streams are
 * 2.6 million items, and the first 10,001 are all that is ever read of them. A stream's labels are
 * found first (its fields may come in any order) in a pass that skips its entries and stops past
 * the item cap.
 */
function* protobufUnits(raw: Uint8Array): Generator<Unit> {
  try {
    const r = protobuf.Reader.create(raw);
    let stream = 0;
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 !== 1 || (tag & 7) !== 2) {
        r.skipType(tag & 7);
        continue;
      }
      const length = r.uint32();
      const start = r.pos;
      const end = start + length;
      if (end > r.len) throw new Error('a stream runs past the end of the body');
      let labelsText = '{}';
      let entries = 0;
      while (r.pos < end) {
        const t = r.uint32();
        if (t >>> 3 === 1 && (t & 7) === 2) labelsText = r.string();
        else {
          if (t >>> 3 === 2 && (t & 7) === 2 && ++entries > MAX_LOGS_PER_REQUEST) throw tooMany();
          r.skipType(t & 7);
        }
      }
      if (r.pos !== end) throw new Error('a stream\'s fields run past its end');
      const labels = parseLabels(labelsText);
      if (entries === 0) {
        yield { stream: stream++, labels, bytes: end - start + 2 };
        continue;
      }
      r.pos = start;
      while (r.pos < end) {
        const t = r.uint32();
        if (t >>> 3 !== 2 || (t & 7) !== 2) {
          r.skipType(t & 7);
          continue;
        }
        const at = r.pos;
        // Seconds as numbers: exact up to 2^53, far past any time a log can have.
        const e = EntryAdapter.toObject(EntryAdapter.decode(r, r.uint32()), { longs: Number, defaults: false }) as DecodedEntry;
        if (r.pos > end) throw new Error('an entry runs past its stream');
        const entry: Entry = {
          ns: { ms: (e.timestamp?.seconds ?? 0) * 1000 + Math.floor((e.timestamp?.nanos ?? 0) / 1e6) },
          line: e.line ?? '',
          metadata: e.structuredMetadata?.length ? Object.fromEntries(e.structuredMetadata.map((p) => [p.name ?? '', p.value ?? ''])) : {},
        };
        yield { stream, labels, entry, bytes: r.pos - at };
      }
      r.pos = end;
      stream++;
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('VALIDATION_ERROR', `The body is not a Loki PushRequest (${err instanceof Error ? err.message : 'undecodable'}).`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A label's or a structured metadata value as text: a string as it is, another value as JSON unless it nests too deep. */
function textOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : shallowJson(value);
}

/** A JSON body parsed: `{"streams": [...]}` checked at its top. */
export function parseJsonPush(body: Buffer): { streams: unknown[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  if (!isObject(parsed) || !Array.isArray(parsed.streams)) throw new AppError('VALIDATION_ERROR', 'The body must be {"streams": [...]}.');
  return parsed as { streams: unknown[] };
}

/** The items of a parsed JSON push, one at a time: `{"streams": [{"stream": {labels}, "values": [["<ns>", "<line>", {metadata}?]]}]}`. */
function* jsonUnits(push: { streams: unknown[] }): Generator<Unit> {
  for (let stream = 0; stream < push.streams.length; stream++) {
    const s = push.streams[stream];
    if (!isObject(s) || !Array.isArray(s.values)) throw new AppError('VALIDATION_ERROR', 'Each stream must be {"stream": {labels}, "values": [...]}.');
    const labels: Record<string, string> = {};
    let labelsError: string | undefined;
    if (s.stream !== undefined && s.stream !== null) {
      if (!isObject(s.stream)) throw new AppError('VALIDATION_ERROR', 'A stream\'s "stream" must be an object of labels.');
      for (const [k, v] of Object.entries(s.stream)) {
        const text = textOf(v);
        if (text === undefined) labelsError = `the stream's labels are ${NESTED_TOO_DEEP}`;
        else put(labels, k, text);
      }
    }
    if (s.values.length === 0) {
      yield { stream, labels, labelsError, bytes: 16 };
      continue;
    }
    for (const v of s.values) {
      const entry = jsonEntry(v);
      yield { stream, labels, labelsError, entry, bytes: 16 + (typeof entry.line === 'string' ? entry.line.length : 0) };
    }
  }
}

function jsonEntry(v: unknown): Entry {
  if (!Array.isArray(v) || v.length < 2) return { ns: { error: 'an entry must be ["<unix epoch in nanoseconds>", "<line>"]' }, line: undefined, metadata: {} };
  const [ts, line, meta] = v as unknown[];
  const digits = typeof ts === 'string' ? ts.trim() : typeof ts === 'number' && Number.isSafeInteger(ts) ? String(ts) : '';
  const metadata: Record<string, string> = {};
  if (isObject(meta)) {
    for (const [k, val] of Object.entries(meta)) {
      const text = textOf(val);
      if (text === undefined) return { ns: { error: `the entry's structured metadata is ${NESTED_TOO_DEEP}` }, line, metadata: {} };
      put(metadata, k, text);
    }
  }
  return { ns: /^\d{1,25}$/.test(digits) ? digits : { error: 'the entry\'s time must be a string of Unix epoch nanoseconds' }, line, metadata };
}

/** The streams of the items, gathered again (for callers that want the whole push at once). */
function gather(units: Iterable<Unit>): Stream[] {
  const streams: Stream[] = [];
  for (const u of units) {
    let s = streams[streams.length - 1];
    if (s === undefined || streams.length - 1 !== u.stream) {
      s = { labels: u.labels, entries: [] };
      if (u.labelsError !== undefined) s.labelsError = u.labelsError;
      streams.push(s);
    }
    if (u.entry) s.entries.push(u.entry);
  }
  return streams;
}

/** A protobuf body, snappy-compressed unless `compressed` is false, as its streams; a body that is neither is a 400. */
export function decodeProtobufPush(body: Buffer, compressed: boolean): Stream[] {
  return gather(protobufUnits(compressed ? unsnappy(body) : body));
}

/** A JSON body as its streams: `{"streams": [{"stream": {labels}, "values": [["<ns>", "<line>", {metadata}?]]}]}`. */
export function decodeJsonPush(body: Buffer): Stream[] {
  return gather(jsonUnits(parseJsonPush(body)));
}

/** One entry as a log object, or why it cannot be one. */
function entryItem(labels: Record<string, string>, labelsError: string | undefined, entry: Entry): BodyItem {
  if (labelsError !== undefined) return { error: labelsError };
  if (typeof entry.ns !== 'string' && 'error' in entry.ns) return { error: entry.ns.error };
  if (typeof entry.line !== 'string') return { error: 'the entry\'s line must be a string' };
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
  return { value: log };
}

/** The logs of a push, in order: each entry a log object, or why it cannot be one. Every entry, and every stream with none, counts against the item cap. */
export function pushItems(streams: Stream[]): BodyItem[] {
  const items: BodyItem[] = [];
  let counted = 0;
  for (const { labels, labelsError, entries } of streams) {
    if (entries.length === 0 && ++counted > MAX_LOGS_PER_REQUEST) throw tooMany();
    for (const entry of entries) {
      if (++counted > MAX_LOGS_PER_REQUEST) throw tooMany();
      items.push(entryItem(labels, labelsError, entry));
    }
  }
  return items;
}

/** A push's items are read at most this many at a time… */
export const PUSH_SLICE_ITEMS = 1000;
/** …or past this many bytes of the body, then the event loop gets a turn before the next slice. */
export const PUSH_SLICE_BYTES = 256 * 1024;

/** Work the sliced push reader did in this process, for tests that bound it: slices, items read, and the most items one slice read. */
export const pushReading = { slices: 0, items: 0, mostItemsInASlice: 0 };

/**
 * Reads a push's items in slices (PUSH_SLICE_ITEMS items or PUSH_SLICE_BYTES of the body, the first
 * at once and each after it in an event-loop turn of its own), counting every item, whatever its
 * kind, against the request's cap (413 past it) and, through `charge`, against the plan's rate
 * once its slice is read and before the next is: `charge(others, logs)` takes the slice's items
 * that are no logs and checks the bucket for the logs read so far (which the ingest path takes).
 * A stream with no entries is an item and no log.
 */
export async function readPush(source: { protobuf: Uint8Array } | { json: { streams: unknown[] } }, charge: (others: number, logs: number) => void): Promise<{ items: BodyItem[]; counted: number }> {
  const units = 'protobuf' in source ? protobufUnits(source.protobuf) : jsonUnits(source.json);
  const items: BodyItem[] = [];
  let counted = 0;
  let logs = 0;
  let done = false;
  const slice = () => {
    pushReading.slices++;
    let n = 0;
    const logsBefore = logs;
    let bytes = 0;
    while (n < PUSH_SLICE_ITEMS && bytes < PUSH_SLICE_BYTES) {
      const next = units.next();
      if (next.done) {
        done = true;
        break;
      }
      pushReading.items++;
      if (++counted > MAX_LOGS_PER_REQUEST) throw tooMany();
      n++;
      const u = next.value;
      bytes += u.bytes;
      if (u.entry) {
        const item = entryItem(u.labels, u.labelsError, u.entry);
        items.push(item);
        if (!('error' in item)) logs++;
      }
    }
    pushReading.mostItemsInASlice = Math.max(pushReading.mostItemsInASlice, n);
    // This slice's items that are no logs (streams with no entries, entries that cannot be read)
    // take their tokens; the bucket must also hold every log read so far.
    charge(n - (logs - logsBefore), logs);
  };
  slice();
  while (!done) await heavyWork.run(slice);
  return { items, counted };
}
