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
