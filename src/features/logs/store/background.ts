/**
 * A background job of the store (the skip index's builder, the compactor): `run` does what is due
 * within a time budget and says how much it did; one run at a time, every `intervalMs` once
 * started, each with a budget of five intervals; `stop` lets the run in progress finish.
 */
export interface BackgroundJob {
  /** Does what is due, within `budgetMs`; how much it did. */
  runOnce(budgetMs?: number): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export function createBackgroundJob(run: (budgetMs: number, stopped: () => boolean) => Promise<number>, options: { intervalMs: number; failed: (err: unknown) => void }): BackgroundJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopped = false;
  const runOnce = (budgetMs = 60_000) => {
    running ??= run(budgetMs, () => stopped).finally(() => {
      running = undefined;
    });
    return running;
  };
  return {
    runOnce,
    start() {
      timer = setInterval(() => {
        if (running) return;
        runOnce(options.intervalMs * 5).catch(options.failed);
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
