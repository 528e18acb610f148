/**
 * How the console words an alert rule: its condition, its state badge, when it is muted until, and
 * the outcome of a test notification. Pure functions of the API's answers (and the time).
 */
import { describeDuration, durationMs, formatCount, relativeTime } from './format.ts';
import { LEVELS, type Level } from './query.ts';
import type { AlertRule, Channel, Condition, TestResult } from './types.ts';

export const CHANNELS: ReadonlyArray<{ id: Channel; label: string }> = [
  { id: 'email', label: 'Email' },
  { id: 'push', label: 'Push notification' },
  { id: 'webhook', label: 'Webhook' },
  { id: 'slack', label: 'Slack' },
];

export function channelLabel(c: string): string {
  return CHANNELS.find((x) => x.id === c)?.label ?? c;
}

/** "3 error logs from api within 5 minutes", or for a silence alert "no info logs from backup within 1 day". */
export function describeCondition(c: Pick<Condition, 'level' | 'threshold' | 'window' | 'source' | 'pattern'> & { comparison?: string }): string {
  const noun = (n: number) => `${c.level} ${n === 1 ? 'log' : 'logs'}`;
  let s: string;
  if (c.comparison === 'below') s = c.threshold === 1 ? `no ${c.level} logs` : `fewer than ${formatCount(c.threshold)} ${noun(c.threshold)}`;
  else s = `${formatCount(c.threshold)} ${noun(c.threshold)}`;
  if (c.source) s += ` from ${c.source}`;
  if (c.pattern) s += ` matching /${c.pattern}/`;
  return `${s} within ${describeDuration(c.window)}`;
}

/** The time a rule is muted until, when that is still ahead; undefined when it is not muted. */
export function mutedUntil(rule: Pick<AlertRule, 'mutedUntil'>, now = Date.now()): number | undefined {
  if (!rule.mutedUntil) return undefined;
  const t = Date.parse(rule.mutedUntil);
  return Number.isFinite(t) && t > now ? t : undefined;
}

export interface RuleBadge {
  kind: 'firing' | 'ok' | 'off';
  label: 'Firing' | 'OK' | 'Disabled';
  /** "since 3 min ago", from the server's stateSince (absent before the rule first changes state). */
  since?: string;
  sinceIso?: string;
}

/** The rule's state as the server evaluates it: firing or ok, or disabled (a disabled rule is not evaluated). */
export function ruleBadge(rule: Pick<AlertRule, 'enabled' | 'state' | 'stateSince'>, now = Date.now()): RuleBadge {
  if (!rule.enabled) return { kind: 'off', label: 'Disabled' };
  const badge: RuleBadge = rule.state === 'firing' ? { kind: 'firing', label: 'Firing' } : { kind: 'ok', label: 'OK' };
  if (rule.stateSince) {
    badge.since = `since ${relativeTime(rule.stateSince, now)}`;
    badge.sinceIso = rule.stateSince;
  }
  return badge;
}

/** "14:05" today, "26 Nov, 14:05" on another day (local time). */
export function formatUntil(t: number, now = Date.now()): string {
  const d = new Date(t);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === new Date(now).toDateString()) return time;
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short', ...(sameYear ? {} : { year: 'numeric' }) })}, ${time}`;
}

