/**
 * The skip index's builder: in the background, off the commit path, it summarises every complete
 * block of `blockLogs` committed logs per project, in seq order. On PostgreSQL each block is built
 * under a transaction-scoped advisory lock, so one node builds at a time and a node that dies mid-way
 * leaves nothing half-written (the summary and its filter are one transaction). A block nobody has
 * summarised yet is simply read by searches.
 */
import { sql } from 'kysely';
import { isPostgres } from '../../../db/lock.js';
import type { Db } from '../../../db/types.js';
import { projectsBehind, saveSummary, summarise } from './store.js';

/** Advisory lock key of the builder (any constant not used elsewhere). */
const BUILDER_LOCK = 0x6c6f67_6978; // "logix"

export interface IndexBuilder {
  /** Builds what is due, within `budgetMs`; returns how many blocks it summarised. */
  runOnce(budgetMs?: number): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export function createIndexBuilder(db: Db, options: { blockLogs: number; intervalMs: number; now: () => number; log: { warn(obj: object, msg: string): void } }): IndexBuilder {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopped = false;

  async function buildOne(projectId: string, first: number, last: number): Promise<boolean> {
    if (!isPostgres(db)) {
      const s = await summarise(db, projectId, first, last);
      // One transaction: a process killed mid-save leaves the block without a summary, never half of one.
      await db.transaction().execute((tx) => saveSummary(tx, projectId, s, options.now()));
      return true;
    }
    return db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${BUILDER_LOCK}) as ok`.execute(tx);
      if (!rows[0]?.ok) return false;
      const s = await summarise(tx, projectId, first, last);
      await saveSummary(tx, projectId, s, options.now());
      return true;
    });
  }

  /**
   * Round robin: one block per project that is behind, then again, until nothing is due or the
   * budget is spent; so a project with a long backlog (a bulk load) does not hold back the others,
   * and one whose block fails to build is logged and passed over instead of stopping the rest.
   */
  async function run(budgetMs: number): Promise<number> {
    const until = Date.now() + budgetMs;
    let built = 0;
    let due = await projectsBehind(db, options.blockLogs, 100);
    while (due.length > 0) {
      const next: typeof due = [];
      for (const p of due) {
        if (stopped || Date.now() > until) return built;
        try {
          if (!(await buildOne(p.id, p.next, p.next + options.blockLogs - 1))) return built; // another node is building
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

  return {
    runOnce(budgetMs = 60_000) {
      running ??= run(budgetMs).finally(() => {
        running = undefined;
      });
      return running;
    },
    start() {
      timer = setInterval(() => {
        if (running) return;
        this.runOnce(options.intervalMs * 5).catch((err) => options.log.warn({ err }, 'the search index builder failed; it retries'));
      }, options.intervalMs);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
