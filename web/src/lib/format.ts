export function formatTime(iso: string | number): string {
  const d = new Date(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** `HH:MM:SS.mmm` in local time, for log lines. */
export function formatLogTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
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
