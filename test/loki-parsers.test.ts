/**
 * The parts of the Loki push API that need no server (src/features/logs/ingest/snappy.ts and
 * loki.ts): snappy's block format against the real `snappy` package, forged and broken blocks, the
 * labels' text form, the protobuf PushRequest, and how entries become logs.
 */
import fc from 'fast-check';
import snappy from 'snappy';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../src/errors.js';
import type { BodyItem } from '../src/features/logs/ingest/body.js';
import { decodeJsonPush, decodeProtobufPush, parseLabels, PushRequest, pushItems } from '../src/features/logs/ingest/loki.js';
import { SnappyError, snappyUncompress } from '../src/features/logs/ingest/snappy.js';

const MiB = 1024 * 1024;

const encodePush = (object: Record<string, unknown>): Buffer => Buffer.from(PushRequest.encode(PushRequest.fromObject(object)).finish());

/** A varint, as snappy states a block's length. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

/** Calls `fn` and gives back what it threw (undefined when it returned). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err;
  }
}

/** Text with long repeats: a few words from a small vocabulary, repeated, as logs are. */
const repetitiveText = fc
  .tuple(fc.array(fc.constantFrom('GET ', '/api/v1/', 'user=', '42', ' 200 ', 'ok', '\n', 'a', 'zz', '{"level":"info"}', 'é', '日本'), { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 20_000 }))
  .map(([words, times]) => Buffer.from(words.join('').repeat(times).slice(0, 400_000)));

