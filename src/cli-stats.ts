/**
 * `loglane stats`: GET /v1/projects/:id/logs/stats as two tables, the totals of the range per
 * group (or per level without --group-by) and the counts per time bucket; `-o json` prints the
 * API's answer as it is.
 */
import type { ResponseBody } from '@loglane/client';
import { alignRows, outputFormat, visible } from './cli-output.js';
import { filterQuery, out, rangeStart, resolveProject, signedIn, type FilterOptions } from './remote.js';

type Stats = ResponseBody<'logStats'>;

export const OTHER = '(other)';
export const NONE = '(none)';
/** Levels from the most severe down: the order of the level table. */
const LEVELS_DOWN = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export interface StatsOptions extends FilterOptions {
  server?: string;
  from?: string;
  to?: string;
  since?: string;
  interval?: string;
  groupBy?: string;
  output?: string;
  json?: boolean;
  /** false with --no-buckets. */
  buckets?: boolean;
}

/** The totals of the range per name, in the order the tables show them. */
export function statsTotals(stats: Stats, grouped: boolean): { name: string; count: number }[] {
  const totals = new Map<string, number>();
  for (const b of stats.buckets) {
    const counts: Record<string, number | undefined> = grouped ? (b.groups ?? {}) : b.levels;
    for (const [name, n] of Object.entries(counts)) if (n) totals.set(name, (totals.get(name) ?? 0) + n);
  }
  if (!grouped) return LEVELS_DOWN.filter((l) => totals.has(l)).map((name) => ({ name, count: totals.get(name)! }));
  // The top values by count (ties by name, as the server ranks them), then "(other)" and "(none)".
  const named = [...totals].filter(([name]) => name !== OTHER && name !== NONE).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const tail = [OTHER, NONE].filter((n) => totals.has(n)).map((n): [string, number] => [n, totals.get(n)!]);
  return [...named, ...tail].map(([name, count]) => ({ name, count }));
}

const n = (x: number) => x.toLocaleString('en');

/** The two tables as lines of text. */
export function statsTables(stats: Stats, o: { groupBy?: string; from?: string; to?: string; since?: string; buckets?: boolean }): string[] {
  const grouped = o.groupBy !== undefined && o.groupBy.trim() !== '';
  const logs = stats.buckets.reduce((sum, b) => sum + b.total, 0);
  const totals = statsTotals(stats, grouped);
  const lines: string[] = [];
  const range = o.since !== undefined ? `in the last ${o.since} (from ${o.from})` : o.from !== undefined ? `from ${o.from} to ${o.to ?? 'now'}` : o.to !== undefined ? `in the 24 hours to ${o.to}` : 'in the last 24 hours';
  lines.push(`${n(logs)} ${logs === 1 ? 'log' : 'logs'} ${range}, by ${grouped ? o.groupBy : 'level'} (${stats.interval} buckets)`);
  if (logs === 0) return lines;
  lines.push('');
  const head = grouped ? o.groupBy!.toUpperCase() : 'LEVEL';
  const share = (count: number) => `${((count / logs) * 100).toFixed(1)}%`;
  const totalRows = [[head, 'LOGS', 'SHARE'], ...totals.map((t) => [visible(t.name), n(t.count), share(t.count)])];
  lines.push(...alignRows(totalRows, (i) => i > 0));
  if (grouped && totals.reduce((s, t) => s + t.count, 0) > logs) lines.push('(a log with several values of the field counts once for each)');
  if (o.buckets === false) return lines;
  lines.push('');
  const bucketRows = [
    ['START', 'TOTAL', ...totals.map((t) => visible(t.name))],
    ...stats.buckets.map((b) => {
      const counts: Record<string, number | undefined> = grouped ? (b.groups ?? {}) : b.levels;
      return [b.start, n(b.total), ...totals.map((t) => n(counts[t.name] ?? 0))];
    }),
  ];
  lines.push(...alignRows(bucketRows, (i) => i > 0));
  return lines;
}

export async function stats(projectRef: string, o: StatsOptions): Promise<void> {
  const format = outputFormat(o);
  const from = rangeStart(o);
  const { client } = await signedIn(o.server);
  const project = await resolveProject(client, projectRef);
  const answer = await client.logStats(project.id, { ...filterQuery(o), from, to: o.to, interval: o.interval, groupBy: o.groupBy } as never);
  if (format === 'json') {
    await out(`${JSON.stringify(answer, null, 2)}\n`);
    return;
  }
  for (const line of statsTables(answer, { groupBy: o.groupBy, from, to: o.to, since: o.since, buckets: o.buckets })) await out(`${line}\n`);
}
