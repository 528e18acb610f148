/**
 * How the console writes times: one 24-hour format everywhere (`2026-11-28 10:00:05`), in UTC or
 * in the browser's time zone as the reader chooses (the explorer's UTC/local switch; remembered in
 * localStorage and shared by every page).
 */
export type TimeZoneMode = 'utc' | 'local';

const ZONE_KEY = 'loglane.timeZone';
const zoneListeners = new Set<() => void>();
let zoneMode: TimeZoneMode | undefined;

function storage(): Storage | undefined {
  try {
    return typeof localStorage === 'undefined' ? undefined : localStorage;
  } catch {
    return undefined;
  }
}

/** The chosen time zone: `local` until the reader picks UTC. */
export function getTimeZoneMode(): TimeZoneMode {
  if (zoneMode === undefined) zoneMode = storage()?.getItem(ZONE_KEY) === 'utc' ? 'utc' : 'local';
  return zoneMode;
}

export function setTimeZoneMode(mode: TimeZoneMode): void {
  zoneMode = mode;
  try {
    storage()?.setItem(ZONE_KEY, mode);
  } catch {
    /* private mode: the choice lasts for this page */
  }
  for (const l of zoneListeners) l();
}

/** Calls `listener` when the time zone changes; returns the unsubscribe function (for useSyncExternalStore). */
export function subscribeTimeZoneMode(listener: () => void): () => void {
  zoneListeners.add(listener);
  return () => zoneListeners.delete(listener);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The calendar fields of `ms` in the mode's zone. */
function parts(ms: number, mode: TimeZoneMode) {
  const d = new Date(ms);
  return mode === 'utc'
    ? { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds(), ms: d.getUTCMilliseconds() }
    : { y: d.getFullYear(), mo: d.getMonth() + 1, d: d.getDate(), h: d.getHours(), mi: d.getMinutes(), s: d.getSeconds(), ms: d.getMilliseconds() };
}

/** `UTC`, or the local offset at that time as `UTC+01:00`. */
export function zoneLabel(mode: TimeZoneMode = getTimeZoneMode(), at: number = Date.now()): string {
  if (mode === 'utc') return 'UTC';
  const off = -new Date(at).getTimezoneOffset();
  if (off === 0) return 'UTC';
  const a = Math.abs(off);
  return `UTC${off < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** `2026-11-28 10:00:05` in the mode's zone (no zone written). */
export function formatDateTime(iso: string | number, mode: TimeZoneMode = getTimeZoneMode()): string {
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(ms)) return String(iso);
  const p = parts(ms, mode);
  return `${p.y}-${pad(p.mo)}-${pad(p.d)} ${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}`;
}

/** A time for people: `2026-11-28 10:00:05 UTC` (or with the local offset), 24-hour, to the second. */
export function formatTime(iso: string | number, mode: TimeZoneMode = getTimeZoneMode()): string {
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(ms)) return String(iso);
  return `${formatDateTime(ms, mode)} ${zoneLabel(mode, ms)}`;
}

/** `2026-11-28 10:00:05.123`, for log lines (the zone is shown once, in the explorer's header). */
export function formatLogTime(iso: string | number, mode: TimeZoneMode = getTimeZoneMode()): string {
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(ms)) return String(iso);
  return `${formatDateTime(ms, mode)}.${pad(parts(ms, mode).ms, 3)}`;
}

/** `10:05` or `10:05:30` (when seconds matter) for chart ticks, or `11-28` across days. */
export function formatTick(ms: number, spanMs: number, mode: TimeZoneMode = getTimeZoneMode()): string {
  const p = parts(ms, mode);
  if (spanMs > 2 * 86_400_000) return `${pad(p.mo)}-${pad(p.d)}`;
  if (spanMs <= 10 * 60_000) return `${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}`;
  return `${pad(p.h)}:${pad(p.mi)}`;
}

/**
 * Reads `2026-11-28 10:00`, `2026-11-28 10:00:05`, `2026-11-28T10:00:05.250` or a date alone, in the
 * mode's zone (a trailing `Z` or offset wins); undefined when it is not a time.
 */
export function parseDateTime(text: string, mode: TimeZoneMode = getTimeZoneMode()): number | undefined {
  const m = /^\s*(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?\s*(Z|[+-]\d{2}:?\d{2}|UTC)?\s*$/i.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s, frac] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0', (m[7] ?? '0').padEnd(3, '0')].map(Number) as number[];
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > 31 || h! > 23 || mi! > 59 || s! > 59) return undefined;
  const zone = m[8]?.toUpperCase();
  let ms: number;
  if (zone || mode === 'utc') {
    ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, frac!);
    if (zone && zone !== 'Z' && zone !== 'UTC') {
      const z = /([+-])(\d{2}):?(\d{2})/.exec(zone)!;
      ms -= (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60_000;
    }
  } else {
    ms = new Date(y!, mo! - 1, d!, h!, mi!, s!, frac!).getTime();
  }
  // 2026-02-31 is not a date.
  if (!zone || zone === 'Z' || zone === 'UTC') {
    const back = parts(ms, zone ? 'utc' : mode);
    if (back.d !== d || back.mo !== mo) return undefined;
  }
  return Number.isFinite(ms) ? ms : undefined;
}

/** The start of the day holding `ms`, in the mode's zone. */
export function startOfDay(ms: number, mode: TimeZoneMode = getTimeZoneMode()): number {
  const p = parts(ms, mode);
  return mode === 'utc' ? Date.UTC(p.y, p.mo - 1, p.d) : new Date(p.y, p.mo - 1, p.d).getTime();
}

export function formatCount(n: number): string {
  return new Intl.NumberFormat().format(n);
}

/** Bytes as people read them: `0 B`, `812 KB`, `3.4 MB`, `1.2 GB` (powers of 1,000, as disks are sold). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
  let value = n / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function relativeTime(iso: string | null, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

/** Duration strings of the API (`90s`, `5m`, `2h`, `7d`) in milliseconds. */
export function durationMs(value: string): number | undefined {
  const m = /^(\d+)(s|m|h|d)$/.exec(value);
  if (!m) return undefined;
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

export function describeDuration(value: string): string {
  const m = /^(\d+)(s|m|h|d)$/.exec(value);
  if (!m) return value;
  const n = Number(m[1]);
  const unit = { s: 'second', m: 'minute', h: 'hour', d: 'day' }[m[2] as 's' | 'm' | 'h' | 'd'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}
