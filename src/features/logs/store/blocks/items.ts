/**
 * What the skip index records of a log, and what a query needs a block to hold. Both sides use the
 * query language's own text rules (query/text.ts), so an item a query asks for is exactly an item
 * a matching log gives:
 * - `w:<word>`: a word of the message or of a metadata value (folded, as bare terms compare);
 * - `s:<source>`: the source, folded;
 * - `p:<path>`: a metadata path that holds a value other than null (as `@path:*` asks);
 * - `v:<path>=s:<text>`: a string (or true, false, null) at the path, folded, as `@path:value` compares;
 * - `v:<path>=#<number>`: a number at the path, as JSON numbers compare.
 * A path's name in an item is pathName's, the one function both sides use: the keys from the root
 * joined with '.' (so nested objects and flat dotted keys give the same item, as the language
 * matches both alike; an empty key is a key like any other), or past MAX_PATH_CHARS a hash of that
 * text.
 *
 * And, in a filter of their own (the block's gram filter), `g:<gram>`: sampled pieces of the
 * message's long words, for substring searches (a legacy `q`, `message:"…"`) of an id that the
 * words cannot answer (`q=c0ffee42…` may lie inside any word). See GRAM_CHARS.
 */
import type { Node, Value, Words } from '../../query/ast.js';
import { eachWord, fold, isAscii, scalarText } from '../../query/text.js';
import { ItemSet } from './bloom.js';

/** A log past these gives no items: its block says "maybe" to every probe. */
export const MAX_ITEMS_PER_LOG = 2_000;
/** Metadata nests at most 32 levels (ingest refuses deeper); arrays nest within that too. */
const MAX_WALK_DEPTH = 64;

export interface IndexedLog {
  source: string | null;
  message: string;
  metadata: string | null;
}

/** Where a log's items go: an item is `prefix` followed by `text[from, to)`. */
interface ItemSink {
  add(prefix: string, text: string, from?: number, to?: number): void;
}

/**
 * Grams: of every message word of at least GRAM_MIN_WORD characters (UTF-16 units, folded), the
 * minimizers: in each window of GRAM_WINDOW consecutive GRAM_CHARS-character pieces, the piece of
 * least gramHash (the leftmost of equals). A window's choice depends on its characters alone, so a
 * text of GRAM_MIN_WORD or more word characters that lies inside a word chooses, in each of its
 * windows, a piece the word chose too: a block whose gram filter lacks one of the text's grams
 * holds no message containing it. About 2 / (GRAM_WINDOW + 1) of a word's pieces are chosen (a
 * 32-character trace id gives 4 or 5), where every piece would be 27.
 */
export const GRAM_CHARS = 6;
export const GRAM_WINDOW = 11;
export const GRAM_MIN_WORD = GRAM_CHARS + GRAM_WINDOW - 1;
/** A log giving more grams than this (a long base64 word, say) leaves its block without a gram filter. */
export const MAX_GRAMS_PER_LOG = 512;

