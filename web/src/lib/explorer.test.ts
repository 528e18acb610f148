import { describe, expect, it } from 'vitest';
import { parseDateTime, formatTime, formatLogTime, startOfDay } from './format.ts';
import {
  addColumn,
  addToHistory,
  alertFromSearchUrl,
  applySuggestion,
  arrangeFields,
  columnValue,
  completionAt,
  contextQuery,
  logPermalink,
  numericRangeTerm,
  parseTypedRange,
  queryWarnings,
  rangeText,
  readFieldPrefs,
  readHistory,
  sortLogs,
  suggest,
  toggleHide,
  togglePin,
  viewBody,
  viewToQuery,
  writeFieldPrefs,
  writeHistory,
  zoomOut,
} from './explorer.ts';
import { DEFAULT_QUERY, fromUrlParams, parseColumns, resolveRange, toUrlParams } from './query.ts';

const NOW = Date.UTC(2026, 10, 28, 15, 30, 12);

describe('query bar warnings', () => {
  it('offers the quoted path for an unquoted value starting with /', () => {
    const w = queryWarnings('@req.url:/api/orders level:error');
    expect(w).toHaveLength(1);
    expect(w[0]!.kind).toBe('regex-path');
    expect(w[0]!.replacement).toBe('@req.url:"/api/orders"');
    expect(w[0]!.fixed).toBe('@req.url:"/api/orders" level:error');
    expect(w[0]!.message).toContain('/api/');
  });

  it('leaves whole regular expressions, quoted paths and phrases alone', () => {
    expect(queryWarnings('@req.url:/\\/v1\\/[a-z]+/')).toEqual([]);
    expect(queryWarnings('@req.url:/api/ x')).toEqual([]);
    expect(queryWarnings('@req.url:"/api/orders"')).toEqual([]);
    expect(queryWarnings('"status:error @a >= 5"')).toEqual([]);
    expect(queryWarnings('@res.statusCode:>=500 level:error')).toEqual([]);
    expect(queryWarnings('/took \\d+ms/')).toEqual([]);
  });

  it('offers field:>=N for KQL spacing', () => {
    expect(queryWarnings('@res.statusCode >= 500').map((w) => w.fixed)).toEqual(['@res.statusCode:>=500']);
    expect(queryWarnings('timeout @ms: > 100').map((w) => w.fixed)).toEqual(['timeout @ms:>100']);
    expect(queryWarnings('@ms:>= 100').map((w) => w.fixed)).toEqual(['@ms:>=100']);
    expect(queryWarnings('@res.statusCode = 500').map((w) => w.fixed)).toEqual(['@res.statusCode:500']);
    expect(queryWarnings('@ms<100').map((w) => w.fixed)).toEqual(['@ms:<100']);
  });

  it('offers level: for Datadog status:', () => {
    const w = queryWarnings('status:error -status:warning');
    expect(w.map((x) => x.replacement)).toEqual(['level:error', '-level:warn']);
    expect(w[0]!.fixed).toBe('level:error -status:warning');
    expect(queryWarnings('@status:error status:active')).toEqual([]);
  });
});

describe('typed time ranges', () => {
  it('reads durations as "last" ranges', () => {
    expect(parseTypedRange('2h', NOW, 'utc')).toEqual({ range: { kind: 'preset', preset: '2h' } });
    expect(parseTypedRange('15m', NOW, 'utc')).toEqual({ range: { kind: 'preset', preset: '15m' } });
    expect(parseTypedRange('last 3 days', NOW, 'utc')).toEqual({ range: { kind: 'preset', preset: '3d' } });
    expect(resolveRange({ kind: 'preset', preset: '2h' }, NOW)).toEqual({ from: NOW - 7_200_000, to: NOW });
  });

  it('reads today and yesterday in the chosen zone', () => {
    const midnight = Date.UTC(2026, 10, 28);
    expect(parseTypedRange('today', NOW, 'utc')).toEqual({ range: { kind: 'custom', from: midnight, to: NOW } });
    expect(parseTypedRange('Yesterday', NOW, 'utc')).toEqual({ range: { kind: 'custom', from: midnight - 86_400_000, to: midnight } });
    expect(startOfDay(NOW, 'utc')).toBe(midnight);
  });

  it('reads absolute ranges with seconds', () => {
    const r = parseTypedRange('2026-11-28 10:00:00 to 2026-11-28 11:00:30', NOW, 'utc');
    expect(r).toEqual({ range: { kind: 'custom', from: Date.UTC(2026, 10, 28, 10), to: Date.UTC(2026, 10, 28, 11, 0, 30) } });
    expect(rangeText((r as { range: never }).range, 'utc')).toBe('2026-11-28 10:00:00 to 2026-11-28 11:00:30');
    expect(parseTypedRange('2026-11-28 10:00 to now', NOW, 'utc')).toEqual({ range: { kind: 'custom', from: Date.UTC(2026, 10, 28, 10), to: NOW } });
  });

  it('says what is wrong with a range it cannot read', () => {
    expect(parseTypedRange('2026-11-28 11:00 to 2026-11-28 10:00', NOW, 'utc')).toEqual({ error: 'The start must be before the end.' });
    expect('error' in parseTypedRange('soon', NOW, 'utc')).toBe(true);
    expect('error' in parseTypedRange('2026-02-31 10:00', NOW, 'utc')).toBe(true);
    expect('error' in parseTypedRange('0m', NOW, 'utc')).toBe(true);
  });

  it('writes one 24-hour format and reads it back', () => {
    expect(formatTime(NOW, 'utc')).toBe('2026-11-28 15:30:12 UTC');
    expect(formatLogTime(NOW + 45, 'utc')).toBe('2026-11-28 15:30:12.045');
    expect(parseDateTime('2026-11-28T15:30:12.045Z', 'local')).toBe(NOW + 45);
    expect(parseDateTime('2026-11-28 16:30:12+01:00', 'utc')).toBe(NOW);
  });

  it('zooms out to twice the span, not past now', () => {
    expect(zoomOut({ kind: 'custom', from: NOW - 4000, to: NOW - 2000 }, NOW)).toEqual({ kind: 'custom', from: NOW - 5000, to: NOW - 1000 });
    expect(zoomOut({ kind: 'custom', from: NOW - 2000, to: NOW }, NOW)).toEqual({ kind: 'custom', from: NOW - 4000, to: NOW });
  });
});

