import { RE2JS } from 're2js';

/** A compiled user pattern: RE2 semantics, tested against a log's message. */
export interface Pattern {
  readonly source: string;
  /** Text every match contains (case-sensitive), when one is known: a database can prefilter on it. */
  readonly literal?: string;
  test(text: string): boolean;
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
 * Compiles an RE2 pattern (throws re2js's error when it is not valid) into a tester that first
 * checks for the pattern's required literal with a plain substring search: most log lines fail
 * that check, and it costs a fraction of running the regular expression.
 */
export function compileRe2(source: string): Pattern {
  const re = RE2JS.compile(source);
  const required = requiredLiteral(source);
  if (required === null) return { source, test: (text) => re.test(text) };
  const { literal, exact } = required;
  if (exact) return { source, literal, test: (text) => text.includes(literal) };
  return { source, literal, test: (text) => text.includes(literal) && re.test(text) };
}
