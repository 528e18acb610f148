/**
 * Reading a shipper's record into a log (docs/integrations.md, "Reading a record"): the one set of
 * rules every protocol adapter uses (Elasticsearch documents; later Loki JSON lines and HEC
 * events), so that a field means the same thing whichever shipper sent it. The result is a log
 * object as POST /v1/logs takes it, which normaliseLog then checks and stores like any other.
 *
 * - message: the first string among `message`, `msg`, `log`, `_msg`; a `message` that is itself an
 *   object is read by these rules one level deep (its fields join the record's). No message: the
 *   log is kept with an empty one, every field in metadata.
 * - level: `log.level` (dotted or nested, as ECS writes it), `level`, `severity`, `lvl`, the first
 *   present; a value the level rules do not know leaves the level `info` and stays in metadata.
 * - timestamp: `@timestamp`, `timestamp`, `time`, `ts`; ISO 8601, or a number (or a string of
 *   one) read as seconds below 10^11, milliseconds below 10^14, microseconds below 10^17, else
 *   nanoseconds.
 * - source: the protocol's own fields first (`service.name` for Elasticsearch), then `source`,
 *   then the protocol's default (an Elasticsearch action's index).
 * - everything else is metadata, nested objects kept; the protocol's own fields are merged over it.
 */
import { parseLevel } from '../levels.js';

export interface RecordOptions {
  /** Fields naming the source before `source`, as dotted paths (`service.name`: a key `"service.name"` or `{"service": {"name"}}`). */
  sourceFields?: readonly string[];
  /** The source when the record names none. */
  defaultSource?: string;
  /** The protocol's own fields (labels, host, index…), merged over the record's metadata. */
  extra?: Record<string, unknown>;
  /** The fields naming the level, in order, when the protocol has its own (Loki's `detected_level`). */
  levelFields?: readonly string[];
}

/** A record as POST /v1/logs takes a log. */
export interface LogObject {
  message: string;
  timestamp?: string | number;
  level?: unknown;
  source?: string;
  metadata: Record<string, unknown>;
}

