/**
 * Charts of benchmark results, as hand-written SVG (no dependency), for the docs.
 *
 *   npm run bench:chart -- [--results bench/results] [--out docs/img] [--cluster FILE] [--y auto|log|linear]
 *
 * 1. Query latency by data size → <out>/query-latency.svg. Reads every <results>/query-<engine>-<logs>.json
 *    as bench/query.ts writes them, one file per engine and data size (not query-language-*.json,
 *    a later run kept beside the 1M one), in this format (times in milliseconds; other fields are ignored):
 *
 *      { "engine": "sqlite" | "postgres",
 *        "logs": 1000000,
 *        "queries": [ { "name": "newest 100", "p50": 2.33, "p95": 3.86, "p99": 5.1 }, … ] }
 *
 *    One panel per engine (same y axis in both), x = logs in the project (log scale), y = p95 in ms,
 *    one line per query name (same colour in every panel). The y axis is logarithmic when the
 *    values span more than 20× (--y auto, the default: query latencies run from 0.01 ms to hundreds),
 *    else linear from 0; --y log or --y linear forces one.
 *
 * 2. Needle latency by data size, with and without the skip index → <out>/needle-latency.svg, from
 *    every <results>/*needle-*.json (bench/needle.ts's latest-needle-<engine>-<logs>.json, and the
 *    scan's figures kept from an earlier run as latest-needle-scan-<engine>-<logs>.json, committed
 *    beside them, for runs that time the index only; runs of one engine and size are merged, the
 *    later file in name order winning a query both timed): the request id over 7 days, the bare word
 *    and the legacy q over 24 h, and the absent value, each with the index and with the scan.
 *
 * 3. Cluster throughput → <out>/cluster-throughput.svg, from --cluster FILE (default
 *    <results>/latest-cluster.json, as bench/cluster.ts writes it: the ClusterResults interface
 *    there): a bar per run, logs/s grouped by node count, one bar colour per project count,
 *    labelled with logs/s and the ratio to one node.
 *
 * 4. Disk per log against raw NDJSON → <out>/storage-ratio.svg, from <results>/latest-storage-<engine>-<logs>.json
 *    as bench/storage.ts writes them (its EngineReport, as written: the largest <logs> of each engine is
 *    charted; its "phase2Ratio" is the disk added by the second phase's logs over their raw NDJSON, and
 *    "logsPerPhase" the logs in each phase): horizontal bars of disk added per raw NDJSON byte (lower is
 *    better), the baseline before packing (measured at 0361e7e, kept here as constants since its result
 *    files were overwritten), each engine packed, then the peers' published figures in grey, with the
 *    target (0.15) as a dashed line.
 *
 * Each chart is drawn when its input is there and skipped (with a note) when it is not. Exits 1 if
 * there was nothing to draw at all or an input file is malformed; 2 on bad options.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { ClusterResults } from './cluster.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const USAGE = `Usage: npm run bench:chart -- [options]

  --results <dir>                  where the results are (default bench/results)
  --out <dir>                      where the SVG files go (default docs/img)
  --cluster <file>                 cluster results to chart (default <results>/latest-cluster.json)
  --y <auto|log|linear>            y axis of the query chart (default auto: log when the values
                                   span more than 20×)
  -h, --help                       show this help`;

/** One query-benchmark result file: one engine at one data size. */
export interface QueryResultFile {
  engine: 'sqlite' | 'postgres';
  logs: number;
  queries: { name: string; p50: number; p95: number; p99: number }[];
}

// ---------------------------------------------------------------------------------------------
// SVG helpers

const FONT = 'system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif';
/** Okabe–Ito colours (distinguishable with colour blindness), then a few more. */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#8C564B', '#7F7F7F', '#BCBD22'];
/** Dash patterns that come in after the colours run out. */
const DASHES = ['', '6 3', '2 3', '8 3 2 3'];
const ENGINE_NAMES: Record<string, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

const esc = (s: string) => s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

function text(x: number, y: number, content: string, attrs: Record<string, string | number> = {}): string {
  const a = Object.entries(attrs).map(([k, v]) => ` ${k}="${esc(String(v))}"`).join('');
  return `<text x="${num(x)}" y="${num(y)}"${a}>${esc(content)}</text>`;
}

