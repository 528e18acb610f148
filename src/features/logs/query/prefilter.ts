import type { Node, Value, Words } from './ast.js';
import { FOLDS_TO_ASCII, isAscii } from './text.js';
import type { QueryLog } from './view.js';

/**
 * A check on a log's raw text that every log the query matches passes, so a log that fails it is
 * certainly not a match, without parsing its metadata or folding its words: needle searches read
 * whole blocks of logs, most of which a substring test rules out in a fraction of the predicate's
 * cost. The predicate still decides every log that passes.
 *
 * Taken from the conjuncts every match must satisfy (the top-level AND chain): a bare word or
 * phrase must occur in the message or the metadata's JSON, a `message:` term in the message, a
 * metadata value compared for equality in the metadata's JSON, all ASCII lower case. Sound because
 * a text whose folded form contains an ASCII string contains it ASCII-case-insensitively in its raw
 * form unless it holds a FOLDS_TO_ASCII character (such a log is always kept), and stored metadata
 * is JSON.stringify's, which writes every character of a string as itself except `"`, `\` and
 * control characters (texts holding those give no needle).
 */
export type Prefilter = (log: QueryLog) => boolean;

export type Where = 'message' | 'metadata' | 'either';

/** One conjunct: the log must hold at least one of these (text, ASCII lower case, and where). */
export type Needle = { text: string; where: Where }[];

/** What JSON.stringify writes as itself (and lower case keeps as itself). */
const PLAIN = /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/;

const usable = (s: string) => s.length > 0 && isAscii(s) && PLAIN.test(s);

function conjuncts(node: Node, out: Node[]): Node[] {
  if (node.kind === 'and') for (const c of node.children) conjuncts(c, out);
  else out.push(node);
  return out;
}

/** The longest literal a bare term must contain (a word, or a glob's literal run), or undefined. */
function termText(t: Words): string | undefined {
  if (t.any) return undefined;
  if (t.words.length === 0) return usable(t.folded) ? t.folded : undefined;
  let best: string | undefined;
  for (const w of t.words) for (const s of 'word' in w ? [w.word] : w.glob.literals) if (usable(s) && (best === undefined || s.length > best.length)) best = s;
  return best;
}

/** A metadata value's needle: equality with text (not a glob, not a number written otherwise). */
function valueNeedle(v: Value): Needle | undefined {
  if (v.kind === 'eq') {
    if (v.glob) {
      const best = v.glob.literals.filter(usable).sort((a, b) => b.length - a.length)[0];
      return best === undefined ? undefined : [{ text: best, where: 'metadata' }];
    }
    if (v.number !== undefined && String(v.number) !== v.folded) return undefined;
    return usable(v.folded) ? [{ text: v.folded, where: 'metadata' }] : undefined;
  }
  if (v.kind === 'exact') return usable(v.text.toLowerCase()) ? [{ text: v.text.toLowerCase(), where: 'metadata' }] : undefined;
  if (v.kind === 'phrase') return usable(v.folded) ? [{ text: v.folded, where: 'metadata' }] : undefined;
  if (v.kind === 'list') {
    const out: Needle = [];
    for (const item of v.values) {
      const n = valueNeedle(item);
      if (n === undefined) return undefined;
      out.push(...n);
    }
    return out.length > 0 ? out : undefined;
  }
  return undefined;
}

function needleOf(node: Node): Needle | undefined {
  switch (node.kind) {
    case 'term': {
      const text = termText(node);
      return text === undefined ? undefined : [{ text, where: 'either' }];
    }
    case 'phrase':
      return usable(node.folded) ? [{ text: node.folded, where: 'either' }] : undefined;
    case 'or': {
      const out: Needle = [];
      for (const c of node.children) {
        const n = needleOf(c);
        if (n === undefined) return undefined;
        out.push(...n);
      }
      return out;
    }
    case 'field': {
      const { field, value } = node;
      if (field.kind === 'meta') return valueNeedle(value);
      if (field.kind !== 'message') return undefined;
      if (value.kind === 'words') {
        const text = termText(value);
        return text === undefined ? undefined : [{ text, where: 'message' }];
      }
      if (value.kind === 'phrase') return usable(value.folded) ? [{ text: value.folded, where: 'message' }] : undefined;
      return undefined;
    }
    default:
      return undefined;
  }
}

/** What every log the query matches holds in its raw text: all of these conjuncts (SQL can check them too). */
export function needlesOf(root: Node): Needle[] {
  const needles: Needle[] = [];
  for (const node of conjuncts(root, [])) {
    const n = needleOf(node);
    if (n !== undefined) needles.push(n);
  }
  return needles;
}

/**
 * The non-ASCII characters a raw text may hold where its folded form has the ASCII character:
 * a text holding one of those for a character of the needle must be kept (see FOLDS_TO_ASCII).
 */
export const FOLDS_INTO: Readonly<Record<string, string>> = { i: '\u0130', k: '\u212a', ';': '\u037e', '`': '\u1fef' };

/** The query's prefilter, or undefined when no conjunct gives one (every log passes). */
export function prefilterOf(root: Node): Prefilter | undefined {
  return needlesTest(needlesOf(root));
}

/**
 * A log's test for needles (a query's, or those a read was given for SQL): its raw text holds each,
 * as SQL tests them (a superset of what the query matches); undefined for no needles.
 */
export function needlesTest(needles: readonly Needle[]): Prefilter | undefined {
  if (needles.length === 0) return undefined;
  // An ASCII text is looked for ignoring ASCII case by a regular expression (no lower-cased copy of
  // each log): without the u flag, /i matches no character outside ASCII to one inside it, so it
  // finds what lower-casing would, the FOLDS_TO_ASCII characters aside (such a log is kept anyway).
  const tests = needles.map((needle) =>
    needle.map(({ text, where }) => ({ where, text, re: isAscii(text) ? new RegExp(text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'i') : undefined })),
  );
  return (log) => {
    const message = log.message;
    const metadata = log.metadata ?? '';
    if (FOLDS_TO_ASCII.test(message) || FOLDS_TO_ASCII.test(metadata)) return true;
    let lowerMessage: string | undefined;
    let lowerMetadata: string | undefined;
    for (const needle of tests) {
      let found = false;
      for (const { text, where, re } of needle) {
        if (where !== 'metadata') found = re ? re.test(message) : (lowerMessage ??= message.toLowerCase()).includes(text);
        if (!found && where !== 'message') found = re ? re.test(metadata) : (lowerMetadata ??= metadata.toLowerCase()).includes(text);
        if (found) break;
      }
      if (!found) return false;
    }
    return true;
  };
}