const MESSAGE_FIELDS = ['message', 'msg', 'log', '_msg'];
const LEVEL_FIELDS = ['log.level', 'level', 'severity', 'lvl'];
const TIME_FIELDS = ['@timestamp', 'timestamp', 'time', 'ts'];

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sets a field; `__proto__` stays a plain field (assigning it would set the object's prototype). */
export function put(o: Fields, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/**
 * Where a dotted path's value is: the key itself (`"log.level"`), or nested objects (`log: {level}`).
 * Undefined when the record holds neither.
 */
function find(fields: Fields, path: string): { value: unknown; key: string; rest?: string } | undefined {
  if (Object.hasOwn(fields, path)) return { value: fields[path], key: path };
  const dot = path.indexOf('.');
  if (dot < 0) return undefined;
  const head = path.slice(0, dot);
  const parent = Object.hasOwn(fields, head) ? fields[head] : undefined;
  if (!isObject(parent)) return undefined;
  const inner = find(parent, path.slice(dot + 1));
  return inner && { value: inner.value, key: head, rest: path.slice(dot + 1) };
}

/** `value` (an object) without the field at the dotted `path`; undefined when nothing else is left. */
function without(value: Fields, path: string): Fields | undefined {
  const found = find(value, path);
  const out: Fields = {};
  let kept = 0;
  for (const key of Object.keys(value)) {
    if (found && key === found.key) {
      if (found.rest === undefined) continue;
      const inner = without(value[key] as Fields, found.rest);
      if (inner === undefined) continue;
      put(out, key, inner);
    } else put(out, key, value[key]);
    kept++;
  }
  return kept > 0 ? out : undefined;
}

/**
 * A moment in epoch milliseconds as POST /v1/logs reads a timestamp: the number itself (read as
 * milliseconds from 10^11 on, 1973), else its ISO text; undefined when it is no moment.
 */
export function timeOfMs(ms: number): string | number | undefined {
  if (!Number.isFinite(ms)) return undefined;
  const t = Math.trunc(ms);
  if (t >= 1e11 && t <= 8.64e15) return t;
  const date = new Date(t);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A time given as a number by its magnitude (see above); undefined when it is no time. */
function timeFromNumber(n: number): string | number | undefined {
  if (!Number.isFinite(n)) return undefined;
  const abs = Math.abs(n);
  return timeOfMs(abs < 1e11 ? n * 1000 : abs < 1e14 ? n : abs < 1e17 ? n / 1000 : n / 1e6);
}

/** A time given as a string of digits, exactly (a nanosecond epoch has more digits than a double holds). */
function timeFromDigits(digits: string): string | number | undefined {
  const n = BigInt(digits);
  const abs = n < 0n ? -n : n;
  const ms = abs < 10n ** 11n ? n * 1000n : abs < 10n ** 14n ? n : abs < 10n ** 17n ? n / 1000n : n / 1_000_000n;
  return ms > BigInt(-8.64e15) && ms < BigInt(8.64e15) ? timeOfMs(Number(ms)) : undefined;
}

/** The record's time: an ISO string as given, or a number read by its magnitude; other values as given (normaliseLog refuses them). */
function readTime(value: unknown): unknown {
  if (typeof value === 'number') return timeFromNumber(value) ?? value;
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (/^-?\d{1,30}$/.test(text)) return timeFromDigits(text) ?? value;
  if (/^-?\d+\.\d+$/.test(text)) return timeFromNumber(Number(text)) ?? value;
  return value;
}

export function readRecord(record: Fields, options: RecordOptions = {}): LogObject {
  let fields = record;
  // A `message` object (splunk-logging's): its fields join the record's, one level deep.
  if (isObject(record.message)) {
    fields = {};
    for (const key of Object.keys(record)) if (key !== 'message') put(fields, key, record[key]);
    for (const key of Object.keys(record.message)) put(fields, key, record.message[key]);
  }

  // Which fields the log's own parts come from; the record is not changed (metadata is built
  // without them, in one pass: no field is deleted from an object, which would slow every later use).
  /** Top-level keys taken whole, and dotted paths taken out of a nested object (by its top-level key). */
  const taken = new Set<string>();
  const takenWithin = new Map<string, string[]>();
  const take = (at: { key: string; rest?: string }) => {
    if (at.rest === undefined) taken.add(at.key);
    else takenWithin.set(at.key, [...(takenWithin.get(at.key) ?? []), at.rest]);
  };

  let message = '';
  for (const name of MESSAGE_FIELDS) {
    const v = fields[name];
    if (typeof v === 'string' && Object.hasOwn(fields, name)) {
      message = v;
      taken.add(name);
      break;
    }
  }

  let level: unknown;
  for (const name of options.levelFields ?? LEVEL_FIELDS) {
    const at = find(fields, name);
    if (at === undefined || at.value === undefined || at.value === null) continue;
    // The first level given decides; one the rules do not know stays in metadata and the log is info.
    if (parseLevel(at.value) !== undefined) {
      level = at.value;
      take(at);
    }
    break;
  }

  let timestamp: unknown;
  for (const name of TIME_FIELDS) {
    const v = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (v === undefined || v === null) continue;
    timestamp = readTime(v);
    taken.add(name);
    break;
  }

  let source: string | undefined;
  for (const name of [...(options.sourceFields ?? []), 'source']) {
    const at = find(fields, name);
    if (at !== undefined && typeof at.value === 'string' && at.value !== '') {
      source = at.value;
      take(at);
      break;
    }
  }
  source ??= options.defaultSource;

  const metadata: Fields = {};
  for (const key of Object.keys(fields)) {
    if (taken.has(key)) continue;
    const within = takenWithin.get(key);
    let value: unknown = fields[key];
    if (within) {
      let rest: Fields | undefined = value as Fields;
      for (const path of within) rest = rest && without(rest, path);
      if (rest === undefined) continue;
      value = rest;
    }
    put(metadata, key, value);
  }
  if (options.extra) for (const key of Object.keys(options.extra)) put(metadata, key, options.extra[key]);
  const log: LogObject = { message, metadata };
  if (timestamp !== undefined) log.timestamp = timestamp as string | number;
  if (level !== undefined) log.level = level;
  if (source !== undefined) log.source = source;
  return log;
}
