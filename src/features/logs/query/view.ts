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
  index: WordIndex | undefined;
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
 * Work, in units, that deciding one log may cost on the event loop (see LogView.charge): a unit is
 * one metadata value or key looked at, one word indexed, one word compared while matching a term.
 * Ordinary logs and queries cost thousands; a decision that reaches this many is cut off and the
 * log is undecided (the predicate's third value), never a stall. About 10 ms of work.
 */
export const DECISION_BUDGET = 500_000;

/**
 * What evaluation has cost in this process, for tests and benches: units charged in all, the most
 * one decision of one log spent, how many decisions were cut off at DECISION_BUDGET, and the most
 * regular-expression steps (program size × text length) one log ran inline (see inlineRegexes), and
 * the most units naming one log's groups took (groupBy).
 */
export const evalCounters = { units: 0, maxDecisionUnits: 0, cutOff: 0, maxLogRegexSteps: 0, maxGroupUnits: 0 };

export function resetEvalCounters(): void {
  evalCounters.units = 0;
  evalCounters.maxDecisionUnits = 0;
  evalCounters.cutOff = 0;
  evalCounters.maxLogRegexSteps = 0;
  evalCounters.maxGroupUnits = 0;
}

/**
 * The values at a dotted path, arrays flattened (an array matches when any element does). The path
 * `a.b.c` matches nested objects and keys that themselves contain dots alike: a key matches at
 * segment i when it is segments i..j-1 joined by dots, for some j. Each object's own keys are
 * compared with the path (not every split of the path tried as a key: a 999-segment path over
 * 2,000 empty objects was 2,000 × 999 keys built and looked up), and each value of the metadata is
 * visited at most once (a JSON tree shares nothing, and a key fixes where the path goes on), so
 * the work is linear in the metadata: one unit per value and per key, reported to `charge`.
 */
export function resolvePath(root: unknown, path: readonly string[], charge?: (units: number) => void): unknown[] {
  const out: unknown[] = [];
  if (root === undefined) return out;
  const n = path.length;
  // The path as one string; a key spanning segments i..j-1 is joined.slice(starts[i], starts[j] - 1).
  const joined = path.join('.');
  const starts: number[] = new Array(n + 1);
  const nextAt = new Map<number, number>();
  let off = 0;
  for (let i = 0; i <= n; i++) {
    starts[i] = off;
    if (i > 0) nextAt.set(off - 1, i);
    if (i < n) off += path[i]!.length + 1;
  }
  let units = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [v, i] = stack.pop()!;
    units++;
    if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push([v[k], i]);
      continue;
    }
    if (i === n) {
      out.push(v);
      continue;
    }
    if (!isObject(v)) continue;
    const from = starts[i]!;
    let found: [number, unknown][] | undefined;
    for (const key of Object.keys(v)) {
      units++;
      if (!joined.startsWith(key, from)) continue;
      const j = nextAt.get(from + key.length);
      if (j !== undefined && j > i) (found ??= []).push([j, (v as Record<string, unknown>)[key]]);
    }
    if (found === undefined) continue;
    // As every split was tried before: shorter keys pushed first, so the longest is followed first.
    if (found.length > 1) found.sort((a, b) => a[0] - b[0]);
    for (const [j, child] of found) stack.push([child, j]);
  }
  charge?.(units);
  return out;
}

/** The words of a text with where each occurs: adjacency is then looked up, not scanned for. */
export interface WordIndex {
  readonly words: readonly string[];
  /** Positions (indexes in `words`) of each distinct word, ascending. */
  readonly positions: Map<string, number[]>;
  /** Per wildcard pattern: the distinct words it matches (worked out once per text). */
  globs?: Map<object, Set<string>>;
}

function indexWords(words: string[]): WordIndex {
  const positions = new Map<string, number[]>();
  for (let p = 0; p < words.length; p++) {
    const w = words[p]!;
    const list = positions.get(w);
    if (list) list.push(p);
    else positions.set(w, [p]);
  }
  return { words, positions };
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
  #msgIndex: WordIndex | undefined;
  /** Units spent on this log in all, and the most the decision under way may reach. */
  #work = 0;
  #limit = DECISION_BUDGET;
  #decisionStart = 0;
  /** Regular-expression steps run inline on this log (see inlineRegexes: one budget per log). */
  regexSteps = 0;

  /**
   * The answers of the regular expressions run on the log so far (by RegexLeaf.key; a number while
   * undecided: how many of its texts, from the first, are known not to match), starting from
   * those given: a caller that decides a log over several rounds (alert evaluation) carries them to
   * the next round instead of running the tests again.
   */
  constructor(
    readonly log: QueryLog,
    public answers?: Map<string, boolean | number>,
  ) {}

  /** Starts deciding one query on this log: it may spend DECISION_BUDGET units from here. */
  beginDecision(): void {
    this.#decisionStart = this.#work;
    this.#limit = this.#work + DECISION_BUDGET;
  }

  /** Counts `units` of work against the decision under way. */
  readonly charge = (units: number): void => {
    this.#work += units;
    evalCounters.units += units;
    const spent = this.#work - this.#decisionStart;
    if (spent > evalCounters.maxDecisionUnits) evalCounters.maxDecisionUnits = spent;
  };

  /** The decision under way has spent its budget: every answer still open is undecided. */
  get over(): boolean {
    return this.#work > this.#limit;
  }

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
    if (this.#scalars === undefined) {
      this.#scalars = scalarsOf(this.meta).map((v) => ({ folded: fold(scalarText(v)!), isString: typeof v === 'string', words: undefined, index: undefined }));
      this.charge(this.#scalars.length + 1);
    }
    return this.#scalars;
  }

  scalarWords(s: Scalar): string[] {
    return (s.words ??= wordsOf(s.folded));
  }

  /** The message's words indexed (one unit per word, once per log). */
  get messageIndex(): WordIndex {
    if (this.#msgIndex === undefined) {
      const words = this.messageWords;
      this.charge(words.length + 1);
      this.#msgIndex = indexWords(words);
    }
    return this.#msgIndex;
  }

  /** A metadata value's words indexed (one unit per word, once per log). */
  scalarIndex(s: Scalar): WordIndex {
    if (s.index === undefined) {
      const words = this.scalarWords(s);
      this.charge(words.length + 1);
      s.index = indexWords(words);
    }
    return s.index;
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
    if (!hit) paths.set(key, (hit = resolvePath(this.meta, path, this.charge)));
    return hit;
  }

  fold(s: string): string {
    const folds = (this.#folds ??= new Map());
    let hit = folds.get(s);
    if (hit === undefined) folds.set(s, (hit = fold(s)));
    return hit;
  }
}
