import { describe, expect, it } from 'vitest';
import { chooseInterval, DEFAULT_QUERY, fromUrlParams, resolveRange, searchPath, statsPath, tailPath, toUrlParams, type LogQuery } from './query.ts';

const now = Date.parse('2026-11-22T12:00:00.000Z');

function params(path: string): Record<string, string> {
  return Object.fromEntries(new URL(path, 'http://x').searchParams);
}

describe('console query building', () => {
  it('turns a preset into absolute bounds at the moment the query runs', () => {
    const p = params(searchPath('proj_1', DEFAULT_QUERY, now));
    expect(p).toEqual({ from: '2026-11-22T11:00:00.000Z', to: '2026-11-22T12:00:00.000Z', limit: '200' });
  });

  it('sends levels as a list in a fixed order, source trimmed, and the search as q', () => {
    const q: LogQuery = { ...DEFAULT_QUERY, levels: ['error', 'warn'], source: '  api ', search: 'timed out' };
    const p = params(searchPath('proj_1', q, now, { cursor: 'c1', limit: 500 }));
    expect(p).toMatchObject({ level: 'warn,error', source: 'api', q: 'timed out', cursor: 'c1', limit: '500' });
    expect(p.pattern).toBeUndefined();
  });

  it('sends the search as an RE2 pattern when the regex toggle is on', () => {
    const p = params(searchPath('proj_1', { ...DEFAULT_QUERY, search: 'took \\d+ms', regex: true }, now));
    expect(p.pattern).toBe('took \\d+ms');
    expect(p.q).toBeUndefined();
  });

  it('leaves out the level filter when every level is chosen', () => {
    const p = params(searchPath('proj_1', { ...DEFAULT_QUERY, levels: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] }, now));
    expect(p.level).toBeUndefined();
  });

  it('orders a custom range whichever way round it was entered', () => {
    expect(resolveRange({ kind: 'custom', from: 20, to: 10 }, now)).toEqual({ from: 10, to: 20 });
  });

  it('picks histogram buckets so the range fits the bars, aligned to the interval', () => {
    expect(chooseInterval(3_600_000, 90).id).toBe('1m');
    expect(chooseInterval(24 * 3_600_000, 90).id).toBe('30m');
    expect(chooseInterval(15 * 60_000, 90).id).toBe('10s');
    expect(chooseInterval(365 * 86_400_000, 90).id).toBe('1d');
    const p = params(statsPath('proj_1', { ...DEFAULT_QUERY, range: { kind: 'custom', from: now - 3_600_000 + 30_000, to: now } }, now, 90));
    expect(p.interval).toBe('1m');
    expect(p.from).toBe('2026-11-22T11:00:00.000Z');
  });

  it('counts the histogram with the same filters as the list, regular expression included', () => {
    const q: LogQuery = { ...DEFAULT_QUERY, levels: ['error'], search: 'a+b', regex: true };
    const p = params(statsPath('proj_1', q, now));
    expect(p.pattern).toBe('a+b');
    expect(p.level).toBe('error');
  });

  it('tails with the same filters and no time bounds', () => {
    const path = tailPath('proj_1', { ...DEFAULT_QUERY, levels: ['error'], search: 'x' });
    expect(path).toBe('/v1/projects/proj_1/logs/tail?level=error&q=x');
    expect(tailPath('proj_1', DEFAULT_QUERY)).toBe('/v1/projects/proj_1/logs/tail');
  });

  it('round-trips the explorer state through the page URL', () => {
    const queries: LogQuery[] = [
      DEFAULT_QUERY,
      { range: { kind: 'preset', preset: '7d' }, levels: ['fatal', 'info'], source: 'worker', search: 'a&b=c', regex: false },
      { range: { kind: 'custom', from: now - 5000, to: now }, levels: [], source: '', search: '^GET /', regex: true },
    ];
    for (const q of queries) expect(fromUrlParams(toUrlParams(q))).toEqual(q);
  });

  it('ignores what it does not understand in a hand-edited URL', () => {
    const q = fromUrlParams(new URLSearchParams('range=forever&level=ERROR,nope,error&from=yesterday'));
    expect(q).toEqual({ ...DEFAULT_QUERY, levels: ['error'] });
  });
});