/** Chooses among a word's pieces (FNV-1a over the UTF-16 units, then a mix): not the filter's hash, just an order both sides share. */
function gramHash(text: string, from: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < from + GRAM_CHARS; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

/** The pieces' hashes of the word being sampled (module state, grown as needed). */
let pieceHashes = new Uint32Array(256);

/**
 * Calls `emit` with the start of each chosen piece of `text[from, to)` (at least GRAM_MIN_WORD
 * long), left to right, each once; stops when `emit` returns false (and returns false).
 */
function eachGram(text: string, from: number, to: number, emit: (at: number) => boolean): boolean {
  const pieces = to - from - GRAM_CHARS + 1;
  if (pieces < GRAM_WINDOW) return true;
  if (pieceHashes.length < pieces) pieceHashes = new Uint32Array(Math.max(pieces, pieceHashes.length * 2));
  const hashes = pieceHashes;
  for (let p = 0; p < pieces; p++) hashes[p] = gramHash(text, from + p);
  let least = -1;
  let emitted = -1;
  for (let start = 0; start + GRAM_WINDOW <= pieces; start++) {
    const end = start + GRAM_WINDOW - 1;
    if (least < start) {
      least = start;
      for (let p = start + 1; p <= end; p++) if (hashes[p]! < hashes[least]!) least = p;
    } else if (hashes[end]! < hashes[least]!) least = end;
    if (least !== emitted) {
      emitted = least;
      if (!emit(from + least)) return false;
    }
  }
  return true;
}

/** A block's grams as its logs give them: `complete` turns false once a log gave more than MAX_GRAMS_PER_LOG. */
export interface GramSet {
  items: ItemSet | Set<string>;
  complete: boolean;
}

/** Where the log being summarised puts its grams (undefined: nowhere), and how many it gave. */
let gramSink: ItemSink | undefined;
let gramsGiven = 0;
let gramText = '';
const emitGram = (at: number): boolean => {
  gramSink!.add('g:', gramText, at, at + GRAM_CHARS);
  return ++gramsGiven <= MAX_GRAMS_PER_LOG;
};

/** Adds the grams of the word `folded[from, to)`; false past the cap. */
function addGrams(folded: string, from: number, to: number): boolean {
  gramText = folded;
  return eachGram(folded, from, to, emitGram);
}

/**
 * The gram items (`g:…`) a message must hold for its folded form to contain `folded` (ASCII), from
 * each run of ASCII word characters in it at least GRAM_MIN_WORD long. The text's last character
 * is left out: a legacy `q` is matched by SQL on the raw message, and there a combining mark after
 * the match may join its last letter into another in the folded message (`e` + U+0301 is `é`).
 */
export function gramsOf(folded: string): string[] {
  if (!isAscii(folded)) return [];
  const text = folded.slice(0, -1);
  const out = new Set<string>();
  eachWord(text, (from, to) => {
    const word = text.slice(from, to).toLowerCase();
    eachGram(word, 0, word.length, (at) => {
      out.add('g:' + word.slice(at, at + GRAM_CHARS));
      return true;
    });
  });
  return [...out];
}

export const isGram = (item: string): boolean => item.startsWith('g:');

/** Where the log being summarised puts its items, and how many it gave (module state: no closure per log). */
const NO_SINK: ItemSink = { add: () => {} };
let sink: ItemSink = NO_SINK;
let given = 0;

/** Adds an item; false once the log gave more than MAX_ITEMS_PER_LOG (distinct or not): it then gives up. */
function add(prefix: string, text: string, from?: number, to?: number): boolean {
  sink.add(prefix, text, from, to);
  return ++given <= MAX_ITEMS_PER_LOG;
}

/** The text whose words are being added, and whether their grams go to gramSink (module state: no closure per text). */
let wordText = '';
let wordGrams = false;
const emitWord = (from: number, to: number): boolean => {
  if (!add('w:', wordText, from, to)) return false;
  if (wordGrams && to - from >= GRAM_MIN_WORD && gramSink && !addGrams(wordText, from, to)) gramSink = undefined;
  return true;
};

/**
 * Adds the words of a folded text (the language's words: query/text.ts eachWord), without cutting
 * the text up, and with `grams` the grams of its long words (to gramSink); false past the cap (a
 * gram past its own cap only ends the grams: gramSink is cleared).
 */
function addWords(folded: string, grams = false): boolean {
  wordText = folded;
  wordGrams = grams;
  return eachWord(folded, emitWord);
}

// ---------------------------------------------------------------------------------------------------
// Paths: one name per path, for the log's side and the query's alike.

/**
 * Past this many characters (UTF-16 units) a path's name is a hash of its text: a long path costs
 * its own items a hash (a rare false "maybe"), never the block its filter.
 */
export const MAX_PATH_CHARS = 512;

/** A path too long to name by its text: its text so far, hashed (two 32-bit lanes) and counted. */
interface LongPath {
  readonly a: number;
  readonly b: number;
  readonly n: number;
}

/**
 * A metadata path as the index names it, built key by key from ROOT (no key yet): the keys joined
 * with '.' while that text is at most MAX_PATH_CHARS long, a LongPath of that same text past it.
 * ROOT is not the path of the empty key ('').
 */
export type PathName = string | LongPath | typeof ROOT;
export const ROOT = null;

/** LongPath's mixing (MurmurHash3's, as bloom.ts), over `text`'s UTF-16 units, after `h`'s. */
function hashOn(h: LongPath, text: string): LongPath {
  let { a, b } = h;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    a ^= k;
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    b ^= k;
    b = (b << 13) | (b >>> 19);
    b = (Math.imul(b, 5) + 0xe6546b64) | 0;
  }
  return { a, b, n: h.n + text.length };
}