describe('snappyUncompress', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('gives back exactly what snappy compressed: random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300_000, size: 'max' }), (bytes) => {
        const input = Buffer.from(bytes);
        expect(snappyUncompress(snappy.compressSync(input), 5 * MiB).equals(input)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('gives back exactly what snappy compressed: repetitive text, runs and mixtures', () => {
    const runs = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 300_000 })).map(([b, n]) => Buffer.alloc(n, b));
    const mixed = fc.array(fc.oneof(repetitiveText, fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b))), { maxLength: 6 }).map((parts) => Buffer.concat(parts));
    fc.assert(
      fc.property(fc.oneof(repetitiveText, runs, mixed), (input) => {
        const compressed = snappy.compressSync(input);
        expect(snappyUncompress(compressed, 5 * MiB).equals(input)).toBe(true);
      }),
      { numRuns: 150 },
    );
    // The edges: empty, one byte, exactly the limit.
    for (const input of [Buffer.alloc(0), Buffer.from('x'), Buffer.alloc(5 * MiB, 'ab')]) expect(snappyUncompress(snappy.compressSync(input), 5 * MiB).equals(input)).toBe(true);
  });

  it('refuses a block stating more than maxBytes before allocating anything', () => {
    const overLimit = snappy.compressSync(Buffer.alloc(1001));
    const alloc = vi.spyOn(Buffer, 'allocUnsafe');
    const gb = Buffer.from(varint(2 ** 30)); // a few bytes claiming 1 GiB
    const err = thrown(() => snappyUncompress(gb, 5 * MiB));
    expect(err).toBeInstanceOf(SnappyError);
    expect((err as Error).message).toMatch(/more than/);
    // Followed by a literal, and the largest length a varint of 5 bytes can state.
    expect(thrown(() => snappyUncompress(Buffer.from([...varint(2 ** 30), 0x00, 0x61]), 5 * MiB))).toBeInstanceOf(SnappyError);
    expect(thrown(() => snappyUncompress(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), 5 * MiB))).toBeInstanceOf(SnappyError);
    // One byte over the limit, from real snappy output.
    expect(thrown(() => snappyUncompress(overLimit, 1000))).toBeInstanceOf(SnappyError);
    expect(alloc).not.toHaveBeenCalled();
    // The spy sees the allocation of a block that is taken.
    expect(snappyUncompress(Buffer.from([3, 2 << 2, 0x61, 0x62, 0x63]), 5 * MiB).toString()).toBe('abc');
    expect(alloc).toHaveBeenCalledWith(3);
  });

  it('refuses a length that is no varint of at most 32 bits', () => {
    for (const bytes of [[], [0x80], [0xff, 0xff], [0x80, 0x80, 0x80, 0x80, 0x80, 0x00], [0xff, 0xff, 0xff, 0xff, 0xff, 0x01]]) {
      expect(thrown(() => snappyUncompress(Buffer.from(bytes), 5 * MiB)), JSON.stringify(bytes)).toBeInstanceOf(SnappyError);
    }
  });

  it('refuses every truncation of a real block', () => {
    fc.assert(
      fc.property(fc.oneof(repetitiveText.map((b) => b.subarray(0, 5000)), fc.uint8Array({ minLength: 1, maxLength: 3000 }).map((b) => Buffer.from(b))), fc.nat(), (input, cut) => {
        const compressed = snappy.compressSync(input);
        const at = cut % compressed.length; // every proper prefix, the empty one included
        expect(thrown(() => snappyUncompress(compressed.subarray(0, at), 5 * MiB))).toBeInstanceOf(SnappyError);
      }),
      { numRuns: 400 },
    );
    // Truncated in each kind of element: a literal's long length, a literal's bytes, the offset of each kind of copy.
    for (const bytes of [
      [10, 60 << 2], // a literal whose length is in the next byte, missing
      [10, 61 << 2, 0x05], // … in the next two, one missing
      [10, 9 << 2, 0x61, 0x62], // a literal of 10 bytes, 2 there
      [10, 0x00, 0x61, 0x01], // a copy with a 1-byte offset, missing
      [10, 0x00, 0x61, 0x02, 0x01], // a copy with a 2-byte offset, one byte there
      [10, 0x00, 0x61, 0x03, 0x01, 0x00, 0x00], // a copy with a 4-byte offset, three bytes there
    ]) {
      expect(thrown(() => snappyUncompress(Buffer.from(bytes), 5 * MiB)), JSON.stringify(bytes)).toBeInstanceOf(SnappyError);
    }
  });

  it('refuses copies with offset 0, copies reaching before what was written, and output past the stated length', () => {
    const lit4 = [(4 - 1) << 2, 0x61, 0x62, 0x63, 0x64]; // the literal "abcd"
    const copy1 = (n: number, offset: number) => [((offset >> 8) << 5) | ((n - 4) << 2) | 1, offset & 0xff]; // n in 4..11, offset < 2048
    const copy2 = (n: number, offset: number) => [((n - 1) << 2) | 2, offset & 0xff, offset >> 8];
    const copy4 = (n: number, offset: number) => [((n - 1) << 2) | 3, offset & 0xff, (offset >> 8) & 0xff, (offset >> 16) & 0xff, offset >>> 24];
    // Well-formed, as a check of the helpers: "abcd" then a copy of it.
    for (const copy of [copy1, copy2, copy4]) expect(snappyUncompress(Buffer.from([8, ...lit4, ...copy(4, 4)]), 100).toString()).toBe('abcdabcd');
    // An overlapping copy is a run.
    expect(snappyUncompress(Buffer.from([12, ...lit4, ...copy1(8, 1)]), 100).toString()).toBe('abcddddddddd');
    const bad = [
      [8, ...lit4, ...copy1(4, 0)],
      [8, ...lit4, ...copy2(4, 0)],
      [8, ...lit4, ...copy4(4, 0)],
      [8, ...lit4, ...copy1(4, 5)],
      [8, ...lit4, ...copy2(4, 1000)],
      [8, ...lit4, ...copy4(4, 2 ** 31)],
      [4, ...copy1(4, 1)], // a copy before anything was written
      [6, ...lit4, ...copy1(4, 4)], // more than the stated 6 bytes
      [3, ...lit4], // a literal longer than the stated length
      [8, ...lit4], // shorter than stated
      [0, ...lit4], // bytes after an empty block
    ];
    for (const bytes of bad) expect(thrown(() => snappyUncompress(Buffer.from(bytes), 100)), JSON.stringify(bytes)).toBeInstanceOf(SnappyError);
  });

  it('answers any bytes with a buffer of at most maxBytes or a SnappyError, never anything else', () => {
    const check = (bytes: Uint8Array, maxBytes: number) => {
      let out: Buffer | undefined;
      const err = thrown(() => (out = snappyUncompress(bytes, maxBytes)));
      if (err !== undefined) expect(err).toBeInstanceOf(SnappyError);
      else expect(out!.length).toBeLessThanOrEqual(maxBytes);
    };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4000 }), fc.integer({ min: 0, max: 5 * MiB }), (bytes, maxBytes) => check(bytes, maxBytes)),
      { numRuns: 3000 },
    );
    // Real blocks with bytes changed: forged offsets and lengths in otherwise valid blocks.
    fc.assert(
      fc.property(repetitiveText.map((b) => b.subarray(0, 20_000)), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (input, changes) => {
        const block = Buffer.from(snappy.compressSync(input));
        for (const [at, value] of changes) block[at % block.length] = value;
        check(block, 1 * MiB);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseLabels', () => {
  it('reads the labels text form, with its escapes', () => {
    expect(parseLabels(String.raw`{job="api", level="info", msg="a \"quoted\" \\ value"}`)).toEqual({ job: 'api', level: 'info', msg: 'a "quoted" \\ value' });
    expect(parseLabels(String.raw`{a="line\nbreak\ttab", b="", service.name="x", _under="y"}`)).toEqual({ a: 'line\nbreak\ttab', b: '', 'service.name': 'x', _under: 'y' });
    expect(parseLabels('{job="api",level="info"}')).toEqual({ job: 'api', level: 'info' });
    expect(parseLabels('  { job = "api" }  ')).toEqual({ job: 'api' });
    expect(parseLabels('{}')).toEqual({});
    expect(parseLabels(' { } ')).toEqual({});
  });

  it('keeps a label named like an Object property as plain data', () => {
    const labels = parseLabels('{__proto__="x", constructor="y", toString="z"}');
    expect(Object.getPrototypeOf(labels)).toBe(Object.prototype);
    expect(Object.entries(labels)).toEqual([['__proto__', 'x'], ['constructor', 'y'], ['toString', 'z']]);
  });

  it('refuses malformed text with a VALIDATION_ERROR', () => {
    for (const text of ['', 'job="api"', '{', '}', '{job="api"', '{job="api"} trailing', '{job=api}', '{job="unterminated}', '{job="a" env="b"}', '{1job="a"}', '{="a"}', '{job}', '{job:"a"}', '{job="a",,env="b"}', '{job="a\\']) {
      const err = thrown(() => parseLabels(text));
      expect(err, text).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses text after an empty label set, as after any other', () => {
    // `{job="a"} trailing` is refused above; `{}` must not be the exception.
    for (const text of ['{} {}', '{} trailing', '{}job="a"']) {
      const err = thrown(() => parseLabels(text));
      expect(err, `parseLabels(${JSON.stringify(text)}) returned ${JSON.stringify(err === undefined ? parseLabels(text) : null)}`).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('VALIDATION_ERROR');
    }
  });

  it('reads back any labels written in the text form, and answers any text with labels or an AppError', () => {
    const name = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_.]{0,20}$/);
    const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
    fc.assert(
      fc.property(fc.dictionary(name, fc.string({ unit: 'binary', maxLength: 40 }), { maxKeys: 8 }), fc.constantFrom(',', ', ', ' , '), (labels, sep) => {
        const text = `{${Object.entries(labels).map(([k, v]) => `${k}=${quote(v)}`).join(sep)}}`;
        expect(parseLabels(text)).toEqual(labels);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: fc.constantFrom('{', '}', '"', '\\', '=', ',', ' ', 'a', '1', '.', 'n'), maxLength: 40 })), (text) => {
        const err = thrown(() => parseLabels(text));
        if (err !== undefined) expect(err).toBeInstanceOf(AppError);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('decodeProtobufPush', () => {
  const refusedWith = (body: Buffer, compressed = true) => {
    const err = thrown(() => decodeProtobufPush(body, compressed));
    expect(err).toBeInstanceOf(AppError);
    return (err as AppError).code;
  };

  it('decodes a PushRequest encoded with protobufjs and compressed with snappy', () => {
    const raw = encodePush({
      streams: [
        {
          labels: String.raw`{job="api", env="prod", msg="say \"hi\""}`,
          entries: [
            { timestamp: { seconds: 1732780800, nanos: 123_456_789 }, line: 'first line', structuredMetadata: [{ name: 'trace_id', value: 'abc' }, { name: 'user', value: 'ann' }] },
            { timestamp: { seconds: 1732780801 }, line: '{"msg":"json line","level":"warn"}' },
            { line: 'no timestamp at all' },
          ],
        },
        { labels: '{}', entries: [] },
        { entries: [{ timestamp: { seconds: 1, nanos: 5 }, line: 'no labels' }] },
      ],
    });
    const streams = decodeProtobufPush(snappy.compressSync(raw), true);
    expect(streams).toEqual([
      {
        labels: { job: 'api', env: 'prod', msg: 'say "hi"' },
        entries: [
          // Protobuf times come as epoch milliseconds, cut (not rounded) from seconds and nanos.
          { ns: { ms: 1732780800123 }, line: 'first line', metadata: { trace_id: 'abc', user: 'ann' } },
          { ns: { ms: 1732780801000 }, line: '{"msg":"json line","level":"warn"}', metadata: {} },
          { ns: { ms: 0 }, line: 'no timestamp at all', metadata: {} },
        ],
      },
      { labels: {}, entries: [] },
      { labels: {}, entries: [{ ns: { ms: 1000 }, line: 'no labels', metadata: {} }] },
    ]);
    // Not compressed when told so; and an empty PushRequest is no streams.
    expect(decodeProtobufPush(raw, false)).toEqual(streams);
    expect(decodeProtobufPush(snappy.compressSync(Buffer.alloc(0)), true)).toEqual([]);
    // Times past 2^53 ns, exactly to the millisecond.
    const far = decodeProtobufPush(snappy.compressSync(encodePush({ streams: [{ labels: '{a="b"}', entries: [{ timestamp: { seconds: 253402300799, nanos: 999_999_999 }, line: 'x' }] }] })), true);
    expect(far[0]!.entries[0]!.ns).toEqual({ ms: 253402300799999 });
  });

  it('refuses what is not snappy-compressed protobuf with a VALIDATION_ERROR, and a snappy bomb with PAYLOAD_TOO_LARGE', () => {
    expect(refusedWith(Buffer.from('this is not snappy'))).toBe('VALIDATION_ERROR');
    expect(refusedWith(Buffer.from(JSON.stringify({ streams: [] })))).toBe('VALIDATION_ERROR');
    // Uncompressed protobuf sent as if compressed.
    expect(refusedWith(encodePush({ streams: [{ labels: '{job="api"}', entries: [{ line: 'x'.repeat(50) }] }] }))).toBe('VALIDATION_ERROR');
    // Valid snappy, then bytes that are no PushRequest: a field with a length past the end, and a wrong wire type.
    expect(refusedWith(snappy.compressSync(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01])))).toBe('VALIDATION_ERROR');
    expect(refusedWith(snappy.compressSync(Buffer.from([0x0f, 0x01, 0x02])))).toBe('VALIDATION_ERROR');
    expect(refusedWith(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), false)).toBe('VALIDATION_ERROR');
    // A valid PushRequest whose labels are malformed.
    expect(refusedWith(snappy.compressSync(encodePush({ streams: [{ labels: 'job=api', entries: [] }] })))).toBe('VALIDATION_ERROR');
    // A block stating 1 GiB.
    expect(refusedWith(Buffer.from([...varint(2 ** 30), 0x00, 0x61]))).toBe('PAYLOAD_TOO_LARGE');
    expect(refusedWith(snappy.compressSync(Buffer.alloc(5 * MiB + 1)))).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers random bytes with streams or an AppError (VALIDATION_ERROR or PAYLOAD_TOO_LARGE), never another error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.boolean(), (bytes, compressed) => {
        const err = thrown(() => decodeProtobufPush(Buffer.from(bytes), compressed));
        if (err === undefined) return;
        expect(err).toBeInstanceOf(AppError);
        expect(['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE']).toContain((err as AppError).code);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('pushItems', () => {
  /** A log object's timestamp (an ISO string or epoch milliseconds, as POST /v1/logs takes either) as ISO. */
  const isoOf = (t: unknown) => (typeof t === 'string' || typeof t === 'number' ? new Date(t).toISOString() : `not a time: ${String(t)}`);
  const timeOf = (i: BodyItem) => ('value' in i ? isoOf((i.value as { timestamp: unknown }).timestamp) : i.error);
  const entry = (ns: string | { error: string }, line: unknown, metadata: Record<string, string> = {}) => ({ ns, line, metadata });

  it('keeps a nanosecond time exact to the millisecond', () => {
    const items = pushItems([{ labels: { job: 'api' }, entries: [entry('1732780800123456789', 'a'), entry('1732780800999999999', 'b'), entry('0', 'c'), entry('1732780800123', 'd')] }]);
    expect(items.map(timeOf)).toEqual([
      '2024-11-28T08:00:00.123Z',
      '2024-11-28T08:00:00.999Z', // truncated, never rounded up into the next millisecond
      '1970-01-01T00:00:00.000Z',
      '1970-01-01T00:28:52.780Z', // always nanoseconds, whatever the magnitude
    ]);
    // The same through the JSON decoder, the time a string or a safe integer.
    const json = decodeJsonPush(Buffer.from(JSON.stringify({ streams: [{ stream: { job: 'api' }, values: [['1732780800123456789', 'a'], [1732780800123, 'b'], [' 1732780800123456789 ', 'c']] }] })));
    expect(pushItems(json).map(timeOf)).toEqual(['2024-11-28T08:00:00.123Z', '1970-01-01T00:28:52.780Z', '2024-11-28T08:00:00.123Z']);
  });

  it('reads a JSON line as a record, with labels and structured metadata merged over its fields', () => {
    const [item] = pushItems([
      {
        labels: { service_name: 'checkout', env: 'label', level: 'error' },
        entries: [entry('1732780800123456789', '{"msg":"charged","level":"info","time":1,"user":{"id":7},"env":"line","amount":12.5,"region":"line"}', { region: 'metadata', trace_id: 'abc' })],
      },
    ]);
    expect(item).toEqual({
      value: {
        message: 'charged',
        level: 'error',
        source: 'checkout',
        timestamp: expect.anything(),
        metadata: { user: { id: 7 }, env: 'label', amount: 12.5, region: 'metadata', trace_id: 'abc' },
      },
    });
    // The entry's time, not the line's `time`.
    expect(timeOf(item!)).toBe('2024-11-28T08:00:00.123Z');
  });

  it('takes the message, level and source from their fields in order', () => {
    const one = (labels: Record<string, string>, line: string, metadata: Record<string, string> = {}) => {
      const [item] = pushItems([{ labels, entries: [entry('1732780800000000000', line, metadata)] }]);
      return (item as { value: { message: string; level?: unknown; source?: string; metadata: Record<string, unknown> } }).value;
    };
    expect(one({ service_name: 's', job: 'j', app: 'a' }, 'text')).toMatchObject({ source: 's', metadata: { job: 'j', app: 'a' } });
    expect(one({ job: 'j', app: 'a' }, 'text')).toMatchObject({ source: 'j', metadata: { app: 'a' } });
    expect(one({ app: 'a' }, 'text')).toMatchObject({ source: 'a', metadata: {} });
    expect(one({}, '{"msg":"m","source":"from-line"}')).toMatchObject({ message: 'm', source: 'from-line' });
    expect(one({}, 'text').source).toBeUndefined();
    expect(one({ detected_level: 'warn' }, 'text')).toMatchObject({ level: 'warn', message: 'text' });
    expect(one({ severity: 'critical' }, 'text').level).toBe('critical');
    expect(one({}, 'text', { lvl: 'debug' }).level).toBe('debug');
    expect(one({}, '{"level":50,"log":"pino number"}')).toMatchObject({ level: 50, message: 'pino number' });
    expect(one({}, '{"_msg":"victoria","level":"nonsense"}')).toMatchObject({ message: 'victoria', metadata: { level: 'nonsense' } });
    expect(one({}, '{"msg":"m","level":"nonsense"}').level).toBeUndefined();
    // A line that only looks like JSON, or is JSON but no object, is text.
    expect(one({}, '{not json')).toMatchObject({ message: '{not json', metadata: {} });
    expect(one({}, '["an","array"]').message).toBe('["an","array"]');
    expect(one({}, '  {"msg":"indented"}').message).toBe('indented');
  });

  it('reports a bad entry as {error} without failing the others', () => {
    const items = pushItems([
      { labels: { job: 'a' }, entries: [entry('1732780800123456789', 'good one'), entry('1732780800123456789', 42), entry({ error: 'the time is not digits' }, 'x')] },
      { labels: { job: 'b' }, entries: [entry('1732780800123456789', null), entry('1732780800124000000', 'good two'), entry('1732780800123456789', { line: 'object' })] },
    ]);
    expect(items).toHaveLength(6);
    expect(items.map((i) => ('error' in i ? 'error' : (i.value as { message: string }).message))).toEqual(['good one', 'error', 'error', 'error', 'good two', 'error']);
    expect(items[1]).toEqual({ error: expect.stringMatching(/line/) });
    expect(items[2]).toEqual({ error: 'the time is not digits' });
    // As the JSON decoder makes them: a number line, a time that is not digits, an entry that is no pair.
    const decoded = decodeJsonPush(Buffer.from(JSON.stringify({ streams: [{ stream: { job: 'c' }, values: [['1732780800123456789', 'ok'], ['1732780800123456789', 7], ['yesterday', 'x'], ['1'], 'no'] }] })));
    expect(pushItems(decoded).map((i) => 'error' in i)).toEqual([false, true, true, true, true]);
  });

  it('refuses more than 10,000 entries in one push', () => {
    const entries = Array.from({ length: 10_001 }, () => entry('1732780800123456789', 'x'));
    const err = thrown(() => pushItems([{ labels: {}, entries }]));
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('PAYLOAD_TOO_LARGE');
    expect(pushItems([{ labels: {}, entries: entries.slice(1) }])).toHaveLength(10_000);
  });
});
