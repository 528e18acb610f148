/**
 * Printing and saving benchmark results: number formats, percentiles, a plain-text table, and the
 * JSON files under bench/results/ (see bench/results/.gitignore for which of them are committed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const mb = (bytes: number) => bytes / 1e6;
/** A number rounded for JSON, or null when there is none. */
export const round = (v: number | undefined, digits: number) => (v === undefined || !Number.isFinite(v) ? null : Number(v.toFixed(digits)));

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number | undefined {
  return sorted.length === 0 ? undefined : sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Columns padded to their widest cell; `right` lists the columns aligned right (numbers). */
export function table(header: string[], rows: string[][], right: number[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * Writes `data` to bench/results/<kind>-<UTC timestamp>.json (one file per run, kept locally) and
 * to bench/results/latest-<kind>.json (the last run, which is what the docs and charts use and what
 * gets committed). Answers the two paths.
 */
export function writeResults(kind: string, data: unknown): { run: string; latest: string } {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const text = `${JSON.stringify(data, null, 2)}\n`;
  const run = path.join(RESULTS_DIR, `${kind}-${stamp}.json`);
  const latest = path.join(RESULTS_DIR, `latest-${kind}.json`);
  fs.writeFileSync(run, text);
  fs.writeFileSync(latest, text);
  return { run, latest };
}

const PINO_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * A server's log lines reduced to "level msg: error" and counted, so 1,000 alike lines read as one.
 * `level` is pino's name for the line's level, or 'output' for a line that is not pino's (a crash).
 */
export function groupServerOutput(lines: string[]): { level: string; line: string; count: number }[] {
  const groups = new Map<string, { level: string; line: string; count: number }>();
  for (const line of lines) {
    let key = line.slice(0, 300);
    let level = 'output';
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { type?: string; message?: string } };
      const err = entry.err ? `: ${entry.err.type ?? 'Error'}: ${entry.err.message ?? ''}` : '';
      level = PINO_LEVELS[entry.level ?? 0] ?? String(entry.level);
      key = `${level} "${entry.msg ?? ''}"${err}`;
    } catch {
      // Not a pino line (a crash on stderr): kept as written.
    }
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { level, line: key, count: 1 });
  }
  return [...groups.values()];
}