/** A `datetime-local` input's value (local time, to the minute) for an epoch time. */
export function toLocalInput(t: number): string {
  const d = new Date(t);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` input's value as epoch milliseconds, or undefined when it is not a time. */
export function fromLocalInput(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value)) return undefined;
  const t = new Date(value).getTime();
  return Number.isFinite(t) ? t : undefined;
}

/** One line per channel: "Webhook: sent", "Email: skipped (no SMTP server)". */
export function describeTest(result: TestResult): { ok: boolean; lines: string[] } {
  const lines = result.deliveries.map((d) => `${channelLabel(d.channel)}: ${d.status}${d.error ? ` (${d.error})` : ''}`);
  return { ok: result.deliveries.every((d) => d.status === 'sent'), lines };
}

/**
 * "View matching logs", as the server words it for notifications and history (docs/alerts.md):
 * the explorer with the rule's whole condition as one query and the window a firing counted.
 * The server builds the same text (src/features/alerts/links.ts); a test compares the two.
 */
type LinkCondition = Pick<Condition, 'level' | 'source' | 'pattern' | 'query'>;

/** A regular expression matching exactly `text`, case included (the rule's source is exact). */
export function exactRegex(text: string): string {
  return `^${text.replace(/[\\.+*?()|[\]{}^$/]/g, (c) => `\\${c}`)}$`;
}

/** An RE2 pattern as `/…/` in a query holds it: each unescaped `/` written `\/`. */
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

const HAS_OR = /(^|[\s()])OR([\s()]|$)/;

/** The rule's condition as one search query: `level:error source:/^api$/ /timeout/ (a OR b)`. */
export function conditionQuery(c: LinkCondition): string {
  const parts = [`level:${c.level}`];
  if (c.source) parts.push(`source:/${exactRegex(c.source)}/`);
  if (c.pattern) parts.push(`/${slashEscaped(c.pattern)}/`);
  const query = c.query?.trim();
  if (query) parts.push(HAS_OR.test(query) ? `(${query})` : query);
  return parts.join(' ');
}

/** A rule's counting step: a sixtieth of its window, at least a second (as the server counts). */
export function countingStep(windowMs: number): number {
  return Math.max(1000, Math.floor(windowMs / 60_000) * 1000);
}

/** The window a firing counted: from its time minus the window (down to the counting step) to its time. */
export function firingWindow(triggeredAt: number, windowMs: number): { from: number; to: number } {
  const step = countingStep(windowMs);
  return { from: Math.floor((triggeredAt - windowMs) / step) * step, to: triggeredAt };
}

function explorerParams(c: LinkCondition, triggeredAt: string, window: string): URLSearchParams | undefined {
  const at = Date.parse(triggeredAt);
  const windowMs = durationMs(window);
  if (!Number.isFinite(at) || windowMs === undefined) return undefined;
  const { from, to } = firingWindow(at, windowMs);
  return new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), query: conditionQuery(c) });
}

/** The console path of a firing's matching logs (a history entry's `triggeredAt` and `window`). */
export function matchingLogsPath(projectId: string, c: LinkCondition, triggeredAt: string, window: string): string | undefined {
  const p = explorerParams(c, triggeredAt, window);
  return p && `/projects/${encodeURIComponent(projectId)}/logs?${p}`;
}

/** One sample log of a firing: the explorer's permalink to it (`log=`) within the firing's window and query. */
export function sampleLogPath(projectId: string, logId: string, c: LinkCondition, triggeredAt: string, window: string): string | undefined {
  const p = explorerParams(c, triggeredAt, window);
  return p && `/projects/${encodeURIComponent(projectId)}/logs?${new URLSearchParams([['log', logId], ...p])}`;
}

/** What "Create alert from this search" hands the alerts page (`?create=1&query=…&level=a,b`). */
export interface AlertPrefill {
  query: string;
  level: Level;
  /** Why the level may need a look: a rule counts one level exactly. */
  levelNote?: string;
}

/**
 * The create form's starting values from the alerts page's URL, or undefined when it does not ask
 * for the form. A rule counts one level: of several chosen levels the most severe is taken (and the
 * note says so); with none, `error`.
 */
export function prefillFromSearch(search: URLSearchParams | undefined): AlertPrefill | undefined {
  if (!search || search.get('create') !== '1') return undefined;
  const query = search.get('query') ?? '';
  const chosen = (search.get('level') ?? '')
    .split(',')
    .map((l) => l.trim().toLowerCase())
    .filter((l): l is Level => (LEVELS as readonly string[]).includes(l));
  const levels = LEVELS.filter((l) => chosen.includes(l));
  if (levels.length === 0) return { query, level: 'error', levelNote: 'The search chose no level; a rule counts one. Choose it.' };
  const level = levels[levels.length - 1]!;
  if (levels.length === 1) return { query, level };
  return { query, level, levelNote: `The search had ${levels.join(', ')}; a rule counts one level, the most severe here.` };
}
