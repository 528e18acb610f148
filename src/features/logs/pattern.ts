import { RE2JS } from 're2js';

/** A compiled user pattern: RE2 semantics, tested against a log's message. */
export interface Pattern {
  readonly source: string;
  /** Text every match contains (case-sensitive), when one is known: a database can prefilter on it. */
  readonly literal?: string;
  /** Instructions in the compiled program: one test costs at most about size × text length steps. */
  readonly size: number;
  /**
   * Tests on the calling thread, without bound. Only for texts where `cheap(text)`; anything else
   * goes through the regex runner (regex-runner.ts), which moves costly tests off the event loop.
   */
  test(text: string): boolean;
  /** Whether `test(text)` is bounded tightly enough to run on the event loop (a few milliseconds at worst): cost(text) ≤ INLINE_COST. */
  cheap(text: string): boolean;
  /** The most steps `test(text)` may take: program size × text length, or the text's length when a substring search decides. */
  cost(text: string): number;
}

/**
 * The most instructions a user pattern may compile to. RE2 refuses programs past its memory budget;
 * this cap is tighter, because a test's worst case is the program size times the text length: 2,000
 * instructions over a 64 KiB message is about a second of work on one core, which the regex runner
 * can still afford off the event loop. `([a-z]{1000}){2}` is past it; ordinary patterns use tens.
 */
export const MAX_PROGRAM_SIZE = 2000;

/** Worst-case steps (program size × text length) a test may take on the event loop: ~10 ms here. */
export const INLINE_COST = 2_000_000;

/** A pattern refused for its cost, not its syntax: the message says why. */
export class PatternTooCostly extends Error {
  constructor(readonly size: number) {
    super(`it compiles to ${size > MAX_PROGRAM_SIZE * 4 ? 'far more than' : 'about'} ${Math.min(size, MAX_PROGRAM_SIZE * 4).toLocaleString('en')} instructions, and at most ${MAX_PROGRAM_SIZE.toLocaleString('en')} are allowed; use smaller repetition counts`);
    this.name = 'PatternTooCostly';
  }
}

/**
 * An upper estimate of a pattern's program size, read from its text without compiling it, so a
 * pattern such as `a{1000}` written 142 times (0.2 s to compile, 142,000 instructions) is refused
 * before it costs anything. Every atom counts one, a group two more, an alternation or `*+?` one,
 * and a counted repetition multiplies what it repeats. It need not be exact: the compiled program's
 * real size decides once the estimate says compiling is cheap.
 */
export function estimateProgramSize(pattern: string): number {
  const frames: { total: number; last: number }[] = [{ total: 0, last: 0 }];
  const top = () => frames[frames.length - 1]!;
  const atom = (n: number) => {
    top().total += n;
    top().last = n;
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? pattern.length : end;
        for (let k = i + 2; k < stop; k++) atom(1);
        i = end < 0 ? pattern.length : end + 1;
        continue;
      }
      i++;
      if ((n === 'x' || n === 'p' || n === 'P') && pattern[i + 1] === '{') i = Math.max(i, pattern.indexOf('}', i));
      atom(1);
      continue;
    }
    if (c === '[') {
      const close = skipClass(pattern, i);
      i = close < 0 ? pattern.length : close;
      atom(1);
      continue;
    }
    if (c === '(') {
      const flags = /^\(\?[a-zA-Z-]*\)/.exec(pattern.slice(i, i + 16));
      if (flags) {
        i += flags[0].length - 1;
        continue;
      }
      const header = /^\(\?(P?<[^>]*>|[a-zA-Z-]*:)/.exec(pattern.slice(i, i + 80));
      if (header) i += header[0].length - 1;
      frames.push({ total: 0, last: 0 });
      continue;
    }
    if (c === ')') {
      if (frames.length > 1) {
        const group = frames.pop()!;
        atom(group.total + 2);
      }
      continue;
    }
    if (c === '|') {
      top().total += 1;
      top().last = 0;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      top().total += 1;
      continue;
    }
    const repeat = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24)) : null;
    if (repeat) {
      const n = Number(repeat[1]);
      const count = repeat[2] === undefined ? n : repeat[3] === '' ? n + 1 : Math.max(n, Number(repeat[3]));
      const f = top();
      f.total += f.last * Math.max(0, count - 1) + count;
      f.last *= Math.max(1, count);
      i += repeat[0].length - 1;
      continue;
    }
    atom(1);
  }
  let size = 0;
  for (const f of frames) size += f.total;
  return size;
}

