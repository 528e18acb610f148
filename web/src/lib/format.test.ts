import { describe, expect, it } from 'vitest';
import { formatBytes } from './format.ts';

describe('formatBytes', () => {
  it('writes bytes as people read them, in powers of 1,000', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1000)).toBe('1.0 KB');
    expect(formatBytes(812_400)).toBe('812 KB');
    expect(formatBytes(3_412_000)).toBe('3.4 MB');
    expect(formatBytes(1_234_000_000)).toBe('1.2 GB');
    expect(formatBytes(5e18)).toBe('5000 PB');
  });
});

describe('the one time format and its UTC/local switch', () => {
  it('writes 24-hour times to the second in the chosen zone, and tells listeners when it changes', async () => {
    const { formatTime, getTimeZoneMode, setTimeZoneMode, subscribeTimeZoneMode, zoneLabel } = await import('./format.ts');
    const t = Date.UTC(2026, 10, 28, 23, 5, 9);
    let calls = 0;
    const stop = subscribeTimeZoneMode(() => calls++);
    setTimeZoneMode('utc');
    expect(getTimeZoneMode()).toBe('utc');
    expect(formatTime(t)).toBe('2026-11-28 23:05:09 UTC');
    expect(formatTime(new Date(t).toISOString())).toBe('2026-11-28 23:05:09 UTC');
    setTimeZoneMode('local');
    expect(formatTime(t)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC([+-]\d\d:\d\d)?$/);
    expect(zoneLabel('utc')).toBe('UTC');
    stop();
    setTimeZoneMode('utc');
    expect(calls).toBe(2);
    expect(formatTime('not a time')).toBe('not a time');
  });
});
