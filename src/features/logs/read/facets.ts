/**
 * Facets and fields: what the explorer's sidebar shows, counted over the whole range and query (not
 * over a loaded page). Facets count the values of a few fields at once (the same names and counts
 * as stats' groupBy), with the statistics of a field's numbers and, optionally, p50/p95 of another
 * numeric path per value (a top-list table); fields lists the metadata paths the selected logs hold.
 * Both read every selected log (stats.ts eachMatching) within the query time budget, and hold
 * memory bounded whatever the logs hold: at most config.groupByMaxValues names in all the fields
 * of a request (each field its share), at most MAX_FIELD_NAMES paths, and samples of at most
 * SAMPLE_SIZE numbers per field (MEASURE_SAMPLE_SIZE per measured value) for percentiles.
 */
import type { Config } from '../../../config.js';
import { AppError, validationError } from '../../../errors.js';
import { formatDuration } from '../../../duration.js';
import type { ProjectsService } from '../../projects/service.js';
import type { LogFilter } from '../filter.js';
import { groupNames, NONE_GROUP, OTHER_GROUP, parseGroupBy, type GroupField } from '../query/index.js';
import { metadataOf, resolvePath, type QueryLog } from '../query/view.js';
import { splitFieldList } from '../query/parse.js';
import type { createStats } from './stats.js';
import { shedIfLate, startRun as runOf, waited, type ReadCaller, type ReadRun } from './reader.js';

/** Fields one facets request may count. */
export const MAX_FACET_FIELDS = 20;
/** Values per field a facets request may name (the rest are summed in `other`). */
export const MAX_FACET_LIMIT = 50;
/** Numbers a percentile is computed from: all of them up to this many, else a uniform sample of this many. */
export const SAMPLE_SIZE = 10_000;
/** Numbers a measured value's percentiles are computed from (up to 20 fields × 50 values keep one sample each). */
export const MEASURE_SAMPLE_SIZE = 1000;
/** Distinct paths the fields list counts; paths first seen past this many are not listed. */
export const MAX_FIELD_NAMES = 1000;
/** Paths the fields list answers, most common first. */
export const FIELDS_ANSWERED = 200;
/** How deep into metadata the fields list walks (deeper objects are listed as one path). */
const MAX_FIELD_DEPTH = 8;

export interface NumericSummary {
  count: number;
  min: number;
  max: number;
  p50: number;
  p95: number;
  /** True when the percentiles come from a sample (more than SAMPLE_SIZE numbers). */
  sampled: boolean;
}

export interface FacetValue {
  value: string;
  count: number;
  p50?: number | null;
  p95?: number | null;
}

export interface Facet {
  field: string;
  values: FacetValue[];
  other: number;
  none: number;
  numeric: NumericSummary | null;
}

export interface FacetsResult {
  total: number;
  facets: Facet[];
}

export interface FieldsResult {
  total: number;
  fields: { field: string; count: number }[];
}

/** Numbers seen, with a uniform sample of at most SAMPLE_SIZE of them (reservoir sampling) for percentiles. */
class Numbers {
  constructor(private readonly size = SAMPLE_SIZE) {}
  count = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  private sample: number[] = [];

  add(n: number): void {
    this.count++;
    if (n < this.min) this.min = n;
    if (n > this.max) this.max = n;
    if (this.sample.length < this.size) this.sample.push(n);
    else {
      const at = Math.floor(Math.random() * this.count);
      if (at < this.size) this.sample[at] = n;
    }
  }

  /** Nearest-rank percentiles of what was seen (of the sample past SAMPLE_SIZE); null with no numbers. */
  summary(): NumericSummary | null {
    if (this.count === 0) return null;
    const sorted = Float64Array.from(this.sample).sort();
    const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
    return { count: this.count, min: this.min, max: this.max, p50: rank(0.5), p95: rank(0.95), sampled: this.count > this.size };
  }
}

/** A log's metadata, parsed the first time it is asked for (never when no field needs it). */
export function lazyMetadata(row: QueryLog): () => unknown {
  let parsed: unknown;
  let read = false;
  return () => {
    if (!read) {
      parsed = metadataOf(row);
      read = true;
    }
    return parsed;
  };
}

