/**
 * Text rules of the query language, shared by the parser and the predicate: case folding, words,
 * wildcards, numbers and times. Every comparison "ignoring case" in the language goes through
 * fold(): NFC, then the simple Unicode lower-case mapping.
 */

/** U+0130 is the only code point whose full lower-case mapping differs from its simple one; Σ's full mapping depends on context (final sigma). */
const SPECIAL_LOWER = /[\u0130\u03a3]/;

/** Lower-cases with the simple Unicode mapping (one code point to one code point, no context). */
export function lowerSimple(s: string): string {
  if (!SPECIAL_LOWER.test(s)) return s.toLowerCase();
  let out = '';
  for (const c of s) out += c === '\u0130' ? 'i' : c === '\u03a3' ? '\u03c3' : c.toLowerCase();
  return out;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** NFC, then simple lower case: how every text is compared ignoring case. (ASCII is its own NFC form.) */
export function fold(s: string): string {
  return ASCII_ONLY.test(s) ? s.toLowerCase() : lowerSimple(s.normalize('NFC'));
}

/**
 * The non-ASCII code points that fold() turns into ASCII (İ → i, K (Kelvin) → k, U+037E → ;,
 * U+1FEF → `). A text whose folded form contains an ASCII string contains it ASCII-case-insensitively
 * in its raw form, unless it holds one of these.
 */
export const FOLDS_TO_ASCII = /[\u0130\u212a\u037e\u1fef]/;

/**
 * The language's one definition of a word character: a Unicode letter, mark or decimal digit, or
 * `_`. Everything that splits text into words (the predicate's wordsOf, the parser's terms, the
 * skip index's items) goes through isWordCodePoint and eachWord, so a word the index records is
 * exactly a word a query asks for.
 */
const WORD_CLASS = /^[\p{L}\p{M}\p{Nd}_]$/u;
/** ASCII word characters (letters, digits, `_`). */
const ASCII_WORD = new Uint8Array(128).map((_, c) => Number((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95));
/** WORD_CLASS's answer per BMP code point, learnt as met: 0 not yet asked, 1 a word character, 2 not. */
const BMP_WORD = new Uint8Array(0x10000);

/** Whether a code point is a word character (a lone surrogate is not). */
export function isWordCodePoint(cp: number): boolean {
  if (cp < 128) return ASCII_WORD[cp] === 1;
  if (cp < 0x10000) {
    let known = BMP_WORD[cp]!;
    if (known === 0) BMP_WORD[cp] = known = WORD_CLASS.test(String.fromCharCode(cp)) ? 1 : 2;
    return known === 1;
  }
  return WORD_CLASS.test(String.fromCodePoint(cp));
}

/**
 * The one word splitter: calls `emit(from, to)` for each word of `text` (a maximal run of word
 * characters, as UTF-16 offsets), left to right, without cutting the text up; stops when `emit`
 * returns false, and then returns false. Words are compared folded: pass a folded text (fold()).
 */
export function eachWord(text: string, emit: (from: number, to: number) => boolean | void): boolean {
  let start = -1;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    let width = 1;
    let word: boolean;
    if (c < 128) word = ASCII_WORD[c] === 1;
    else {
      const cp = text.codePointAt(i)!;
      if (cp > 0xffff) width = 2;
      word = isWordCodePoint(cp);
    }
    if (word) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (emit(start, i) === false) return false;
      start = -1;
    }
    i += width;
  }
  return start < 0 || emit(start, text.length) !== false;
}

/** The words of a folded text: maximal runs of letters, marks, decimal digits and `_` (eachWord's). */
export function wordsOf(folded: string): string[] {
  const out: string[] = [];
  eachWord(folded, (from, to) => {
    out.push(folded.slice(from, to));
  });
  return out;
}

/** Whether `c` is one code point, and a word character. */
export function isWordChar(c: string): boolean {
  const cp = c.codePointAt(0);
  return cp !== undefined && c.length === (cp > 0xffff ? 2 : 1) && isWordCodePoint(cp);
}

export const isAscii = (s: string): boolean => ASCII_ONLY.test(s);

/** One piece of a wildcard pattern: literal folded text, `*` (any run) or `?` (one code point). */
export type GlobPart = string | typeof STAR | typeof ONE;
export const STAR = 0;
export const ONE = 1;

/**
 * A wildcard pattern, matched against a whole folded text. Segments are what lies between the `*`s;
 * a segment is a list of single code points, with null for `?`.
 */
export interface Glob {
  /** The pattern's literal runs (folded), for prefilters. */
  readonly literals: readonly string[];
  readonly segments: readonly (readonly (string | null)[])[];
  /** Segments as plain strings when no `?` occurs: matched with string search. */
  readonly plain: readonly string[] | null;
}

export function makeGlob(parts: readonly GlobPart[]): Glob {
  const segments: (string | null)[][] = [[]];
  const literals: string[] = [];
  let hasOne = false;
  for (const p of parts) {
    if (p === STAR) segments.push([]);
    else if (p === ONE) {
      hasOne = true;
      segments[segments.length - 1]!.push(null);
    } else {
      literals.push(p);
      for (const c of p) segments[segments.length - 1]!.push(c);
    }
  }
  return { literals, segments, plain: hasOne ? null : segments.map((s) => s.join('')) };
}

