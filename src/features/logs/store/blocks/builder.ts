/**
 * The skip index's builder: in the background, off the commit path, it summarises every complete
 * block of `blockLogs` committed logs per project, in seq order. The store builds each block as one
 * transaction, so a node that dies mid-way leaves nothing half-written, and one node at a time
 * (on PostgreSQL, under an advisory lock). A block nobody has summarised yet is simply read by
 * searches.
 */
import { createBackgroundJob, type BackgroundJob } from '../background.js';
import type { LogStore } from '../index.js';

export type IndexBuilder = BackgroundJob;

export function createIndexBuilder(store: Pick<LogStore, 'projectsBehind' | 'buildBlock'>, options: { blockLogs: number; intervalMs: number; log: { warn(obj: object, msg: string): void } }): IndexBuilder {
  /**
   * Round robin: one block per project that is behind, then again, until nothing is due or the
   * budget is spent; so a project with a long backlog (a bulk load) does not hold back the others,
   * and one whose block fails to build is logged and passed over instead of stopping the rest.
   */
  async function run(budgetMs: number, stopped: () => boolean): Promise<number> {
    const until = Date.now() + budgetMs;
    let built = 0;
    let due = await store.projectsBehind(options.blockLogs, 100);
    while (due.length > 0) {
      const next: typeof due = [];
      for (const p of due) {
        if (stopped() || Date.now() > until) return built;
        try {
          if (!(await store.buildBlock(p.id, p.next, p.next + options.blockLogs - 1))) return built; // another node is building
        } catch (err) {
          options.log.warn({ err, projectId: p.id, firstSeq: p.next }, 'the search index builder could not summarise a block; it retries later');
          continue;
        }
        built++;
        p.next += options.blockLogs;
        if (p.next + options.blockLogs - 1 <= p.lastSeq) next.push(p);
        // Let requests in between blocks.
        await new Promise((r) => setImmediate(r));
      }
      due = next;
    }
    return built;
  }

  return createBackgroundJob(run, { intervalMs: options.intervalMs, failed: (err) => options.log.warn({ err }, 'the search index builder failed; it retries') });
}