/** The numbers a field holds in a log: JSON numbers only (a numeric string is text). */
function numbersOf(field: GroupField, metadata: () => unknown): number[] {
  if (field.field.kind !== 'meta') return [];
  const out: number[] = [];
  for (const v of resolvePath(metadata(), field.field.path)) if (typeof v === 'number' && Number.isFinite(v)) out.push(v);
  return out;
}

const BARE_SEGMENT = /^[\p{L}\p{N}_-]+$/u;

/** A metadata path as the query language writes it: `@a.b`, odd segments quoted (`@"user agent"`). */
function pathName(path: readonly string[]): string {
  return '@' + path.map((seg) => (BARE_SEGMENT.test(seg) ? seg : `"${seg.replace(/[\\"]/g, (c) => `\\${c}`)}"`)).join('.');
}

export function createFacets(deps: {
  eachMatching: ReturnType<typeof createStats>['eachMatching'];
  config: Pick<Config, 'queryBudgetMs' | 'groupByMaxValues'>;
  now: () => number;
  projects: Pick<ProjectsService, 'assertRole'>;
}) {
  const { eachMatching, config, now, projects } = deps;
  /** A read's run of the query budget from now. */
  const startRun = (caller?: ReadCaller): ReadRun => runOf(config.queryBudgetMs, caller);
  const outOfBudget = () => new AppError('VALIDATION_ERROR', `Counting did not finish within its ${formatDuration(config.queryBudgetMs)} budget; narrow the time range or add filters.`);

  /** The stats default: the last 24 hours when the range is open. */
  function ranged(filter: LogFilter): LogFilter {
    const to = filter.to ?? now();
    return { ...filter, from: filter.from ?? to - 86_400_000, to };
  }

  async function facets(userId: string, projectId: string, filter: LogFilter, fieldList: string, limit: number, measure: string | undefined, caller?: ReadCaller): Promise<FacetsResult> {
    const texts = splitFieldList(fieldList);
    if (texts.length === 0) throw validationError('querystring:/fields', 'must name at least one field: level, source or a metadata path such as @res.statusCode');
    if (texts.length > MAX_FACET_FIELDS) throw validationError('querystring:/fields', `must name at most ${MAX_FACET_FIELDS} fields`);
    const fields = texts.map((t) => {
      try {
        return parseGroupBy(t);
      } catch (err) {
        if (err instanceof AppError) throw validationError('querystring:/fields', `holds "${t}", which is not a field: ${String((err.details as Array<{ message: string }> | undefined)?.[0]?.message ?? err.message)}`);
        throw err;
      }
    });
    let measured: GroupField | undefined;
    if (measure !== undefined && measure.trim() !== '') {
      try {
        measured = parseGroupBy(measure.trim());
      } catch (err) {
        if (err instanceof AppError) throw validationError('querystring:/measure', 'must be a metadata path such as @duration');
        throw err;
      }
      if (measured.field.kind !== 'meta') throw validationError('querystring:/measure', 'must be a metadata path such as @duration');
    }
    const run = startRun(caller);
    await waited(run, projects.assertRole(userId, projectId));
    shedIfLate(run);
    const range = ranged(filter);
    let total = 0;
    const counts = fields.map(() => new Map<string, number>());
    const numbers = fields.map(() => new Numbers());
    const needsMetadata = fields.some((f) => f.field.kind === 'meta');
    // What one request holds by name is bounded as for one groupBy, however many fields it counts:
    // each field keeps its first share of config.groupByMaxValues distinct values by name.
    const namesPerField = Math.max(100, Math.ceil(config.groupByMaxValues / fields.length));
    await eachMatching(
      projectId,
      range,
      (row) => {
        total++;
        const metadata = lazyMetadata(row);
        for (let i = 0; i < fields.length; i++) {
          const byName = counts[i]!;
          for (let name of groupNames(fields[i]!, row)) {
            if (!byName.has(name) && byName.size >= namesPerField) name = OTHER_GROUP;
            byName.set(name, (byName.get(name) ?? 0) + 1);
          }
          for (const n of numbersOf(fields[i]!, metadata)) numbers[i]!.add(n);
        }
      },
      needsMetadata,
      outOfBudget,
      run,
    );
    const answer: FacetsResult = {
      total,
      facets: fields.map((field, i) => {
        const byName = counts[i]!;
        const named = [...byName].filter(([name]) => name !== NONE_GROUP && name !== OTHER_GROUP);
        // The most frequent first, ties to the name that sorts first: the order stats' groupBy keeps.
        named.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        const top = named.slice(0, limit);
        let other = byName.get(OTHER_GROUP) ?? 0;
        for (const [, n] of named.slice(limit)) other += n;
        return { field: field.text, values: top.map(([value, count]) => ({ value, count })), other, none: byName.get(NONE_GROUP) ?? 0, numeric: numbers[i]!.summary() };
      }),
    };
    if (measured) await measureTop(projectId, range, fields, answer, measured, startRun({ signal: caller?.signal }));
    return answer;
  }

  /**
   * p50/p95 of the `measure` path among the logs of each field's top values: a second read of the
   * same logs, keeping samples for the named values only (at most MAX_FACET_LIMIT per field).
   */
  async function measureTop(projectId: string, range: LogFilter, fields: GroupField[], answer: FacetsResult, measure: GroupField, run: ReadRun): Promise<void> {
    const wanted = fields.map((_, i) => new Map(answer.facets[i]!.values.map((v) => [v.value, new Numbers(MEASURE_SAMPLE_SIZE)])));
    await eachMatching(
      projectId,
      range,
      (row) => {
        let values: number[] | undefined;
        for (let i = 0; i < fields.length; i++) {
          for (const name of groupNames(fields[i]!, row)) {
            const into = wanted[i]!.get(name);
            if (!into) continue;
            values ??= numbersOf(measure, () => metadataOf(row));
            for (const n of values) into.add(n);
          }
        }
      },
      true,
      outOfBudget,
      run,
    );
    answer.facets.forEach((facet, i) => {
      for (const v of facet.values) {
        const s = wanted[i]!.get(v.value)!.summary();
        v.p50 = s?.p50 ?? null;
        v.p95 = s?.p95 ?? null;
      }
    });
  }

  /** The fields the selected logs hold: level and source, and every metadata leaf's path, most common first. */
  async function fields(userId: string, projectId: string, filter: LogFilter, caller?: ReadCaller): Promise<FieldsResult> {
    const run = startRun(caller);
    await waited(run, projects.assertRole(userId, projectId));
    shedIfLate(run);
    let total = 0;
    let withSource = 0;
    const paths = new Map<string, number>();
    const seen = (name: string) => {
      const n = paths.get(name);
      if (n !== undefined) paths.set(name, n + 1);
      else if (paths.size < MAX_FIELD_NAMES) paths.set(name, 1);
    };
    await eachMatching(
      projectId,
      ranged(filter),
      (row) => {
        total++;
        if (row.source !== null) withSource++;
        const metadata = metadataOf(row);
        if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return;
        // Each path once per log, however many array elements hold it.
        const inLog = new Set<string>();
        const walk = (value: unknown, path: string[]) => {
          if (value !== null && typeof value === 'object' && !Array.isArray(value) && path.length < MAX_FIELD_DEPTH) {
            for (const [key, v] of Object.entries(value)) walk(v, [...path, key]);
            return;
          }
          if (path.length > 0) inLog.add(pathName(path));
        };
        walk(metadata, []);
        for (const name of inLog) seen(name);
      },
      true,
      outOfBudget,
      run,
    );
    const listed = [...paths].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, FIELDS_ANSWERED - 2);
    const out = [{ field: 'level', count: total }, ...(withSource > 0 ? [{ field: 'source', count: withSource }] : []), ...listed.map(([field, count]) => ({ field, count }))];
    return { total, fields: out };
  }

  return { facets, fields };
}
