/**
 * Which codec for compressed blocks (issue 27): blocks of 4,096 realistic logs (realistic-logs.ts)
 * encoded column by column, their message and metadata columns compressed with each candidate,
 * and the whole NDJSON block compressed the same way (row-wise) for comparison.
 *
 *   npm run bench:codec -- [--blocks 24] [--passes 3] [--zstd-from <dir>] [--no-row-wise]
 *
 * Columns (a simple encoding, enough to measure with): timestamps as zigzag varint deltas, levels
 * and sources as small dictionaries with one byte per log, messages as length-prefixed strings,
 * metadata as length-prefixed JSON texts. Only the message and metadata columns are compressed;
 * the three small ones are counted as they are.
 *
 * Codecs: Node's own deflate (levels 6, 9) and brotli (qualities 4, 6, 9; generic and text mode;
 * the default 4 MiB window and a 16 MiB one; every brotli run is given the input's size as
 * BROTLI_PARAM_SIZE_HINT), and zstd at levels 3, 9, 15, 19 from the packages
 * @toondepauw/node-zstd (native, prebuilt per platform) and @bokuweb/zstd-wasm (WebAssembly). The
 * zstd packages are not Loglane's dependencies: each is loaded from the project if it is installed,
 * else from the node_modules directory `--zstd-from` names, else skipped with a message. With the
 * zstd command-line tool on the PATH, a dictionary per column is trained (`zstd --train`) on other
 * blocks than the measured ones, and the native package is measured with it too.
 *
 * For each codec: ratio (compressed block / the block's raw NDJSON bytes), compress and decompress
 * speed in MB/s of raw NDJSON (one core, the codec's own time, not the column encoding's), and the
 * median time to decompress one block. Each block goes through each codec `--passes` times and
 * its fastest pass counts: on a shared 2-core machine a single pass is as much a measure of the
 * neighbours as of the codec. Every result is decompressed and compared with its input.
 *
 * Results: bench/results/latest-codec.json.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { optionsOrExit } from './options.js';
import { RealisticLogs, toNdjson, type RealisticLog } from './realistic-logs.js';
import { fmt, percentile, round, table, writeResults } from './report.js';
import { parseArgs } from 'node:util';

const BLOCK_LOGS = 4096;
const SEED = 27;
/** The dictionaries learn from blocks of another seed, so they are never tested on what they saw. */
const TRAIN_SEED = 2700;
const TRAIN_BLOCKS = 2;
const DICT_BYTES = 64 * 1024;

const USAGE = `Usage: npm run bench:codec -- [options]

  --blocks <n>                     blocks of 4,096 logs to measure on (default 24)
  --passes <n>                     times each block goes through each codec; the fastest counts
                                   (default 3)
  --zstd-from <dir>                a node_modules directory holding the zstd packages, when the
                                   project does not
  --no-row-wise                    leave out the row-wise (whole NDJSON block) runs
  -h, --help                       show this help`;

interface Options {
  blocks: number;
  passes: number;
  zstdFrom: string | undefined;
  rowWise: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: { blocks: { type: 'string', default: '24' }, passes: { type: 'string', default: '3' }, 'zstd-from': { type: 'string' }, 'no-row-wise': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const blocks = Number(values.blocks);
  if (!Number.isInteger(blocks) || blocks < 1) throw new Error(`--blocks must be a whole number of at least 1 (got "${values.blocks}")`);
  const passes = Number(values.passes);
  if (!Number.isInteger(passes) || passes < 1) throw new Error(`--passes must be a whole number of at least 1 (got "${values.passes}")`);
  return { blocks, passes, zstdFrom: values['zstd-from'], rowWise: !values['no-row-wise'] };
}

// ---- The column encoding -------------------------------------------------------------------

class Writer {
  #chunks: Buffer[] = [];
  #buf = Buffer.alloc(64 * 1024);
  #at = 0;

  #room(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    this.#chunks.push(this.#buf.subarray(0, this.#at));
    this.#buf = Buffer.alloc(Math.max(64 * 1024, n));
    this.#at = 0;
  }

