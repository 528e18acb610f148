/**
 * Packs blocks of logs on a thread of their own (pack.worker.ts): started on first use, stopped
 * with the store; the thread is not kept alive while nothing is asked of it.
 */
import { Worker } from 'node:worker_threads';
import { threadModule } from '../../../../thread-module.js';
import type { PackedLog } from './format.js';

export interface Packer {
  pack(logs: PackedLog[]): Promise<Uint8Array>;
  close(): Promise<void>;
}

export function createPacker(): Packer {
  const pending = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let worker: Worker | undefined;

  function start(): Worker {
    const { url, execArgv } = threadModule(import.meta.url, './pack.worker');
    // A block's logs at a time: a few MB at most.
    const w = new Worker(url, { execArgv, resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 } });
    w.on('message', (msg: { id: number; pack?: Uint8Array; error?: string }) => {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (pending.size === 0) w.unref();
      if (msg.error !== undefined || !msg.pack) p.reject(new Error(`packer: ${msg.error ?? 'no pack'}`));
      else p.resolve(msg.pack);
    });
    const fail = (err: Error) => {
      worker = undefined;
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`packer thread exited (${code})`)));
    return w;
  }

  return {
    pack(logs) {
      worker ??= start();
      worker.ref();
      const id = nextId++;
      const w = worker;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage({ id, logs });
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
