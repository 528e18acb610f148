/** The six levels, stored as their index (0 = trace … 5 = fatal). */
export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Level = (typeof LEVELS)[number];

/**
 * Maps, not object literals: a lookup by a client's text must not reach Object.prototype
 * (`ALIASES["__proto__"]` on a literal is an object, `ALIASES["constructor"]` a function).
 */
const ALIASES: ReadonlyMap<string, number> = new Map(Object.entries({
  trace: 0, verbose: 0,
  debug: 1,
  info: 2, information: 2, notice: 2,
  warn: 3, warning: 3,
  error: 4, err: 4,
  fatal: 5, critical: 5, crit: 5, emergency: 5, emerg: 5, alert: 5, panic: 5,
}));

/** pino's numeric levels. */
const PINO: ReadonlyMap<number, number> = new Map([[10, 0], [20, 1], [30, 2], [40, 3], [50, 4], [60, 5]]);

/** A level name, alias (any case) or pino number → the level index; undefined when unknown. */
export function parseLevel(value: unknown): number | undefined {
  if (typeof value === 'string') return ALIASES.get(value.trim().toLowerCase());
  if (typeof value === 'number') return PINO.get(value);
  return undefined;
}

export function levelName(index: number): Level {
  return LEVELS[index] ?? 'info';
}

export function isLevel(value: string): value is Level {
  return (LEVELS as readonly string[]).includes(value);
}
