/**
 * Splunk's HTTP Event Collector (docs/integrations.md, "Splunk HEC"), with no HTTP and no storage:
 * the routes (hec-routes.ts) store the logs through the ingest path.
 *
 * An event body is one or more JSON events, back to back or a line each: `{"time", "host",
 * "source", "sourcetype", "index", "event": "<text>" | {object}, "fields": {...}}`. A text event is
 * the message; an object event is read as a record (record.ts). `source` is the source; `host`,
 * `sourcetype`, `index` and `fields` go to metadata. A raw body is lines of text, one log each.
 */
import { AppError } from '../../../errors.js';
import { MAX_LOGS_PER_REQUEST, type BodyItem } from './body.js';
import { NESTED_TOO_DEEP, shallowJson } from './nesting.js';
import { readRecord, timeOfMs } from './record.js';

/** HEC's answer codes (its documentation's table). */
export const HEC = {
  success: { text: 'Success', code: 0 },
  tokenRequired: { text: 'Token is required', code: 2 },
  invalidToken: { text: 'Invalid token', code: 4 },
  noData: { text: 'No data', code: 5 },
  invalidFormat: { text: 'Invalid data format', code: 6 },
  busy: { text: 'Server is busy', code: 9 },
  healthy: { text: 'HEC is healthy', code: 17 },
} as const;

/** An event body the collector cannot read: where (0-based event number) and why. */
export class HecFormatError extends Error {
  constructor(
    readonly eventNumber: number,
    reason: string,
  ) {
    super(reason);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The JSON texts of a body of back-to-back objects (whitespace between them allowed), one at a time;
 * `{ badAt }` where one is not an object, and nothing after it. One at a time, so that a body of
 * millions of tiny events is read no further than the item cap or its first bad event.
 */
function* splitEvents(text: string): Generator<string | { badAt: number }> {
  let at = 0;
  for (let n = 0; ; n++) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    if (at >= text.length) return;
    if (text[at] !== '{') {
      yield { badAt: n };
      return;
    }
    let depth = 0;
    let inString = false;
    let end = -1;
    for (let i = at; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (c === 0x5c) i++;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) {
          end = i + 1;
          break;
        }
      }
    }
    if (end < 0) {
      yield { badAt: n };
      return;
    }
    yield text.slice(at, end);
    at = end;
  }
}

/** HEC's `time`: epoch seconds with decimals, a number or a string of one; as an ISO string. */
function hecTime(value: unknown): unknown {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : undefined;
  if (n === undefined || !Number.isFinite(n)) return value;
  // Seconds, as HEC defines it; a client sending milliseconds (past 10^11) is read as such.
  return timeOfMs(n < 1e11 ? n * 1000 : n) ?? value;
}

const MESSAGE_FIELDS = ['message', 'msg', 'log', '_msg'];

/** Docker's `splunk` driver puts the line in `line`: the message, when the event names no other. */
function dockerLine(event: Record<string, unknown>): Record<string, unknown> {
  if (typeof event.line !== 'string' || MESSAGE_FIELDS.some((k) => typeof event[k] === 'string')) return event;
  const { line, ...rest } = event;
  return { ...rest, message: line };
}

/**
 * The logs of an event body, in order. Events after one that cannot be read are not read:
 * `badAt` says which (HEC's `invalid-event-number`), and the events before it are stored.
 */
export function eventItems(text: string): { items: BodyItem[]; bad?: HecFormatError } {
  const items: BodyItem[] = [];
  let bad: HecFormatError | undefined;
  let n = -1;
  for (const t of splitEvents(text)) {
    n++;
    if (typeof t !== 'string') {
      bad = new HecFormatError(t.badAt, 'the body is not a sequence of JSON objects');
      break;
    }
    if (items.length === MAX_LOGS_PER_REQUEST) throw new AppError('PAYLOAD_TOO_LARGE', `A request carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} events.`);
    let event: unknown;
    try {
      event = JSON.parse(t);
    } catch {
      bad = new HecFormatError(n, 'the event is not valid JSON');
      break;
    }
    if (!isObject(event) || !('event' in event) || event.event === null || event.event === undefined || event.event === '') {
      bad = new HecFormatError(n, 'an event needs its "event" field');
      break;
    }
    const { event: body, time, host, source, sourcetype, index, fields } = event;
    const extra: Record<string, unknown> = {};
    if (host !== undefined) extra.host = host;
    if (sourcetype !== undefined) extra.sourcetype = sourcetype;
    if (index !== undefined) extra.index = index;
    if (fields !== undefined) extra.fields = fields;
    // An event that is neither text nor an object is kept as its JSON text, unless it nests too
    // deep to be written as text: then it is refused alone (400 naming it), as a log nested too deep is.
    const asText = typeof body === 'string' || isObject(body) ? undefined : shallowJson(body);
    if (!isObject(body) && typeof body !== 'string' && asText === undefined) {
      items.push({ error: `the event is ${NESTED_TOO_DEEP}` });
      continue;
    }
    const record = isObject(body) ? dockerLine(body) : { message: typeof body === 'string' ? body : asText };
    // HEC's own `source` names the source over anything in the event.
    const log = readRecord(typeof source === 'string' && source !== '' ? { ...record, source } : record, { extra });
    if (time !== undefined && time !== null) log.timestamp = hecTime(time) as string | number;
    items.push({ value: log });
  }
  return { items, bad };
}

/** The logs of a raw body: a line of text each (blank lines skipped), with the request's source and sourcetype. */
export function rawItems(text: string, query: { source?: string; sourcetype?: string; host?: string }): BodyItem[] {
  const items: BodyItem[] = [];
  // Line by line, without splitting the whole body first: blank lines cost a scan, not an array.
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf('\n', at);
    const line = text.slice(at, end < 0 ? text.length : end);
    at = end < 0 ? text.length : end + 1;
    const message = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (message.trim() === '') continue;
    if (items.length === MAX_LOGS_PER_REQUEST) throw new AppError('PAYLOAD_TOO_LARGE', `A request carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} lines.`);
    const metadata: Record<string, unknown> = {};
    if (query.sourcetype) metadata.sourcetype = query.sourcetype;
    if (query.host) metadata.host = query.host;
    items.push({ value: { message, ...(query.source ? { source: query.source } : {}), metadata } });
  }
  return items;
}
