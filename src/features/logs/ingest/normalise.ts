import { parseLevel } from '../levels.js';
import type { LogRow } from '../store/writer.js';
import { parseTime } from '../query/text.js';

/** The limits for one log (docs/api.md, "Log ingestion"). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
export const MAX_METADATA_BYTES = 64 * 1024;
export const MAX_SOURCE_CHARS = 200;
/**
 * Metadata may nest objects and arrays at most this deep (the metadata object itself is level 1).
 * Deeper structures are refused, log by log: serialising or walking them would overflow the stack
 * (JSON.stringify fails somewhere past a few thousand levels), and no query can reach that far.
 */
export const MAX_METADATA_DEPTH = 32;
export const TOO_DEEP = `metadata is nested more than ${MAX_METADATA_DEPTH} levels deep`;
/** A numeric timestamp below this is in seconds, not milliseconds (10^11 ms is March 1973). */
const EPOCH_SECONDS_BELOW = 1e11;
/** Timestamps further ahead than this are refused: a clock that far off would sort above everything. */
export const MAX_FUTURE_MS = 24 * 3_600_000;


export type Normalised = { ok: true; row: LogRow } | { ok: false; message: string };

/** Fields with a meaning of their own; any other top-level field is kept in metadata. */
const KNOWN = new Set(['message', 'msg', 'timestamp', 'time', 'level', 'source', 'metadata']);

/**
 * Log text is data from shippers, kept rather than refused: PostgreSQL cannot store NUL in text,
 * and neither engine stores a lone surrogate as such (SQLite wrote three U+FFFD for one, PostgreSQL
 * one). Both become one U+FFFD here, so both engines store and answer the same text.
 */
const NUL = /\u0000/g;
const clean = (s: string) => {
  const formed = s.isWellFormed() ? s : s.toWellFormed();
  return formed.includes('\u0000') ? formed.replace(NUL, '\ufffd') : formed;
};

export const TOO_BIG = 'metadata is larger than 64 KiB serialised';

/**
 * What checking logs cost, for a caller that bounds it: `work` grows by the characters a log's
 * checks walked (its metadata's serialised size, up to where the walk stopped) and its message.
 */
export interface NormaliseMeter {
  work: number;
}

/**
 * Why metadata cannot be stored, found before it is serialised: nested more than
 * MAX_METADATA_DEPTH levels (JSON.stringify of a deep enough value throws), or surely larger than
 * MAX_METADATA_BYTES once serialised. One walk, which stops at the depth limit and as soon as a
 * lower bound of the serialised size (a byte at least per UTF-16 unit of text, per scalar and per
 * bracket) passes the size limit, so a large or deep value costs no more than the limits allow; the
 * exact size is checked on the serialised text.
 */
function metadataProblem(value: unknown, meter?: NormaliseMeter): string | undefined {
  let bytes = 0;
  try {
    return walk(value, MAX_METADATA_DEPTH);
  } finally {
    if (meter) meter.work += bytes;
  }
  function walk(v: unknown, levels: number): string | undefined {
    if (typeof v === 'string') bytes += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') bytes += 1;
    else if (v === null) bytes += 4;
    else if (typeof v === 'object') {
      if (levels <= 0) return TOO_DEEP;
      bytes += 2;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const problem = walk(v[i], levels - 1);
          if (problem) return problem;
        }
      } else {
        // As JSON.stringify: own keys only, and a member whose value serialises to nothing
        // (undefined, a function) adds nothing.
        const o = v as Record<string, unknown>;
        for (const key of Object.keys(o)) {
          const member = o[key];
          if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
          bytes += key.length + 3;
          const problem = walk(member, levels - 1);
          if (problem) return problem;
        }
      }
    }
    return bytes > MAX_METADATA_BYTES ? TOO_BIG : undefined;
  }
}

/** UTF-8 takes at most 3 bytes per UTF-16 unit, so most strings need no byte count at all. */
function tooLong(s: string, maxBytes: number): boolean {
  return s.length * 3 > maxBytes && Buffer.byteLength(s) > maxBytes;
}

