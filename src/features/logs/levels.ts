import { fold } from './query/text.js';

/** The six levels, stored as their index (0 = trace … 5 = fatal). */
export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Level = (typeof LEVELS)[number];

/**
 * Maps, not object literals: a lookup by a client's text must not reach Object.prototype
 * (`ALIASES["__proto__"]` on a literal is an object, `ALIASES["constructor"]` a function).
 */
const NAMES: ReadonlyMap<string, number> = new Map(LEVELS.map((name, i) => [name, i]));
const ALIASES: ReadonlyMap<string, number> = new Map([
  ...NAMES,
  ...Object.entries({ verbose: 0, information: 2, notice: 2, warning: 3, err: 4, critical: 5, crit: 5, emergency: 5, emerg: 5, alert: 5, panic: 5 }),
]);

/** pino's numeric levels. */
const PINO: ReadonlyMap<number, number> = new Map([[10, 0], [20, 1], [30, 2], [40, 3], [50, 4], [60, 5]]);

/**
 * What ingestion takes: a level name or a common alias (any case, as levelIndex, around spaces),
 * or a pino number → the level index; undefined when unknown.
 */
export function parseLevel(value: unknown): number | undefined {
  if (typeof value === 'string') return ALIASES.get(fold(value.trim()));
  if (typeof value === 'number') return PINO.get(value);
  return undefined;
}

/**
 * What reads take (the `level` parameter, `level:` in queries): one of the six level names, no
 * aliases (docs/search.md, "What each field compares"), ignoring case as the query language does (fold)
 * → the level index; undefined otherwise.
 */
export function levelIndex(name: string): number | undefined {
  return NAMES.get(fold(name));
}

export function levelName(index: number): Level {
  return LEVELS[index] ?? 'info';
}
