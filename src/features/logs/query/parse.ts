import { AppError } from '../../../errors.js';
import { levelIndex } from '../levels.js';
import { checkPattern, estimateProgramSize, MAX_PROGRAM_SIZE, RE2_UNSUPPORTED } from '../pattern.js';
import { regexKey, type Field, type Node, type RegexLeaf, type RegexTarget, type TermWord, type Value, type Words } from './ast.js';
import { fold, isWordChar, makeGlob, ONE, parseTime, STAR, toNumber, type GlobPart } from './text.js';

export const MAX_QUERY_CHARS = 2000;
export const MAX_TERMS = 64;
export const MAX_DEPTH = 16;
/**
 * The most instructions all of one query's regular expressions may compile to together (each one
 * is capped at MAX_PROGRAM_SIZE on its own). Compiling costs about as much as the program is big,
 * and a query's regexes are compiled when it is parsed: 64 fresh regexes of 2,000 instructions
 * were compiled on every request (a bystander's p99 243 ms). Past it, a 400 at the regex that
 * crosses it, found from its estimated size before it is compiled.
 */
export const MAX_QUERY_PROGRAM_SIZE = 2 * MAX_PROGRAM_SIZE;
export const QUERY_PATH = 'querystring:/query';
export const GROUP_BY_PATH = 'querystring:/groupBy';

/** The 400 of docs/search.md, "Errors": details[0].message is `at column N: expected …`. */
export function queryError(path: string, column: number, expected: string): AppError {
  const message = `at column ${column}: expected ${expected}`;
  return new AppError('VALIDATION_ERROR', `The query is not valid: ${message}.`, { details: [{ path, message }] });
}

export interface Parsed {
  root: Node;
  regexes: RegexLeaf[];
  terms: number;
}

/** One character of a word or value, and whether a backslash escaped it. */
interface Ch {
  c: string;
  esc: boolean;
  /** Index in the query's code points. */
  at: number;
}

type FieldKind = Field['kind'];

const SPACE = /^\s$/u;
const isSpace = (c: string | undefined) => c !== undefined && SPACE.test(c);
const LEVEL_LIST = 'a level: trace, debug, info, warn, error or fatal';
const TIME = 'an ISO 8601 time or epoch milliseconds';
const unescaped = (chars: readonly Ch[]) => chars.map((x) => x.c).join('');
const isStar = (chars: readonly Ch[]) => chars.length === 1 && chars[0]!.c === '*' && !chars[0]!.esc;
const isWild = (x: Ch) => !x.esc && (x.c === '*' || x.c === '?');

/**
 * Recursive descent over the query's code points. Recursion happens only at '(' (groups and value
 * lists), after the depth check, so no input can overflow the stack.
 */
class Parser {
  readonly cs: string[];
  p = 0;
  terms = 0;
  readonly regexes: RegexLeaf[] = [];
  /** Instructions of the regexes compiled so far (see MAX_QUERY_PROGRAM_SIZE). */
  programSize = 0;

  constructor(text: string, readonly path: string) {
    this.cs = Array.from(text);
  }

  /** Throws the 400 for the character at index `at` (0-based). */
  fail(at: number, expected: string): never {
    throw queryError(this.path, at + 1, expected);
  }

  skipSpaces(): void {
    while (isSpace(this.cs[this.p])) this.p++;
  }

  /** An upper-case operator at p, standing alone (followed by the end, a space, a parenthesis or a quote). */
  keyword(word: 'AND' | 'OR' | 'NOT'): boolean {
    for (let k = 0; k < word.length; k++) if (this.cs[this.p + k] !== word[k]) return false;
    const next = this.cs[this.p + word.length];
    return next === undefined || isSpace(next) || next === '(' || next === ')' || next === '"';
  }

  /** At the end of the query or of a group: nothing more to read here. */
  atGroupEnd(): boolean {
    return this.p >= this.cs.length || this.cs[this.p] === ')';
  }

  countTerm(at: number): void {
    if (++this.terms > MAX_TERMS) this.fail(at, `at most ${MAX_TERMS} terms (each value of a list counts)`);
  }

