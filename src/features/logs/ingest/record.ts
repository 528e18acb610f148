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

/** Own enumerable fields copied (a `__proto__` key stays plain data). */
const copy = (o: Fields): Fields => Object.fromEntries(Object.entries(o));

/**
 * The value at a dotted path: the key itself (`"log.level"`), or nested objects (`log: {level}`);
 * `take` removes it from `fields` (a nested parent left empty goes too; parents are copied first,
 * so the caller's objects are not changed).
 */
function at(fields: Fields, path: string, take: boolean): unknown {
  if (Object.hasOwn(fields, path)) {
    const v = fields[path];
    if (take) delete fields[path];
    return v;
  }
  const dot = path.indexOf('.');
  if (dot < 0) return undefined;
  const head = path.slice(0, dot);
  const parent = fields[head];
  if (!isObject(parent) || !Object.hasOwn(fields, head)) return undefined;
  const rest = path.slice(dot + 1);
  if (!take) return at(parent, rest, false);
  const own = copy(parent);
  const v = at(own, rest, true);
  if (v === undefined) return undefined;
  if (Object.keys(own).length === 0) delete fields[head];
  else fields[head] = own;
  return v;
}

/** A time given as a number by its magnitude (see above), as an ISO string; undefined when it is no time. */
function timeFromNumber(n: number): string | undefined {
  if (!Number.isFinite(n)) return undefined;
  const abs = Math.abs(n);
  const ms = abs < 1e11 ? n * 1000 : abs < 1e14 ? n : abs < 1e17 ? n / 1000 : n / 1e6;
  const date = new Date(Math.trunc(ms));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A time given as a string of digits, exactly (a nanosecond epoch has more digits than a double holds). */
function timeFromDigits(digits: string): string | undefined {
  const n = BigInt(digits);
  const abs = n < 0n ? -n : n;
  const ms = abs < 10n ** 11n ? n * 1000n : abs < 10n ** 14n ? n : abs < 10n ** 17n ? n / 1000n : n / 1_000_000n;
  return ms > BigInt(-8.64e15) && ms < BigInt(8.64e15) ? new Date(Number(ms)).toISOString() : undefined;
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
  let fields = copy(record);
  // A `message` object (splunk-logging's): its fields join the record's, one level deep.
  if (isObject(fields.message)) {
    const inner = fields.message;
    delete fields.message;
    fields = { ...fields, ...copy(inner) };
  }

  let message = '';
  for (const name of MESSAGE_FIELDS) {
    const v = fields[name];
    if (typeof v === 'string') {
      message = v;
      delete fields[name];
      break;
    }
  }

  let level: unknown;
  for (const name of options.levelFields ?? LEVEL_FIELDS) {
    const v = at(fields, name, false);
    if (v === undefined || v === null) continue;
    // The first level given decides; one the rules do not know stays in metadata and the log is info.
    if (parseLevel(v) !== undefined) {
      level = v;
      at(fields, name, true);
    }
    break;
  }

  let timestamp: unknown;
  for (const name of TIME_FIELDS) {
    const v = fields[name];
    if (v === undefined || v === null) continue;
    timestamp = readTime(v);
    delete fields[name];
    break;
  }

  let source: string | undefined;
  for (const name of [...(options.sourceFields ?? []), 'source']) {
    const v = at(fields, name, false);
    if (typeof v === 'string' && v !== '') {
      source = v;
      at(fields, name, true);
      break;
    }
  }
  source ??= options.defaultSource;

  const metadata = options.extra ? { ...fields, ...copy(options.extra) } : fields;
  const log: LogObject = { message, metadata };
  if (timestamp !== undefined) log.timestamp = timestamp as string | number;
  if (level !== undefined) log.level = level;
  if (source !== undefined) log.source = source;
  return log;
}
