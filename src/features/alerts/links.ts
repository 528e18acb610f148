/**
 * "View matching logs": where a notification, a history entry or the console sends a reader to see
 * the logs a rule counted. One place builds these links; email, webhook, Slack and the history API
 * all use it (docs/alerts.md, "View matching logs"). Pure functions.
 *
 * The link is the log explorer (`/projects/<id>/logs`) with the rule's whole condition as one
 * search query and the window the rule counted as `from`/`to`:
 * - level: `level:error` (the rule matches that one level);
 * - source: `source:/^api$/`, a regular expression anchored at both ends, because the rule's source
 *   is exact, case included, and `source:api` would ignore case;
 * - pattern: `/timeout|refused/`, the RE2 expression on the message (a `/` in it written `\/`);
 * - query: the rule's query, in parentheses when it has an OR (AND binds tighter).
 * - from: the firing time minus the window, down to the rule's counting step (a sixtieth of the
 *   window, at least a second: the count sums whole steps); to: the firing time. Both inclusive.
 */
import { levelName } from '../logs/levels.js';
import { bucketSize } from './rules.js';

/** A rule's condition as the links need it: the level as its name or its stored index. */
export interface LinkCondition {
  level: string | number;
  source?: string | null;
  pattern?: string | null;
  query?: string | null;
}

/** Characters RE2 reads as syntax (and `/`, which would end the query's regular expression). */
const RE2_SYNTAX = /[\\.+*?()|[\]{}^$/]/g;

/** A regular expression that matches exactly `text` (case included), as written inside `/…/`. */
export function exactRegex(text: string): string {
  return `^${text.replace(RE2_SYNTAX, (c) => `\\${c}`)}$`;
}

/**
 * An RE2 pattern as the query language's `/…/` holds it: every `/` that is not already escaped
 * becomes `\/` (RE2 reads `\/` as `/`), and escapes are kept as they are, so it matches the same.
 */
export function slashEscaped(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      out += c + pattern[i + 1]!;
      i++;
    } else out += c === '/' ? '\\/' : c;
  }
  return out;
}

/**
 * Whether a query goes in parentheses when ANDed with other terms: when it has an `OR` anywhere
 * (AND binds tighter, so a top-level OR would otherwise take the other terms into one side). An OR
 * inside parentheses or quotes gets them too, which changes nothing it selects; the console words
 * the same link with the same rule (web/src/lib/alerts.ts).
 */
const HAS_OR = /(^|[\s()])OR([\s()]|$)/;

/** The rule's whole condition (level, source, pattern and query) as one search query. */
export function conditionQuery(c: LinkCondition): string {
  const level = typeof c.level === 'number' ? levelName(c.level) : c.level;
  const parts = [`level:${level}`];
  if (c.source) parts.push(`source:/${exactRegex(c.source)}/`);
  if (c.pattern) parts.push(`/${slashEscaped(c.pattern)}/`);
  const query = c.query?.trim();
  if (query) parts.push(HAS_OR.test(query) ? `(${query})` : query);
  return parts.join(' ');
}

/** The window a firing at `triggeredAt` counted: epoch ms, both ends inclusive. */
export function firingWindow(triggeredAt: number, windowMs: number): { from: number; to: number } {
  const step = bucketSize(windowMs);
  return { from: Math.floor((triggeredAt - windowMs) / step) * step, to: triggeredAt };
}

/** The explorer's URL parameters for a firing: `from`, `to` (ISO 8601) and `query`. */
export function logsParams(c: LinkCondition, triggeredAt: number, windowMs: number): URLSearchParams {
  const { from, to } = firingWindow(triggeredAt, windowMs);
  return new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), query: conditionQuery(c) });
}

/** "View matching logs": the explorer under `publicUrl` with the rule's condition and the firing's window. */
export function logsUrl(publicUrl: string, projectId: string, c: LinkCondition, triggeredAt: number, windowMs: number): string {
  return `${publicUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(projectId)}/logs?${logsParams(c, triggeredAt, windowMs)}`;
}

/** The link of a notification (an entry, or a test: its `triggeredAt` is when it was sent). */
export function firingLogsUrl(
  ctx: { projectId: string; level: number; source: string | null; pattern: string | null; query: string | null; triggeredAt: number | string; windowMs: number | string },
  publicUrl: string,
): string {
  return logsUrl(publicUrl, ctx.projectId, ctx, Number(ctx.triggeredAt), Number(ctx.windowMs));
}