  parse(): Node {
    if (this.cs.length > MAX_QUERY_CHARS) this.fail(MAX_QUERY_CHARS, `the end of the query: at most ${MAX_QUERY_CHARS.toLocaleString('en')} characters are allowed`);
    this.skipSpaces();
    if (this.p >= this.cs.length) return { kind: 'all', start: 1, end: this.cs.length + 1 };
    const root = this.or(0);
    this.skipSpaces();
    if (this.p < this.cs.length) this.fail(this.p, "a term or the end of the query (this ')' closes no '(')");
    return root;
  }

  or(depth: number): Node {
    const children = [this.and(depth)];
    for (;;) {
      this.skipSpaces();
      if (!this.keyword('OR')) break;
      this.p += 2;
      this.skipSpaces();
      if (this.atGroupEnd() || this.keyword('AND') || this.keyword('OR')) this.fail(this.p, 'a term after OR');
      children.push(this.and(depth));
    }
    if (children.length === 1) return children[0]!;
    return { kind: 'or', children, start: children[0]!.start, end: children[children.length - 1]!.end };
  }

  and(depth: number): Node {
    this.skipSpaces();
    if (this.atGroupEnd()) this.fail(this.p, 'a term');
    for (const kw of ['AND', 'OR'] as const) if (this.keyword(kw)) this.fail(this.p, `a term before ${kw}`);
    const children = [this.unary(depth)];
    for (;;) {
      this.skipSpaces();
      if (this.atGroupEnd() || this.keyword('OR')) break;
      if (this.keyword('AND')) {
        this.p += 3;
        this.skipSpaces();
        if (this.atGroupEnd() || this.keyword('AND') || this.keyword('OR')) this.fail(this.p, 'a term after AND');
      }
      children.push(this.unary(depth));
    }
    if (children.length === 1) return children[0]!;
    return { kind: 'and', children, start: children[0]!.start, end: children[children.length - 1]!.end };
  }

  /** NOT and '-' prefixes, read in a loop (not recursively); an even number of them cancels out. */
  unary(depth: number): Node {
    const start = this.p;
    let negations = 0;
    for (;;) {
      if (this.keyword('NOT')) {
        this.p += 3;
        this.skipSpaces();
        if (this.atGroupEnd() || this.keyword('AND') || this.keyword('OR')) this.fail(this.p, 'a term after NOT');
        negations++;
        continue;
      }
      if (this.cs[this.p] === '-') {
        this.p++;
        const next = this.cs[this.p];
        if (next === undefined || isSpace(next) || next === ')' || this.keyword('AND') || this.keyword('OR')) this.fail(this.p, "a term right after '-'");
        negations++;
        continue;
      }
      break;
    }
    const node = this.primary(depth);
    return negations % 2 === 1 ? { kind: 'not', child: node, start: start + 1, end: node.end } : node;
  }

  primary(depth: number): Node {
    const start = this.p;
    const c = this.cs[start];
    if (c === '(') {
      if (depth + 1 > MAX_DEPTH) this.fail(start, `at most ${MAX_DEPTH} levels of nesting`);
      this.p++;
      const node = this.or(depth + 1);
      this.skipSpaces();
      if (this.cs[this.p] !== ')') this.fail(this.p, `')' to close the '(' at column ${start + 1}`);
      this.p++;
      return node;
    }
    if (c === '"') {
      this.countTerm(start);
      const text = this.quoted();
      return { kind: 'phrase', text, folded: fold(text), start: start + 1, end: this.p + 1 };
    }
    if (c === '/') {
      this.countTerm(start);
      const regex = this.regex({ kind: 'message' });
      return { kind: 'regex', regex, start: start + 1, end: this.p + 1 };
    }
    if (c === '@') {
      const path = this.atPath();
      if (path) {
        const field: Field = { kind: 'meta', path, text: this.cs.slice(start, this.p).join(''), start: start + 1, end: this.p + 1 };
        this.p++; // ':'
        const value = this.value(field, depth, "a value after ':'");
        return { kind: 'field', field, value, start: start + 1, end: value.end };
      }
      this.p = start;
    }
    const chars = this.chars(true, false);
    if (this.cs[this.p] === ':') {
      if (chars.length === 0) this.fail(start, "a field name before ':'");
      const field = this.fieldOf(chars, start);
      this.p++;
      const value = this.value(field, depth, "a value after ':'");
      return { kind: 'field', field, value, start: start + 1, end: value.end };
    }
    if (chars.length === 0) this.fail(start, 'a term');
    this.countTerm(start);
    return { kind: 'term', ...words(chars), start: start + 1, end: this.p + 1 };
  }

