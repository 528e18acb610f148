/** The command-line options every benchmark shares: which engines, where PostgreSQL is, --help. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Engine } from '../src/config.js';

export const COMMON_OPTIONS = {
  engine: { type: 'string', default: 'both' },
  'pg-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The usage lines of the common options. */
export const COMMON_USAGE = `  --engine <sqlite|postgres|both>  engines to measure (default both)
  --pg-url <url>                   PostgreSQL admin connection, used to create and drop the bench
                                   databases (default postgres://postgres@127.0.0.1:5432/postgres)
  -h, --help                       show this help`;

const ENGINES: Record<string, Engine[]> = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] };

/**
 * Parses the benchmark's own options beside the common ones; prints `usage` and exits on --help.
 * Answers the values, the engines (undefined when --engine is not one), and the PostgreSQL URL.
 */
export function parseBenchArgs<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], usage: string, options: O) {
  const { values } = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options } });
  const common = values as Record<string, unknown>;
  if (common.help) {
    console.log(usage);
    process.exit(0);
  }
  const engine = String(common.engine);
  return {
    values,
    engines: ENGINES[engine],
    engineProblem: ENGINES[engine] ? undefined : `--engine must be sqlite, postgres or both (got "${engine}")`,
    pgAdminUrl: String(common['pg-url']),
  };
}

/** Parses the command line with `parse`; on a bad option prints the problem and the usage, and exits 2. */
export function optionsOrExit<T>(parse: (argv: string[]) => T, usage: string): T {
  try {
    return parse(process.argv.slice(2));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
    process.exit(2);
  }
}