/**
 * The longest run of literal text that every match of an RE2 pattern must contain, or null when
 * none can be proven. Conservative: it gives up on flags and non-capturing groups `(?…)`, on `\Q`,
 * on top-level alternation, and skips groups and character classes; a character followed by a
 * quantifier that allows zero repeats leaves the run. Runs shorter than two characters are not
 * worth a check. `exact` is true when the whole pattern is that literal (no metacharacters at all),
 * so the substring check alone decides.
 */
export function requiredLiteral(pattern: string): { literal: string; exact: boolean } | null {
  if (pattern.includes('(?') || pattern.includes('\\Q')) return null;
  const runs: string[] = [];
  let run = '';
  let plain = true;
  const end = () => {
    if (run.length > 0) runs.push(run);
    run = '';
  };
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (depth > 0) {
      if (c === '\\') i++;
      else if (c === '[') i = skipClass(pattern, i);
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      if (i < 0) return null;
      continue;
    }
    if (c === '|') return null;
    if (c === '(') {
      plain = false;
      end();
      depth = 1;
      continue;
    }
    if (c === '[') {
      plain = false;
      end();
      i = skipClass(pattern, i);
      if (i < 0) return null;
      continue;
    }
    // `{` starts a repetition only as {n}, {n,} or {n,m}; anywhere else RE2 reads it as a literal brace.
    const repeat = c === '{' ? /^\{\d+(,\d*)?\}/.exec(pattern.slice(i)) : null;
    if (c === '*' || c === '?' || repeat) {
      // The element before may occur zero times: it leaves the run (a quantified group or class already did).
      plain = false;
      run = run.slice(0, /[\uDC00-\uDFFF]$/.test(run) ? -2 : -1);
      end();
      if (repeat) i += repeat[0].length - 1;
      continue;
    }
    if (c === '+') {
      // At least once: the element stays, but what follows need not be next to it.
      plain = false;
      end();
      continue;
    }
    if (c === '.' || c === '^' || c === '$') {
      plain = false;
      end();
      continue;
    }
    if (c === '\\') {
      const n = pattern[i + 1];
      i++;
      plain = false;
      // An escaped punctuation character stands for itself; letters and digits are classes,
      // assertions or character codes, and the codes' arguments are skipped too: \x41, \x{263a},
      // \pL, \p{Greek}, \123.
      if (n !== undefined && /[^0-9A-Za-z]/.test(n)) {
        run += n;
        continue;
      }
      end();
      const arg = n === 'x' ? /^(\{[0-9A-Fa-f]*\}|[0-9A-Fa-f]{0,2})/.exec(pattern.slice(i + 1)) : n === 'p' || n === 'P' ? /^(\{[^}]*\}|.)/.exec(pattern.slice(i + 1)) : n !== undefined && /[0-7]/.test(n) ? /^[0-7]{0,2}/.exec(pattern.slice(i + 1)) : null;
      if (arg) i += arg[0].length;
      continue;
    }
    run += c;
  }
  end();
  const longest = runs.reduce((a, b) => (b.length > a.length ? b : a), '');
  if (longest.length < 2) return null;
  return { literal: longest, exact: plain && longest === pattern };
}

/** Index of the `]` that closes the class opening at `open`, or -1. */
function skipClass(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  for (; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      if (close < 0) return -1;
      i = close + 1;
    } else if (c === ']') return i;
  }
  return -1;
}

/**
 * A least-recently-used cache of at most `max` entries: a hit moves to the back, and past `max` the
 * front (the entry used longest ago) goes. The regex worker's thread (regex-runner.worker.ts) uses
 * it too.
 */
