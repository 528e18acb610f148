import type { Node, RegexLeaf, RegexTarget, TermWord, Value, Words } from './ast.js';
import { globMatch, scalarText, toNumber } from './text.js';
import type { LogView } from './view.js';

/** true, false, or undefined: not known (a regular expression not run, or not decided in time). */
export type T3 = boolean | undefined;
/** The answer of a regular expression on a log, undefined while not known; null: none is known (the pass before they run). */
export type RegexAnswers = ((leaf: RegexLeaf, view: LogView) => T3) | null;

/**
 * Answers for the in-memory pass: what the log's view already keeps, or a test cheap enough for the
 * event loop (Pattern.cheap on every text) run on the spot, while performance.now() is before
 * `until` (the pass's time slice); the answer is kept on the view. A costly test, or any past
 * `until`, is left undecided for the regex runner.
 */
export function inlineRegexes(until: number): RegexAnswers {
  return (leaf, view) => {
    const kept = view.answers?.get(leaf.key);
    if (kept !== undefined) return kept;
    if (performance.now() > until) return undefined;
    const texts = regexTexts(leaf.target, view);
    for (const text of texts) if (!leaf.pattern.cheap(text)) return undefined;
    let answer = false;
    for (const text of texts) {
      if (leaf.pattern.test(text)) {
        answer = true;
        break;
      }
    }
    (view.answers ??= new Map()).set(leaf.key, answer);
    return answer;
  };
}

/** Kleene's three-valued logic: a known answer is never changed by an unknown one. */
function any<T>(items: readonly T[], f: (item: T) => T3): T3 {
  let out: T3 = false;
  for (const item of items) {
    const r = f(item);
    if (r === true) return true;
    if (r === undefined) out = undefined;
  }
  return out;
}

/** Decides one log. With `rx` null, regular expressions are unknown, and so is any answer that depends on them. */
export function evaluate(node: Node, view: LogView, rx: RegexAnswers): T3 {
  switch (node.kind) {
    case 'all':
      return true;
    case 'and': {
      // Loops, not all()/any(): this runs for every log and query, and a closure per node is garbage.
      let out: T3 = true;
      for (const c of node.children) {
        const r = evaluate(c, view, rx);
        if (r === false) return false;
        if (r === undefined) out = undefined;
      }
      return out;
    }
    case 'or': {
      let out: T3 = false;
      for (const c of node.children) {
        const r = evaluate(c, view, rx);
        if (r === true) return true;
        if (r === undefined) out = undefined;
      }
      return out;
    }
    case 'not': {
      const r = evaluate(node.child, view, rx);
      return r === undefined ? undefined : !r;
    }
    case 'term':
      return termMatches(node, view, false);
    case 'phrase':
      return view.hasPhrase(node.folded, false);
    case 'regex':
      return rx ? rx(node.regex, view) : undefined;
    case 'field': {
      const { field, value } = node;
      switch (field.kind) {
        case 'level':
          return onNumber(value, view.log.level, view, rx);
        case 'timestamp':
          return onNumber(value, view.log.ts, view, rx);
        case 'message':
          return onMessage(value, view, rx);
        case 'source':
          return onValues(value, view.log.source === null ? NO_VALUES : [view.log.source], view, rx);
        case 'meta':
          return onValues(value, view.values(field.path), view, rx);
      }
    }
  }
}

const NO_VALUES: readonly unknown[] = [];

function inRange(v: Extract<Value, { kind: 'range' }>, n: number): boolean {
  if (v.lo !== undefined && (v.loInclusive ? n < v.lo : n <= v.lo)) return false;
  if (v.hi !== undefined && (v.hiInclusive ? n > v.hi : n >= v.hi)) return false;
  return true;
}

/** level and timestamp: always present numbers. */
function onNumber(value: Value, n: number, view: LogView, rx: RegexAnswers): T3 {
  switch (value.kind) {
    case 'exists':
      return true;
    case 'range':
      return inRange(value, n);
    case 'list':
      return any(value.values, (v) => onNumber(v, n, view, rx));
    case 'regex':
      return rx ? rx(value.regex, view) : undefined;
    default:
      return false;
  }
}

function onMessage(value: Value, view: LogView, rx: RegexAnswers): T3 {
  switch (value.kind) {
    case 'exists':
      return true;
    case 'words':
      return termMatches(value, view, true);
    case 'phrase':
      return view.hasPhrase(value.folded, true);
    case 'regex':
      return rx ? rx(value.regex, view) : undefined;
    case 'list':
      return any(value.values, (v) => onMessage(v, view, rx));
    default:
      return onValues(value, [view.log.message], view, rx);
  }
}

/** source and metadata: the field's values (arrays already flattened); any one matching is enough. */
function onValues(value: Value, values: readonly unknown[], view: LogView, rx: RegexAnswers): T3 {
  switch (value.kind) {
    case 'exists':
      return values.some((v) => v !== null);
    case 'list':
      return any(value.values, (v) => onValues(v, values, view, rx));
    case 'regex':
      return rx ? rx(value.regex, view) : undefined;
    case 'exact':
      return values.some((v) => v === value.text);
    case 'range':
      return values.some((v) => {
        const n = typeof v === 'number' ? v : typeof v === 'string' ? toNumber(v) : undefined;
        return n !== undefined && inRange(value, n);
      });
    case 'eq': {
      if (value.glob) {
        const glob = value.glob;
        return values.some((v) => {
          const text = typeof v === 'string' ? view.fold(v) : scalarText(v);
          return text !== undefined && globMatch(glob, text);
        });
      }
      return values.some((v) => {
        if (typeof v === 'string') return view.fold(v) === value.folded;
        if (typeof v === 'number') return value.number !== undefined && v === value.number;
        if (typeof v === 'boolean' || v === null) return value.folded === String(v);
        return false;
      });
    }
    case 'phrase':
      return values.some((v) => typeof v === 'string' && view.fold(v).includes(value.folded));
    case 'words':
      return false;
  }
}

function wordMatches(t: TermWord, w: string): boolean {
  return 'word' in t ? t.word === w : globMatch(t.glob, w);
}

/** Whether the term's words occur next to each other, in order, in `words`. */
function adjacent(term: readonly TermWord[], words: readonly string[]): boolean {
  const k = term.length;
  for (let i = 0; i + k <= words.length; i++) {
    let j = 0;
    while (j < k && wordMatches(term[j]!, words[i + j]!)) j++;
    if (j === k) return true;
  }
  return false;
}

/** A bare term (or message:term): words of the message, or of one metadata value unless `messageOnly`. */
function termMatches(t: Words, view: LogView, messageOnly: boolean): boolean {
  if (t.any) return true;
  const words = t.words;
  // Nothing to split into words (`=>`): the text itself, as a phrase.
  if (words.length === 0) return view.hasPhrase(t.folded, messageOnly);
  if (words.length === 1 && 'word' in words[0]!) return view.hasWord(words[0].word, messageOnly);
  if (adjacent(words, view.messageWords)) return true;
  return !messageOnly && view.scalars.some((s) => adjacent(words, view.scalarWords(s)));
}

/** The texts a regular expression is tested on, for one log. */
export function regexTexts(target: RegexTarget, view: LogView): string[] {
  switch (target.kind) {
    case 'message':
      return [view.log.message];
    case 'source':
      return view.log.source === null ? [] : [view.log.source];
    case 'meta': {
      const out: string[] = [];
      for (const v of view.values(target.path)) {
        const text = scalarText(v);
        if (text !== undefined) out.push(text);
      }
      return out;
    }
  }
}
