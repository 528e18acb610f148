/**
 * The packer's thread: encodes a block's logs column by column and compresses them (codec.ts), so
 * that neither the encoding nor the codec's work runs on the event loop. Answers `{id, pack}` or
 * `{id, error}` to each `{id, logs}` message.
 */
import { parentPort } from 'node:worker_threads';
import { pack } from './codec.js';
import type { PackedLog } from './format.js';

parentPort!.on('message', (msg: { id: number; logs: PackedLog[] }) => {
  pack(msg.logs).then(
    (bytes) => {
      // Handed over, not copied: the buffer is this thread's own.
      const out = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice();
      parentPort!.postMessage({ id: msg.id, pack: out }, [out.buffer]);
    },
    (err: unknown) => parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
