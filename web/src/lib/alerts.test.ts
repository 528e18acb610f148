import { describe, expect, it } from 'vitest';
import { conditionQuery, describeCondition, describeTest, exactRegex, firingWindow, formatUntil, fromLocalInput, matchingLogsPath, mutedUntil, prefillFromSearch, ruleBadge, sampleLogPath, slashEscaped, toLocalInput } from './alerts.ts';

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

  it("writes a rule's whole condition as one search query", () => {
    expect(conditionQuery({ level: 'error' })).toBe('level:error');
    // The source is exact, case included: an anchored regex with RE2's syntax escaped.
    expect(conditionQuery({ level: 'warn', source: 'api.v1 (eu)' })).toBe('level:warn source:/^api\\.v1 \\(eu\\)$/');
    // A `/` in the pattern would end the query's regex: it is written `\/`; escapes stay as they are.
    expect(conditionQuery({ level: 'error', pattern: 'GET /v1/orders|a\\/b' })).toBe('level:error /GET \\/v1\\/orders|a\\/b/');
    // AND binds tighter than OR: a query with an OR is kept whole in parentheses.
    expect(conditionQuery({ level: 'info', query: '@res.statusCode:>=500 OR timeout' })).toBe('level:info (@res.statusCode:>=500 OR timeout)');
    expect(conditionQuery({ level: 'info', query: '  @res.statusCode:>=500 -@req.url:"/healthz"  ' })).toBe('level:info @res.statusCode:>=500 -@req.url:"/healthz"');
    expect(conditionQuery({ level: 'info', query: 'ORDERS or ORacle' })).toBe('level:info ORDERS or ORacle');
    expect(exactRegex('a+b[c]^$|{1}/\\')).toBe('^a\\+b\\[c\\]\\^\\$\\|\\{1\\}\\/\\\\$');
    expect(slashEscaped('[/]')).toBe('[\\/]');
  });

  it("opens the explorer on a firing's window and query, and a sample log by its permalink", () => {
    const c = { level: 'error' as const, source: 'api', query: '@status:>=500' };
    // A 5-minute window counts in 5-second steps: from is the step the window starts in.
    expect(firingWindow(Date.parse('2026-11-28T12:00:03.500Z'), 300_000)).toEqual({ from: Date.parse('2026-11-28T11:55:00.000Z'), to: Date.parse('2026-11-28T12:00:03.500Z') });
    expect(firingWindow(Date.parse('2026-11-28T12:00:03.500Z'), 10_000)).toEqual({ from: Date.parse('2026-11-28T11:59:53.000Z'), to: Date.parse('2026-11-28T12:00:03.500Z') });
    const path = matchingLogsPath('proj_1', c, '2026-11-28T12:00:03.500Z', '5m')!;
    const url = new URL(path, 'https://x.example');
    expect(url.pathname).toBe('/projects/proj_1/logs');
    expect(Object.fromEntries(url.searchParams)).toEqual({ from: '2026-11-28T11:55:00.000Z', to: '2026-11-28T12:00:03.500Z', query: 'level:error source:/^api$/ @status:>=500' });
    const sample = new URL(sampleLogPath('proj_1', 'log_42', c, '2026-11-28T12:00:03.500Z', '5m')!, 'https://x.example');
    expect(Object.fromEntries(sample.searchParams)).toEqual({ log: 'log_42', ...Object.fromEntries(url.searchParams) });
    expect(matchingLogsPath('proj_1', c, 'not a time', '5m')).toBeUndefined();
  });

  it('prefills the create form from "Create alert from this search"', () => {
    expect(prefillFromSearch(new URLSearchParams('query=x'))).toBeUndefined();
    expect(prefillFromSearch(undefined)).toBeUndefined();
    expect(prefillFromSearch(new URLSearchParams('create=1&query=%40status%3A%3E%3D500&level=warn'))).toEqual({ query: '@status:>=500', level: 'warn' });
    // A rule counts one level: the most severe of those chosen, said so.
    const several = prefillFromSearch(new URLSearchParams('create=1&query=timeout&level=fatal,WARN,loud'))!;
    expect(several).toMatchObject({ query: 'timeout', level: 'fatal' });
    expect(several.levelNote).toContain('warn, fatal');
    const none = prefillFromSearch(new URLSearchParams('create=1'))!;
    expect(none).toMatchObject({ query: '', level: 'error' });
    expect(none.levelNote).toBeDefined();
  });
});