function svgDocument(width: number, height: number, title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${esc(FONT)}" font-size="12" role="img" aria-label="${esc(title)}">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** Counts the way people read them: 1k, 250k, 1M, 2.5M. */
function shortCount(n: number): string {
  const unit = (v: number, suffix: string) => `${Number(v.toPrecision(3)).toLocaleString('en-US')}${suffix}`;
  if (n >= 1e9) return unit(n / 1e9, 'G');
  if (n >= 1e6) return unit(n / 1e6, 'M');
  if (n >= 1e3) return unit(n / 1e3, 'k');
  return unit(n, '');
}

/** Milliseconds for an axis or a label: 0.01, 0.5, 3, 250, 1,200. */
function msLabel(v: number): string {
  if (v === 0) return '0';
  if (v < 1) return String(Number(v.toPrecision(2)));
  return Number(v.toPrecision(3)).toLocaleString('en-US');
}

/** About `count` round tick values from 0 (or min) to at least max: steps of 1, 2 or 5 × 10^k. */
function linearTicks(min: number, max: number, count = 5): number[] {
  const span = Math.max(max - min, Number.EPSILON);
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= count) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = Math.floor(min / step) * step; v < max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** Ticks for a log axis over [min, max]: powers of 10, plus 2 and 5 times them when the span is short. */
function logTicks(min: number, max: number): number[] {
  const lo = Math.floor(Math.log10(min));
  const hi = Math.ceil(Math.log10(max));
  const steps = hi - lo <= 2 ? [1, 2, 5] : [1];
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e++) for (const m of steps) ticks.push(Number((m * 10 ** e).toPrecision(12)));
  return ticks.filter((t) => t >= min * 0.999 && t <= max * 1.001);
}

interface Axis {
  ticks: number[];
  /** Value → 0..1 along the axis. */
  scale(v: number): number;
}

function logAxis(min: number, max: number): Axis {
  // Whole decades, so the ends are labelled; one decade at least.
  let lo = 10 ** Math.floor(Math.log10(min));
  let hi = 10 ** Math.ceil(Math.log10(max));
  if (hi <= lo) {
    lo /= 10;
    hi *= 10;
  }
  return { ticks: logTicks(lo, hi), scale: (v) => (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) };
}

function linearAxis(max: number): Axis {
  const ticks = linearTicks(0, max > 0 ? max : 1);
  const top = ticks.at(-1)!;
  return { ticks, scale: (v) => v / top };
}

// ---------------------------------------------------------------------------------------------
// Query latency

function readQueryResults(dir: string): { files: QueryResultFile[]; problems: string[] } {
  const problems: string[] = [];
  const files: QueryResultFile[] = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => /^query-(sqlite|postgres)-\d+\.json$/.test(n)).sort();
  } catch {
    return { files, problems };
  }
  const seen = new Map<string, string>();
  for (const name of names) {
    const file = path.join(dir, name);
    let data: unknown;
    try {
      data = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      problems.push(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
      continue;
    }
    const problem = checkQueryResult(data);
    if (problem) {
      problems.push(`${file}: ${problem}`);
      continue;
    }
    const result = data as QueryResultFile;
    const key = `${result.engine}:${result.logs}`;
    if (seen.has(key)) problems.push(`${file} and ${seen.get(key)} both hold ${result.engine} at ${result.logs} logs`);
    seen.set(key, file);
    files.push(result);
  }
  return { files, problems };
}

