/**
 * The compactor: in the background, it packs every summarised block of the skip index whose logs
 * were all received more than COMPACT_AFTER ago (a block is summarised after its last log was
 * committed, so its summary's time bounds its logs' receipt). Each block is packed by the store in
 * one transaction (its pack written, its rows deleted), so a process killed mid-way leaves either
 * the rows or the pack, never both nor neither; on PostgreSQL one node packs at a time.
 */
import { createBackgroundJob, type BackgroundJob } from '../background.js';
import type { LogStore } from '../index.js';

export type Compactor = BackgroundJob;

export function createCompactor(
  store: Pick<LogStore, 'blocksToPack' | 'packBlock'>,
  options: { compactAfterMs: number; intervalMs: number; now: () => number; log: { warn(obj: object, msg: string): void } },
): Compactor {
  async function run(budgetMs: number, stopped: () => boolean): Promise<number> {
    const until = Date.now() + budgetMs;
    let packed = 0;
    for (;;) {
      const due = await store.blocksToPack(options.now() - options.compactAfterMs, 64);
      if (due.length === 0) return packed;
      let progress = 0;
      for (const b of due) {
        if (stopped() || Date.now() > until) return packed;
        try {
          const done = await store.packBlock(b.projectId, b.firstSeq, b.lastSeq);
          if (done === 'busy') return packed; // another node is packing
          if (done === 'packed') {
            packed++;
            progress++;
          }
        } catch (err) {
          options.log.warn({ err, projectId: b.projectId, firstSeq: b.firstSeq }, 'the compactor could not pack a block; it retries later');
        }
        // Let requests in between blocks.
        await new Promise((r) => setImmediate(r));
      }
      if (progress === 0) return packed;
    }
  }

  return createBackgroundJob(run, { intervalMs: options.intervalMs, failed: (err) => options.log.warn({ err }, 'the compactor failed; it retries') });
}