const LONG_START: LongPath = { a: 0x3c6ef372, b: 0x2545f491, n: 0 };

/**
 * The path of key `key` inside the path `parent`: the one step both sides take, so that a log's
 * path and a query's path whose keys joined with '.' are the same text have the same name, however
 * that text was cut into keys (nested objects, flat dotted keys, empty keys) and however long.
 */
export function childPath(parent: PathName, key: string): PathName {
  if (parent === ROOT) return key.length <= MAX_PATH_CHARS ? key : hashOn(LONG_START, key);
  if (typeof parent === 'string') {
    if (parent.length + 1 + key.length <= MAX_PATH_CHARS) return parent + '.' + key;
    return hashOn(hashOn(hashOn(LONG_START, parent), '.'), key);
  }
  return hashOn(hashOn(parent, '.'), key);
}

/** The name of a query's path (its segments, as parsed): the keys' steps from ROOT. */
export function pathOf(segments: readonly string[]): PathName {
  let path: PathName = ROOT;
  for (const seg of segments) path = childPath(path, seg);
  return path;
}

/** The text of a query path's name in items (a parsed path has at least one segment). */
const queryPathText = (segments: readonly string[]): string => {
  const path = pathOf(segments);
  return path === ROOT ? '' : pathText(path);
};

/** The text of a path's name in items (not ROOT). A LongPath's starts with U+0000 and '#'. */
export function pathText(path: Exclude<PathName, typeof ROOT>): string {
  if (typeof path === 'string') return path;
  const mix = (h: number) => {
    h ^= path.n;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return (h >>> 0).toString(16).padStart(8, '0');
  };
  return `\u0000#${mix(path.a)}${mix(path.b)}:${path.n}`;
}

/** The metadata walk's stack, as three parallel arrays kept between logs: no tuple per value. */
const walkValues: unknown[] = [];
const walkPaths: PathName[] = [];
const walkDepths: number[] = [];

const sinkOf = (out: ItemSet | Set<string>): ItemSink => (out instanceof ItemSet ? out : { add: (prefix, text, from = 0, to = text.length) => void out.add(prefix + text.slice(from, to)) });

/**
 * Adds a log's items to `out` (an ItemSet: the builder's; or a set of the items' texts), and with
 * `grams` its message's grams to grams.items (grams.complete turns false when the log gives too
 * many). Returns false when the log cannot be summarised within the limits (too many items, metadata
 * nested too deep, metadata that is not JSON): the caller then keeps no filter.
 */
export function addLogItems(log: IndexedLog, out: ItemSet | Set<string>, grams?: GramSet): boolean {
  sink = sinkOf(out);
  given = 0;
  gramSink = grams?.complete ? sinkOf(grams.items) : undefined;
  gramsGiven = 0;
  try {
    if (!addWords(fold(log.message), gramSink !== undefined)) return false;
    if (grams?.complete && gramSink === undefined) grams.complete = false;
    if (log.source !== null && !add('s:', fold(log.source))) return false;
    return log.metadata === null || addMetadataItems(log.metadata);
  } finally {
    // Nothing of this log's metadata, nor the caller's set, stays reachable from the module.
    walkValues.length = walkPaths.length = walkDepths.length = 0;
    sink = NO_SINK;
    gramSink = undefined;
    gramText = '';
    wordText = '';
  }
}

/** The items of a log's metadata (JSON text), walked without recursion; false past the limits or when it is not JSON. */
function addMetadataItems(metadata: string): boolean {
  let meta: unknown;
  try {
    meta = JSON.parse(metadata);
  } catch {
    return false;
  }
  walkValues.length = walkPaths.length = walkDepths.length = 0;
  walkValues.push(meta);
  walkPaths.push(ROOT);
  walkDepths.push(0);
  while (walkValues.length > 0) {
    const v = walkValues.pop();
    const path = walkPaths.pop()!;
    const depth = walkDepths.pop()!;
    if (v === undefined) continue;
    if (depth > MAX_WALK_DEPTH) return false;
    const name = path === ROOT ? undefined : pathText(path);
    // null equals `@path:null` but does not exist for `@path:*`.
    if (v === null) {
      if (name !== undefined && !add(`v:${name}=s:`, 'null')) return false;
      continue;
    }
    if (Array.isArray(v)) {
      for (const el of v) {
        walkValues.push(el);
        walkPaths.push(path);
        walkDepths.push(depth + 1);
      }
      continue;
    }
    if (name !== undefined && !add('p:', name)) return false;
    if (typeof v === 'object') {
      // JSON.parse makes plain objects: every enumerable key is the object's own.
      for (const k in v) {
        walkValues.push((v as Record<string, unknown>)[k]);
        walkPaths.push(childPath(path, k));
        walkDepths.push(depth + 1);
      }
      continue;
    }
    const text = scalarText(v);
    if (text === undefined) continue;
    const folded = fold(text);
    if (!addWords(folded)) return false;
    if (name !== undefined && !(typeof v === 'number' ? add(`v:${name}=#`, String(v)) : add(`v:${name}=s:`, folded))) return false;
  }
  return true;
}

