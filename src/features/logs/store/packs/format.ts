/**
 * A pack: one block of a project's logs (the skip index's block, seqs first..last) stored as one
 * compressed unit once it is older than COMPACT_AFTER. Column by column, so that like lies next to
 * like for the codec: seqs and times as varint deltas, levels as bytes, sources as a small
 * dictionary, messages and metadata as their lengths then their texts. Metadata objects are split
 * further by path (see `MetadataColumns`): every value of `req.url` lies next to the other urls,
 * which is most of what a columnar layout wins over compressing the rows as they are.
 *
 * Layout: byte FORMAT, byte codec (codec.ts), varint length of the raw body, then the body as the
 * codec left it. This module is pure (no database, no codec): the caller compresses `encodeBody`'s
 * bytes and decompresses before `decodeBody`.
 *
 * A pack may hold 32 MiB of text (packs/read.ts PACK_BYTES_PER_LOG): decoded in one go, that is a
 * few hundred milliseconds in which the event loop answers nobody. So decoding is a sequence of
 * steps of at most DECODE_STEP_BYTES of the body each (`decodeSteps`): `decodeBody` runs them in
 * one go (for threads of their own), `decodeBodySliced` a slice of at most DECODE_SLICE_BYTES per
 * turn of the event loop (for reads).
 */

import type { LogsTable } from '../../../../db/types.js';
import { nextTurn } from '../../turns.js';

/** A log as a pack holds it: a stored row without its project (the pack's). */
export type PackedLog = Omit<LogsTable, 'project_id'>;

export const FORMAT = 1;

/** A growable byte buffer with varint and string writers. */
class Writer {
  bytes = new Uint8Array(1024);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
  }

  byte(b: number): void {
    this.room(1);
    this.bytes[this.length++] = b;
  }

  /** An unsigned integer up to 2^53, 7 bits a byte. */
  uint(n: number): void {
    this.room(8);
    while (n >= 0x80) {
      this.bytes[this.length++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.bytes[this.length++] = n;
  }

  /** A signed integer, zigzag-encoded. */
  int(n: number): void {
    this.uint(n < 0 ? -2 * n - 1 : 2 * n);
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.bytes.set(b, this.length);
    this.length += b.length;
  }

  done(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

class Reader {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new Error('pack: truncated');
    return this.bytes[this.at++]!;
  }

  uint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new Error('pack: bad varint');
    }
  }

  int(): number {
    const z = this.uint();
    return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }

  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw new Error('pack: truncated');
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
}

const encoder = new TextEncoder();

/** Bytes of a pack's body one step of its decoding reads at most (a piece of a text column, say). */
export const DECODE_STEP_BYTES = 64 * 1024;
/** Bytes of a pack's body decoded per turn of the event loop at most, by decodeBodySliced (a few milliseconds' work). */
export const DECODE_SLICE_BYTES = 1024 * 1024;

/**
 * A decoding in steps: each yields the bytes of the body it is about to read (at most
 * DECODE_STEP_BYTES), then reads them when resumed; the logs are its return value.
 */
type Steps<T> = Generator<number, T, void>;

/** `read(i)` for i in 0..n-1 (the numbers of a column, each a byte of the body at least), DECODE_STEP_BYTES of them a step. */
function* numbers(n: number, read: (i: number) => void): Steps<void> {
  for (let i = 0; i < n; i++) {
    if (i % DECODE_STEP_BYTES === 0) yield Math.min(DECODE_STEP_BYTES, n - i);
    read(i);
  }
}

/**
 * Texts as a column: every length (in UTF-16 units, +1 when `nullable` so that 0 is null), then
 * all the texts as one UTF-8 run, encoded and decoded in one call each. Texts here come from the
 * database or from JSON.stringify, so they hold no lone surrogate, which UTF-8 could not carry.
 */
function writeTexts(out: Writer, texts: readonly (string | null)[], nullable: boolean): void {
  for (const t of texts) out.uint(t === null ? 0 : t.length + (nullable ? 1 : 0));
  const run = encoder.encode(texts.join(''));
  out.uint(run.length);
  out.raw(run);
}

