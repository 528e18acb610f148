/**
 * The shapes of the explorer's newer endpoints (saved views, context, export, facets, fields), as
 * generated from the server's OpenAPI document, and the paths the console calls them by.
 */
import type { ViewRange } from './types.ts';

// The answers' shapes come from the client schema generated from the server's OpenAPI document.
export type { ContextAnswer, Facet, FacetsAnswer, FacetValue, FieldsAnswer, NumericSummary, View, ViewRange } from './types.ts';

/** What POST and PUT /v1/projects/:id/views take (PUT takes every field too). */
export interface ViewBody {
  name: string;
  query: string;
  range: ViewRange;
  columns: string[];
  groupBy: string | null;
}

const base = (projectId: string) => `/v1/projects/${encodeURIComponent(projectId)}`;

export const viewsPath = (projectId: string) => `${base(projectId)}/views`;
export const viewPath = (projectId: string, viewId: string) => `${base(projectId)}/views/${encodeURIComponent(viewId)}`;

export function contextPath(projectId: string, logId: string, options: { before?: number; after?: number; query?: string } = {}): string {
  const p = new URLSearchParams({ before: String(options.before ?? 20), after: String(options.after ?? 20) });
  if (options.query) p.set('query', options.query);
  return `${base(projectId)}/logs/${encodeURIComponent(logId)}/context?${p}`;
}

/** `filters` are the search's (rangeFilterParams). */
export function facetsPath(projectId: string, filters: URLSearchParams, fields: string[], options: { limit?: number; measure?: string } = {}): string {
  const p = new URLSearchParams(filters);
  p.set('fields', fields.join(','));
  if (options.limit) p.set('limit', String(options.limit));
  if (options.measure) p.set('measure', options.measure);
  return `${base(projectId)}/logs/facets?${p}`;
}

export function fieldsPath(projectId: string, filters: URLSearchParams): string {
  return `${base(projectId)}/logs/fields?${filters}`;
}

export function exportPath(projectId: string, filters: URLSearchParams, format: 'ndjson' | 'csv', columns?: string[]): string {
  const p = new URLSearchParams(filters);
  p.set('format', format);
  if (format === 'csv' && columns?.length) p.set('columns', columns.join(','));
  return `${base(projectId)}/logs/export?${p}`;
}

/** The file name from a Content-Disposition header (`attachment; filename="x.csv"`), or `fallback`. */
export function attachmentName(header: string | null, fallback: string): string {
  const m = header ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header) : null;
  if (!m) return fallback;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}