  varint(value: number): void {
    this.#room(10);
    let v = value;
    while (v >= 0x80) {
      this.#buf[this.#at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#at++] = v;
  }

  byte(value: number): void {
    this.#room(1);
    this.#buf[this.#at++] = value;
  }

  text(value: string): void {
    const bytes = Buffer.byteLength(value);
    this.varint(bytes);
    this.#room(bytes);
    this.#at += this.#buf.write(value, this.#at, 'utf8');
  }

  done(): Buffer {
    return Buffer.concat([...this.#chunks, this.#buf.subarray(0, this.#at)]);
  }
}

const zigzag = (n: number) => (n >= 0 ? n * 2 : -n * 2 - 1);

/** A column of few distinct strings: the strings, then one byte per log naming one. */
function dictionaryColumn(values: string[]): Buffer {
  const ids = new Map<string, number>();
  for (const v of values) if (!ids.has(v)) ids.set(v, ids.size);
  if (ids.size > 255) throw new Error('a dictionary column holds at most 255 distinct values');
  const w = new Writer();
  w.varint(ids.size);
  for (const v of ids.keys()) w.text(v);
  for (const v of values) w.byte(ids.get(v)!);
  return w.done();
}

interface Columns {
  timestamps: Buffer;
  levels: Buffer;
  sources: Buffer;
  messages: Buffer;
  metadata: Buffer;
}

function encodeColumns(logs: RealisticLog[]): Columns {
  const ts = new Writer();
  let previous = 0;
  for (const log of logs) {
    const ms = Date.parse(log.timestamp);
    ts.varint(zigzag(ms - previous));
    previous = ms;
  }
  const messages = new Writer();
  const metadata = new Writer();
  for (const log of logs) {
    messages.text(log.message);
    metadata.text(JSON.stringify(log.metadata));
  }
  return { timestamps: ts.done(), levels: dictionaryColumn(logs.map((l) => l.level)), sources: dictionaryColumn(logs.map((l) => l.source)), messages: messages.done(), metadata: metadata.done() };
}

// ---- The codecs ----------------------------------------------------------------------------

interface Codec {
  name: string;
  /** Which column or input a dictionary codec is made for; undefined: any. */
  compress(input: Buffer, column: 'messages' | 'metadata' | 'rows'): Buffer;
  decompress(input: Buffer, column: 'messages' | 'metadata' | 'rows'): Buffer;
  /** Dictionary codecs are measured column-wise only (their dictionaries are per column). */
  columnsOnly?: boolean;
}

function brotli(quality: number, text: boolean, lgwin: number): Codec {
  const label = `brotli ${quality}${text ? ' text' : ''}${lgwin !== 22 ? ` lgwin ${lgwin}` : ''}`;
  return {
    name: label,
    compress: (input) =>
      zlib.brotliCompressSync(input, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
          [zlib.constants.BROTLI_PARAM_MODE]: text ? zlib.constants.BROTLI_MODE_TEXT : zlib.constants.BROTLI_MODE_GENERIC,
          [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: input.length,
        },
      }),
    decompress: (input) => zlib.brotliDecompressSync(input),
  };
}

function deflate(level: number): Codec {
  return { name: `deflate ${level}`, compress: (input) => zlib.deflateRawSync(input, { level }), decompress: (input) => zlib.inflateRawSync(input) };
}

interface NativeZstd {
  Encoder: new (level: number, dictionary?: Buffer) => { encodeSync(data: Buffer): Buffer };
  Decoder: new (dictionary?: Buffer) => { decodeSync(data: Buffer): Buffer };
}
interface WasmZstd {
  init(): Promise<void>;
  compress(buf: Uint8Array, level?: number): Uint8Array;
  decompress(buf: Uint8Array): Uint8Array;
}

/** A package from the project's own dependencies, else from `--zstd-from`; undefined when neither has it. */
async function load<T>(name: string, from: string | undefined): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch {
    if (from === undefined) return undefined;
    try {
      return createRequire(path.join(path.resolve(from), 'noop.js'))(name) as T;
    } catch {
      return undefined;
    }
  }
}

function nativeZstd(z: NativeZstd, level: number, dictionaries?: Record<string, Buffer>): Codec {
  const plain = { encoder: new z.Encoder(level), decoder: new z.Decoder() };
  const byColumn = dictionaries && Object.fromEntries(Object.entries(dictionaries).map(([column, dict]) => [column, { encoder: new z.Encoder(level, dict), decoder: new z.Decoder(dict) }]));
  const pick = (column: string) => byColumn?.[column] ?? plain;
  return {
    name: `zstd ${level} native${dictionaries ? ' + dictionary' : ''}`,
    compress: (input, column) => pick(column).encoder.encodeSync(input),
    decompress: (input, column) => pick(column).decoder.decodeSync(input),
    columnsOnly: dictionaries !== undefined,
  };
}

function wasmZstd(z: WasmZstd, level: number): Codec {
  return { name: `zstd ${level} wasm`, compress: (input) => Buffer.from(z.compress(input, level)), decompress: (input) => Buffer.from(z.decompress(input)) };
}

/**
 * One dictionary per column, trained by the zstd command-line tool on each value of the training
 * blocks as a sample (zstd learns best from samples the size of what it will meet). Undefined when
 * the tool is not installed.
 */
function trainDictionaries(blocks: { logs: RealisticLog[]; columns: Columns }[]): Record<string, Buffer> | undefined {
  try {
    execFileSync('zstd', ['--version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-codec-'));
  try {
    const samples: Record<string, string[]> = {
      messages: blocks.flatMap((b) => b.logs.map((l) => l.message)),
      metadata: blocks.flatMap((b) => b.logs.map((l) => JSON.stringify(l.metadata))),
    };
    const out: Record<string, Buffer> = {};
    for (const [column, values] of Object.entries(samples)) {
      const sampleDir = path.join(dir, column);
      fs.mkdirSync(sampleDir);
      values.forEach((v, i) => fs.writeFileSync(path.join(sampleDir, String(i)), v));
      const dictFile = path.join(dir, `${column}.dict`);
      execFileSync('zstd', ['--train', '-r', sampleDir, '-o', dictFile, `--maxdict=${DICT_BYTES}`, '-q'], { stdio: 'ignore' });
      out[column] = fs.readFileSync(dictFile);
    }
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- Measuring -----------------------------------------------------------------------------

interface Block {
  logs: RealisticLog[];
  ndjson: Buffer;
  columns: Columns;
}

interface Row {
  codec: string;
  layout: 'columns' | 'rows';
  ratio: number;
  compressMBs: number;
  decompressMBs: number;
  /** Median time to decompress one block (both columns, or the whole NDJSON), ms. */
  blockDecompressMs: number;
}

function measure(codec: Codec, layout: 'columns' | 'rows', blocks: Block[], passes: number): Row {
  const parts = (b: Block): [Buffer, 'messages' | 'metadata' | 'rows'][] =>
    layout === 'rows' ? [[b.ndjson, 'rows']] : [[b.columns.messages, 'messages'], [b.columns.metadata, 'metadata']];
  // One untimed block first, so a lazy start (a WebAssembly memory growing, a first allocation) is not timed.
  for (const [input, column] of parts(blocks[0]!)) codec.decompress(codec.compress(input, column), column);

  let raw = 0;
  let stored = 0;
  let compressMs = 0;
  let decompressMs = 0;
  const perBlock: number[] = [];
  for (const block of blocks) {
    raw += block.ndjson.length;
    if (layout === 'columns') stored += block.columns.timestamps.length + block.columns.levels.length + block.columns.sources.length;
    let blockMs = 0;
    for (const [input, column] of parts(block)) {
      let packed: Buffer = Buffer.alloc(0);
      let back: Buffer = Buffer.alloc(0);
      let bestCompress = Number.POSITIVE_INFINITY;
      let bestDecompress = Number.POSITIVE_INFINITY;
      for (let pass = 0; pass < passes; pass++) {
        let t = performance.now();
        packed = codec.compress(input, column);
        bestCompress = Math.min(bestCompress, performance.now() - t);
        t = performance.now();
        back = codec.decompress(packed, column);
        bestDecompress = Math.min(bestDecompress, performance.now() - t);
      }
      compressMs += bestCompress;
      decompressMs += bestDecompress;
      blockMs += bestDecompress;
      stored += packed.length;
      if (!back.equals(input)) throw new Error(`${codec.name}: a ${column} input did not survive the round trip`);
    }
    perBlock.push(blockMs);
  }
  perBlock.sort((a, b) => a - b);
  return { codec: codec.name, layout, ratio: stored / raw, compressMBs: raw / 1e6 / (compressMs / 1000), decompressMBs: raw / 1e6 / (decompressMs / 1000), blockDecompressMs: percentile(perBlock, 50)! };
}

async function main(): Promise<void> {
  const options = optionsOrExit(parseOptions, USAGE);
  const cpu = /^model name\s*:\s*(.*)$/m.exec(fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  console.log(`Codec benchmark: ${options.blocks} blocks × ${fmt(BLOCK_LOGS)} realistic logs, best of ${options.passes} passes; ${os.cpus().length} CPUs (${cpu}), Node ${process.version}`);

  const make = (seed: number, count: number): Block[] => {
    const stream = new RealisticLogs({ seed, startMs: Date.UTC(2026, 10, 1) });
    return Array.from({ length: count }, () => {
      const logs = stream.batch(BLOCK_LOGS).logs;
      return { logs, ndjson: toNdjson(logs), columns: encodeColumns(logs) };
    });
  };
  const blocks = make(SEED, options.blocks);
  const raw = blocks.reduce((n, b) => n + b.ndjson.length, 0);
  const columnBytes = (key: keyof Columns) => blocks.reduce((n, b) => n + b.columns[key].length, 0);
  let encodeMs = performance.now();
  for (const b of blocks) encodeColumns(b.logs);
  encodeMs = performance.now() - encodeMs;
  console.log(
    `raw NDJSON ${fmt(raw / 1e6, 1)} MB (${fmt(raw / blocks.length / 1e6, 2)} MB a block, ${fmt(raw / (blocks.length * BLOCK_LOGS))} bytes a log); columns before compression: ` +
      (['timestamps', 'levels', 'sources', 'messages', 'metadata'] as const).map((k) => `${k} ${fmt((100 * columnBytes(k)) / raw, 1)} %`).join(', ') +
      `; encoding the columns runs at ${fmt(raw / 1e6 / (encodeMs / 1000))} MB/s`,
  );

  const codecs: Codec[] = [deflate(6), deflate(9)];
  for (const q of [4, 6, 9]) codecs.push(brotli(q, false, 22));
  codecs.push(brotli(6, true, 22), brotli(9, true, 22), brotli(6, false, 24), brotli(9, true, 24));

  const native = await load<NativeZstd>('@toondepauw/node-zstd', options.zstdFrom);
  if (native) for (const level of [3, 9, 15, 19]) codecs.push(nativeZstd(native, level));
  else console.log('@toondepauw/node-zstd is not installed (see --zstd-from): skipped');
  const wasm = await load<WasmZstd>('@bokuweb/zstd-wasm', options.zstdFrom);
  if (wasm) {
    await wasm.init();
    for (const level of [3, 9, 15, 19]) codecs.push(wasmZstd(wasm, level));
  } else console.log('@bokuweb/zstd-wasm is not installed (see --zstd-from): skipped');
  if (native) {
    const dictionaries = trainDictionaries(make(TRAIN_SEED, TRAIN_BLOCKS));
    if (dictionaries) for (const level of [3, 9, 19]) codecs.push(nativeZstd(native, level, dictionaries));
    else console.log('the zstd command-line tool is not installed: no dictionaries trained, the dictionary runs skipped');
  }

  const rows: Row[] = [];
  for (const codec of codecs) {
    for (const layout of ['columns', 'rows'] as const) {
      if (layout === 'rows' && (!options.rowWise || codec.columnsOnly)) continue;
      process.stderr.write(`  ${codec.name}, ${layout}…\n`);
      rows.push(measure(codec, layout, blocks, options.passes));
    }
  }

  console.log();
  console.log(
    table(
      ['codec', 'layout', 'ratio', 'compress MB/s', 'decompress MB/s', 'decompress ms/block (median)'],
      rows.map((r) => [r.codec, r.layout === 'columns' ? 'column-wise' : 'row-wise', fmt(r.ratio, 4), fmt(r.compressMBs, 1), fmt(r.decompressMBs, 0), fmt(r.blockDecompressMs, 2)]),
      [2, 3, 4, 5],
    ),
  );
  writeResults('codec', {
    node: process.version,
    cpus: os.cpus().length,
    cpu,
    blocks: options.blocks,
    passes: options.passes,
    blockLogs: BLOCK_LOGS,
    rawBytes: raw,
    columnShares: Object.fromEntries((['timestamps', 'levels', 'sources', 'messages', 'metadata'] as const).map((k) => [k, round(columnBytes(k) / raw, 4)])),
    results: rows.map((r) => ({ ...r, ratio: round(r.ratio, 4), compressMBs: round(r.compressMBs, 1), decompressMBs: round(r.decompressMBs, 0), blockDecompressMs: round(r.blockDecompressMs, 2) })),
  });
}

await main();