function* readTexts(input: Reader, n: number, nullable: boolean): Steps<(string | null)[]> {
  const lengths: number[] = [];
  yield* numbers(n, () => lengths.push(input.uint()));
  const run = input.take(input.uint());
  // The run is decoded a step at a time, as the texts need it; a character split between two steps
  // is held by the decoder until its last byte comes. A text starting with U+FEFF keeps it (the
  // decoder would otherwise take it for a byte-order mark at the start of the run).
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let at = 0;
  let pending = '';
  const out: (string | null)[] = [];
  for (const len of lengths) {
    if (nullable && len === 0) {
      out.push(null);
      continue;
    }
    const size = nullable ? len - 1 : len;
    while (pending.length < size) {
      if (at >= run.length) throw new Error('pack: text column short');
      const end = Math.min(run.length, at + DECODE_STEP_BYTES);
      yield end - at;
      pending += decoder.decode(run.subarray(at, end), { stream: end < run.length });
      at = end;
    }
    out.push(pending.slice(0, size));
    pending = pending.slice(size);
  }
  return out;
}

/**
 * Metadata by path. Each log's metadata text is parsed; when writing the parsed value back gives
 * the very same text (so it is what the service stored: normalise.ts writes JSON.stringify's
 * output), the object is taken apart: its shape (its keys and kinds, in order: a text kept once in
 * the shapes dictionary) and its leaves (strings and numbers, as their JSON texts), each appended
 * to its path's column. Otherwise (and for anything but an object) the text is kept whole in the
 * `whole` column. Reading writes each object's JSON text back from its shape and the next value of
 * each of its paths' columns, without making the object.
 *
 * A shape is a sequence of tokens: `o<n>\0` an object of n keys, each key as its JSON text and
 * `\0` then its value; `a<n>\0` an array; `l` a leaf; `t`, `f`, `z` true, false, null.
 */
const OBJ = 0x6f; // 'o'
const ARR = 0x61; // 'a'
const LEAF = 0x6c; // 'l'
const TRUE = 0x74; // 't'
const FALSE = 0x66; // 'f'
const NULL = 0x7a; // 'z'

/**
 * Takes a JSON text without whitespace apart into its shape and its leaves, copying keys and leaves
 * verbatim (so writing them back in the shape's order gives the same text, whatever escapes it
 * used); false when the text is anything else (whitespace, not JSON), which is then kept whole.
 * One pass over the characters: no parse, no object. The scanner's state lives in the module (one
 * text at a time, never re-entered) and the arrays it fills are reused: a pack's encoding calls it
 * for each of its thousands of logs, and the closures and arrays made per call were a sixth of the
 * encoding's time (3.4 → 2.8 µs a realistic log).
 */
function scan(text: string, shape: string[], leaves: string[]): boolean {
  // The shape separates with U+0000: a text holding a raw one (never in JSON.stringify's output) is kept whole.
  if (text.indexOf('\u0000') >= 0) return false;
  scanText = text;
  scanAt = 0;
  scanShape = shape;
  scanLeaves = leaves;
  const ok = scanValue(0) && scanAt === text.length;
  scanText = '';
  return ok;
}

let scanText = '';
let scanAt = 0;
let scanShape: string[] = [];
let scanLeaves: string[] = [];