describe('autocomplete', () => {
  const fields = ['@req.url', '@res.statusCode', '@reqId'];
  it('completes field names', () => {
    const ctx = completionAt('level:error @re', 15)!;
    expect(ctx).toMatchObject({ kind: 'field', prefix: '@re', start: 12 });
    const s = suggest(ctx, { fields });
    expect(s.map((x) => x.label)).toEqual(fields);
    expect(applySuggestion('level:error @re', ctx, s[1]!)).toEqual({ text: 'level:error @res.statusCode:', caret: 28 });
    expect(suggest(completionAt('stat', 4)!, { fields }).map((x) => x.label)).toEqual(['@res.statusCode']);
    expect(suggest(completionAt('a O', 3)!, { fields }).map((x) => x.label)).toEqual(['OR']);
  });

  it('completes values of a field, quoted when they need it', () => {
    const ctx = completionAt('-@req.url:/a', 12)!;
    expect(ctx).toMatchObject({ kind: 'value', field: '@req.url', prefix: '/a', start: 10 });
    const s = suggest(ctx, { fields, values: [{ value: '/api/orders', count: 3 }, { value: '/health', count: 9 }] });
    expect(s.map((x) => x.insert)).toEqual(['"/api/orders" ']);
    expect(applySuggestion('-@req.url:/a', ctx, s[0]!).text).toBe('-@req.url:"/api/orders" ');
    expect(suggest(completionAt('level:e', 7)!, { fields }).map((x) => x.label)).toEqual(['error']);
  });
});

describe('columns', () => {
  const log = { id: 'l1', level: 'info' as const, source: 'api', message: 'm', timestamp: '2026-11-28T10:00:00Z', receivedAt: '', metadata: { res: { statusCode: 503 }, 'http.route': '/x', nested: { 'a.b': 1 } } };
  it('reads fields, nested paths and dotted keys', () => {
    expect(columnValue(log, '@res.statusCode')).toBe(503);
    expect(columnValue(log, '@http.route')).toBe('/x');
    expect(columnValue(log, '@"http.route"')).toBe('/x');
    expect(columnValue(log, '@nested.a.b')).toBe(1);
    expect(columnValue(log, 'source')).toBe('api');
    expect(columnValue(log, '@missing')).toBeUndefined();
  });

  it('sorts the loaded page by a column, missing values last', () => {
    const mk = (id: string, code?: number | string) => ({ ...log, id, metadata: code === undefined ? {} : { res: { statusCode: code } } });
    const logs = [mk('a', 200), mk('b'), mk('c', 503), mk('d', 404), mk('e', 200)];
    expect(sortLogs(logs, '@res.statusCode', 'asc').map((l) => l.id)).toEqual(['a', 'e', 'd', 'c', 'b']);
    expect(sortLogs(logs, '@res.statusCode', 'desc').map((l) => l.id)).toEqual(['c', 'd', 'a', 'e', 'b']);
  });

  it('persists in the URL and in a view', () => {
    const q = { ...DEFAULT_QUERY, columns: addColumn(addColumn(['source'], '@res.statusCode'), 'source') };
    expect(q.columns).toEqual(['source', '@res.statusCode']);
    expect(toUrlParams(q).get('columns')).toBe('source,@res.statusCode');
    expect(fromUrlParams(toUrlParams(q)).columns).toEqual(['source', '@res.statusCode']);
    expect(parseColumns('bogus,@a,@a,level')).toEqual(['@a', 'level']);
    const body = viewBody(' 5xx ', { ...q, levels: ['error', 'fatal'], query: 'a OR b', groupBy: '@res.statusCode' });
    expect(body).toEqual({ name: '5xx', query: '(a OR b) level:(error OR fatal)', range: { last: '1h' }, columns: ['source', '@res.statusCode'], groupBy: '@res.statusCode' });
    expect(viewToQuery({ ...body, groupBy: null })).toEqual({ ...DEFAULT_QUERY, query: body.query, columns: body.columns });
    expect(viewToQuery({ query: '', range: { from: '2026-11-28T10:00:00.000Z', to: '2026-11-28T11:00:00.000Z' }, columns: [], groupBy: null }).range).toEqual({ kind: 'custom', from: Date.UTC(2026, 10, 28, 10), to: Date.UTC(2026, 10, 28, 11) });
  });
});