  /**
   * Reads a word or value: characters up to a space, '(', ')' or '"' (and ':' when `stopAtColon`,
   * ']' and '}' when `inRange`), with '\' escaping the next character.
   */
  chars(stopAtColon: boolean, inRange: boolean): Ch[] {
    const out: Ch[] = [];
    for (;;) {
      const c = this.cs[this.p];
      if (c === undefined || isSpace(c) || c === '(' || c === ')' || c === '"') break;
      if ((stopAtColon && c === ':') || (inRange && (c === ']' || c === '}'))) break;
      if (c === '\\') {
        const n = this.cs[this.p + 1];
        if (n === undefined) this.fail(this.p + 1, "a character after '\\'");
        out.push({ c: n, esc: true, at: this.p });
        this.p += 2;
        continue;
      }
      out.push({ c, esc: false, at: this.p });
      this.p++;
    }
    return out;
  }

  /** A "quoted" text at p (which is '"'): '\' escapes the next character. */
  quoted(): string {
    const open = this.p;
    this.p++;
    let text = '';
    for (;;) {
      const c = this.cs[this.p];
      if (c === undefined) this.fail(this.p, `'"' to close the quote opened at column ${open + 1}`);
      if (c === '"') break;
      if (c === '\\') {
        const n = this.cs[this.p + 1];
        if (n === undefined) this.fail(this.p + 1, "a character after '\\'");
        text += n;
        this.p += 2;
        continue;
      }
      text += c;
      this.p++;
    }
    this.p++;
    return text;
  }

  /** A /re2/ at p, compiled (a bad or costly pattern is the 400 at its first '/'). */
  regex(target: RegexTarget): RegexLeaf {
    const open = this.p;
    this.p++;
    let source = '';
    for (;;) {
      const c = this.cs[this.p];
      if (c === undefined) this.fail(this.p, `'/' to close the regular expression opened at column ${open + 1}`);
      if (c === '/') break;
      if (c === '\\') {
        const n = this.cs[this.p + 1];
        if (n === undefined) this.fail(this.p + 1, "a character after '\\'");
        source += c + n;
        this.p += 2;
        continue;
      }
      source += c;
      this.p++;
    }
    if (source === '') this.fail(this.p, "a regular expression between the slashes (quote a value that starts with '/')");
    this.p++;
    const costly = `regular expressions of at most ${MAX_QUERY_PROGRAM_SIZE.toLocaleString('en')} instructions in all in one query`;
    // The estimate is an upper bound: well past what is left, nothing is compiled.
    if (this.programSize + Math.min(estimateProgramSize(source), MAX_PROGRAM_SIZE * 4) > MAX_QUERY_PROGRAM_SIZE * 4) this.fail(open, costly);
    const checked = checkPattern(source);
    if (checked.ok && (this.programSize += checked.pattern.size) > MAX_QUERY_PROGRAM_SIZE) this.fail(open, costly);
    if (!checked.ok) this.fail(open, checked.costly ? `a cheaper regular expression: ${checked.why}` : `a valid RE2 regular expression (${checked.why}); ${RE2_UNSUPPORTED}`);
    const leaf: RegexLeaf = { id: this.regexes.length, source, pattern: checked.pattern, target, key: regexKey(source, target) };
    this.regexes.push(leaf);
    return leaf;
  }