/** The end (exclusive) of the string starting at `from` (a quote), or -1. */
function stringEnd(text: string, from: number): number {
  let i = from + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0) return -1;
    let slashes = 0;
    for (let j = q - 1; j > from && text.charCodeAt(j) === 0x5c; j--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

function scanValue(depth: number): boolean {
  const text = scanText;
  const n = text.length;
  if (depth > 256 || scanAt >= n) return false;
  const shape = scanShape;
  const c = text.charCodeAt(scanAt);
  if (c === 0x7b) {
    // {
    scanAt++;
    const countAt = shape.length;
    shape.push('o', '', '\u0000');
    let keys = 0;
    if (text.charCodeAt(scanAt) === 0x7d) {
      scanAt++;
    } else {
      for (;;) {
        if (text.charCodeAt(scanAt) !== 0x22) return false;
        const end = stringEnd(text, scanAt);
        if (end < 0 || text.charCodeAt(end) !== 0x3a) return false;
        shape.push(text.slice(scanAt, end), '\u0000');
        scanAt = end + 1;
        keys++;
        if (!scanValue(depth + 1)) return false;
        const next = text.charCodeAt(scanAt++);
        if (next === 0x7d) break;
        if (next !== 0x2c) return false;
      }
    }
    shape[countAt + 1] = String(keys);
    return true;
  }
  if (c === 0x5b) {
    // [
    scanAt++;
    const countAt = shape.length;
    shape.push('a', '', '\u0000');
    let items = 0;
    if (text.charCodeAt(scanAt) === 0x5d) {
      scanAt++;
    } else {
      for (;;) {
        items++;
        if (!scanValue(depth + 1)) return false;
        const next = text.charCodeAt(scanAt++);
        if (next === 0x5d) break;
        if (next !== 0x2c) return false;
      }
    }
    shape[countAt + 1] = String(items);
    return true;
  }
  if (c === 0x22) {
    const end = stringEnd(text, scanAt);
    if (end < 0) return false;
    shape.push('l');
    scanLeaves.push(text.slice(scanAt, end));
    scanAt = end;
    return true;
  }
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    const from = scanAt;
    let at = scanAt;
    while (at < n) {
      const d = text.charCodeAt(at);
      if ((d >= 0x30 && d <= 0x39) || d === 0x2d || d === 0x2b || d === 0x2e || d === 0x65 || d === 0x45) at++;
      else break;
    }
    scanAt = at;
    shape.push('l');
    scanLeaves.push(text.slice(from, at));
    return true;
  }
  if (c === 0x74 && text.startsWith('true', scanAt)) {
    scanAt += 4;
    shape.push('t');
    return true;
  }
  if (c === 0x66 && text.startsWith('false', scanAt)) {
    scanAt += 5;
    shape.push('f');
    return true;
  }
  if (c === 0x6e && text.startsWith('null', scanAt)) {
    scanAt += 4;
    shape.push('z');
    return true;
  }
  return false;
}

/**
 * A shape read back as a template: literal JSON text, and for each leaf its path (numbers in
 * `leaves` order, the index into `paths`). `paths[i]` names leaf i's place in the document.
 */
function templateOf(shape: string): { parts: (string | number)[]; paths: string[] } {
  const parts: (string | number)[] = [];
  const paths: string[] = [];
  let at = 0;
  let literal = '';
  const until0 = () => {
    const end = shape.indexOf('\u0000', at);
    if (end < 0) throw new Error('pack: bad metadata shape');
    const text = shape.slice(at, end);
    at = end + 1;
    return text;
  };
  const count = () => {
    const n = Number(until0());
    if (!Number.isSafeInteger(n) || n < 0 || n > shape.length) throw new Error('pack: bad metadata shape');
    return n;
  };
  const value = (path: string): void => {
    const kind = shape.charCodeAt(at++);
    if (kind === OBJ) {
      const n = count();
      literal += '{';
      for (let i = 0; i < n; i++) {
        const key = until0();
        literal += (i === 0 ? '' : ',') + key + ':';
        value(`${path}\u0002${key}`);
      }
      literal += '}';
    } else if (kind === ARR) {
      const n = count();
      literal += '[';
      for (let i = 0; i < n; i++) {
        if (i > 0) literal += ',';
        value(`${path}\u0001${i}`);
      }
      literal += ']';
    } else if (kind === LEAF) {
      parts.push(literal);
      literal = '';
      parts.push(paths.length);
      paths.push(path);
    } else if (kind === TRUE) literal += 'true';
    else if (kind === FALSE) literal += 'false';
    else if (kind === NULL) literal += 'null';
    else throw new Error('pack: bad metadata kind');
  };
  value('');
  if (at !== shape.length) throw new Error('pack: bad metadata shape');
  parts.push(literal);
  return { parts, paths };
}

/** Columns of leaves by path, as a pack's logs give them. */
class MetadataColumns {
  private readonly shapes = new Map<string, { id: number; columns: number[] }>();
  private readonly shapeOf: number[] = [];
  private readonly paths = new Map<string, number>();
  private readonly columns: string[][] = [];
  private readonly whole: string[] = [];
  private readonly shapeParts: string[] = [];
  private readonly leaves: string[] = [];

