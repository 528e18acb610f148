import { describe, expect, it } from 'vitest';
import { addTerm, chooseInterval, summariseFields, DEFAULT_QUERY, fieldName, fieldTerm, fromUrlParams, inlineFields, querySyntaxError, resolveRange, searchPath, statsPath, tailPath, toUrlParams, type LogQuery } from './query.ts';

const now = Date.parse('2026-11-22T12:00:00.000Z');

function params(path: string): Record<string, string> {
  return Object.fromEntries(new URL(path, 'http://x').searchParams);
}

describe('console query building', () => {
  it('turns a preset into absolute bounds at the moment the query runs', () => {
    const p = params(searchPath('proj_1', DEFAULT_QUERY, now));
    expect(p).toEqual({ from: '2026-11-22T11:00:00.000Z', to: '2026-11-22T12:00:00.000Z', limit: '200' });
  });

  it('sends levels as a list in a fixed order and the search as query', () => {
    const q: LogQuery = { ...DEFAULT_QUERY, levels: ['error', 'warn'], query: 'source:api "timed out"' };
    const p = params(searchPath('proj_1', q, now, { cursor: 'c1', limit: 500 }));
    expect(p).toMatchObject({ level: 'warn,error', query: 'source:api "timed out"', cursor: 'c1', limit: '500' });
    expect(p.q).toBeUndefined();
    expect(params(searchPath('proj_1', { ...DEFAULT_QUERY, query: '   ' }, now)).query).toBeUndefined();
  });

  it('leaves out the level filter when every level is chosen', () => {
    const p = params(searchPath('proj_1', { ...DEFAULT_QUERY, levels: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] }, now));
    expect(p.level).toBeUndefined();
  });

  it('orders a custom range whichever way round it was entered', () => {
    expect(resolveRange({ kind: 'custom', from: 20, to: 10 }, now)).toEqual({ from: 10, to: 20 });
  });

  it('picks histogram buckets so the range fits the bars, aligned to the interval', () => {
    expect(chooseInterval(3_600_000, 90).id).toBe('1m');
    expect(chooseInterval(24 * 3_600_000, 90).id).toBe('30m');
    expect(chooseInterval(15 * 60_000, 90).id).toBe('10s');
    expect(chooseInterval(365 * 86_400_000, 90).id).toBe('1d');
    const p = params(statsPath('proj_1', { ...DEFAULT_QUERY, range: { kind: 'custom', from: now - 3_600_000 + 30_000, to: now } }, now, 90));
    expect(p.interval).toBe('1m');
    expect(p.from).toBe('2026-11-22T11:00:00.000Z');
  });

  it('counts the histogram with the same filters as the list, split by a field when asked', () => {
    const q: LogQuery = { ...DEFAULT_QUERY, levels: ['error'], query: '/a+b/' };
    const p = params(statsPath('proj_1', q, now));
    expect(p.query).toBe('/a+b/');
    expect(p.level).toBe('error');
    expect(p.groupBy).toBeUndefined();
    expect(params(statsPath('proj_1', { ...q, groupBy: 'level' }, now)).groupBy).toBeUndefined();
    expect(params(statsPath('proj_1', { ...q, groupBy: ' @res.statusCode ' }, now)).groupBy).toBe('@res.statusCode');
    expect(params(searchPath('proj_1', { ...q, groupBy: 'source' }, now)).groupBy).toBeUndefined();
  });

  it('tails with the same filters and no time bounds', () => {
    const path = tailPath('proj_1', { ...DEFAULT_QUERY, levels: ['error'], query: 'x' });
    expect(path).toBe('/v1/projects/proj_1/logs/tail?level=error&query=x');
    expect(tailPath('proj_1', DEFAULT_QUERY)).toBe('/v1/projects/proj_1/logs/tail');
  });

  it('round-trips the explorer state through the page URL', () => {
    const queries: LogQuery[] = [
      DEFAULT_QUERY,
      { range: { kind: 'preset', preset: '7d' }, levels: ['fatal', 'info'], query: 'source:worker "a&b=c"', groupBy: '', columns: [] },
      { range: { kind: 'preset', preset: '2h' }, levels: [], query: '', groupBy: '', columns: ['source', '@res.statusCode', '@"a,b".c'] },
      { range: { kind: 'custom', from: now - 5000, to: now }, levels: [], query: '/^GET \\// OR @x:#', groupBy: '@res.statusCode', columns: [] },
    ];
    for (const q of queries) expect(fromUrlParams(toUrlParams(q))).toEqual(q);
  });

  it('ignores what it does not understand in a hand-edited URL', () => {
    const q = fromUrlParams(new URLSearchParams('range=forever&level=ERROR,nope,error&from=yesterday'));
    expect(q).toEqual({ ...DEFAULT_QUERY, levels: ['error'] });
  });

  it('reads links from before the query language as the same query', () => {
    expect(fromUrlParams(new URLSearchParams('source=billing&q=say "hi"')).query).toBe('source:billing "say \\"hi\\""');
    expect(fromUrlParams(new URLSearchParams('pattern=took \\d%2Bms')).query).toBe('/took \\d+ms/');
    expect(fromUrlParams(new URLSearchParams('q=x&query=level:error')).query).toBe('level:error');
  });
});

