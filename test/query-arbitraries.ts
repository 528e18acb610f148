/**
 * Random logs and random query trees over one vocabulary, shared by the property tests of the query
 * language (query-property) and of the skip index (search-index): nested metadata, arrays, numbers
 * and numbers as strings, booleans, null, case-tricky Unicode, flat dotted keys beside nested
 * objects, levels, sources, timestamps over a few days.
 */
import fc from 'fast-check';
import { LEVELS } from '../src/features/logs/levels.js';

export const DAY = 86_400_000;
export const T0 = Date.parse('2026-11-20T00:00:00Z');
export const T1 = T0 + 3 * DAY;

// ---------------------------------------------------------------------------------------------------
// The vocabulary logs and queries share.

/** Words and texts with case traps: İ (dotted capital I), ß, K (Kelvin sign), final sigma, composed/decomposed é, emoji. */
const TEXTS = [
  'alpha', 'Alpha', 'ALPHA', 'beta', 'timeout', 'connection reset', 'İstanbul', 'istanbul', 'ISTANBUL', 'straße', 'STRASSE', 'Strasse',
  '\u212Aafka', 'kafka', 'KAFKA', 'ΟΔΟΣ', 'οδος', 'οδοσ', 'café', 'cafe\u0301', '🚀 launch', '🚀', 'req-1007', 'req-10070', '10.0.0.1', '110.0.0.12',
  'abc', 'abbc', 'ac', 'ABBC', '500', '503', 'error', 'ERROR', 'http 500', '/v1/orders', 'a.b', 'true', 'null', '1.5', '007', '',
  // Ids long enough for the skip index's grams, one with a combining mark after it (NFC joins its last letter).
  'req_c0ffee5eed42d00d', 'REQ_C0FFEE5EED42D00D', 'req_c0ffee5eed42d00e\u0301', 'xreq_c0ffee5eed42d00dx', 'trace_0123456789abcdef0123',
];
export const SOURCES = ['api', 'API', 'gateway', 'İzmir', '\u212Aafka', 'db', 'Café'];
const SUBKEYS = ['status_code', 'method', 'name', 'b', 'x'];

const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...TEXTS),
  fc.constantFrom(200, 404, 500, 503, 0, -3, 1.5, 1e3, '500', '503', '-3', '1.5', '200', '5e2'),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('true', 'false', 'null'),
);
const { value: metaValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...SUBKEYS, 'status_code'), tie('value'), { maxKeys: 3 }),
  ),
}));
/** Metadata objects; `http` is often nested holding status_code, beside a flat "http.status_code". */
const metadata = fc.record(
  {
    'http.status_code': fc.oneof(fc.constantFrom(200, 404, 500, 503, '500', '503', 'x'), metaValue),
    http: fc.oneof(fc.record({ status_code: fc.constantFrom(200, 404, 500, 503, '500', '503', null, [500, 200]), method: fc.constantFrom('GET', 'get', 'POST') }, { requiredKeys: [] }), metaValue),
    status: metaValue,
    tags: fc.array(scalar, { maxLength: 3 }),
    user: fc.record({ name: fc.constantFrom(...TEXTS) }, { requiredKeys: [] }),
    n: fc.oneof(fc.integer({ min: -10, max: 600 }), fc.constantFrom('42', '500', '-3', '1.5', 'abc')),
    flag: fc.oneof(fc.boolean(), fc.constantFrom('true', 'false', null)),
    x: metaValue,
    'a.b': scalar,
    a: fc.oneof(fc.record({ b: scalar }), scalar),
    msg: fc.constantFrom(...TEXTS),
    level: fc.constantFrom('error', 'warn', 'İ'),
  },
  { requiredKeys: [] },
);
const message = fc.array(fc.constantFrom(...TEXTS), { minLength: 1, maxLength: 4 }).chain((parts) =>
  fc.constantFrom(' ', ', ', ': ', '-', '/').map((sep) => parts.join(sep)),
);
export const randomLog = fc.record({
  timestamp: fc.integer({ min: T0, max: T1 }),
  level: fc.constantFrom(...LEVELS),
  source: fc.option(fc.constantFrom(...SOURCES), { nil: undefined }),
  message,
  metadata: fc.option(metadata, { nil: undefined }),
});

// ---------------------------------------------------------------------------------------------------
// Random query trees from the grammar's pieces.

