import type { Node, RegexLeaf, RegexTarget, TermWord, Value, Words } from './ast.js';
import { INLINE_COST } from '../pattern.js';
import { globMatch, scalarText, toNumber, type Glob } from './text.js';
import { evalCounters, type LogView, type WordIndex } from './view.js';

/** true, false, or undefined: not known (a regular expression not run, or not decided in time). */
export type T3 = boolean | undefined;
/** The answer of a regular expression on a log, undefined while not known; null: none is known (the pass before they run). */
export type RegexAnswers = ((leaf: RegexLeaf, view: LogView) => T3) | null;

/**
 * Answers for the in-memory pass: what the log's view already keeps, or a test cheap enough for the
 * event loop run on the spot, while performance.now() is before `until` (the pass's time slice);
 * the answer is kept on the view. A log has one inline budget for all its regex tests, INLINE_COST
 * steps (program size × text length, Pattern.cost), however many texts (array elements) or
 * regexes it holds: a regex over a 44-element array was 44 inline tests back to back. A test past
 * what the log has left, or any past `until`, is left undecided for the regex runner, which runs
 * one test at a time with turns of the event loop between.
 */
export function inlineRegexes(until: number): RegexAnswers {
  return (leaf, view) => {
    const kept = view.answers?.get(leaf.key);
    if (typeof kept === 'boolean') return kept;
    if (performance.now() > until) return undefined;
    // A number kept: that many texts, from the first, are known not to match.
    const texts = kept === undefined ? regexTexts(leaf.target, view) : regexTexts(leaf.target, view).slice(kept);
    let steps = 0;
    for (const text of texts) steps += leaf.pattern.cost(text);
    if (view.regexSteps + steps > INLINE_COST) return undefined;
    view.regexSteps += steps;
    if (view.regexSteps > evalCounters.maxLogRegexSteps) evalCounters.maxLogRegexSteps = view.regexSteps;
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

/**
 * Decides one log. With `rx` null, regular expressions are unknown, and so is any answer that
 * depends on them. The decision may spend DECISION_BUDGET units of work (view.ts); the budget is
 * looked at inside it, at every leaf and within long matches, and an answer its cut-off leaves
 * open is undefined: the log is undecided, as with a regex not run in time (search stops there,
 * stats refuses the count, a tail does not send the log, alert evaluation tries it again in a
 * later round and gives it up past its rounds).
 */
export function evaluate(node: Node, view: LogView, rx: RegexAnswers): T3 {
  view.beginDecision();
  const r = evalNode(node, view, rx);
  if (r === undefined && view.over) evalCounters.cutOff++;
  return r;
}

function evalNode(node: Node, view: LogView, rx: RegexAnswers): T3 {
  switch (node.kind) {
    case 'all':
      return true;
    case 'and': {
      // Loops, not all()/any(): this runs for every log and query, and a closure per node is garbage.
      let out: T3 = true;
      for (const c of node.children) {
        const r = evalNode(c, view, rx);
        if (r === false) return false;
        if (r === undefined) out = undefined;
      }
      return out;
    }
    case 'or': {
      let out: T3 = false;
      for (const c of node.children) {
        const r = evalNode(c, view, rx);
        if (r === true) return true;
        if (r === undefined) out = undefined;
      }
      return out;
    }
    case 'not': {
      const r = evalNode(node.child, view, rx);
      return r === undefined ? undefined : !r;
    }
    case 'term':
      return view.over ? undefined : termMatches(node, view, false);
    case 'phrase':
      return view.over ? undefined : view.hasPhrase(node.folded, false);
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
        case 'meta': {
          if (view.over) return undefined;
          const values = view.values(field.path);
          return view.over ? undefined : onValues(value, values, view, rx);
        }
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
      return view.over ? undefined : termMatches(value, view, true);
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

/** A term word every word matches (`*`, `**`): it constrains only where the others stand. */
function anyWord(t: TermWord): boolean {
  return 'glob' in t && t.glob.plain !== null && t.glob.plain.every((seg) => seg === '');
}

/** The distinct words of a text a wildcard matches: each distinct word tried once per text (one unit each). */
function globWords(index: WordIndex, glob: Glob, view: LogView): Set<string> {
  const cache = (index.globs ??= new Map());
  let hit = cache.get(glob);
  if (hit === undefined) {
    hit = new Set();
    for (const w of index.positions.keys()) if (globMatch(glob, w)) hit.add(w);
    view.charge(index.positions.size + 1);
    cache.set(glob, hit);
  }
  return hit;
}

/** Candidates checked between two looks at the budget. */
const CHECK_EVERY = 4096;

/**
 * Whether the term's words occur next to each other, in order, in the indexed text (undefined: the
 * decision's budget ran out). The term word found at the fewest positions anchors the candidates;
 * only the other words that constrain anything are compared at each: `*-*-…-b` (999 words) over
 * 30,000 words costs the occurrences of `b`, not 999 × 30,000 comparisons. One unit per comparison.
 */
function adjacentIn(term: readonly TermWord[], index: WordIndex, view: LogView): T3 {
  const k = term.length;
  const words = index.words;
  const n = words.length;
  if (k > n) return false;
  type Check = { j: number; word?: string; set?: Set<string>; count: number };
  const checks: Check[] = [];
  let anchor: Check | undefined;
  for (let j = 0; j < k; j++) {
    const t = term[j]!;
    if (anyWord(t)) continue;
    let check: Check;
    if ('word' in t) {
      const positions = index.positions.get(t.word);
      if (positions === undefined) return false;
      check = { j, word: t.word, count: positions.length };
    } else {
      const set = globWords(index, t.glob, view);
      if (set.size === 0) return false;
      let count = 0;
      for (const w of set) count += index.positions.get(w)!.length;
      check = { j, set, count };
    }
    checks.push(check);
    if (anchor === undefined || check.count < anchor.count) anchor = check;
  }
  // Only words that match anything: any k adjacent words will do.
  if (anchor === undefined) return true;
  if (view.over) return undefined;
  const others = checks.filter((c) => c !== anchor);
  let starts: number[];
  if (anchor.word !== undefined) starts = index.positions.get(anchor.word)!;
  else {
    starts = [];
    for (const w of anchor.set!) for (const p of index.positions.get(w)!) starts.push(p);
  }
  let units = 0;
  for (const p of starts) {
    const s = p - anchor.j;
    if (s < 0 || s + k > n) continue;
    let all = true;
    for (const c of others) {
      units++;
      const w = words[s + c.j]!;
      if (c.word !== undefined ? w !== c.word : !c.set!.has(w)) {
        all = false;
        break;
      }
    }
    if (all) {
      view.charge(units + 1);
      return true;
    }
    if (++units >= CHECK_EVERY) {
      view.charge(units);
      units = 0;
      if (view.over) return undefined;
    }
  }
  view.charge(units + 1);
  return false;
}

/** A bare term (or message:term): words of the message, or of one metadata value unless `messageOnly`. */
function termMatches(t: Words, view: LogView, messageOnly: boolean): T3 {
  if (t.any) return true;
  const words = t.words;
  // Nothing to split into words (`=>`): the text itself, as a phrase.
  if (words.length === 0) return view.hasPhrase(t.folded, messageOnly);
  if (words.length === 1 && 'word' in words[0]!) return view.hasWord(words[0].word, messageOnly);
  let out = adjacentIn(words, view.messageIndex, view);
  if (out === true || messageOnly) return out;
  // A literal word of the term that a value's text lacks rules the value out before it is indexed.
  const literal = words.find((w): w is { word: string } => 'word' in w)?.word;
  for (const s of view.scalars) {
    view.charge(1);
    if (view.over) return undefined;
    if (literal !== undefined && !s.folded.includes(literal)) continue;
    const r = adjacentIn(words, view.scalarIndex(s), view);
    if (r === true) return true;
    if (r === undefined) out = undefined;
  }
  return out;
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