/**
 * What a block must hold for a query to match any of its logs. `maybe` is "cannot tell": such a
 * requirement never rules a block out.
 */
export type Need =
  | { kind: 'maybe' }
  | { kind: 'none' }
  /** `since`: only filters of that format or later (rows.ts INDEX_FORMAT) can say the item is absent. */
  | { kind: 'item'; item: string; since?: number }
  | { kind: 'levels'; mask: number }
  | { kind: 'time'; from: number | undefined; to: number | undefined }
  | { kind: 'and'; children: Need[] }
  | { kind: 'or'; children: Need[] };

const MAYBE: Need = { kind: 'maybe' };

function and(children: Need[]): Need {
  const kept = children.filter((c) => c.kind !== 'maybe');
  if (kept.some((c) => c.kind === 'none')) return { kind: 'none' };
  return kept.length === 0 ? MAYBE : kept.length === 1 ? kept[0]! : { kind: 'and', children: kept };
}

function or(children: Need[]): Need {
  if (children.length === 0) return { kind: 'none' };
  if (children.some((c) => c.kind === 'maybe')) return MAYBE;
  const kept = children.filter((c) => c.kind !== 'none');
  return kept.length === 0 ? { kind: 'none' } : kept.length === 1 ? kept[0]! : { kind: 'or', children: kept };
}

const itemNeed = (item: string, since?: number): Need => (since === undefined ? { kind: 'item', item } : { kind: 'item', item, since });

/**
 * The words a text that contains `folded` (ASCII) as a substring must hold whole: those with a
 * non-word character on both sides within it. Only ASCII is used, where a substring's interior
 * words are certainly words of the whole (no normalisation joins across their edges).
 */
function interiorWords(folded: string): string[] {
  if (!isAscii(folded)) return [];
  const out: string[] = [];
  eachWord(folded, (from, to) => {
    if (from > 0 && to < folded.length) out.push(folded.slice(from, to).toLowerCase());
  });
  return out;
}

function wordsNeed(t: Words): Need {
  if (t.any || t.words.length === 0) return MAYBE;
  return and(t.words.map((w) => ('word' in w ? itemNeed('w:' + w.word) : MAYBE)));
}

const phraseNeed = (folded: string): Need => and(interiorWords(folded).map((w) => itemNeed('w:' + w)));

/** A substring of the message: its interior words, and the grams of its long runs of word characters. */
const messagePhraseNeed = (folded: string): Need => and([phraseNeed(folded), ...gramsOf(folded).map(itemNeed)]);

/** Levels a level value admits, as a bit mask (bit n for level n), or undefined. */
function levelMask(v: Value): number | undefined {
  if (v.kind === 'range') {
    let mask = 0;
    for (let n = 0; n < 6; n++) if ((v.lo === undefined || (v.loInclusive ? n >= v.lo : n > v.lo)) && (v.hi === undefined || (v.hiInclusive ? n <= v.hi : n < v.hi))) mask |= 1 << n;
    return mask;
  }
  if (v.kind === 'list') {
    let mask = 0;
    for (const item of v.values) {
      const m = levelMask(item);
      if (m === undefined) return undefined;
      mask |= m;
    }
    return mask;
  }
  return undefined;
}