function parseTimestamp(value: unknown, receivedAt: number): number | string {
  if (value === undefined || value === null) return receivedAt;
  let ms: number;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'timestamp must be an ISO 8601 string or epoch milliseconds';
    // Below 10^11 a number is epoch seconds (as Fluent Bit's `double` and `epoch` formats and many
    // loggers write): read as milliseconds it would be a moment in 1970–73 that nobody logs.
    ms = Math.abs(value) < EPOCH_SECONDS_BELOW ? Math.trunc(value * 1000) : Math.trunc(value);
  } else if (typeof value === 'string') {
    // Read as queries read a time (`from`, `to`, `timestamp:`): without an offset it is UTC, never
    // the server's local time. Digits alone in a string are refused: neither ISO nor a number.
    const text = value.trim();
    const parsed = /^\d*$/.test(text) ? undefined : parseTime(text);
    if (parsed === undefined) return 'timestamp must be an ISO 8601 string or epoch milliseconds';
    ms = parsed;
  } else {
    return 'timestamp must be an ISO 8601 string or epoch milliseconds';
  }
  if (ms < 0) return 'timestamp must not be before 1970';
  if (ms > receivedAt + MAX_FUTURE_MS) return 'timestamp is more than 24 hours in the future';
  return ms;
}

/**
 * Checks one log and brings it to its stored form. `msg` and `time` are accepted for `message` and
 * `timestamp` (pino writes those), and `log` for a message when there is none (Docker, Fluent Bit);
 * other top-level fields join `metadata`.
 */
export function normaliseLog(input: unknown, receivedAt: number, meter?: NormaliseMeter): Normalised {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, message: 'a log must be a JSON object' };
  const log = input as Record<string, unknown>;

  // Docker's json-file driver and Fluent Bit put the line in `log`: taken as the message when there is no other.
  const fromLog = (log.message === undefined || log.message === null) && (log.msg === undefined || log.msg === null) && typeof log.log === 'string';
  const message = fromLog ? log.log : (log.message ?? log.msg);
  if (message === undefined || message === null) return { ok: false, message: 'message is required' };
  if (typeof message !== 'string') return { ok: false, message: 'message must be a string' };
  if (meter) meter.work += message.length;
  if (tooLong(message, MAX_MESSAGE_BYTES)) return { ok: false, message: 'message is longer than 64 KiB' };

  const ts = parseTimestamp(log.timestamp ?? log.time, receivedAt);
  if (typeof ts === 'string') return { ok: false, message: ts };

  let level = 2;
  if (log.level !== undefined && log.level !== null) {
    const parsed = parseLevel(log.level);
    if (parsed === undefined) return { ok: false, message: 'level must be trace, debug, info, warn, error or fatal (or a common alias or pino number)' };
    level = parsed;
  }

  let source: string | null = null;
  if (log.source !== undefined && log.source !== null) {
    if (typeof log.source !== 'string') return { ok: false, message: 'source must be a string' };
    if (log.source.length > MAX_SOURCE_CHARS && [...log.source].length > MAX_SOURCE_CHARS) return { ok: false, message: 'source is longer than 200 characters' };
    source = log.source.length > 0 ? clean(log.source) : null;
  }

  const meta = log.metadata;
  if (meta !== undefined && meta !== null && (typeof meta !== 'object' || Array.isArray(meta))) {
    return { ok: false, message: 'metadata must be a JSON object' };
  }
  let metadata: string | null = null;
  let extra = false;
  const known = (key: string) => KNOWN.has(key) || (fromLog && key === 'log');
  for (const key in log) {
    if (!known(key)) {
      extra = true;
      break;
    }
  }
  if (extra) {
    // Object.entries/fromEntries copy own properties only, so a "__proto__" key stays plain data.
    const entries = [...Object.entries(log).filter(([k]) => !known(k)), ...Object.entries((meta as Record<string, unknown> | undefined) ?? {})];
    const merged = Object.fromEntries(entries);
    const problem = metadataProblem(merged, meter);
    if (problem) return { ok: false, message: problem };
    metadata = JSON.stringify(merged);
  } else if (meta !== undefined && meta !== null) {
    const problem = metadataProblem(meta, meter);
    if (problem) return { ok: false, message: problem };
    metadata = JSON.stringify(meta);
    if (metadata === '{}') metadata = null;
  }
  if (metadata !== null && tooLong(metadata, MAX_METADATA_BYTES)) return { ok: false, message: TOO_BIG };

  return { ok: true, row: { ts, level, source, message: clean(message), metadata } };
}