const iso = (t: number) => new Date(t).toISOString();
const PATHS = ['http.status_code', '@http.status_code', '@http', 'http.method', 'status', '@status.status_code', 'tags', '@tags', 'user.name', '@n', 'n', 'flag', 'x', '@x.b', 'a.b', '@a', '@level', '@msg', '@"a.b"', '@"http.status_code"'];
const VALUES = [
  '500', '"500"', '503', '200', '>=500', '>500', '<400', '<=-3', '[200 TO 499]', '{200 TO 500}', '[* TO 0]', '{500 TO *]', '*', 'true', 'false', 'null',
  'alpha', 'ALPHA', 'al*', '5*', '*0', '?00', 'GET', 'get', '/^5/', '/(?i)^get$/', '/ab+c/', '(500 OR 503)', '(alpha OR beta OR kafka)', '(>=500 OR true)',
  '-3', '1.5', '5e2', '"İstanbul"', 'istanbul', 'STRASSE', 'straße', '\u212Aafka', 'kafka', 'οδος', 'ΟΔΟΣ', '"req-1007"', 'req-1007', '"/v1/orders"', 'error', 'İ', 'i',
];
const leaf: fc.Arbitrary<string> = fc.oneof(
  // bare words and multi-word terms
  fc.constantFrom('alpha', 'ALPHA', 'beta', 'timeout', 'istanbul', 'İstanbul', 'İSTANBUL', 'straße', 'STRASSE', 'kafka', '\u212Aafka', 'KAFKA', 'οδος', 'ΟΔΟΣ', 'οδοσ',
    'café', 'cafe\u0301', '🚀', 'req-1007', '10.0.0.1', 'req', '1007', '500', '503', 'true', 'null', '1.5', '007', 'error', 'http', 'a.b', 'abbc', 'v1/orders', 'and', 'or'),
  // phrases
  fc.constantFrom('"connection reset"', '"alpha beta"', '"straße"', '"ΟΔΟΣ"', '"500"', '"req-10"', '"🚀 la"', '"İ"', '"a.b"', '"/v1/"', '"tion res"', '""'),
  // wildcards
  fc.constantFrom('al*', '*pha', 'b?ta', 'ka*', '5*', '*0', 'req*', 'İst*', 'stra?e', 'ab*c', '*'),
  // regexes
  fc.constantFrom('/ab+c/', '/(?i)alpha/', '/^req/', '/\\d{3}/', '/ß/', '/(?i)kafka/', '/🚀/', '/^$/'),
  // reserved fields
  fc.constantFrom('trace', 'debug', 'info', 'warn', 'error', 'fatal', '>=warn', '<info', '>debug', '<=error', '[debug TO error]', '{info TO fatal}', '(error OR fatal)', '*').map((v) => `level:${v}`),
  fc.constantFrom('api', 'API', 'gate*', '"api"', '*', 'kafka', '\u212Aafka', 'café', 'izmir', 'İzmir', '/^a/', '(api OR db)').map((v) => `source:${v}`),
  fc.constantFrom('timeout', 'alpha', '"connection reset"', '/ab+c/', 'KAFKA', '*', '(reset OR "http 5")', 'req-1007', 'al*', '"req_c0ffee5eed42d00d"', '"C0FFEE5EED42D00E"', '"_C0FFEE5EED42D00E"', '/req_c0ffee5eed42d00[de]/', '"456789abcdef0123"').map((v) => `message:${v}`),
  fc.tuple(fc.constantFrom('>=', '<', '<=', '>', ''), fc.integer({ min: T0, max: T1 })).map(([op, t]) => `timestamp:${op}${op === '' ? String(t) : iso(t)}`),
  fc.tuple(fc.integer({ min: T0, max: T1 }), fc.integer({ min: 0, max: 2 * DAY }), fc.boolean()).map(([a, d, incl]) => `timestamp:${incl ? '[' : '{'}${iso(a)} TO ${a + d}${incl ? ']' : '}'}`),
  // metadata paths
  fc.tuple(fc.constantFrom(...PATHS), fc.constantFrom(...VALUES)).map(([p, v]) => `${p}:${v}`),
  // exists
  fc.tuple(fc.constantFrom('', '-', 'NOT '), fc.constantFrom(...PATHS)).map(([n, p]) => `${n}${p}:*`),
);
export const { node: queryText } = fc.letrec((tie) => {
  const node = tie('node') as fc.Arbitrary<string>;
  return {
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.tuple(node, fc.constantFrom(' ', ' AND ', ' OR '), node).map(([a, op, b]) => `${a}${op}${b}`),
      node.map((a) => `-${a}`),
      node.map((a) => `NOT ${a}`),
      node.map((a) => `(${a})`),
    ),
  };
});