  add(text: string | null): void {
    if (text === null) {
      this.shapeOf.push(0);
      return;
    }
    // Reused from log to log: one text's parts at a time.
    const shapeParts = this.shapeParts;
    const leaves = this.leaves;
    shapeParts.length = 0;
    leaves.length = 0;
    if (text.charCodeAt(0) !== 0x7b || !scan(text, shapeParts, leaves)) {
      this.shapeOf.push(1);
      this.whole.push(text);
      return;
    }
    const key = shapeParts.join('');
    let shape = this.shapes.get(key);
    if (!shape) {
      const columns = templateOf(key).paths.map((path) => {
        let column = this.paths.get(path);
        if (column === undefined) {
          column = this.columns.length;
          this.paths.set(path, column);
          this.columns.push([]);
        }
        return column;
      });
      shape = { id: this.shapes.size + 2, columns };
      this.shapes.set(key, shape);
    }
    this.shapeOf.push(shape.id);
    for (let i = 0; i < leaves.length; i++) this.columns[shape.columns[i]!]!.push(leaves[i]!);
  }

  write(out: Writer): void {
    out.uint(this.shapes.size);
    writeTexts(out, [...this.shapes.keys()], false);
    for (const id of this.shapeOf) out.uint(id);
    out.uint(this.whole.length);
    writeTexts(out, this.whole, false);
    // The columns in the order their paths were first met; a reader finds the same order from the
    // shapes, in their order, so the paths themselves need not be written.
    for (const column of this.columns) {
      out.uint(column.length);
      writeTexts(out, column, false);
    }
  }
}

/** Reads MetadataColumns back, one log's metadata text at a time, in order. */
class MetadataReader {
  private readonly templates: { parts: (string | number)[]; columns: number[] }[] = [];
  private readonly shapeOf: number[] = [];
  private whole: string[] = [];
  private wholeAt = 0;
  private readonly columns: { values: string[]; at: number }[] = [];
  private log = 0;

  /** The reader of the metadata of `n` logs at `input`, read in steps. */
  static *read(input: Reader, n: number): Steps<MetadataReader> {
    const reader = new MetadataReader();
    const shapes = (yield* readTexts(input, input.uint(), false)) as string[];
    const paths = new Map<string, number>();
    for (const shape of shapes) {
      yield shape.length;
      const t = templateOf(shape);
      const columns = t.paths.map((path) => {
        let column = paths.get(path);
        if (column === undefined) paths.set(path, (column = paths.size));
        return column;
      });
      reader.templates.push({ parts: t.parts, columns });
    }
    yield* numbers(n, () => reader.shapeOf.push(input.uint()));
    reader.whole = (yield* readTexts(input, input.uint(), false)) as string[];
    for (let i = 0; i < paths.size; i++) reader.columns.push({ values: (yield* readTexts(input, input.uint(), false)) as string[], at: 0 });
    return reader;
  }

  /** The parts the next log's metadata text is made of (the work of `next`). */
  partsOfNext(): number {
    const id = this.shapeOf[this.log];
    return id === undefined || id < 2 ? 1 : (this.templates[id - 2]?.parts.length ?? 1);
  }

  next(): string | null {
    const id = this.shapeOf[this.log++];
    if (id === 0) return null;
    if (id === 1) {
      if (this.wholeAt >= this.whole.length) throw new Error('pack: metadata column short');
      return this.whole[this.wholeAt++]!;
    }
    const template = this.templates[id! - 2];
    if (template === undefined) throw new Error('pack: unknown metadata shape');
    let text = '';
    for (const part of template.parts) {
      if (typeof part === 'string') text += part;
      else {
        const column = this.columns[template.columns[part]!]!;
        if (column.at >= column.values.length) throw new Error('pack: metadata column short');
        text += column.values[column.at++]!;
      }
    }
    return text;
  }
}

/** Encodes logs (any order; kept as given) as a pack's body, before compression. */
export function encodeBody(logs: readonly PackedLog[]): Uint8Array {
  const out = new Writer();
  const n = logs.length;
  out.uint(n);
  let prev = 0;
  for (const l of logs) {
    out.int(l.seq - prev);
    prev = l.seq;
  }
  prev = 0;
  for (const l of logs) {
    out.int(l.ts - prev);
    prev = l.ts;
  }
  // Received times lie close to the log's own time far more often than to each other's.
  for (const l of logs) out.int(l.received_at - l.ts);
  for (const l of logs) out.byte(l.level);
  const sources = new Map<string, number>();
  for (const l of logs) if (l.source !== null && !sources.has(l.source)) sources.set(l.source, sources.size + 1);
  out.uint(sources.size);
  writeTexts(out, [...sources.keys()], false);
  for (const l of logs) out.uint(l.source === null ? 0 : sources.get(l.source)!);
  writeTexts(
    out,
    logs.map((l) => l.message),
    false,
  );
  const metadata = new MetadataColumns();
  for (const l of logs) metadata.add(l.metadata);
  metadata.write(out);
  return out.done();
}

