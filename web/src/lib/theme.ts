/**
 * The console's colour theme: the system's (prefers-color-scheme), or light or dark chosen in the
 * top bar. A choice is kept in localStorage under THEME_KEY and written to <html data-theme="…">;
 * "system" removes both, and the stylesheet then follows the media query. web/public/theme-init.js
 * applies a kept choice before the first paint (the CSP allows no inline script, so it is a file);
 * it reads the same key and values as readThemeChoice below.
 */

export type ThemeChoice = 'system' | 'light' | 'dark';

export const THEME_CHOICES: ReadonlyArray<{ id: ThemeChoice; label: string }> = [
  { id: 'system', label: 'System' },
  { id: 'light', label: 'Light' },
  { id: 'dark', label: 'Dark' },
];

export const THEME_KEY = 'loglane-theme';

/** What the theme code needs of localStorage; reading or writing it may throw (storage disabled). */
export type ThemeStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** What it needs of <html>. */
export interface ThemeRoot {
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
}

/** The kept choice; anything else (nothing kept, an unknown value, no storage) is "system". */
export function readThemeChoice(storage: ThemeStorage | undefined): ThemeChoice {
  let value: string | null = null;
  try {
    value = storage?.getItem(THEME_KEY) ?? null;
  } catch {
    value = null;
  }
  return value === 'light' || value === 'dark' ? value : 'system';
}

/** Shows `choice` on `root` (data-theme, none for system). */
export function applyThemeChoice(choice: ThemeChoice, root: ThemeRoot): void {
  if (choice === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', choice);
}

/** Keeps `choice` (system is kept as no entry); a storage that refuses leaves it for this page only. */
export function keepThemeChoice(choice: ThemeChoice, storage: ThemeStorage | undefined): void {
  try {
    if (choice === 'system') storage?.removeItem(THEME_KEY);
    else storage?.setItem(THEME_KEY, choice);
  } catch {
    /* private mode or storage disabled: the choice lasts as long as the page */
  }
}

function browserStorage(): ThemeStorage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

const listeners = new Set<() => void>();
let current: ThemeChoice | undefined;

/** The choice in effect in this page (read once from storage, then as set). */
export function themeChoice(): ThemeChoice {
  current ??= readThemeChoice(browserStorage());
  return current;
}

/** Applies, keeps and announces a new choice. */
export function setThemeChoice(choice: ThemeChoice): void {
  current = choice;
  if (typeof document !== 'undefined') applyThemeChoice(choice, document.documentElement);
  keepThemeChoice(choice, browserStorage());
  for (const l of listeners) l();
}

/**
 * For useSyncExternalStore: calls `listener` on every change, including a choice made in another
 * tab (the storage event), which is applied here too.
 */
export function subscribeTheme(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (e: StorageEvent) => {
    if (e.key !== THEME_KEY && e.key !== null) return;
    current = readThemeChoice(browserStorage());
    if (typeof document !== 'undefined') applyThemeChoice(current, document.documentElement);
    listener();
  };
  globalThis.addEventListener?.('storage', onStorage);
  return () => {
    listeners.delete(listener);
    globalThis.removeEventListener?.('storage', onStorage);
  };
}