/** Whether a glob matches the whole of `text` (already folded). Linear in the text for each segment's search. */
export function globMatch(g: Glob, text: string): boolean {
  if (g.plain) return plainMatch(g.plain, text);
  return pointMatch(g.segments, Array.from(text));
}

function plainMatch(segs: readonly string[], s: string): boolean {
  if (segs.length === 1) return s === segs[0];
  const first = segs[0]!;
  const last = segs[segs.length - 1]!;
  if (s.length < first.length + last.length || !s.startsWith(first) || !s.endsWith(last)) return false;
  const limit = s.length - last.length;
  let pos = first.length;
  for (let i = 1; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    const at = s.indexOf(seg, pos);
    if (at < 0 || at + seg.length > limit) return false;
    pos = at + seg.length;
  }
  return true;
}

function segAt(seg: readonly (string | null)[], t: readonly string[], pos: number): boolean {
  if (pos + seg.length > t.length) return false;
  for (let k = 0; k < seg.length; k++) {
    const c = seg[k];
    if (c !== null && c !== t[pos + k]) return false;
  }
  return true;
}

function pointMatch(segs: readonly (readonly (string | null)[])[], t: readonly string[]): boolean {
  if (segs.length === 1) return segs[0]!.length === t.length && segAt(segs[0]!, t, 0);
  const first = segs[0]!;
  const last = segs[segs.length - 1]!;
  if (t.length < first.length + last.length) return false;
  const limit = t.length - last.length;
  if (!segAt(first, t, 0) || !segAt(last, t, limit)) return false;
  let pos = first.length;
  for (let i = 1; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    const at = findSeg(seg, t, pos, limit);
    if (at < 0) return false;
    pos = at + seg.length;
  }
  return true;
}

/** Shift-And tables of a segment: for each code point, the positions it may stand at (`?` stands anywhere). */
const tables = new WeakMap<readonly (string | null)[], { masks: Map<string, Uint32Array>; other: Uint32Array }>();

function tableOf(seg: readonly (string | null)[]) {
  let table = tables.get(seg);
  if (!table) {
    const words = Math.ceil(seg.length / 32);
    const other = new Uint32Array(words);
    seg.forEach((c, j) => {
      if (c === null) other[j >> 5]! |= 1 << (j & 31);
    });
    const masks = new Map<string, Uint32Array>();
    seg.forEach((c, j) => {
      if (c === null) return;
      let m = masks.get(c);
      if (!m) masks.set(c, (m = Uint32Array.from(other)));
      m[j >> 5]! |= 1 << (j & 31);
    });
    tables.set(seg, (table = { masks, other }));
  }
  return table;
}

/**
 * The leftmost occurrence of a segment (code points, null for `?`) in t[from, limit), or -1. Shift-And:
 * one pass over the text, ⌈length/32⌉ word operations per code point, whatever the text holds.
 */
function findSeg(seg: readonly (string | null)[], t: readonly string[], from: number, limit: number): number {
  const m = seg.length;
  if (m === 0) return from <= limit ? from : -1;
  const { masks, other } = tableOf(seg);
  const words = other.length;
  const state = new Uint32Array(words);
  const top = (m - 1) >> 5;
  const bit = 1 << ((m - 1) & 31);
  for (let i = from; i < limit; i++) {
    const mask = masks.get(t[i]!) ?? other;
    let carry = 1;
    for (let w = 0; w < words; w++) {
      const out = state[w]! >>> 31;
      state[w] = ((state[w]! << 1) | carry) & mask[w]!;
      carry = out;
    }
    if (state[top]! & bit) return i - m + 1;
  }
  return -1;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A decimal number as written (`500`, `-1.5`, `2e3`), or undefined. No spaces, hex, Infinity or NaN. */
export function toNumber(s: string): number | undefined {
  if (s.length > 400 || !NUMBER.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

/** A JSON scalar's text as written in JSON (numbers and booleans), or the string itself; undefined for null, objects and arrays. */
export function scalarText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * An ISO 8601 time (`2026-11-24`, `2026-11-24T00:00:00Z`, with optional seconds, fraction and
 * offset; a space may stand for the `T`, as RFC 3339 allows; without an offset it is UTC, never the
 * server's local time) or epoch milliseconds (digits only), as epoch ms. The one reading of a time
 * a client gives to select logs: `timestamp:` in queries and the `from`/`to` parameters (filter.ts).
 */
export function parseTime(s: string): number | undefined {
  if (/^\d{1,15}$/.test(s)) return Number(s);
  const m = ISO.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(sec);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Number((frac + '000').slice(0, 3));
  let t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (new Date(t).getUTCDate() !== day) return undefined;
  if (year < 100) t = new Date(t).setUTCFullYear(year);
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    t -= sign * (oh * 60 + om) * 60_000;
  }
  return Number.isFinite(t) ? t : undefined;
}
