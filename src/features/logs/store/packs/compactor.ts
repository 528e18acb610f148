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
  store: Pick<LogStore, 'blocksToPack' | 'preparePack' | 'savePack'>,
  options: { compactAfterMs: number; intervalMs: number; now: () => number; log: { warn(obj: object, msg: string): void } },
): Compactor {
  type Due = Awaited<ReturnType<typeof store.blocksToPack>>[number];
  /** A block read and packed, or why not (its failure is logged when its turn to be saved comes). */
  const prepare = (b: Due) => store.preparePack(b.projectId, b.firstSeq, b.lastSeq, { minTs: b.minTs, maxTs: b.maxTs }).then(
    (pack) => ({ pack }),
    (err: unknown) => ({ err }),
  );

  /**
   * The blocks due, oldest summaries first, in a pipeline of two: the next block is read and packed
   * (the read on the event loop, the packing on the packer's thread) while this one is saved (on
   * SQLite the writer's thread, on PostgreSQL the connection), so that each part waits less on the
   * others. One save at a time: on PostgreSQL a save holds the packers' lock.
   */
  async function run(budgetMs: number, stopped: () => boolean): Promise<number> {
    const until = Date.now() + budgetMs;
    let packed = 0;
    for (;;) {
      const due = await store.blocksToPack(options.now() - options.compactAfterMs, 64);
      if (due.length === 0) return packed;
      let progress = 0;
      let next = prepare(due[0]!);
      for (let i = 0; i < due.length; i++) {
        const b = due[i]!;
        const ready = await next;
        if (stopped() || Date.now() > until) return packed;
        if (i + 1 < due.length) next = prepare(due[i + 1]!);
        try {
          if ('err' in ready) throw ready.err;
          // Too large to pack: marked to stay in rows by preparePack, and not due again.
          if (ready.pack === undefined) continue;
          const done = await store.savePack(ready.pack);
          if (done === 'busy') {
            await next; // another node is packing: what was prepared is dropped
            return packed;
          }
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
