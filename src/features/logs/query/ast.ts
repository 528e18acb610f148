import type { Pattern } from '../pattern.js';
import type { Glob } from './text.js';

/**
 * The parsed query. Every node and value carries `start` and `end`: 1-based columns in code points,
 * `start` at its first character and `end` just past its last (so `end - start` is its length).
 * Nodes built from the legacy parameters (see withFilter) have start = end = 0.
 */
interface At {
  readonly start: number;
  readonly end: number;
}

/** One word of a bare term: literal (folded) or a wildcard pattern matched against one word. */
export type TermWord = { readonly word: string } | { readonly glob: Glob };

/** A run of words as in a bare term (`req-1007`, `time*`), matched against adjacent words. */
export interface Words {
  /** The term's text, unescaped. */
  readonly text: string;
  readonly words: readonly TermWord[];
  /** The term is only `*`: every log. */
  readonly any: boolean;
  /** No word characters in it (`=>`): matched like a phrase, on `text` folded. */
  readonly folded: string;
}

/** Where a regular expression applies, for the regex runner. */
export type RegexTarget = { readonly kind: 'message' } | { readonly kind: 'source' } | { readonly kind: 'meta'; readonly path: readonly string[] };

export interface RegexLeaf {
  /** Index in Query.regexes. */
  readonly id: number;
  readonly source: string;
  readonly pattern: Pattern;
  readonly target: RegexTarget;
  /** Its source and target as one string: the same test on the same text, whichever query holds it. */
  readonly key: string;
}

export type Node =
  | (At & { readonly kind: 'all' })
  | (At & { readonly kind: 'and'; readonly children: readonly Node[] })
  | (At & { readonly kind: 'or'; readonly children: readonly Node[] })
  | (At & { readonly kind: 'not'; readonly child: Node })
  /** A bare word or term: words of the message or of any metadata value. */
  | (At & { readonly kind: 'term' } & Words)
  /** A bare "phrase": folded substring of the message or of a metadata string value. */
  | (At & { readonly kind: 'phrase'; readonly text: string; readonly folded: string })
  /** A bare /re2/ on the message. */
  | (At & { readonly kind: 'regex'; readonly regex: RegexLeaf })
  | (At & { readonly kind: 'field'; readonly field: Field; readonly value: Value });

export type Field = At & ({ readonly kind: 'level' | 'source' | 'message' | 'timestamp' } | { readonly kind: 'meta'; readonly path: readonly string[] }) & { readonly text: string };

export type Value =
  /** `*`: the field exists and is not null (nor an empty array). */
  | (At & { readonly kind: 'exists' })
  /**
   * Equality (source, metadata): `folded` compared ignoring case with strings, `number` with numbers,
   * `glob` when the unquoted value has wildcards (then against the whole value).
   */
  | (At & { readonly kind: 'eq'; readonly text: string; readonly quoted: boolean; readonly folded: string; readonly number: number | undefined; readonly glob: Glob | undefined })
  /** Exact, case-sensitive equality (the legacy `source` parameter). */
  | (At & { readonly kind: 'exact'; readonly text: string })
  /** message:word — as a bare term on the message. */
  | (At & { readonly kind: 'words' } & Words)
  /** message:"phrase" — folded substring of the message. */
  | (At & { readonly kind: 'phrase'; readonly text: string; readonly folded: string })
  | (At & { readonly kind: 'regex'; readonly regex: RegexLeaf })
  /**
   * Comparisons, ranges, and level and timestamp equality: numbers (level indexes for level, epoch ms
   * for timestamp) between the bounds. An absent bound is open.
   */
  | (At & { readonly kind: 'range'; readonly lo: number | undefined; readonly loInclusive: boolean; readonly hi: number | undefined; readonly hiInclusive: boolean })
  /** `(a OR b)`: any of them. */
  | (At & { readonly kind: 'list'; readonly values: readonly Value[] });

/** RegexLeaf.key of a regex on a target. */
export function regexKey(source: string, target: RegexTarget): string {
  return JSON.stringify([source, target]);
}
