/**
 * Snappy's block format, decompressed (what Promtail, Grafana Alloy and winston-loki send Loki's
 * protobuf push in). The block states its decompressed length first: past `maxBytes` it is refused
 * before anything is allocated, and every copy is checked against what was written, so no input
 * (a "snappy bomb", a truncated or forged block) costs more than `maxBytes` or ends other than in
 * the block or a SnappyError.
 */
export class SnappyError extends Error {}

/**
 * The decompressed length a block states in its first bytes (a varint of at most 32 bits), and where
 * its data begins: known before anything is decompressed, so a request's claim on the in-flight
 * budget can be its decoded size before the work is done.
 */
export function snappyLength(input: Uint8Array): { length: number; dataAt: number } {
  let at = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (at >= input.length || shift > 28) throw new SnappyError('snappy: bad length');
    const b = input[at++]!;
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  return { length, dataAt: at };
}

export function snappyUncompress(input: Uint8Array, maxBytes: number): Buffer {
  const stated = snappyLength(input);
  const length = stated.length;
  let at = stated.dataAt;
  if (length > maxBytes) throw new SnappyError(`snappy: the block holds ${length} bytes, more than ${maxBytes}`);
  const out = Buffer.allocUnsafe(length);
  let written = 0;
  while (at < input.length) {
    const tag = input[at++]!;
    const kind = tag & 3;
    if (kind === 0) {
      // A literal: its length in the tag, or in the 1–4 bytes after it.
      let n = tag >>> 2;
      if (n >= 60) {
        const bytes = n - 59;
        if (at + bytes > input.length) throw new SnappyError('snappy: truncated literal length');
        n = 0;
        for (let i = 0; i < bytes; i++) n += input[at + i]! * 2 ** (8 * i);
        at += bytes;
      }
      n += 1;
      if (at + n > input.length || written + n > length) throw new SnappyError('snappy: literal past the end');
      out.set(input.subarray(at, at + n), written);
      at += n;
      written += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      if (at >= input.length) throw new SnappyError('snappy: truncated copy');
      n = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | input[at++]!;
    } else {
      const bytes = kind === 2 ? 2 : 4;
      if (at + bytes > input.length) throw new SnappyError('snappy: truncated copy');
      n = (tag >>> 2) + 1;
      offset = 0;
      for (let i = 0; i < bytes; i++) offset += input[at + i]! * 2 ** (8 * i);
      at += bytes;
    }
    if (offset === 0 || offset > written || written + n > length) throw new SnappyError('snappy: copy out of range');
    // Copies may overlap what they write (a run): byte by byte then.
    if (offset >= n) out.copyWithin(written, written - offset, written - offset + n);
    else for (let i = 0; i < n; i++) out[written + i] = out[written - offset + i]!;
    written += n;
  }
  if (written !== length) throw new SnappyError('snappy: the block is shorter than it says');
  return out;
}
