/**
 * Retention: expired Idempotency-Keys, then logs past their plan's retention (whole partitions
 * where the store can, bounded batches for the rest), then the skip index's summaries they emptied;
 * every RETENTION_INTERVAL, one run at a time.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { PLAN_NAMES } from '../plans/plans.js';
import { deleteExpiredKeys } from './ingest/idempotency.js';
import type { LogStore } from './store/index.js';

export function createRetention(deps: {
  db: Db;
  store: Pick<LogStore, 'expireWhole' | 'projectsWithLogsBefore' | 'deleteOlderThan' | 'deleteBlocksBefore' | 'maintain'>;
  config: Pick<Config, 'retentionDays' | 'retentionIntervalMs'>;
  now: () => number;
  log: FastifyBaseLogger;
}) {
  const { db, store, config, now, log } = deps;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  /** Deletes logs past their plan's retention, in bounded batches, keeping logCount exact. */
  async function runRetention(batch = 5000): Promise<number> {
    await deleteExpiredKeys(db, now());
    // Whole stretches first where the store can (PostgreSQL's daily partitions); the batches below take what is left.
    let total = await store.expireWhole();
    for (const plan of PLAN_NAMES) {
      const cutoff = now() - config.retentionDays[plan] * 86_400_000;
      for (const projectId of await store.projectsWithLogsBefore(plan, cutoff)) {
        for (;;) {
          const n = await store.deleteOlderThan(projectId, cutoff, batch);
          total += n;
          if (n < batch) break;
          await new Promise((r) => setImmediate(r));
        }
      }
    }
    // Summaries of blocks whose every log is gone, by batches or with a partition (the others
    // only say "maybe" more often).
    for (const plan of PLAN_NAMES) await store.deleteBlocksBefore(plan, now() - config.retentionDays[plan] * 86_400_000);
    await store.maintain();
    if (total > 0) log.info({ deleted: total }, 'retention deleted expired logs');
    return total;
  }

  return {
    runRetention,
    start(): void {
      // The store's upkeep in the background (a first run may make a year of partitions); stop() waits for it.
      running = store.maintain().finally(() => (running = undefined));
      timer = setInterval(() => {
        running ??= runRetention()
          .catch((err: unknown) => log.warn({ err }, 'retention failed'))
          .finally(() => (running = undefined));
      }, config.retentionIntervalMs);
      timer.unref();
    },
    /** Stops the timer and waits for a run under way. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