  /**
   * An '@' path at p followed by ':': its segments, with p on the ':'. Null when what follows '@'
   * is not a field after all (`@user` alone is a word), unless it used a quoted segment.
   */
  atPath(endsField = false): string[] | null {
    this.p++;
    const segments: string[] = [];
    let quotedAny = false;
    for (;;) {
      const segStart = this.p;
      let seg = '';
      if (this.cs[this.p] === '"') {
        seg = this.quoted();
        quotedAny = true;
      } else {
        for (;;) {
          const c = this.cs[this.p];
          if (c === undefined || isSpace(c) || c === '.' || c === ':' || c === '"' || c === '(' || c === ')') break;
          if (c === '\\') {
            const n = this.cs[this.p + 1];
            if (n === undefined) this.fail(this.p + 1, "a character after '\\'");
            seg += n;
            this.p += 2;
            continue;
          }
          seg += c;
          this.p++;
        }
        if (this.p === segStart) {
          if (quotedAny || this.cs[this.p] === ':' || (this.cs[this.p] === '.' && segments.length > 0)) this.fail(this.p, 'a field name segment');
          return null;
        }
      }
      segments.push(seg);
      const next = this.cs[this.p];
      if (next === '.') {
        this.p++;
        continue;
      }
      if (next === ':' || (endsField && next === undefined)) return segments;
      if (quotedAny) this.fail(this.p, endsField ? 'the end of the field name' : "':' after the field name");
      return null;
    }
  }

  /** A field name read as a word (no '@'): a reserved name or a dotted metadata path. */
  fieldOf(chars: readonly Ch[], start: number): Field {
    const segments: string[] = [];
    let seg = '';
    for (const x of chars) {
      if (x.c === '.' && !x.esc) {
        if (seg === '') this.fail(x.at, 'a field name segment before this dot');
        segments.push(seg);
        seg = '';
        continue;
      }
      seg += x.c;
    }
    if (seg === '') this.fail(this.p, 'a field name segment');
    segments.push(seg);
    const text = this.cs.slice(start, this.p).join('');
    const at = { text, start: start + 1, end: this.p + 1 };
    if (segments.length === 1 && (seg === 'level' || seg === 'source' || seg === 'message' || seg === 'timestamp')) return { kind: seg, ...at };
    return { kind: 'meta', path: segments, ...at };
  }

  /** A field's value at p. `missing` says what was expected when there is none. */
  value(f: Field, depth: number, missing: string): Value {
    const field = f.kind;
    const start = this.p;
    const c = this.cs[start];
    if (c === undefined || isSpace(c) || c === ')') this.fail(start, missing);
    if (c === '(') return this.list(f, depth);
    if (c === '>' || c === '<') return this.comparison(field);
    if (c === '[' || c === '{') return this.range(field);
    if (c === '/') {
      if (field === 'level' || field === 'timestamp') this.fail(start, field === 'level' ? LEVEL_LIST : TIME);
      this.countTerm(start);
      const target: RegexTarget = f.kind === 'meta' ? { kind: 'meta', path: f.path } : { kind: f.kind === 'source' ? 'source' : 'message' };
      const regex = this.regex(target);
      return { kind: 'regex', regex, start: start + 1, end: this.p + 1 };
    }
    let chars: Ch[];
    let quoted = false;
    if (c === '"') {
      quoted = true;
      chars = Array.from(this.quoted(), (ch) => ({ c: ch, esc: true, at: start }));
    } else {
      chars = this.chars(false, false);
      if (chars.length === 0) this.fail(start, missing);
    }
    this.countTerm(start);
    const at = { start: start + 1, end: this.p + 1 };
    if (!quoted && isStar(chars)) return { kind: 'exists', ...at };
    const text = unescaped(chars);
    const wild = chars.some(isWild);
    switch (field) {
      case 'level':
      case 'timestamp': {
        const n = wild ? undefined : this.scalar(field, text);
        if (n === undefined) this.fail(start, field === 'level' ? LEVEL_LIST : TIME);
        return { kind: 'range', lo: n, loInclusive: true, hi: n, hiInclusive: true, ...at };
      }
      case 'message':
        return quoted ? { kind: 'phrase', text, folded: fold(text), ...at } : { kind: 'words', ...words(chars), ...at };
      default:
        return { kind: 'eq', text, quoted, folded: fold(text), number: toNumber(text), glob: wild ? makeGlob(globParts(chars)) : undefined, ...at };
    }
  }

