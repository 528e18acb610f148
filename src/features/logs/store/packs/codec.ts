/**
 * The codec a pack's body is compressed with, named by one byte in the pack's header so that packs
 * written with one codec stay readable after the default changes. Compression runs on libuv's
 * thread pool (zlib's asynchronous calls), never on the event loop. So does decompression for
 * reads (`unpackSliced`): a pack of realistic logs is ~1.6 MB of text, a few milliseconds' work, but
 * one of a tenant's large logs may be 32 MiB, which brotli takes 40 to 300 ms to give back (and it
 * may come from a pack of a few KB); its decoding then goes a slice per turn (format.ts).
 */
import buffer from 'node:buffer';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { decodeBody, decodeBodySliced, encodeBody, header, readHeader, type PackedLog } from './format.js';

export const CODEC_NONE = 0;
export const CODEC_BROTLI = 1;

const brotliCompress = promisify(zlib.brotliCompress);
/** Output a decompression hands over at a time, from the thread pool. */
const DECOMPRESS_CHUNK = 256 * 1024;

/**
 * A brotli body of `rawLength` bytes, decompressed on the thread pool, each piece copied into place
 * as it comes (zlib.brotliDecompress would join the pieces at the end: one copy of the whole body
 * in one turn, 40 to 150 ms for 32 MiB on a busy machine).
 */
function brotliDecompressInPieces(compressed: Uint8Array, rawLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (rawLength > buffer.constants.MAX_LENGTH) {
      reject(new Error('pack: body length out of range'));
      return;
    }
    const out = Buffer.allocUnsafe(rawLength);
    let at = 0;
    const stream = zlib.createBrotliDecompress({ chunkSize: DECOMPRESS_CHUNK });
    stream.on('data', (piece: Buffer) => {
      if (at + piece.length > rawLength) {
        stream.destroy(new Error('pack: body length differs from its header'));
        return;
      }
      piece.copy(out, at);
      at += piece.length;
    });
    stream.on('error', reject);
    stream.on('end', () => (at === rawLength ? resolve(out) : reject(new Error('pack: body length differs from its header'))));
    stream.end(compressed);
  });
}

const brotliOptions = (size: number): zlib.BrotliOptions => ({
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [zlib.constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size,
  },
});

/** Brotli quality: see docs/storage.md for the measurements behind it. */
const BROTLI_QUALITY = 5;
/** 16 MiB window: a whole pack's column of urls or messages is within reach. */
const BROTLI_WINDOW = 24;

/** The pack of `logs`: header and compressed body. */
export async function pack(logs: readonly PackedLog[]): Promise<Buffer> {
  const body = encodeBody(logs);
  const compressed = await brotliCompress(body, brotliOptions(body.length));
  return Buffer.concat([header(CODEC_BROTLI, body.length), compressed]);
}

/** pack(), on the calling thread: for a thread of its own (the SQLite writer rewriting a pack for retention). */
export function packSync(logs: readonly PackedLog[]): Buffer {
  const body = encodeBody(logs);
  return Buffer.concat([header(CODEC_BROTLI, body.length), zlib.brotliCompressSync(body, brotliOptions(body.length))]);
}

/**
 * The logs of a pack, in the order they were packed, with the event loop free meanwhile: the body
 * decompressed on libuv's thread pool, then decoded a bounded slice per turn (format.ts
 * decodeBodySliced). What reads use.
 */
export async function unpackSliced(bytes: Uint8Array): Promise<PackedLog[]> {
  const { codec, rawLength, bodyAt } = readHeader(bytes);
  const compressed = bytes.subarray(bodyAt);
  let body: Uint8Array;
  if (codec === CODEC_NONE) body = compressed;
  else if (codec === CODEC_BROTLI) body = await brotliDecompressInPieces(compressed, rawLength);
  else throw new Error(`pack: unknown codec ${codec}`);
  if (body.length !== rawLength) throw new Error('pack: body length differs from its header');
  return decodeBodySliced(body);
}

/** The logs of a pack, in the order they were packed, in one go on the calling thread: for a thread no event loop waits on (the SQLite writer's retention). */
export function unpack(bytes: Uint8Array): PackedLog[] {
  const { codec, rawLength, bodyAt } = readHeader(bytes);
  const compressed = bytes.subarray(bodyAt);
  let body: Uint8Array;
  if (codec === CODEC_NONE) body = compressed;
  else if (codec === CODEC_BROTLI) body = zlib.brotliDecompressSync(compressed, { maxOutputLength: rawLength });
  else throw new Error(`pack: unknown codec ${codec}`);
  if (body.length !== rawLength) throw new Error('pack: body length differs from its header');
  return decodeBody(body);
}
