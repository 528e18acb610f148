import { levelName, type Level } from './levels.js';

/** A log as the API shows it. */
export interface Log {
  id: string;
  timestamp: string;
  receivedAt: string;
  level: Level;
  message: string;
  source: string | null;
  metadata: Record<string, unknown>;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A log's id: `log_` and its seq in 13 characters of Crockford base32, so ids sort in the order the
 * project's logs were committed. The seq numbers the project's own logs (1 for its first, on both
 * engines), so an id says nothing about other projects' traffic.
 */
export function logId(seq: number): string {
  let out = '';
  let n = seq;
  for (let i = 0; i < 13; i++) {
    out = ALPHABET[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return `log_${out}`;
}

/**
 * `new Date(ms).toISOString()`, with the text of recent seconds remembered (a small direct-mapped
 * cache): logs come in runs of nearby timestamps, and formatting dates is most of the cost of
 * presenting one.
 */
function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  const slot = second & (ISO_SLOTS - 1);
  let prefix = isoPrefixes[slot];
  if (isoSeconds[slot] !== second || prefix === undefined) {
    const iso = new Date(second * 1000).toISOString(); // …T12:34:56.000Z
    if (iso.length !== 24) return new Date(ms).toISOString(); // years beyond 9999 (or before 0)
    prefix = iso.slice(0, 20);
    isoSeconds[slot] = second;
    isoPrefixes[slot] = prefix;
  }
  const frac = ms - second * 1000;
  return `${prefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
}
const ISO_SLOTS = 256;
const isoSeconds = new Float64Array(ISO_SLOTS).fill(Number.NaN);
const isoPrefixes: (string | undefined)[] = new Array(ISO_SLOTS);

export function presentLog(row: { seq: number; ts: number; received_at: number; level: number; source: string | null; message: string; metadata: string | null }): Log {
  return {
    id: logId(Number(row.seq)),
    timestamp: new Date(Number(row.ts)).toISOString(),
    receivedAt: new Date(Number(row.received_at)).toISOString(),
    level: levelName(Number(row.level)),
    message: row.message,
    source: row.source,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : {},
  };
}

/**
 * The same Log as JSON text, built without parsing the stored metadata (it is stored as the JSON
 * text of an object already). This is what search pages and the live tail send: it spares a parse and
 * a re-serialisation of every log's metadata.
 */
export function logJson(row: { seq: number; ts: number; received_at: number; level: number; source: string | null; message: string; metadata: string | null }): string {
  return `{"id":"${logId(Number(row.seq))}","timestamp":"${isoTime(Number(row.ts))}","receivedAt":"${isoTime(Number(row.received_at))}","level":"${levelName(Number(row.level))}","message":${JSON.stringify(row.message)},"source":${row.source === null ? 'null' : JSON.stringify(row.source)},"metadata":${row.metadata ?? '{}'}}`;
}

/** A stored log that may carry its SSE frame, so a batch is serialised once however many tails take it. */
type Framed = { seq: number; ts: number; received_at: number; level: number; source: string | null; message: string; metadata: string | null; sseFrame?: string };

/** A log as one Server-Sent Event of the live tail: `id` is its seq in the project, for Last-Event-ID. */
export function sseFrame(row: Framed): string {
  return (row.sseFrame ??= `id: ${row.seq}\nevent: log\ndata: ${logJson(row)}\n\n`);
}
