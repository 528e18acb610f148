import type { Node, Value } from './ast.js';
import { isAscii } from './text.js';

/**
 * What SQL may use to narrow rows: a superset only (the predicate has the last word). Taken only from
 * conjuncts every matching log must satisfy (the top-level AND chain); an OR or NOT there is skipped.
 *
 * - `levels`: the allowed level indexes, ascending (possibly empty: nothing matches).
 * - `sources`: a matching log's source, folded, is one of these. Only ASCII values are given, lower
 *   case; a source matches when `lower(source)` (ASCII lower case) is one of them, except for a
 *   source holding a character of FOLDS_TO_ASCII (İ, K (Kelvin), U+037E, U+1FEF), which can fold to
 *   one without being one in ASCII: SQL must keep those rows too (or leave them to the predicate).
 * - `from`, `to`: inclusive epoch ms bounds on the log's timestamp (from > to: nothing matches).
 * - `contains`: ASCII lower-case strings that a matching log's message contains ASCII-case-insensitively
 *   (`lower(message) LIKE '%s%'`), with the same exception: a message holding a FOLDS_TO_ASCII
 *   character must be kept.
 */
export interface Narrowing {
  levels?: number[];
  sources?: string[];
  from?: number;
  to?: number;
  contains?: string[];
}

const ALL_LEVELS = [0, 1, 2, 3, 4, 5];

function conjuncts(node: Node, out: Node[]): Node[] {
  if (node.kind === 'and') for (const c of node.children) conjuncts(c, out);
  else out.push(node);
  return out;
}

/** Levels a value admits, or undefined for all of them. */
function levelsOf(v: Value): number[] | undefined {
  if (v.kind === 'range') {
    return ALL_LEVELS.filter((n) => (v.lo === undefined || (v.loInclusive ? n >= v.lo : n > v.lo)) && (v.hi === undefined || (v.hiInclusive ? n <= v.hi : n < v.hi)));
  }
  if (v.kind === 'list') {
    const set = new Set<number>();
    for (const item of v.values) {
      const l = levelsOf(item);
      if (l === undefined) return undefined;
      for (const n of l) set.add(n);
    }
    return [...set].sort((a, b) => a - b);
  }
  return undefined;
}

/** Inclusive time bounds a value admits (undefined ends are open), or undefined for no bound. */
function timesOf(v: Value): { from?: number; to?: number } | undefined {
  if (v.kind === 'range') {
    const out: { from?: number; to?: number } = {};
    if (v.lo !== undefined) out.from = v.loInclusive ? v.lo : Math.floor(v.lo) + 1;
    if (v.hi !== undefined) out.to = v.hi === Math.floor(v.hi) && !v.hiInclusive ? v.hi - 1 : Math.floor(v.hi);
    return out;
  }
  if (v.kind === 'list') {
    let from = Infinity;
    let to = -Infinity;
    for (const item of v.values) {
      const t = timesOf(item);
      if (t === undefined) return undefined;
      from = Math.min(from, t.from ?? -Infinity);
      to = Math.max(to, t.to ?? Infinity);
    }
    const out: { from?: number; to?: number } = {};
    if (Number.isFinite(from)) out.from = from;
    if (Number.isFinite(to)) out.to = to;
    return out;
  }
  return undefined;
}

/** Sources (folded, ASCII) a value admits, or undefined when it cannot say. */
function sourcesOf(v: Value): string[] | undefined {
  if (v.kind === 'eq') return v.glob || !isAscii(v.folded) ? undefined : [v.folded];
  if (v.kind === 'exact') return isAscii(v.text) ? [v.text.toLowerCase()] : undefined;
  if (v.kind === 'list') {
    const set = new Set<string>();
    for (const item of v.values) {
      const s = sourcesOf(item);
      if (s === undefined) return undefined;
      for (const x of s) set.add(x);
    }
    return [...set];
  }
  return undefined;
}

/** Texts (ASCII lower case) the message must contain for this value to hold. */
function containsOf(v: Value): string[] {
  switch (v.kind) {
    case 'phrase':
      return v.folded !== '' && isAscii(v.folded) ? [v.folded] : [];
    case 'words': {
      if (v.any) return [];
      if (v.words.length === 0) return v.folded !== '' && isAscii(v.folded) ? [v.folded] : [];
      const out: string[] = [];
      for (const w of v.words) for (const s of 'word' in w ? [w.word] : w.glob.literals) if (s !== '' && isAscii(s)) out.push(s);
      return out;
    }
    case 'regex': {
      const lit = v.regex.pattern.literal;
      return lit !== undefined && isAscii(lit) ? [lit.toLowerCase()] : [];
    }
    default:
      return [];
  }
}

export function narrow(root: Node): Narrowing {
  const out: Narrowing = {};
  let levels: Set<number> | undefined;
  let sources: Set<string> | undefined;
  const contains = new Set<string>();
  for (const node of conjuncts(root, [])) {
    if (node.kind === 'regex') {
      for (const s of containsOf({ kind: 'regex', regex: node.regex, start: 0, end: 0 })) contains.add(s);
      continue;
    }
    if (node.kind !== 'field') continue;
    const { field, value } = node;
    if (field.kind === 'level') {
      const l = levelsOf(value);
      if (l !== undefined) levels = new Set(l.filter((n) => levels === undefined || levels.has(n)));
    } else if (field.kind === 'timestamp') {
      const t = timesOf(value);
      if (t?.from !== undefined) out.from = Math.max(out.from ?? -Infinity, t.from);
      if (t?.to !== undefined) out.to = Math.min(out.to ?? Infinity, t.to);
    } else if (field.kind === 'source') {
      const s = sourcesOf(value);
      if (s !== undefined) sources = new Set(s.filter((x) => sources === undefined || sources.has(x)));
    } else if (field.kind === 'message') {
      for (const s of containsOf(value)) contains.add(s);
    }
  }
  if (levels !== undefined) out.levels = [...levels].sort((a, b) => a - b);
  if (sources !== undefined) out.sources = [...sources].sort();
  if (contains.size > 0) out.contains = [...contains];
  return out;
}
