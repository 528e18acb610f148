/**
 * How the console words an alert rule: its condition, its state badge, when it is muted until, and
 * the outcome of a test notification. Pure functions of the API's answers (and the time).
 */
import { describeDuration, formatCount, relativeTime } from './format.ts';
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
