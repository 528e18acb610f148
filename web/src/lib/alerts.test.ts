import { describe, expect, it } from 'vitest';
import { describeCondition, describeTest, formatUntil, fromLocalInput, mutedUntil, ruleBadge, toLocalInput } from './alerts.ts';

const now = Date.parse('2026-11-25T12:00:00.000Z');

describe('alert rules in the console', () => {
  it('words a rule that fires on a burst, and a silence alert', () => {
    expect(describeCondition({ level: 'error', threshold: 3, window: '5m', source: 'billing', comparison: 'above' })).toBe('3 error logs from billing within 5 minutes');
    expect(describeCondition({ level: 'error', threshold: 1, window: '10s' })).toBe('1 error log within 10 seconds');
    expect(describeCondition({ level: 'info', threshold: 1, window: '25h', source: 'nightly-backup', comparison: 'below' })).toBe('no info logs from nightly-backup within 25 hours');
    expect(describeCondition({ level: 'info', threshold: 5, window: '1h', pattern: 'done', comparison: 'below' })).toBe('fewer than 5 info logs matching /done/ within 1 hour');
  });

  it("takes the state from the server's answer, not from the last firing", () => {
    const since = '2026-11-25T11:57:00.000Z';
    expect(ruleBadge({ enabled: true, state: 'firing', stateSince: since }, now)).toEqual({ kind: 'firing', label: 'Firing', since: 'since 3 min ago', sinceIso: since });
    expect(ruleBadge({ enabled: true, state: 'ok', stateSince: since }, now)).toMatchObject({ kind: 'ok', label: 'OK', since: 'since 3 min ago' });
    expect(ruleBadge({ enabled: true, state: 'ok', stateSince: null }, now)).toEqual({ kind: 'ok', label: 'OK' });
    // A disabled rule is not evaluated: its state says nothing.
    expect(ruleBadge({ enabled: false, state: 'firing', stateSince: since }, now)).toEqual({ kind: 'off', label: 'Disabled' });
  });

  it('counts a rule as muted only until its mutedUntil has passed', () => {
    expect(mutedUntil({ mutedUntil: null }, now)).toBeUndefined();
    expect(mutedUntil({ mutedUntil: '2026-11-25T11:59:59.000Z' }, now)).toBeUndefined();
    expect(mutedUntil({ mutedUntil: '2026-11-25T13:00:00.000Z' }, now)).toBe(now + 3_600_000);
  });

  it('shows the time alone for today and the date too for another day', () => {
    expect(formatUntil(now + 60_000, now)).not.toMatch(/Nov/);
    expect(formatUntil(now + 3 * 86_400_000, now)).toMatch(/28 Nov|Nov 28/);
  });

  it('reads back what it writes into a datetime-local input, to the minute', () => {
    const t = Date.parse('2026-11-27T08:30:00.000Z');
    expect(toLocalInput(t)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    expect(fromLocalInput(toLocalInput(t))).toBe(t);
    expect(fromLocalInput('')).toBeUndefined();
    expect(fromLocalInput('tomorrow')).toBeUndefined();
  });

  it("lists a test's outcome per channel", () => {
    expect(describeTest({ deliveries: [{ channel: 'webhook', status: 'sent' }] })).toEqual({ ok: true, lines: ['Webhook: sent'] });
    expect(
      describeTest({
        deliveries: [
          { channel: 'email', status: 'sent' },
          { channel: 'slack', status: 'skipped', error: 'no destinations' },
        ],
      }),
    ).toEqual({ ok: false, lines: ['Email: sent', 'Slack: skipped (no destinations)'] });
  });
});