/**
 * The logs of a pack's body in steps, each bounded by the bytes of the body it reads (a number
 * counts one), and a step per log at the end, which puts the logs together: a log's metadata text
 * made of its parts, counted as one byte a part (no text is copied there; the parts are joined
 * where the text is first read whole).
 */
function* decodeSteps(body: Uint8Array): Steps<PackedLog[]> {
  const input = new Reader(body);
  const n = input.uint();
  if (n > body.length) throw new Error('pack: bad count');
  const seqs: number[] = [];
  let prev = 0;
  yield* numbers(n, () => seqs.push((prev += input.int())));
  const tss: number[] = [];
  prev = 0;
  yield* numbers(n, () => tss.push((prev += input.int())));
  const received: number[] = [];
  yield* numbers(n, (i) => received.push(tss[i]! + input.int()));
  // The levels are a view of the body's bytes: nothing is read here.
  const levels = input.take(n);
  const sourceNames = (yield* readTexts(input, input.uint(), false)) as string[];
  const sourceOf: (string | null)[] = [];
  yield* numbers(n, () => {
    const id = input.uint();
    sourceOf.push(id === 0 ? null : (sourceNames[id - 1] ?? null));
  });
  const messages = (yield* readTexts(input, n, false)) as string[];
  const metadata = yield* MetadataReader.read(input, n);
  const out: PackedLog[] = [];
  for (let i = 0; i < n; i++) {
    yield metadata.partsOfNext();
    out.push({ seq: seqs[i]!, ts: tss[i]!, received_at: received[i]!, level: levels[i]!, source: sourceOf[i]!, message: messages[i]!, metadata: metadata.next() });
  }
  return out;
}

/** What pack decodings have done in this process: turns of the event loop and the most bytes decoded in one (tests check the bound). */
export interface DecodeStats {
  /** Bodies decoded. */
  packs: number;
  /** Turns of the event loop they took, together. */
  turns: number;
  /** The most bytes of a body decoded in one turn. */
  maxTurnBytes: number;
}

const stats: DecodeStats = { packs: 0, turns: 0, maxTurnBytes: 0 };

export const decodeStats = (): DecodeStats => ({ ...stats });

/** Starts the counts again (tests measure one read's decodings). */
export function resetDecodeStats(): void {
  stats.packs = 0;
  stats.turns = 0;
  stats.maxTurnBytes = 0;
}

function countTurn(bytes: number): void {
  stats.turns++;
  stats.maxTurnBytes = Math.max(stats.maxTurnBytes, bytes);
}

/** The logs of a pack's body, in the order they were encoded: in one go, on the calling thread. */
export function decodeBody(body: Uint8Array): PackedLog[] {
  const steps = decodeSteps(body);
  let bytes = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) {
      stats.packs++;
      countTurn(bytes);
      return step.value;
    }
    bytes += step.value;
  }
}

/**
 * decodeBody, in slices of at most `sliceBytes` of the body (one step more when a single step is
 * larger), with a turn of the event loop between two: what waits for I/O runs in between.
 */
export async function decodeBodySliced(body: Uint8Array, sliceBytes = DECODE_SLICE_BYTES): Promise<PackedLog[]> {
  const steps = decodeSteps(body);
  let bytes = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) {
      stats.packs++;
      countTurn(bytes);
      return step.value;
    }
    if (bytes > 0 && bytes + step.value > sliceBytes) {
      countTurn(bytes);
      await nextTurn();
      bytes = 0;
    }
    bytes += step.value;
  }
}

/** A pack's header, before the compressed body. */
export function header(codec: number, rawLength: number): Uint8Array {
  const out = new Writer();
  out.byte(FORMAT);
  out.byte(codec);
  out.uint(rawLength);
  return out.done();
}

export function readHeader(pack: Uint8Array): { format: number; codec: number; rawLength: number; bodyAt: number } {
  const input = new Reader(pack);
  const format = input.byte();
  if (format !== FORMAT) throw new Error(`pack: unknown format ${format}`);
  const codec = input.byte();
  const rawLength = input.uint();
  return { format, codec, rawLength, bodyAt: input.at };
}