/** from/to/level/source beside the query, sometimes. */
export interface Filters {
  from?: number;
  to?: number;
  level?: string[];
  source?: string;
}
export const filters: fc.Arbitrary<Filters> = fc
  .record(
    {
      from: fc.integer({ min: T0, max: T1 }),
      span: fc.integer({ min: 0, max: 2 * DAY }),
      level: fc.uniqueArray(fc.constantFrom(...LEVELS), { minLength: 1, maxLength: 3 }),
      source: fc.constantFrom(...SOURCES),
    },
    { requiredKeys: [] },
  )
  .map(({ span, ...f }) => (span !== undefined ? { ...f, to: (f.from ?? T0) + span } : f));


// ---------------------------------------------------------------------------------------------------
// Generated metadata keys (issue 25): the keys a hostile or careless shipper may send, and queries
// over paths made of them. The skip index's item for a path and the predicate's lookup must agree
// for every one of them.

/**
 * Keys: empty, dots (leading, trailing, inside, alone), the same letter composed and decomposed
 * (NFC and NFD are different keys), other scripts, emoji, characters of the index's item syntax,
 * and keys long enough that a path of them passes 512 characters.
 */
export const KEYS = ['', '.', 'a.', '.y', 'y', 'a', 'b', 'a.b', 'café', 'cafe\u0301', 'Ключ', '🚀', ' ', '=s:', 'p:'];
/** Keys that make a path of more than 512 characters (alone, or two of them). */
export const LONG_KEYS = ['k'.repeat(300), 'L'.repeat(600), 'd.'.repeat(200) + 'd'];
const KEYED_VALUES = ['emptyval', 'deepempty', 'alpha', 'Alpha', 'ß', 500, '500', true, null, 1.5];

/** Logs whose metadata keys are drawn from KEYS, and with `long` from LONG_KEYS too. */
export function keyedLog(long: boolean) {
  const key = long ? fc.constantFrom(...KEYS, ...LONG_KEYS) : fc.constantFrom(...KEYS);
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(...KEYED_VALUES),
      fc.array(tie('value'), { maxLength: 2 }),
      fc.dictionary(key, tie('value'), { maxKeys: 3 }),
    ),
  }));
  return fc.record({
    timestamp: fc.integer({ min: T0, max: T1 }),
    level: fc.constantFrom(...LEVELS),
    message: message,
    metadata: fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 }),
  });
}

/** A path segment as a query writes it: quoted, with `"` and `\` escaped. */
const quote = (seg: string) => `"${seg.replace(/["\\]/g, (c) => '\\' + c)}"`;

/** Every path (its keys from the root, arrays looked through) at which a log's metadata holds a value, with the value. */
function pathsIn(meta: unknown, keys: string[] = [], out: [string[], unknown][] = []): [string[], unknown][] {
  if (Array.isArray(meta)) for (const el of meta) pathsIn(el, keys, out);
  else {
    if (keys.length > 0) out.push([keys, meta]);
    if (typeof meta === 'object' && meta !== null) for (const [k, v] of Object.entries(meta)) pathsIn(v, [...keys, k], out);
  }
  return out;
}

/**
 * Queries over the paths the logs hold (so most of them match some logs): a path as its keys, or
 * with neighbouring keys written as one dotted segment (which the language matches alike), or a
 * path of generated keys no log may hold; with `*`, a value held there, or one of a few others.
 */
export function keyedQueryText(logs: readonly { metadata: unknown }[]): fc.Arbitrary<string> {
  const held = logs.flatMap((l) => pathsIn(l.metadata));
  const path = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...held).chain(([keys, value]) => fc.tuple(fc.constant(keys), fc.constant(value), fc.array(fc.boolean(), { minLength: keys.length, maxLength: keys.length }))) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...KEYS, ...LONG_KEYS), { minLength: 1, maxLength: 3 }).map((keys) => [keys, 'emptyval', keys.map(() => false)] as const) },
  );
  const leaf = fc.tuple(path, fc.constantFrom('*', 'held', 'held', 'emptyval', 'ALPHA', 'SS', '>=500', 'true', 'null', 'empty*', '/^deep/', '"pty"')).map(([[keys, value, joins], v]) => {
    const segs: string[] = [];
    keys.forEach((k, i) => (i > 0 && joins[i] ? (segs[segs.length - 1] += '.' + k) : segs.push(k)));
    const text = v !== 'held' ? v : typeof value === 'string' ? quote(value) : typeof value === 'object' && value !== null ? '*' : String(value);
    return `@${segs.map(quote).join('.')}:${text}`;
  });
  return fc.oneof(
    { weight: 4, arbitrary: leaf },
    { weight: 1, arbitrary: fc.tuple(leaf, fc.constantFrom(' ', ' OR ', ' AND NOT '), leaf).map(([a, op, b]) => `${a}${op}${b}`) },
  );
}
