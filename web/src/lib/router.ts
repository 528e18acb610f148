import { useSyncExternalStore } from 'react';

/** A small history-API router: the server answers index.html for every console path. */
type Listener = () => void;
const listeners = new Set<Listener>();

function notify(): void {
  for (const l of listeners) l();
}

if (typeof window !== 'undefined') window.addEventListener('popstate', notify);

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  notify();
  if (!options.replace) window.scrollTo(0, 0);
}

function snapshot(): string {
  return location.pathname + location.search;
}

export function useLocation(): { path: string; search: URLSearchParams } {
  const href = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    snapshot,
    snapshot,
  );
  const q = href.indexOf('?');
  return { path: q < 0 ? href : href.slice(0, q), search: new URLSearchParams(q < 0 ? '' : href.slice(q + 1)) };
}

/** Matches `/projects/:id/logs` style patterns; returns the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/').filter(Boolean);
  const b = path.split('/').filter(Boolean);
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const seg = a[i]!;
    if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(b[i]!);
    else if (seg !== b[i]) return null;
  }
  return params;
}
