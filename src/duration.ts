/** Durations as written in settings and alert rules: `900` (seconds), `900s`, `15m`, `2h`, `7d`. */
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})(s|m|h|d)?$/;

/** Parses a duration into milliseconds, or returns undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 's') as keyof typeof UNIT_MS;
  return Number(match[1]) * UNIT_MS[unit];
}

/** Formats milliseconds back into the largest whole unit (`900000` → `15m`). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    if (ms > 0 && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}
