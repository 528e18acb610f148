/**
 * Syslog messages (RFC 5424 and RFC 3164, told apart by their shape) and their framing on a stream
 * (RFC 6587: octet counting, or a newline after each message), with no sockets and no storage: the
 * listeners (syslog-listeners.ts) feed bytes in and store the logs through the ingest path.
 * docs/integrations.md, "Syslog", says how a message becomes a log.
 */
import { put, type LogObject } from './record.js';

/** A message is at most this many bytes; a longer one is cut here and marked `truncated`. */
export const MAX_SYSLOG_BYTES = 64 * 1024;

const FACILITIES = ['kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp', 'ntp', 'security', 'console', 'solaris-cron', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7'];
/** Severity 0–7 → the level's name: emergency, alert, critical → fatal; error; warning → warn; notice, informational → info; debug. */
const LEVELS = ['fatal', 'fatal', 'fatal', 'error', 'warn', 'info', 'info', 'debug'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A message read: its project key (from its loglane element; undefined: none given) and its log,
 * or `keyProblem` when it holds a loglane element that does not read as one (the message is then
 * refused: it is never stored under SYSLOG_DEFAULT_KEY, where the key it meant would be kept as text).
 */
export interface SyslogMessage {
  key: string | undefined;
  log: LogObject;
  keyProblem?: string;
}

/** A parameter's name: up to its `=` or to whatever ends it. */
const NAME = /[^=\s\]"]*/y;

/** One structured data element `[id name="value" …]`, values with \" \\ \] escapes; undefined when malformed. */
function readElement(text: string, at: number): { id: string; params: Record<string, string>; end: number } | undefined {
  if (text[at] !== '[') return undefined;
  at++;
  const idEnd = text.slice(at, at + 256).search(/[ \]]/);
  if (idEnd <= 0) return undefined;
  const id = text.slice(at, at + idEnd);
  at += idEnd;
  const params: Record<string, string> = {};
  while (text[at] === ' ') {
    at++;
    // The name runs to its `=`; a space, `]` or `"` first and the element does not read (looked for
    // no further than that, so a malformed element costs its own length, not the rest of the text).
    NAME.lastIndex = at;
    const eq = NAME.exec(text) === null ? -1 : NAME.lastIndex;
    if (eq <= at || text[eq] !== '=' || text[eq + 1] !== '"') return undefined;
    const name = text.slice(at, eq);
    at = eq + 2;
    let value = '';
    for (;;) {
      if (at >= text.length) return undefined;
      const c = text[at++]!;
      if (c === '"') break;
      if (c === '\\' && (text[at] === '"' || text[at] === '\\' || text[at] === ']')) value += text[at++];
      else value += c;
    }
    put(params, name, value);
  }
  if (text[at] !== ']') return undefined;
  return { id, params, end: at + 1 };
}

/** Structured data: `-`, or elements one after another; undefined when malformed. Returns the elements and where they end. */
function readStructuredData(text: string, at: number): { sd: Record<string, Record<string, string>>; end: number } | undefined {
  const sd: Record<string, Record<string, string>> = {};
  if (text[at] === '-') return { sd, end: at + 1 };
  while (text[at] === '[') {
    const element = readElement(text, at);
    if (!element) return undefined;
    at = element.end;
    // A repeated SD-ID keeps its first element (RFC 5424 §6.3.2 forbids repeats).
    if (!Object.hasOwn(sd, element.id)) put(sd, element.id, element.params);
  }
  return { sd, end: at };
}

/** The SD-ID of the key's element: `loglane` or `loglane@<enterprise number>`, in any case. */
const isKeyElementId = (id: string) => /^loglane(@|$)/i.test(id);

/**
 * Where a loglane element starts, in any form of message and anywhere in it (structured data,
 * header, message text): `[loglane` in any case, spaces allowed after the bracket, and not the
 * start of a longer word. Each is read as an element; one that does not read is a problem.
 */
const KEY_ELEMENT = /\[\s*loglane(?![A-Za-z0-9_.-])/gi;

interface KeyElement {
  start: number;
  end: number;
  key: string | undefined;
}

/** The loglane elements of `text`, each read (key undefined: it did not read, or holds no key). */
function keyElements(text: string): KeyElement[] {
  const found: KeyElement[] = [];
  KEY_ELEMENT.lastIndex = 0;
  for (let m = KEY_ELEMENT.exec(text); m !== null; m = KEY_ELEMENT.exec(text)) {
    const element = readElement(text, m.index);
    if (element && isKeyElementId(element.id)) {
      const key = element.params.key;
      found.push({ start: m.index, end: element.end, key: key !== undefined && key !== '' ? key : undefined });
      KEY_ELEMENT.lastIndex = element.end;
    } else {
      // To the end of what could be its element, so the key it meant is never kept. The message is
      // refused for it, so no later element is read (each would scan on to the end of the text).
      const close = text.indexOf(']', m.index);
      found.push({ start: m.index, end: close < 0 ? text.length : close + 1, key: undefined });
      break;
    }
  }
  return found;
}

/** `text` without the spans `[start, end)` (in order), with the space before each span taken too when there is one. */
function cut(text: string, spans: { start: number; end: number }[]): string {
  let out = '';
  let at = 0;
  for (const { start, end } of spans) {
    if (start < at) continue;
    out += text.slice(at, start > at && text[start - 1] === ' ' && text[end] === ' ' ? start - 1 : start);
    at = end;
  }
  return out + text.slice(at);
}

/** `text` cut to at most `max` bytes of UTF-8, on a character's boundary; undefined when it fits. */
export function cutUtf8(text: string, max: number): string | undefined {
  if (text.length * 3 <= max || Buffer.byteLength(text) <= max) return undefined;
  const bytes = Buffer.from(text, 'utf8');
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * A frame's bytes as text: UTF-8, with bytes that are not (Latin-1, broken sequences) read as
 * U+FFFD; a frame the framing cut loses the incomplete character at its end, not a whole message.
 */
export function decodeSyslog(bytes: Buffer, truncated: boolean): string {
  let end = bytes.length;
  if (truncated) {
    // Back to the start of the last character; drop it when its bytes are not all there.
    let start = end - 1;
    while (start > 0 && end - start < 4 && (bytes[start]! & 0xc0) === 0x80) start--;
    const lead = bytes[start]!;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (start >= 0 && end - start < need) end = start;
  }
  return bytes.toString('utf8', 0, end);
}

/** The year-less time of RFC 3164 (`Nov 28 13:10:00`), read in UTC in the current year, or the previous one when that would be more than a day ahead. */
function bsdTime(month: string, day: string, time: string, now: number): string | undefined {
  const m = MONTHS.indexOf(month);
  if (m < 0) return undefined;
  const [hh, mm, ss] = time.split(':').map(Number) as [number, number, number];
  const year = new Date(now).getUTCFullYear();
  let t = Date.UTC(year, m, Number(day), hh, mm, ss);
  if (t > now + 86_400_000) t = Date.UTC(year - 1, m, Number(day), hh, mm, ss);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

const nil = (v: string | undefined) => (v === undefined || v === '-' ? undefined : v);

/** A message's text (no framing) → its key and log; `truncated` when the framing cut it. */
export function parseSyslog(text: string, now: number, truncated = false): SyslogMessage {
  let pri = 13; // user.notice, for a message without one
  let rest = text;
  const priMatch = /^<(\d{1,3})>/.exec(text);
  if (priMatch && Number(priMatch[1]) <= 191) {
    pri = Number(priMatch[1]);
    rest = text.slice(priMatch[0].length);
  }
  const metadata: Record<string, unknown> = { facility: FACILITIES[pri >> 3] ?? String(pri >> 3) };
  const level = LEVELS[pri & 7]!;
  let key: string | undefined;
  let timestamp: string | undefined;
  let source: string | undefined;
  let message: string;

  // The key's element, wherever it is and in whatever form the message is: read, and never stored.
  const elements = keyElements(rest);
  for (const e of elements) {
    if (e.key === undefined) return { key: undefined, log: { message: '', level, metadata }, keyProblem: 'a loglane element does not read as [loglane@… key="…"]' };
    if (key !== undefined && e.key !== key) return { key: undefined, log: { message: '', level, metadata }, keyProblem: 'loglane elements with different keys' };
    key = e.key;
  }

  // RFC 5424: VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [MSG].
  const h = /^1 (\S+) (\S+) (\S+) (\S+) (\S+) /.exec(rest);
  // A loglane element in the header is no header: the message is read as RFC 3164, without it.
  const sd = h && !elements.some((e) => e.start < h[0].length) ? readStructuredData(rest, h[0].length) : undefined;
  if (h && sd && (sd.end === rest.length || rest[sd.end] === ' ')) {
    const [, time, hostname, app, procid, msgid] = h;
    timestamp = nil(time);
    if (nil(hostname)) metadata.hostname = hostname;
    source = nil(app);
    if (nil(procid)) metadata.procid = procid;
    if (nil(msgid)) metadata.msgid = msgid;
    for (const id of Object.keys(sd.sd)) if (isKeyElementId(id)) delete sd.sd[id];
    if (Object.keys(sd.sd).length > 0) metadata.sd = sd.sd;
    const from = sd.end + 1;
    message = cut(rest.slice(from), elements.filter((e) => e.start >= from).map((e) => ({ start: e.start - from, end: e.end - from })));
    if (message.startsWith('\uFEFF')) message = message.slice(1);
  } else {
    rest = cut(rest, elements);
    // RFC 3164: TIMESTAMP HOSTNAME TAG[PID]: MSG, read leniently (senders vary).
    const t = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d:\d\d:\d\d) /.exec(rest);
    if (t) {
      timestamp = bsdTime(t[1]!, t[2]!, t[3]!, now);
      rest = rest.slice(t[0].length);
      // A hostname, unless the next word is already the tag.
      const host = /^([^\s:[\]]+) (?=\S)/.exec(rest);
      if (host && !/^[^\s:[\]]+(\[[^\]]*\])?:/.test(rest)) {
        metadata.hostname = host[1];
        rest = rest.slice(host[0].length);
      }
    }
    const tag = /^([^\s:[\]]{1,48})(?:\[([^\]]{0,32})\])?: ?/.exec(rest);
    if (tag) {
      source = tag[1];
      if (tag[2]) metadata.procid = tag[2];
      rest = rest.slice(tag[0].length);
    }
    message = rest;
  }
  if (message.endsWith('\n')) message = message.slice(0, -1);
  // Text of more than 64 KiB once read (bytes that were not UTF-8 read as U+FFFD take three) is cut on a character.
  const shorter = cutUtf8(message, MAX_SYSLOG_BYTES);
  if (shorter !== undefined) {
    message = shorter;
    truncated = true;
  }
  if (truncated) metadata.truncated = true;
  const log: LogObject = { message, level, metadata };
  if (timestamp !== undefined) log.timestamp = timestamp;
  if (source !== undefined) log.source = source;
  return { key, log };
}

/** A frame cut from a stream: its bytes, and whether it was longer than MAX_SYSLOG_BYTES (cut). */
export interface Frame {
  bytes: Buffer;
  truncated: boolean;
}

/**
 * Cuts a TCP stream into messages (RFC 6587): each frame is octet-counted (`<length> <message>`)
 * when it starts with a digit, else ends at a newline. Holds at most one message's bytes
 * (MAX_SYSLOG_BYTES) however the stream is cut into chunks or however long a frame claims to be:
 * past that the frame is cut and the rest of it skipped.
 */
export class SyslogFramer {
  /** A frame not yet complete, in the chunks it came in (joined only once it can complete: a frame sent a byte at a time costs no more than one sent whole). */
  #parts: Buffer[] = [];
  #partsBytes = 0;
  /** What the incomplete frame waits for: its bytes in all (octet counting), or a newline (-1). */
  #need = -1;
  /** Bytes copied to join chunks so far (tests check that a frame is joined once, not once per chunk). */
  copied = 0;
  /** Bytes still to skip of a frame already cut. */
  #skip = 0;
  /** In newline framing, a frame already cut: skip to its newline. */
  #skipLine = false;

  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    this.read(chunk, (f) => {
      frames.push(f);
      return true;
    });
    return frames;
  }

  /**
   * Hands each frame of `chunk` to `take` as it is cut; when `take` answers false, stops after that
   * frame and returns the bytes of the chunk not yet read (to be given again later, before any
   * newer bytes: a reader that must stop taking messages puts them back on its stream).
   */
  read(chunk: Buffer, take: (frame: Frame) => boolean): Buffer | undefined {
    if (this.#parts.length > 0) {
      const total = this.#partsBytes + chunk.length;
      const waits = this.#need >= 0 ? total < this.#need : total < MAX_SYSLOG_BYTES && chunk.indexOf(0x0a) < 0;
      if (waits) {
        this.#parts.push(chunk);
        this.#partsBytes = total;
        return undefined;
      }
    }
    if (this.#parts.length > 0) this.copied += this.#partsBytes + chunk.length;
    let data = this.#parts.length > 0 ? Buffer.concat([...this.#parts, chunk]) : chunk;
    this.#parts = [];
    this.#partsBytes = 0;
    this.#need = -1;
    const rest = (d: Buffer) => (d.length > 0 ? d : undefined);
    for (;;) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, data.length);
        this.#skip -= n;
        data = data.subarray(n);
        if (this.#skip > 0) return undefined;
      }
      if (this.#skipLine) {
        const nl = data.indexOf(0x0a);
        if (nl < 0) return undefined;
        this.#skipLine = false;
        data = data.subarray(nl + 1);
      }
      // Blank separators between frames.
      let start = 0;
      while (start < data.length && (data[start] === 0x0a || data[start] === 0x0d || data[start] === 0x20 || data[start] === 0)) start++;
      data = data.subarray(start);
      if (data.length === 0) return undefined;
      const first = data[0]!;
      if (first >= 0x31 && first <= 0x39) {
        // Octet counting: up to 10 digits, a space, then that many bytes.
        let i = 0;
        while (i < data.length && i <= 10 && data[i]! >= 0x30 && data[i]! <= 0x39) i++;
        if (i === data.length && i <= 10) return this.#hold(data, 0);
        if (i <= 10 && data[i] === 0x20) {
          const length = Number(data.subarray(0, i).toString('latin1'));
          const body = data.subarray(i + 1);
          if (length > MAX_SYSLOG_BYTES) {
            if (body.length < MAX_SYSLOG_BYTES) return this.#hold(data, i + 1 + MAX_SYSLOG_BYTES);
            const frame = { bytes: Buffer.from(body.subarray(0, MAX_SYSLOG_BYTES)), truncated: true };
            this.#skip = length - MAX_SYSLOG_BYTES;
            data = body.subarray(MAX_SYSLOG_BYTES);
            if (!take(frame)) return rest(data);
            continue;
          }
          if (body.length < length) return this.#hold(data, i + 1 + length);
          const frame = { bytes: Buffer.from(body.subarray(0, length)), truncated: false };
          data = body.subarray(length);
          if (!take(frame)) return rest(data);
          continue;
        }
        // Digits not followed by a space: not a count; read the frame as a line.
      }
      const nl = data.indexOf(0x0a);
      if (nl < 0) {
        if (data.length >= MAX_SYSLOG_BYTES) {
          const frame = { bytes: Buffer.from(data.subarray(0, MAX_SYSLOG_BYTES)), truncated: true };
          this.#skipLine = true;
          data = data.subarray(MAX_SYSLOG_BYTES);
          if (!take(frame)) return rest(data);
          continue;
        }
        return this.#hold(data, -1);
      }
      const line = data.subarray(0, nl > 0 && data[nl - 1] === 0x0d ? nl - 1 : nl);
      const frame = line.length > MAX_SYSLOG_BYTES ? { bytes: Buffer.from(line.subarray(0, MAX_SYSLOG_BYTES)), truncated: true } : { bytes: Buffer.from(line), truncated: false };
      data = data.subarray(nl + 1);
      if (!take(frame)) return rest(data);
    }
  }

  /** Keeps the start of a frame not yet complete; `need`: its bytes in all, or -1 (a newline), or 0 (a count not yet read whole). */
  #hold(data: Buffer, need: number): undefined {
    this.copied += data.length;
    this.#parts = [Buffer.from(data)];
    this.#partsBytes = data.length;
    this.#need = need === 0 ? data.length + 1 : need;
    return undefined;
  }

  /** Bytes held for a frame not yet complete (at most MAX_SYSLOG_BYTES and a count's digits). */
  get held(): number {
    return this.#partsBytes;
  }

  /** What is held when the stream ends: a last frame without its newline (an octet-counted one cut short is not a message). */
  end(): Frame[] {
    const rest = Buffer.concat(this.#parts);
    const counted = this.#need >= 0;
    this.#parts = [];
    this.#partsBytes = 0;
    this.#need = -1;
    if (counted || this.#skip > 0 || this.#skipLine || rest.length === 0) return [];
    return [{ bytes: rest, truncated: false }];
  }
}
