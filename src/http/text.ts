import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

/**
 * One rule for every text a client sends (bodies, query strings, path parameters; object keys as
 * well as values): no NUL (U+0000), which PostgreSQL cannot store in text, and no ill-formed
 * UTF-16 (a lone surrogate, U+D800–U+DFFF without its pair), which JSON can carry as `\ud800`
 * and which a database or an encoder would otherwise silently turn into U+FFFD — so a password
 * `…\ud800` would then also match `…\udfff`, and a name would be echoed one way and stored another.
 * Such text answers 400 VALIDATION_ERROR at the JSON pointer of the string (`/condition/pattern`,
 * `querystring:/q`), on both engines alike; in a path parameter it is a 404, as any id that cannot exist.
 *
 * A route may opt out with `config: { rawText: true }`: log ingestion, where a log line is data a
 * shipper copied from somewhere and losing a batch over one byte would cost the others; the ingest
 * path stores U+FFFD in place of NUL and of lone surrogates instead (features/logs/ingest/normalise.ts).
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes text as it comes and cleans it itself: the text rule (http/text.ts) is not applied. */
    rawText?: boolean;
  }
}

export interface TextProblem {
  /** A JSON pointer (RFC 6901) to the string, or to the member whose name is at fault. */
  path: string;
  message: string;
}

const hex = (unit: number) => unit.toString(16).toUpperCase().padStart(4, '0');

/** Why a string may not be taken, or undefined when it is fine. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (s.isWellFormed()) return undefined;
  // In Unicode mode the class matches lone surrogates only; a proper pair is one code point.
  const lone = /[\ud800-\udfff]/u.exec(s)!;
  return `must be well-formed Unicode: it holds a lone surrogate (U+${hex(lone[0].charCodeAt(0))}) at offset ${lone.index}`;
}

/** A JSON pointer segment; a name that is itself bad shows its bad code units as \uXXXX escapes. */
function segment(key: string): string {
  const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
  return escaped.replace(/[\u0000\ud800-\udfff]/gu, (c) => `\\u${hex(c.charCodeAt(0)).toLowerCase()}`);
}

/** Whether any string or object key in `value` breaks the rule: one iterative pass, no paths kept. */
function anyTextProblem(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (textProblem(v) !== undefined) return true;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (ArrayBuffer.isView(v)) {
      // Bytes (a body a route reads itself) hold no text to check, and walking them key by key cost a bulk request a quarter of the server's CPU.
      continue;
    } else if (v !== null && typeof v === 'object') {
      for (const key of Object.keys(v)) {
        if (textProblem(key) !== undefined) return true;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** Pointers this long are cut in answers: a body nested deep enough would otherwise echo megabytes. */
const MAX_POINTER = 1000;

/**
 * The first string (or object key), in document order, that breaks the rule. Walks iteratively,
 * so any nesting depth the JSON parser accepted costs no stack; the pointers are only built when
 * there is something to point at.
 */
export function findTextProblem(value: unknown): TextProblem | undefined {
  if (!anyTextProblem(value)) return undefined;
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    const at = (p: string) => (p.length > MAX_POINTER ? `${p.slice(0, MAX_POINTER)}…` : p || '/');
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { path: at(path), message: problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      for (const key of keys) {
        const problem = textProblem(key);
        if (problem) return { path: at(`${path}/${segment(key)}`), message: `has a property name that ${problem}` };
      }
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]!], `${path}/${segment(keys[i]!)}`]);
    }
  }
  return undefined;
}

const PARTS = [
  ['params', 'path'],
  ['querystring', 'query string'],
  ['body', 'body'],
] as const;

function check(request: FastifyRequest): void {
  if (request.routeOptions.config.rawText === true) return;
  const values = { params: request.params, querystring: request.query, body: request.body };
  for (const [part, name] of PARTS) {
    const found = findTextProblem(values[part]);
    if (!found) continue;
    // A path parameter names a resource, and no resource has such a name: like any id of the wrong
    // shape (IdParams), it is simply not found.
    if (part === 'params') throw new AppError('NOT_FOUND', 'The resource was not found.');
    const path = part === 'body' ? found.path : `${part}:${found.path}`;
    const where = found.path === '/' ? 'it' : found.path.slice(1);
    throw new AppError('VALIDATION_ERROR', `The request ${name} is not valid: ${where} ${found.message}.`, { details: [{ path, message: found.message }] });
  }
}

/** Installs the rule above for every route (before schema validation), except those with `config.rawText`. */
export function installTextRule(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => check(request));
}