describe('building terms from values', () => {
  it('writes plain values bare and quotes and escapes the rest', () => {
    expect(fieldTerm('@order.id', 4242)).toBe('@order.id:4242');
    expect(fieldTerm('@retry', false, true)).toBe('-@retry:false');
    expect(fieldTerm('@path', '/v1/orders')).toBe('@path:"/v1/orders"');
    expect(fieldTerm('@msg', 'say "hi" \\ bye')).toBe('@msg:"say \\"hi\\" \\\\ bye"');
    expect(fieldTerm('@q', 'a*b?')).toBe('@q:"a*b?"');
    expect(fieldTerm('@w', 'OR')).toBe('@w:"OR"');
    expect(fieldTerm('@w', '-x')).toBe('@w:"-x"');
    expect(fieldTerm('@req', 'r-12')).toBe('@req:r-12');
    expect(fieldTerm('@tags', ['a', 'b'])).toBe('@tags:"[\\"a\\",\\"b\\"]"');
    expect(fieldTerm('@gone', null)).toBe('@gone:null');
    expect(fieldTerm('source', 'api')).toBe('source:api');
  });

  it('names metadata paths with @, quoting odd segments', () => {
    expect(fieldName(['res', 'statusCode'])).toBe('@res.statusCode');
    expect(fieldName(['http.route'])).toBe('@"http.route"');
    expect(fieldName(['weird key', 'x'])).toBe('@"weird key".x');
  });

  it('ANDs a term onto the query, keeping an OR in parentheses', () => {
    expect(addTerm('', 'a:1')).toBe('a:1');
    expect(addTerm(' timeout ', 'a:1')).toBe('timeout a:1');
    expect(addTerm('x OR y', '-a:1')).toBe('(x OR y) -a:1');
    expect(addTerm('color', 'a:1')).toBe('color a:1');
  });

  it('reads the column of a syntax error from the 400 details', () => {
    expect(querySyntaxError([{ path: 'querystring:/query', message: "at column 9: expected a value after ':'" }])).toEqual({ column: 9, message: "at column 9: expected a value after ':'" });
    expect(querySyntaxError([{ path: 'querystring:/from', message: 'bad' }])).toBeUndefined();
    expect(querySyntaxError(undefined)).toBeUndefined();
  });

  it('picks the inline fields by key: status, codes, methods, paths, ids, durations first', () => {
    const meta = { hostname: 'box', reqId: 'req-1', req: { method: 'GET', url: '/v1/orders' }, res: { statusCode: 503 }, responseTime: 12, long: 'x'.repeat(80), nested: { a: { b: 1 } } };
    expect(inlineFields(meta).map((f) => `${f.path.join('.')}=${String(f.value)}`)).toEqual(['res.statusCode=503', 'req.method=GET', 'req.url=/v1/orders', 'reqId=req-1']);
    expect(inlineFields({})).toEqual([]);
  });
});

describe('the field sidebar', () => {
  it('lists the fields of the logs, most common first, with their top values counted as text', () => {
    const logs = [
      { source: 'api', metadata: { res: { statusCode: 500 }, tags: ['a'] } },
      { source: 'api', metadata: { res: { statusCode: '500' }, 'http.route': '/x' } },
      { source: null, metadata: { res: { statusCode: 200 }, gone: null } },
    ];
    const s = summariseFields(logs);
    expect(s.map((f) => [f.field, f.count])).toEqual([['@res.statusCode', 3], ['source', 2], ['@"http.route"', 1], ['@tags', 1]]);
    expect(s[0]!.top).toEqual([{ text: '500', value: 500, count: 2 }, { text: '200', value: 200, count: 1 }]);
    expect(summariseFields(logs, { top: 1, maxFields: 1 })).toEqual([{ field: '@res.statusCode', count: 3, top: [{ text: '500', value: 500, count: 2 }] }]);
  });
});
