import { fold, scalarText, wordsOf } from './text.js';

/** A log as stored: level is the index 0..5 of trace, debug, info, warn, error, fatal (src/features/logs/levels.ts); metadata is the stored JSON text of an object, or null. */
export interface QueryLog {
  ts: number;
  level: number;
  source: string | null;
  message: string;
  metadata: string | null;
}

/** One metadata value looked in by bare terms and phrases. */
interface Scalar {
  /** Folded text (numbers and booleans as written in JSON). */
  folded: string;
  isString: boolean;
  words: string[] | undefined;
}

/**
 * A log's metadata as a value (undefined when there is none or it is not JSON), parsed anew on each
 * call: nothing keeps it once the caller lets it go. Within one pass a LogView parses it once;
 * parses never outlive the pass, so a tail's buffered rows never carry a second, parsed copy.
 */
export function metadataOf(log: QueryLog): unknown {
  const text = log.metadata;
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

/**
 * The values at a dotted path, arrays flattened (an array matches when any element does). The path
 * `a.b.c` matches nested objects and keys that themselves contain dots alike: at each object every
 * split of the remaining segments into a key is tried. Iterative, and each (object, position) is
 * visited once, so neither deep nor crafted metadata can blow up.
 */
export function resolvePath(root: unknown, path: readonly string[]): unknown[] {
  const out: unknown[] = [];
  if (root === undefined) return out;
  const n = path.length;
  const seen: Set<object>[] = [];
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [v, i] = stack.pop()!;
    if (isObject(v)) {
      const s = (seen[i] ??= new Set());
      if (s.has(v)) continue;
      s.add(v);
    }
    if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push([v[k], i]);
      continue;
    }
    if (i === n) {
      out.push(v);
      continue;
    }
    if (!isObject(v)) continue;
    let key = '';
    for (let j = i; j < n; j++) {
      key = j === i ? path[i]! : key + '.' + path[j]!;
      if (Object.hasOwn(v, key)) stack.push([(v as Record<string, unknown>)[key], j + 1]);
    }
  }
  return out;
}

/** Every scalar value anywhere in the metadata (strings, numbers, booleans; not keys, not null). */
function scalarsOf(root: unknown): unknown[] {
  const out: unknown[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push(v[k]);
    } else if (isObject(v)) {
      const values = Object.values(v);
      for (let k = values.length - 1; k >= 0; k--) stack.push(values[k]);
    } else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.push(v);
  }
  return out;
}

/** A log with what the predicate derives from it, each computed once and only when needed. */
export class LogView {
  #meta: unknown;
  #metaRead = false;
  #msgFolded: string | undefined;
  #msgWords: string[] | undefined;
  #msgWordSet: Set<string> | undefined;
  #scalars: Scalar[] | undefined;
  #paths: Map<string, unknown[]> | undefined;
  #folds: Map<string, string> | undefined;

  /**
   * The answers of the regular expressions run on the log so far (by RegexLeaf.key), starting from
   * those given: a caller that decides a log over several rounds (alert evaluation) carries them to
   * the next round instead of running the tests again.
   */
  constructor(
    readonly log: QueryLog,
    public answers?: Map<string, boolean>,
  ) {}

  get meta(): unknown {
    if (!this.#metaRead) {
      this.#meta = metadataOf(this.log);
      this.#metaRead = true;
    }
    return this.#meta;
  }

  get messageFolded(): string {
    return (this.#msgFolded ??= fold(this.log.message));
  }

  get messageWords(): string[] {
    return (this.#msgWords ??= wordsOf(this.messageFolded));
  }

  get messageWordSet(): Set<string> {
    return (this.#msgWordSet ??= new Set(this.messageWords));
  }

  get scalars(): Scalar[] {
    return (this.#scalars ??= scalarsOf(this.meta).map((v) => ({ folded: fold(scalarText(v)!), isString: typeof v === 'string', words: undefined })));
  }

  scalarWords(s: Scalar): string[] {
    return (s.words ??= wordsOf(s.folded));
  }

  /** Whether `word` (folded) is a word of the message, or of a metadata value unless `messageOnly`. A substring check first: most logs lack it. */
  hasWord(word: string, messageOnly: boolean): boolean {
    if (this.messageFolded.includes(word) && this.messageWordSet.has(word)) return true;
    if (messageOnly) return false;
    for (const s of this.scalars) if (s.folded.includes(word) && this.scalarWords(s).includes(word)) return true;
    return false;
  }

  /** Whether `folded` occurs in the message, or in a metadata string value unless `messageOnly`. */
  hasPhrase(folded: string, messageOnly: boolean): boolean {
    if (this.messageFolded.includes(folded)) return true;
    if (messageOnly) return false;
    for (const s of this.scalars) if (s.isString && s.folded.includes(folded)) return true;
    return false;
  }

  /** The values at a metadata path, arrays flattened. */
  values(path: readonly string[]): unknown[] {
    const key = path.length === 1 ? path[0]! : JSON.stringify(path);
    const paths = (this.#paths ??= new Map());
    let hit = paths.get(key);
    if (!hit) paths.set(key, (hit = resolvePath(this.meta, path)));
    return hit;
  }

  fold(s: string): string {
    const folds = (this.#folds ??= new Map());
    let hit = folds.get(s);
    if (hit === undefined) folds.set(s, (hit = fold(s)));
    return hit;
  }
}