export function lruCache<K, V>(max: number) {
  const map = new Map<K, V>();
  return {
    get(k: K): V | undefined {
      const v = map.get(k);
      if (v !== undefined) {
        map.delete(k);
        map.set(k, v);
      }
      return v;
    },
    set(k: K, v: V): void {
      map.delete(k);
      map.set(k, v);
      if (map.size > max) map.delete(map.keys().next().value as K);
    },
  };
}

/** Compiled patterns by source, shared by search, stats, tails and alert rules across cache refreshes. */
const compiled = lruCache<string, Pattern | PatternTooCostly>(256);

/**
 * The memory each compiled pattern's lazy DFA may hold before it starts its cache again (re2js's
 * default is 8 MiB, as RE2's). Patterns come from every tenant and stay cached, so their DFAs are
 * kept small: 256 cached patterns hold at most ~128 MiB, and a pattern whose DFA outgrows this
 * still answers, a little slower.
 */
export const DFA_MAX_BYTES = 512 * 1024;

/** Caps a compiled pattern's DFA memory (see DFA_MAX_BYTES); the DFA is created here, once. Here and in the regex worker's thread. */
export function limitDfa(re: RE2JS, maxBytes = DFA_MAX_BYTES): RE2JS {
  const dfa = (re.re2Input as unknown as { dfa: { maxMem: number; stateBudget: number; memBudget: number } }).dfa;
  dfa.maxMem = dfa.stateBudget = dfa.memBudget = maxBytes;
  return re;
}

/**
 * Compiles an RE2 pattern (throws re2js's error when it is not valid, PatternTooCostly when its
 * program is past MAX_PROGRAM_SIZE) into a tester that first checks for the pattern's required
 * literal with a plain substring search: most log lines fail that check, and it costs a fraction of
 * running the regular expression. Results, refusals included, are cached by source.
 */
export function compileRe2(source: string): Pattern {
  const hit = compiled.get(source);
  if (hit !== undefined) {
    if (hit instanceof PatternTooCostly) throw hit;
    return hit;
  }
  let result: Pattern | PatternTooCostly;
  const estimate = estimateProgramSize(source);
  if (estimate > MAX_PROGRAM_SIZE * 4) result = new PatternTooCostly(estimate);
  else {
    const re = limitDfa(RE2JS.compile(source));
    const size = re.re2Input.prog.numInst();
    result = size > MAX_PROGRAM_SIZE ? new PatternTooCostly(size) : build(source, re, size);
  }
  compiled.set(source, result);
  if (result instanceof PatternTooCostly) throw result;
  return result;
}

/** A client's pattern compiled, or why not: its syntax (`why` is RE2's complaint, cut to 200 characters) or its cost. */
export type PatternCheck = { ok: true; pattern: Pattern } | { ok: false; costly: boolean; why: string };

/** compileRe2 for a client's pattern (the `pattern` parameter, an alert's pattern, a query's /re2/): a refusal is a value. */
export function checkPattern(source: string): PatternCheck {
  try {
    return { ok: true, pattern: compileRe2(source) };
  } catch (err) {
    if (err instanceof PatternTooCostly) return { ok: false, costly: true, why: err.message };
    return { ok: false, costly: false, why: err instanceof Error ? err.message.slice(0, 200) : 'invalid' };
  }
}

/** Said after a syntax refusal: what RE2 leaves out that other engines have. */
export const RE2_UNSUPPORTED = 'backreferences and lookaround are not supported';

function build(source: string, re: RE2JS, size: number): Pattern {
  const required = requiredLiteral(source);
  // An exact literal is a substring search: linear, never costly.
  if (required?.exact) {
    const literal = required.literal;
    return { source, literal, size, test: (text) => text.includes(literal), cheap: () => true, cost: (text) => text.length };
  }
  if (required === null) {
    const cost = (text: string) => size * text.length;
    return { source, size, test: (text) => re.test(text), cheap: (text) => cost(text) <= INLINE_COST, cost };
  }
  const { literal } = required;
  // Without its literal a text is refused by the substring search alone, which is always cheap.
  const cost = (text: string) => (text.includes(literal) ? size * text.length : text.length);
  return { source, literal, size, test: (text) => text.includes(literal) && re.test(text), cheap: (text) => cost(text) <= INLINE_COST, cost };
}