function checkQueryResult(data: unknown): string | undefined {
  const d = data as Partial<QueryResultFile> | null;
  if (typeof d !== 'object' || d === null) return 'not an object';
  if (d.engine !== 'sqlite' && d.engine !== 'postgres') return `engine must be "sqlite" or "postgres" (got ${JSON.stringify(d.engine)})`;
  if (typeof d.logs !== 'number' || !(d.logs > 0)) return `logs must be a positive number (got ${JSON.stringify(d.logs)})`;
  if (!Array.isArray(d.queries)) return 'queries must be an array';
  for (const [i, q] of d.queries.entries()) {
    if (typeof q?.name !== 'string' || q.name === '') return `queries[${i}].name must be a string`;
    for (const k of ['p50', 'p95', 'p99'] as const) {
      if (typeof q[k] !== 'number' || !(q[k] >= 0)) return `queries[${i}].${k} must be a number of milliseconds (got ${JSON.stringify(q[k])})`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Needle latency (bench/needle.ts)

/** What the needle chart reads of a bench:needle result (bench/needle.ts writes more). */
interface NeedleResultFile {
  engine: 'sqlite' | 'postgres';
  queries?: { logs: number; timed: { key: string; label: string; index: 'on' | 'off'; p50: number; p95: number }[] };
}

/** The needle queries charted, by their key in bench/needle.ts, with a short name. */
const NEEDLE_QUERIES: Record<string, string> = { reqId7d: '@reqId, 7 days', bare24h: 'bare word, 24 h', q24h: 'legacy q, 24 h', absent7d: 'absent value, 7 days' };

/**
 * Every <results>/*needle-*.json with query timings, as query-chart files: one line per needle
 * query and index on/off, runs of one engine and size merged.
 */
function readNeedleResults(dir: string): QueryResultFile[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => /needle-.*\.json$/.test(n)).sort();
  } catch {
    return [];
  }
  const byKey = new Map<string, QueryResultFile>();
  for (const name of names) {
    let data: NeedleResultFile;
    try {
      data = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as NeedleResultFile;
    } catch {
      continue;
    }
    const q = data.queries;
    if (!q || (data.engine !== 'sqlite' && data.engine !== 'postgres') || !Array.isArray(q.timed)) continue;
    const queries = q.timed.filter((t) => NEEDLE_QUERIES[t.key]).map((t) => ({ name: `${NEEDLE_QUERIES[t.key]} (${t.index === 'on' ? 'index' : 'scan'})`, p50: t.p50, p95: t.p95, p99: t.p95 }));
    if (queries.length === 0) continue;
    const key = `${data.engine}:${q.logs}`;
    // Merge runs of the same size: a later run's query replaces the earlier one's (a run with the index only keeps the scan's).
    const prev = byKey.get(key)?.queries ?? [];
    const merged = [...prev.filter((p) => !queries.some((n) => n.name === p.name)), ...queries];
    byKey.set(key, { engine: data.engine, logs: q.logs, queries: merged });
  }
  return [...byKey.values()];
}

const QUERY_TITLES = { title: 'Query latency by data size (p95)', source: 'bench/query.ts: each query timed over HTTP one at a time' };

export function queryLatencySvg(files: QueryResultFile[], yMode: 'auto' | 'log' | 'linear', titles = QUERY_TITLES): string {
  const engines = (['sqlite', 'postgres'] as const).filter((e) => files.some((f) => f.engine === e));
  const queryNames: string[] = [];
  for (const f of [...files].sort((a, b) => a.logs - b.logs)) for (const q of f.queries) if (!queryNames.includes(q.name)) queryNames.push(q.name);
  const style = (i: number) => ({ colour: COLOURS[i % COLOURS.length]!, dash: DASHES[Math.floor(i / COLOURS.length) % DASHES.length]! });

  const sizes = files.map((f) => f.logs);
  const values = files.flatMap((f) => f.queries.map((q) => q.p95));
  const positive = values.filter((v) => v > 0);
  const minV = positive.length > 0 ? Math.min(...positive) : 1;
  const maxV = values.length > 0 ? Math.max(...values) : 1;
  const useLog = yMode === 'log' || (yMode === 'auto' && positive.length > 0 && maxV / minV > 20);
  // On a log axis a 0 (below the clock's resolution) is drawn at the bottom edge.
  const yAxis = useLog ? logAxis(minV, maxV) : linearAxis(maxV);
  const yFloor = useLog ? yAxis.ticks[0]! : 0;
  const minX = Math.min(...sizes);
  const maxX = Math.max(...sizes);
  const xAxis = logAxis(minX === maxX ? minX / 3 : minX, minX === maxX ? maxX * 3 : maxX);

  const panelW = 400;
  const panelH = 300;
  const margin = { left: 70, right: 24, top: 78, bottom: 56 };
  const gap = 40;
  const panelsW = margin.left + engines.length * panelW + (engines.length - 1) * (gap + margin.left) + margin.right;
  // Wide enough for the subtitle with one panel too; the panels are centred.
  const width = Math.max(panelsW, 680);
  const offset = (width - panelsW) / 2;
  const legendCols = Math.max(1, Math.floor((width - 40) / 300));
  const legendRows = Math.ceil(queryNames.length / legendCols);
  const height = margin.top + panelH + margin.bottom + 20 + legendRows * 20 + 16;

  const body: string[] = [];
  body.push(text(width / 2, 28, titles.title, { 'text-anchor': 'middle', 'font-size': 18, 'font-weight': 600 }));
  body.push(text(width / 2, 48, `${titles.source}; ${useLog ? 'both axes logarithmic' : 'x axis logarithmic'}`, { 'text-anchor': 'middle', fill: '#555' }));

  engines.forEach((engine, e) => {
    const x0 = offset + margin.left + e * (panelW + gap + margin.left);
    const y0 = margin.top;
    const px = (v: number) => x0 + xAxis.scale(v) * panelW;
    const py = (v: number) => y0 + panelH - yAxis.scale(Math.max(v, yFloor)) * panelH;
    body.push(`<g>`);
    body.push(text(x0 + panelW / 2, y0 - 10, ENGINE_NAMES[engine] ?? engine, { 'text-anchor': 'middle', 'font-size': 14, 'font-weight': 600 }));
    body.push(`<rect x="${x0}" y="${y0}" width="${panelW}" height="${panelH}" fill="none" stroke="#999"/>`);
    for (const t of yAxis.ticks) {
      const y = py(t);
      body.push(`<line x1="${x0}" y1="${num(y)}" x2="${x0 + panelW}" y2="${num(y)}" stroke="#e5e5e5"/>`);
      body.push(text(x0 - 6, y + 4, msLabel(t), { 'text-anchor': 'end', fill: '#333' }));
    }
    for (const t of xAxis.ticks) {
      const x = px(t);
      body.push(`<line x1="${num(x)}" y1="${y0}" x2="${num(x)}" y2="${y0 + panelH}" stroke="#e5e5e5"/>`);
      body.push(text(x, y0 + panelH + 18, shortCount(t), { 'text-anchor': 'middle', fill: '#333' }));
    }
    body.push(text(x0 + panelW / 2, y0 + panelH + 40, 'logs in the project', { 'text-anchor': 'middle' }));
    body.push(text(x0 - 50, y0 + panelH / 2, 'p95 latency (ms)', { 'text-anchor': 'middle', transform: `rotate(-90 ${x0 - 50} ${y0 + panelH / 2})` }));

    const mine = files.filter((f) => f.engine === engine).sort((a, b) => a.logs - b.logs);
    queryNames.forEach((name, i) => {
      const points = mine.flatMap((f) => f.queries.filter((q) => q.name === name).map((q) => ({ logs: f.logs, q })));
      if (points.length === 0) return;
      const { colour, dash } = style(i);
      const dashAttr = dash ? ` stroke-dasharray="${dash}"` : '';
      if (points.length > 1) {
        const d = points.map((p) => `${num(px(p.logs))},${num(py(p.q.p95))}`).join(' ');
        body.push(`<polyline points="${d}" fill="none" stroke="${colour}" stroke-width="2"${dashAttr}/>`);
      }
      for (const p of points) {
        const tip = `${ENGINE_NAMES[engine]}, ${name}, ${p.logs.toLocaleString('en-US')} logs: p50 ${msLabel(p.q.p50)} ms, p95 ${msLabel(p.q.p95)} ms, p99 ${msLabel(p.q.p99)} ms`;
        body.push(`<circle cx="${num(px(p.logs))}" cy="${num(py(p.q.p95))}" r="3.5" fill="${colour}"><title>${esc(tip)}</title></circle>`);
      }
    });
    body.push(`</g>`);
  });

  // The legend, below the panels, in columns.
  const legendTop = margin.top + panelH + margin.bottom + 14;
  const colW = (width - 40) / legendCols;
  queryNames.forEach((name, i) => {
    const { colour, dash } = style(i);
    const x = 20 + (i % legendCols) * colW;
    const y = legendTop + Math.floor(i / legendCols) * 20;
    body.push(`<line x1="${num(x)}" y1="${y}" x2="${num(x + 24)}" y2="${y}" stroke="${colour}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
    body.push(`<circle cx="${num(x + 12)}" cy="${y}" r="3.5" fill="${colour}"/>`);
    body.push(text(x + 32, y + 4, name));
  });

  return svgDocument(width, height, titles.title, body);
}

// ---------------------------------------------------------------------------------------------
// Cluster throughput

function checkClusterResults(data: unknown): string | undefined {
  const d = data as Partial<ClusterResults> | null;
  if (typeof d !== 'object' || d === null || d.kind !== 'cluster') return 'not cluster results (kind must be "cluster")';
  if (!Array.isArray(d.runs) || d.runs.length === 0) return 'runs must be a non-empty array';
  for (const [i, r] of d.runs.entries()) {
    if (typeof r?.nodes !== 'number' || typeof r.projects !== 'number' || typeof r.logsPerSec !== 'number') return `runs[${i}] needs nodes, projects and logsPerSec`;
  }
  return undefined;
}

export function clusterThroughputSvg(results: ClusterResults): string {
  const nodeCounts = [...new Set(results.runs.map((r) => r.nodes))].sort((a, b) => a - b);
  const projectCounts = [...new Set(results.runs.map((r) => r.projects))].sort((a, b) => a - b);
  const maxV = Math.max(...results.runs.map((r) => r.logsPerSec));
  const yAxis = linearAxis(maxV * 1.12);

  const margin = { left: 80, right: 24, top: 96, bottom: 60 };
  const barW = 56;
  const barGap = 8;
  const groupGap = 48;
  const groupW = projectCounts.length * barW + (projectCounts.length - 1) * barGap;
  const plotW = Math.max(480, nodeCounts.length * groupW + (nodeCounts.length + 1) * groupGap);
  const plotH = 300;
  const width = margin.left + plotW + margin.right;
  const height = margin.top + plotH + margin.bottom + 30;
  const x0 = margin.left;
  const y0 = margin.top;
  const py = (v: number) => y0 + plotH - yAxis.scale(v) * plotH;
  const groupsW = nodeCounts.length * groupW + (nodeCounts.length - 1) * groupGap;
  const groupX = (g: number) => x0 + (plotW - groupsW) / 2 + g * (groupW + groupGap);

  const body: string[] = [];
  body.push(text(width / 2, 28, 'Ingest throughput by node count (one PostgreSQL)', { 'text-anchor': 'middle', 'font-size': 18, 'font-weight': 600 }));
  const sub = [
    `bench/cluster.ts: ${results.clients} clients × ${results.batchSize.toLocaleString('en-US')}-log batches, ${results.durationS} s per run`,
    `${results.cpus} CPUs shared by the nodes, PostgreSQL ${results.postgresVersion.split(' ')[0]} and the load generator`,
  ];
  sub.forEach((line, i) => body.push(text(width / 2, 48 + i * 16, line, { 'text-anchor': 'middle', fill: '#555' })));

  for (const t of yAxis.ticks) {
    const y = py(t);
    body.push(`<line x1="${x0}" y1="${num(y)}" x2="${x0 + plotW}" y2="${num(y)}" stroke="#e5e5e5"/>`);
    body.push(text(x0 - 6, y + 4, shortCount(t), { 'text-anchor': 'end', fill: '#333' }));
  }
  body.push(`<line x1="${x0}" y1="${y0 + plotH}" x2="${x0 + plotW}" y2="${y0 + plotH}" stroke="#999"/>`);
  body.push(text(x0 - 58, y0 + plotH / 2, 'logs/s', { 'text-anchor': 'middle', transform: `rotate(-90 ${x0 - 58} ${y0 + plotH / 2})` }));

  nodeCounts.forEach((n, g) => {
    const gx = groupX(g);
    body.push(text(gx + groupW / 2, y0 + plotH + 20, `${n} node${n === 1 ? '' : 's'}`, { 'text-anchor': 'middle', 'font-weight': 600 }));
    projectCounts.forEach((p, b) => {
      const run = results.runs.find((r) => r.nodes === n && r.projects === p);
      if (!run) return;
      const x = gx + b * (barW + barGap);
      const y = py(run.logsPerSec);
      const failed = (run.failures?.length ?? 0) > 0;
      const tip = `${n} node(s), ${p} project(s): ${run.logsPerSec.toLocaleString('en-US')} logs/s` +
        (run.ratioToOneNode !== null ? `, ×${run.ratioToOneNode} of one node` : '') +
        (run.p50Ms !== null ? `, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms` : '') +
        (failed ? `; FAILED: ${run.failures.join('; ')}` : '');
      body.push(`<rect x="${num(x)}" y="${num(y)}" width="${barW}" height="${num(y0 + plotH - y)}" fill="${COLOURS[b % COLOURS.length]}"${failed ? ' stroke="#d00" stroke-width="2" stroke-dasharray="4 2"' : ''}><title>${esc(tip)}</title></rect>`);
      body.push(text(x + barW / 2, y - (run.ratioToOneNode !== null && n !== 1 ? 18 : 5), shortCount(run.logsPerSec), { 'text-anchor': 'middle', 'font-size': 11 }));
      if (run.ratioToOneNode !== null && n !== 1) body.push(text(x + barW / 2, y - 5, `×${run.ratioToOneNode.toFixed(2)}`, { 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }));
      if (failed) body.push(text(x + barW / 2, y0 + plotH - 6, 'errors', { 'text-anchor': 'middle', 'font-size': 10, fill: '#fff', 'font-weight': 600 }));
    });
  });

  // Legend: one entry per project count.
  const legendY = y0 + plotH + 46;
  const entryW = 130;
  const legendX = x0 + (plotW - projectCounts.length * entryW) / 2;
  projectCounts.forEach((p, b) => {
    const x = legendX + b * entryW;
    body.push(`<rect x="${num(x)}" y="${legendY - 9}" width="14" height="12" fill="${COLOURS[b % COLOURS.length]}"/>`);
    body.push(text(x + 20, legendY + 1, `${p} project${p === 1 ? '' : 's'}`));
  });
  if (results.runs.some((r) => (r.failures?.length ?? 0) > 0)) {
    body.push(text(width / 2, legendY + 22, 'Dashed red outline: the run failed a check (errors or a count mismatch); see the JSON.', { 'text-anchor': 'middle', 'font-size': 11, fill: '#d00' }));
  }
  return svgDocument(width, height, 'Ingest throughput by node count', body);
}

// ---------------------------------------------------------------------------------------------
// Disk per log against raw NDJSON (bench/storage.ts)

/** What the storage chart reads of a bench:storage result (bench/storage.ts writes more). */
interface StorageResultFile {
  engine: 'sqlite' | 'postgres';
  logsPerPhase: number;
  phase2Ratio: number;
  phase2BytesPerLog?: number;
  phases?: { rawBytes: number; diskBytes: number }[];
}

/** Disk added per raw NDJSON byte before packing, measured by bench/storage.ts at 0361e7e (2 × 500,000 logs); its result files were overwritten since. */
const STORAGE_BASELINE: { engine: 'sqlite' | 'postgres'; ratio: number }[] = [
  { engine: 'sqlite', ratio: 1.509 },
  { engine: 'postgres', ratio: 1.672 },
];
/** Peers' published figures (not measured here), drawn in grey. */
const STORAGE_PEERS: { label: string; ratio: number }[] = [
  { label: 'Grafana Loki (published, 212 GB benchmark)', ratio: 0.26 },
  { label: 'Quickwit with its index (published)', ratio: 0.27 },
  { label: 'VictoriaLogs (published)', ratio: 0.1 },
];
const STORAGE_TARGET = 0.15;
const PEER_COLOUR = '#7F7F7F';

/** The newest storage run of each engine: <results>/latest-storage-<engine>-<logs>.json with the largest <logs>. */
function readStorageResults(dir: string): { files: (StorageResultFile & { file: string })[]; problems: string[] } {
  const problems: string[] = [];
  const best = new Map<string, { logs: number; name: string }>();
  try {
    for (const name of fs.readdirSync(dir)) {
      const m = /^latest-storage-(sqlite|postgres)-(\d+)\.json$/.exec(name);
      if (!m) continue;
      const logs = Number(m[2]);
      if (!best.has(m[1]!) || best.get(m[1]!)!.logs < logs) best.set(m[1]!, { logs, name });
    }
  } catch {
    return { files: [], problems };
  }
  const files: (StorageResultFile & { file: string })[] = [];
  for (const engine of ['sqlite', 'postgres']) {
    const entry = best.get(engine);
    if (!entry) continue;
    const file = path.join(dir, entry.name);
    let data: Partial<StorageResultFile> | null;
    try {
      data = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<StorageResultFile> | null;
    } catch (err) {
      problems.push(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
      continue;
    }
    if (typeof data !== 'object' || data === null || data.engine !== engine) problems.push(`${file}: engine must be "${engine}" (got ${JSON.stringify(data?.engine)})`);
    else if (typeof data.phase2Ratio !== 'number' || !(data.phase2Ratio >= 0)) problems.push(`${file}: phase2Ratio must be a number (got ${JSON.stringify(data.phase2Ratio)})`);
    else if (typeof data.logsPerPhase !== 'number' || !(data.logsPerPhase > 0)) problems.push(`${file}: logsPerPhase must be a positive number (got ${JSON.stringify(data.logsPerPhase)})`);
    else files.push({ ...(data as StorageResultFile), file });
  }
  return { files, problems };
}

export function storageRatioSvg(files: StorageResultFile[]): string {
  const bars: { label: string; ratio: number; colour: string; opacity: number; tip: string; group: number }[] = [];
  for (const b of STORAGE_BASELINE) {
    const label = `Loglane ${ENGINE_NAMES[b.engine]}, before packing (0361e7e)`;
    bars.push({ label, ratio: b.ratio, colour: COLOURS[b.engine === 'sqlite' ? 0 : 1]!, opacity: 0.45, tip: `${label}: ${b.ratio.toFixed(3)} (bench/storage.ts, 2 × 500,000 logs)`, group: 0 });
  }
  for (const f of files) {
    const label = `Loglane ${ENGINE_NAMES[f.engine]}, packed`;
    const phase2 = f.phases?.[1];
    const detail = [
      `${f.logsPerPhase.toLocaleString('en-US')} logs per phase`,
      phase2 ? `${(phase2.rawBytes / 1e6).toFixed(1)} MB of NDJSON in phase 2` : '',
      f.phase2BytesPerLog !== undefined ? `${f.phase2BytesPerLog} bytes per log` : '',
    ].filter(Boolean).join(', ');
    bars.push({ label, ratio: f.phase2Ratio, colour: COLOURS[f.engine === 'sqlite' ? 0 : 1]!, opacity: 1, tip: `${label}: ${f.phase2Ratio.toFixed(3)} (bench/storage.ts: ${detail})`, group: 0 });
  }
  for (const p of STORAGE_PEERS) bars.push({ label: p.label, ratio: p.ratio, colour: PEER_COLOUR, opacity: 1, tip: `${p.label}: ${p.ratio.toFixed(3)} (their published figure, not measured here)`, group: 1 });

  const sizes = [...new Set(files.map((f) => f.logsPerPhase))];
  const logsText = sizes.length === 1 ? `2 × ${sizes[0]!.toLocaleString('en-US')} realistic logs` : `2 × ${files.map((f) => `${f.logsPerPhase.toLocaleString('en-US')} (${ENGINE_NAMES[f.engine]})`).join(' or ')} realistic logs`;
  const title = `Disk per log, against the NDJSON it arrived as (${logsText}; lower is better)`;

  // x from 0 to the next tenth above the largest value; ticks every 0.2 (or as linearTicks finds) inside it.
  const maxV = Math.max(STORAGE_TARGET, ...bars.map((b) => b.ratio));
  const top = (Math.floor(maxV * 10 + 1e-9) + 1) / 10;
  const ticks = linearTicks(0, top, 10).filter((t) => t <= top + 1e-9);
  const barH = 24;
  const barGap = 10;
  const groupGap = 22;
  const labelW = 300;
  // Wide enough for the title in a wide fallback font (DejaVu Sans).
  const plotW = 620;
  const margin = { left: 20 + labelW, right: 70, top: 96, bottom: 56 };
  const groups = new Set(bars.map((b) => b.group)).size;
  const plotH = bars.length * barH + (bars.length - 1) * barGap + (groups - 1) * (groupGap - barGap) + 2 * barGap;
  const width = margin.left + plotW + margin.right;
  const height = margin.top + plotH + margin.bottom;
  const x0 = margin.left;
  const y0 = margin.top;
  const px = (v: number) => x0 + (v / top) * plotW;

  const body: string[] = [];
  body.push(text(width / 2, 28, title, { 'text-anchor': 'middle', 'font-size': 18, 'font-weight': 600 }));
  const sub = [
    'Loglane: disk added by the second phase over its raw NDJSON (bench/storage.ts, phase2Ratio)',
    'Grey: other systems’ published figures, not measured here',
  ];
  sub.forEach((line, i) => body.push(text(width / 2, 48 + i * 16, line, { 'text-anchor': 'middle', fill: '#555' })));

  for (const t of ticks) {
    const x = px(t);
    body.push(`<line x1="${num(x)}" y1="${y0}" x2="${num(x)}" y2="${y0 + plotH}" stroke="#e5e5e5"/>`);
    body.push(text(x, y0 + plotH + 18, String(t), { 'text-anchor': 'middle', fill: '#333' }));
  }
  body.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + plotH}" stroke="#999"/>`);
  body.push(`<line x1="${x0}" y1="${y0 + plotH}" x2="${x0 + plotW}" y2="${y0 + plotH}" stroke="#999"/>`);
  body.push(text(x0 + plotW / 2, y0 + plotH + 40, 'disk added per raw NDJSON byte', { 'text-anchor': 'middle' }));

  // The target under the bars, so a value label's white halo keeps it legible where the two cross.
  const tx = px(STORAGE_TARGET);
  body.push(`<line x1="${num(tx)}" y1="${y0 - 4}" x2="${num(tx)}" y2="${y0 + plotH}" stroke="#009E73" stroke-width="2" stroke-dasharray="6 3"/>`);
  body.push(text(tx, y0 - 8, `target ≤ ${STORAGE_TARGET}`, { 'text-anchor': 'middle', fill: '#009E73', 'font-weight': 600 }));

  let y = y0 + barGap;
  bars.forEach((b, i) => {
    if (i > 0 && b.group !== bars[i - 1]!.group) y += groupGap - barGap;
    const w = px(b.ratio) - x0;
    body.push(text(x0 - 8, y + barH / 2 + 4, b.label, { 'text-anchor': 'end', fill: b.group === 1 ? '#555' : '#000' }));
    body.push(`<rect x="${x0}" y="${num(y)}" width="${num(w)}" height="${barH}" fill="${b.colour}"${b.opacity < 1 ? ` fill-opacity="${b.opacity}"` : ''}><title>${esc(b.tip)}</title></rect>`);
    body.push(text(x0 + w + 5, y + barH / 2 + 4, b.ratio.toFixed(3), { fill: '#000', 'paint-order': 'stroke', stroke: '#fff', 'stroke-width': 3 }));
    y += barH + barGap;
  });

  return svgDocument(width, height, title, body);
}

// ---------------------------------------------------------------------------------------------

function main(): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        results: { type: 'string', default: path.join(ROOT, 'bench/results') },
        out: { type: 'string', default: path.join(ROOT, 'docs/img') },
        cluster: { type: 'string' },
        y: { type: 'string', default: 'auto' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.y !== 'auto' && values.y !== 'log' && values.y !== 'linear') {
    console.error(`--y must be auto, log or linear (got "${values.y}")\n\n${USAGE}`);
    return 2;
  }
  const yMode = values.y;
  let drawn = 0;
  let failed = false;
  const write = (name: string, svg: string) => {
    fs.mkdirSync(values.out, { recursive: true });
    const file = path.join(values.out, name);
    fs.writeFileSync(file, svg);
    console.log(`wrote ${path.relative(process.cwd(), file) || file}`);
    drawn++;
  };

  const { files, problems } = readQueryResults(values.results);
  for (const p of problems) console.error(`skipped: ${p}`);
  if (problems.length > 0) failed = true;
  if (files.length > 0) {
    const sizes = [...new Set(files.map((f) => f.logs))].sort((a, b) => a - b);
    console.log(`query latency: ${files.length} file(s), ${[...new Set(files.map((f) => f.engine))].join(' and ')}, sizes ${sizes.map(shortCount).join(', ')}`);
    write('query-latency.svg', queryLatencySvg(files, yMode));
  } else {
    console.log(`query latency: no ${path.join(values.results, 'query-*.json')}; not drawn (npx tsx bench/query.ts writes them)`);
  }

  const needles = readNeedleResults(values.results);
  if (needles.length > 0) {
    console.log(`needle latency: ${needles.length} engine and size(s)`);
    write('needle-latency.svg', queryLatencySvg(needles, 'log', { title: 'Needle latency by data size (p95), with and without the skip index', source: 'bench/needle.ts over HTTP' }));
  } else {
    console.log(`needle latency: no ${path.join(values.results, 'needle-*.json')}; not drawn (npm run bench:needle writes them)`);
  }

  const clusterFile = values.cluster ?? path.join(values.results, 'latest-cluster.json');
  if (fs.existsSync(clusterFile)) {
    let data: unknown;
    let problem: string | undefined;
    try {
      data = JSON.parse(fs.readFileSync(clusterFile, 'utf8'));
      problem = checkClusterResults(data);
    } catch (err) {
      problem = `not JSON (${err instanceof Error ? err.message : String(err)})`;
    }
    if (problem) {
      console.error(`skipped: ${clusterFile}: ${problem}`);
      failed = true;
    } else {
      console.log(`cluster throughput: ${(data as ClusterResults).runs.length} run(s) from ${clusterFile}`);
      write('cluster-throughput.svg', clusterThroughputSvg(data as ClusterResults));
    }
  } else if (values.cluster !== undefined) {
    console.error(`no such file: ${clusterFile}`);
    failed = true;
  } else {
    console.log(`cluster throughput: no ${clusterFile}; not drawn (npm run bench:cluster writes it)`);
  }

  const storage = readStorageResults(values.results);
  for (const p of storage.problems) console.error(`skipped: ${p}`);
  if (storage.problems.length > 0) failed = true;
  if (storage.files.length > 0) {
    console.log(`storage ratio: ${storage.files.map((f) => path.basename(f.file)).join(', ')}`);
    write('storage-ratio.svg', storageRatioSvg(storage.files));
  } else {
    console.log(`storage ratio: no ${path.join(values.results, 'latest-storage-*.json')}; not drawn (npm run bench:storage writes them)`);
  }

  if (drawn === 0) {
    console.error('Nothing to draw.');
    return 1;
  }
  return failed ? 1 : 0;
}

process.exitCode = main();