  /** A comparison or range bound as a number for its field: a level index, epoch ms, or a number. */
  scalar(field: 'level' | 'timestamp' | 'meta', text: string): number | undefined {
    if (field === 'level') return levelIndex(text);
    if (field === 'timestamp') return parseTime(text);
    return toNumber(text);
  }

  /** What a bound must be for this field; source and message take no comparisons or ranges. */
  boundField(field: FieldKind, at: number): 'level' | 'timestamp' | 'meta' {
    if (field === 'source') this.fail(at, 'a source name, a quoted text, a regular expression or * (comparisons and ranges apply to level, timestamp and metadata)');
    if (field === 'message') this.fail(at, 'a word, a quoted phrase, a regular expression or * (comparisons and ranges apply to level, timestamp and metadata)');
    return field;
  }

  bound(kind: 'level' | 'timestamp' | 'meta', inRange: boolean, missing: string): number | undefined {
    const start = this.p;
    const c = this.cs[start];
    let chars: Ch[];
    if (c === '"') chars = Array.from(this.quoted(), (ch) => ({ c: ch, esc: true, at: start }));
    else {
      chars = this.chars(false, inRange);
      if (chars.length === 0) this.fail(start, missing);
      if (inRange && isStar(chars)) return undefined;
    }
    const n = chars.some(isWild) ? undefined : this.scalar(kind, unescaped(chars));
    if (n === undefined) this.fail(start, kind === 'level' ? LEVEL_LIST : kind === 'timestamp' ? TIME : 'a number');
    return n;
  }

  comparison(field: FieldKind): Value {
    const start = this.p;
    const kind = this.boundField(field, start);
    const op = this.cs[start + 1] === '=' ? this.cs[start]! + '=' : this.cs[start]!;
    this.p += op.length;
    const what = kind === 'level' ? 'a level' : kind === 'timestamp' ? 'a time' : 'a number';
    const n = this.bound(kind, false, `${what} right after '${op}'`);
    this.countTerm(start);
    const at = { start: start + 1, end: this.p + 1 };
    if (op[0] === '>') return { kind: 'range', lo: n, loInclusive: op === '>=', hi: undefined, hiInclusive: false, ...at };
    return { kind: 'range', lo: undefined, loInclusive: false, hi: n, hiInclusive: op === '<=', ...at };
  }

  range(field: FieldKind): Value {
    const start = this.p;
    const kind = this.boundField(field, start);
    const loInclusive = this.cs[start] === '[';
    this.p++;
    this.skipSpaces();
    const lo = this.bound(kind, true, 'a bound (a value or *)');
    this.skipSpaces();
    if (!(this.cs[this.p] === 'T' && this.cs[this.p + 1] === 'O' && isSpace(this.cs[this.p + 2]))) {
      if (this.cs[this.p] === 'T' && this.cs[this.p + 1] === 'O') this.fail(this.p + 2, "a bound after 'TO'");
      this.fail(this.p, "'TO' between the bounds");
    }
    this.p += 2;
    this.skipSpaces();
    const hi = this.bound(kind, true, "a bound after 'TO'");
    this.skipSpaces();
    const close = this.cs[this.p];
    if (close !== ']' && close !== '}') this.fail(this.p, `']' or '}' to close the range opened at column ${start + 1}`);
    this.p++;
    this.countTerm(start);
    return { kind: 'range', lo, loInclusive, hi, hiInclusive: close === ']', start: start + 1, end: this.p + 1 };
  }