function valueNeed(field: Extract<Node, { kind: 'field' }>['field'], v: Value): Need {
  if (v.kind === 'list') return or(v.values.map((item) => valueNeed(field, item)));
  switch (field.kind) {
    case 'level': {
      const mask = levelMask(v);
      return v.kind === 'exists' || mask === undefined ? MAYBE : { kind: 'levels', mask };
    }
    case 'timestamp':
      return v.kind === 'range' ? { kind: 'time', from: v.lo, to: v.hi } : MAYBE;
    case 'message':
      if (v.kind === 'words') return wordsNeed(v);
      if (v.kind === 'phrase') return messagePhraseNeed(v.folded);
      if (v.kind === 'regex') return v.regex.pattern.literal === undefined ? MAYBE : messagePhraseNeed(fold(v.regex.pattern.literal));
      return MAYBE;
    case 'source':
      if (v.kind === 'eq' && !v.glob) return itemNeed('s:' + v.folded);
      if (v.kind === 'exact') return itemNeed('s:' + fold(v.text));
      return MAYBE;
    case 'meta': {
      const path = queryPathText(field.path);
      // Filters of format 1 named a path whose first key is empty otherwise (rows.ts INDEX_FORMAT).
      const since = field.path[0] === '' ? 2 : undefined;
      const present = itemNeed('p:' + path, since);
      switch (v.kind) {
        case 'eq':
          if (v.glob) return present;
          return or([itemNeed(`v:${path}=s:${v.folded}`, since), ...(v.number !== undefined ? [itemNeed(`v:${path}=#${String(v.number)}`, since)] : [])]);
        case 'exists':
        case 'range':
        case 'regex':
          return present;
        case 'phrase':
          return and([present, phraseNeed(v.folded)]);
        case 'words':
          // Never matches a metadata path (eval.ts): but "maybe" is always safe.
          return MAYBE;
        default:
          return present;
      }
    }
  }
}

/** What a block must hold for any of its logs to match the query's tree. */
export function needOf(node: Node): Need {
  switch (node.kind) {
    case 'all':
      return MAYBE;
    case 'and':
      return and(node.children.map(needOf));
    case 'or':
      return or(node.children.map(needOf));
    case 'not':
      // A block can hold logs that lack anything: NOT rules out nothing.
      return MAYBE;
    case 'term':
      return wordsNeed(node);
    case 'phrase':
      return phraseNeed(node.folded);
    case 'regex':
      return node.regex.pattern.literal === undefined ? MAYBE : phraseNeed(fold(node.regex.pattern.literal));
    case 'field':
      return valueNeed(node.field, node.value);
  }
}

/** The distinct items a need probes. */
export function itemsOf(need: Need, out = new Set<string>()): Set<string> {
  if (need.kind === 'item') out.add(need.item);
  else if (need.kind === 'and' || need.kind === 'or') for (const c of need.children) itemsOf(c, out);
  return out;
}

/** Keeps at most `max` items (the others become "maybe"), so a probe's SQL stays bounded. */
export function capItems(need: Need, max: number): Need {
  const kept = new Set([...itemsOf(need)].slice(0, max));
  const walk = (n: Need): Need => {
    if (n.kind === 'item') return kept.has(n.item) ? n : MAYBE;
    if (n.kind === 'and') return and(n.children.map(walk));
    if (n.kind === 'or') return or(n.children.map(walk));
    return n;
  };
  return walk(need);
}

/** What of a block's summary a need is decided against. */
export interface BlockFacts {
  minTs: number;
  maxTs: number;
  levelMask: number;
  /** The format its filter was built in (rows.ts INDEX_FORMAT); 1 when not given. */
  format?: number;
}

/**
 * false: no log of the block can match; true: some may. `mayHold` answers for the block's filter,
 * undefined when the block keeps none.
 */
export function blockMay(need: Need, b: BlockFacts, mayHold: ((item: string) => boolean) | undefined): boolean {
  switch (need.kind) {
    case 'maybe':
      return true;
    case 'none':
      return false;
    case 'item':
      return mayHold === undefined || (need.since !== undefined && (b.format ?? 1) < need.since) || mayHold(need.item);
    case 'levels':
      return (need.mask & b.levelMask) !== 0;
    case 'time':
      return !((need.from !== undefined && b.maxTs < need.from) || (need.to !== undefined && b.minTs > need.to));
    case 'and':
      return need.children.every((c) => blockMay(c, b, mayHold));
    case 'or':
      return need.children.some((c) => blockMay(c, b, mayHold));
  }
}
