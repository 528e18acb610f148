import type { Node, RegexTarget, TermWord, Value, Words } from './ast.js';
import { globMatch, scalarText, toNumber } from './text.js';
import type { LogView } from './view.js';

/** true, false, or undefined: not known (a regular expression not run, or not decided in time). */
export type T3 = boolean | undefined;
/** The answers of the regular expressions for one log, by RegexLeaf.id; null before they run. */
export type RegexAnswers = ((id: number) => T3) | null;

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

function all<T>(items: readonly T[], f: (item: T) => T3): T3 {
  let out: T3 = true;
  for (const item of items) {
    const r = f(item);
    if (r === false) return false;
    if (r === undefined) out = undefined;
  }
  return out;
}

/** Decides one log. With `rx` null, regular expressions are unknown, and so is any answer that depends on them. */
export function evaluate(node: Node, view: LogView, rx: RegexAnswers): T3 {
  switch (node.kind) {
    case 'all':
      return true;
    case 'and':
      return all(node.children, (c) => evaluate(c, view, rx));
    case 'or':
      return any(node.children, (c) => evaluate(c, view, rx));
    case 'not': {
      const r = evaluate(node.child, view, rx);
      return r === undefined ? undefined : !r;
    }
    case 'term':
      return termMatches(node, view, false);
    case 'phrase':
      return view.messageFolded.includes(node.folded) || view.scalars.some((s) => s.isString && s.folded.includes(node.folded));
    case 'regex':
      return rx ? rx(node.regex.id) : undefined;
    case 'field': {
      const { field, value } = node;
      switch (field.kind) {
        case 'level':
          return onNumber(value, view.log.level, rx);
        case 'timestamp':
          return onNumber(value, view.log.ts, rx);
        case 'message':
          return onMessage(value, view, rx);
        case 'source':
          return onValues(value, view.log.source === null ? [] : [view.log.source], view, rx);
        case 'meta':
          return onValues(value, view.values(field.path), view, rx);
      }
    }
  }
}

function inRange(v: Extract<Value, { kind: 'range' }>, n: number): boolean {
  if (v.lo !== undefined && (v.loInclusive ? n < v.lo : n <= v.lo)) return false;
  if (v.hi !== undefined && (v.hiInclusive ? n > v.hi : n >= v.hi)) return false;
  return true;
}

/** level and timestamp: always present numbers. */
function onNumber(value: Value, n: number, rx: RegexAnswers): T3 {
  switch (value.kind) {
    case 'exists':
      return true;
    case 'range':
      return inRange(value, n);
    case 'list':
      return any(value.values, (v) => onNumber(v, n, rx));
    case 'regex':
      return rx ? rx(value.regex.id) : undefined;
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
      return view.messageFolded.includes(value.folded);
    case 'regex':
      return rx ? rx(value.regex.id) : undefined;
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
      return rx ? rx(value.regex.id) : undefined;
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
  if (words.length === 0) {
    // Nothing to split into words (`=>`): the text itself, as a phrase.
    if (view.messageFolded.includes(t.folded)) return true;
    return !messageOnly && view.scalars.some((s) => s.isString && s.folded.includes(t.folded));
  }
  if (words.length === 1 && 'word' in words[0]!) return (messageOnly ? view.messageWordSet : view.allWords).has(words[0].word);
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
