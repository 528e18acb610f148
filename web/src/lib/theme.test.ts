import { describe, expect, it } from 'vitest';
import { applyThemeChoice, keepThemeChoice, readThemeChoice, THEME_KEY, type ThemeRoot, type ThemeStorage } from './theme.ts';

function memoryStorage(initial: Record<string, string> = {}): ThemeStorage & { items: Record<string, string> } {
  const items = { ...initial };
  return {
    items,
    getItem: (k) => (k in items ? items[k]! : null),
    setItem: (k, v) => {
      items[k] = String(v);
    },
    removeItem: (k) => {
      delete items[k];
    },
  };
}

const refusing: ThemeStorage = {
  getItem: () => {
    throw new Error('SecurityError');
  },
  setItem: () => {
    throw new Error('QuotaExceededError');
  },
  removeItem: () => {
    throw new Error('SecurityError');
  },
};

function fakeRoot(): ThemeRoot & { attrs: Record<string, string> } {
  const attrs: Record<string, string> = {};
  return {
    attrs,
    setAttribute: (n, v) => {
      attrs[n] = v;
    },
    removeAttribute: (n) => {
      delete attrs[n];
    },
  };
}

describe('the colour theme', () => {
  it('reads a kept light or dark choice, and anything else as system', () => {
    expect(readThemeChoice(memoryStorage({ [THEME_KEY]: 'dark' }))).toBe('dark');
    expect(readThemeChoice(memoryStorage({ [THEME_KEY]: 'light' }))).toBe('light');
    expect(readThemeChoice(memoryStorage())).toBe('system');
    expect(readThemeChoice(memoryStorage({ [THEME_KEY]: 'DARK' }))).toBe('system');
    expect(readThemeChoice(memoryStorage({ [THEME_KEY]: 'solarized' }))).toBe('system');
    expect(readThemeChoice(undefined)).toBe('system');
    expect(readThemeChoice(refusing)).toBe('system');
  });

  it('keeps light and dark, and forgets the entry for system', () => {
    const storage = memoryStorage();
    keepThemeChoice('dark', storage);
    expect(storage.items).toEqual({ [THEME_KEY]: 'dark' });
    expect(readThemeChoice(storage)).toBe('dark');
    keepThemeChoice('light', storage);
    expect(storage.items).toEqual({ [THEME_KEY]: 'light' });
    keepThemeChoice('system', storage);
    expect(storage.items).toEqual({});
    expect(readThemeChoice(storage)).toBe('system');
    // A storage that refuses is not an error: the choice lasts for the page.
    expect(() => keepThemeChoice('dark', refusing)).not.toThrow();
  });

  it('marks <html> with data-theme for an explicit choice and removes it for system', () => {
    const root = fakeRoot();
    applyThemeChoice('dark', root);
    expect(root.attrs).toEqual({ 'data-theme': 'dark' });
    applyThemeChoice('light', root);
    expect(root.attrs).toEqual({ 'data-theme': 'light' });
    applyThemeChoice('system', root);
    expect(root.attrs).toEqual({});
  });
});