describe('sidebar prefs and history in localStorage', () => {
  const store = () => {
    const m = new Map<string, string>();
    return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
  };
  it('pins and hides per project', () => {
    const s = store();
    let prefs = readFieldPrefs(s, 'p1');
    prefs = togglePin(prefs, '@reqId');
    prefs = toggleHide(prefs, '@req.headers.host');
    writeFieldPrefs(s, 'p1', prefs);
    expect(readFieldPrefs(s, 'p1')).toEqual({ pinned: ['@reqId'], hidden: ['@req.headers.host'] });
    expect(readFieldPrefs(s, 'p2')).toEqual({ pinned: [], hidden: [] });
    expect(toggleHide(prefs, '@reqId')).toEqual({ pinned: [], hidden: ['@req.headers.host', '@reqId'] });
    const fields = [{ field: 'source', count: 9 }, { field: '@req.headers.host', count: 9 }, { field: '@reqId', count: 5 }, { field: '@res.statusCode', count: 5 }];
    expect(arrangeFields(fields, prefs).map((f) => f.field)).toEqual(['@reqId', 'source', '@res.statusCode']);
    expect(arrangeFields(fields, prefs, 'STATUS').map((f) => f.field)).toEqual(['@res.statusCode']);
    s.setItem('loglane.fields.p3', '{bad json');
    expect(readFieldPrefs(s, 'p3')).toEqual({ pinned: [], hidden: [] });
  });

  it('keeps the last 20 distinct queries, newest first', () => {
    const s = store();
    let h: string[] = [];
    for (let i = 0; i < 25; i++) h = addToHistory(h, `q${i % 22}`);
    h = addToHistory(addToHistory(h, '  '), 'q5');
    writeHistory(s, h);
    const back = readHistory(s);
    expect(back).toHaveLength(20);
    expect(back.slice(0, 3)).toEqual(['q5', 'q2', 'q1']);
  });
});

describe('links', () => {
  it('creates an alert from the search', () => {
    expect(alertFromSearchUrl('proj_1', { ...DEFAULT_QUERY, query: '@res.statusCode:>=500', levels: ['fatal', 'error'] })).toBe('/projects/proj_1/alerts?create=1&query=%40res.statusCode%3A%3E%3D500&level=error%2Cfatal');
    expect(alertFromSearchUrl('proj_1', DEFAULT_QUERY)).toBe('/projects/proj_1/alerts?create=1');
  });

  it('links to one log with ten minutes around it', () => {
    const url = new URL(logPermalink('proj_1', { id: 'log_9', timestamp: '2026-11-28T10:00:00.000Z' }), 'http://x');
    expect(url.searchParams.get('log')).toBe('log_9');
    expect(url.searchParams.get('from')).toBe('2026-11-28T09:55:00.000Z');
    expect(url.searchParams.get('to')).toBe('2026-11-28T10:05:00.000Z');
  });

  it('builds range filters and context queries', () => {
    expect(numericRangeTerm('@ms', '100', '500')).toBe('@ms:[100 TO 500]');
    expect(numericRangeTerm('@ms', '', '500')).toBe('@ms:[* TO 500]');
    expect(numericRangeTerm('@ms', 'x', '500')).toBeUndefined();
    expect(numericRangeTerm('@ms', '600', '500')).toBeUndefined();
    const log = { level: 'info' as const, source: 'api gw', message: '', timestamp: '', metadata: { reqId: 'req-7' } };
    expect(contextQuery(log, 'all')).toBeUndefined();
    expect(contextQuery(log, 'source')).toBe('source:"api gw"');
    expect(contextQuery(log, '@reqId')).toBe('@reqId:req-7');
  });
});