  list(field: Field, depth: number): Value {
    const start = this.p;
    if (depth + 1 > MAX_DEPTH) this.fail(start, `at most ${MAX_DEPTH} levels of nesting`);
    this.p++;
    this.skipSpaces();
    const values: Value[] = [];
    let missing = "a value after '('";
    for (;;) {
      if (this.keyword('OR') || this.keyword('AND')) this.fail(this.p, missing);
      values.push(this.value(field, depth + 1, missing));
      this.skipSpaces();
      if (this.cs[this.p] === ')') break;
      if (this.keyword('OR')) {
        this.p += 2;
        this.skipSpaces();
        missing = 'a value after OR';
        continue;
      }
      if (this.p >= this.cs.length) this.fail(this.p, `')' to close the list opened at column ${start + 1}`);
      this.fail(this.p, "'OR' or ')' in the list of values");
    }
    this.p++;
    return { kind: 'list', values, start: start + 1, end: this.p + 1 };
  }
}

function globParts(chars: readonly Ch[]): GlobPart[] {
  const parts: GlobPart[] = [];
  let lit = '';
  for (const x of chars) {
    if (isWild(x)) {
      if (lit) parts.push(fold(lit));
      lit = '';
      parts.push(x.c === '*' ? STAR : ONE);
    } else lit += x.c;
  }
  if (lit) parts.push(fold(lit));
  return parts;
}

/** A bare term's words: folded, split where a character is neither a word character nor a wildcard. */
function words(chars: readonly Ch[]): Words {
  const text = unescaped(chars);
  const items: (string | typeof STAR | typeof ONE)[] = [];
  for (const part of globParts(chars)) {
    if (typeof part === 'string') for (const c of part) items.push(c);
    else items.push(part);
  }
  const out: TermWord[] = [];
  let run: GlobPart[] = [];
  let wild = false;
  const end = () => {
    if (run.length === 0) return;
    if (wild) {
      const parts: GlobPart[] = [];
      for (const x of run) {
        const last = parts[parts.length - 1];
        if (typeof x === 'string' && typeof last === 'string') parts[parts.length - 1] = last + x;
        else parts.push(x);
      }
      out.push({ glob: makeGlob(parts) });
    } else out.push({ word: run.join('') });
    run = [];
    wild = false;
  };
  for (const x of items) {
    if (typeof x !== 'string') {
      wild = true;
      run.push(x);
    } else if (isWordChar(x)) run.push(x);
    else end();
  }
  end();
  const any = chars.length > 0 && chars.every((x) => x.c === '*' && !x.esc);
  return { text, words: out, any, folded: fold(text) };
}

/** Parses a query (the caller wraps it as a Query). Throws the 400 with `path`. */
export function parse(text: string, path: string): Parsed {
  const parser = new Parser(text, path);
  const root = parser.parse();
  return { root, regexes: parser.regexes, terms: parser.terms };
}

/** A groupBy field: level, source, or a metadata path (`a.b`, `@a.b`, `@"odd key".x`). */
export function parseField(text: string, path: string): Field {
  const parser = new Parser(text, path);
  const cs = parser.cs;
  const expected = "level, source or a metadata path (write @message for a metadata key called 'message')";
  if (cs.length === 0) parser.fail(0, expected);
  if (cs.length > MAX_QUERY_CHARS) parser.fail(MAX_QUERY_CHARS, `the end: at most ${MAX_QUERY_CHARS.toLocaleString('en')} characters are allowed`);
  if (cs[0] === '@') {
    const segments = parser.atPath(true);
    if (segments === null || parser.p !== cs.length) return parser.fail(parser.p, segments === null ? 'a metadata path' : 'the end of the field name');
    return { kind: 'meta', path: segments, text, start: 1, end: cs.length + 1 };
  }
  const chars = parser.chars(true, false);
  if (parser.p !== cs.length) parser.fail(parser.p, chars.length === 0 ? expected : 'the end of the field name');
  const field = parser.fieldOf(chars, 0);
  if (field.kind === 'message' || field.kind === 'timestamp') parser.fail(0, expected);
  return field;
}

/** A comma list of fields; commas inside double quotes (a quoted path segment) do not split. */
export function splitFieldList(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && quoted && i + 1 < text.length) {
      current += c + text[++i]!;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      out.push(current.trim());
      current = '';
    } else current += c;
  }
  out.push(current.trim());
  return out.filter((f) => f !== '');
}
