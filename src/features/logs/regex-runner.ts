import { threadModule } from '../../thread-module.js';
import { Worker } from 'node:worker_threads';
import { INLINE_COST, type Pattern } from './pattern.js';
import type { RegexMessage, RegexReply, RegexThreadData } from './regex-runner.worker.js';

/**
 * One regular-expression test to run: does `pattern` match `text`, or (with `texts`) any of them?
 * Several texts are one test: the elements of one metadata array, decided together, whose cost is
 * their sum (see decideWithRegexes).
 */
export type RegexTest = { pattern: Pattern; text: string } | { pattern: Pattern; texts: readonly string[] };

/**
 * The most steps one test of several texts is made of (decideWithRegexes cuts longer runs): 16
 * inline budgets, a quarter of the worst single test (the largest program over the longest
 * message), so a run stays far inside TEST_HARD_LIMIT_MS even on a loaded machine.
 */
export const MAX_TEST_STEPS = 16 * INLINE_COST;

const textsOf = (t: RegexTest): readonly string[] => ('texts' in t ? t.texts : [t.text]);

/** Longest stretch the event loop spends on inline tests before it lets other work in. */
export const SLICE_MS = 8;
/**
 * The most one test may take in the worker before the worker is stopped (and the test left
 * undecided). With MAX_PROGRAM_SIZE a test's worst case is about a second on this hardware; this is
 * the backstop for a machine far slower than that.
 */
export const TEST_HARD_LIMIT_MS = 5000;
/**
 * The most a new worker thread may take to load its module before it is stopped. Its start does
 * not count against the first test's TEST_HARD_LIMIT_MS: under the TypeScript sources (tests) the
 * thread compiles its module first, which takes a second or more on a loaded machine.
 */
const THREAD_START_LIMIT_MS = 30_000;
/**
 * Tests waiting for the worker: one owner's (a project's), and all owners' together. Past either,
 * a new costly test is left undecided at once. The cap per owner keeps one tenant from filling the
 * queue and getting every other tenant's tests refused; the total bounds the whole.
 */
export const MAX_WAITING_PER_OWNER = 10_000;
export const MAX_WAITING = 100_000;
/** Compiled patterns the worker keeps, least recently used evicted first. */
const WORKER_CACHE = 200;

/** The most regular-expression steps (Pattern.cost) runTests ran on the event loop between two turns of it, for tests. */
export const runnerCounters = { maxStepsPerTurn: 0 };

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The worker thread's module beside this one (regex-runner.worker.ts), started as every thread of
 * the server is (thread-module.ts). `from` is the runner's own URL (a test gives a built one).
 */
export function regexThreadModule(from: string = import.meta.url): { url: URL; execArgv: string[] } {
  return threadModule(from, './regex-runner.worker');
}

interface Job {
  source: string;
  texts: readonly string[];
  deadline: number;
  resolve: (result: boolean | undefined) => void;
}

/**
 * One worker thread for the tests too costly for the event loop. Jobs wait per owner (a project),
 * and the worker takes them round-robin across owners, so one tenant's costly patterns delay
 * another tenant's by at most one test; past `limits` (per owner, in all) a new job is answered
 * undecided at once. A job still waiting at its deadline is answered undecided without running;
 * a test that overruns TEST_HARD_LIMIT_MS stops the worker (a fresh one takes the next job).
 */
export class RegexWorker {
  #worker: Worker | undefined;
  #queues = new Map<string, Job[]>();
  #waiting = 0;
  /** Whether the worker has loaded its module: a test's hard limit runs from then. */
  #ready = false;
  #running: { id: number; job: Job; timer: NodeJS.Timeout | undefined } | undefined;
  #nextId = 1;

  constructor(readonly limits: { perOwner: number; total: number } = { perOwner: MAX_WAITING_PER_OWNER, total: MAX_WAITING }) {}

  /** Whether `source` matches the text, or any of the texts. */
  run(owner: string, source: string, text: string | readonly string[], deadline: number): Promise<boolean | undefined> {
    const texts = typeof text === 'string' ? [text] : text;
    if (this.#waiting >= this.limits.total || Date.now() >= deadline) return Promise.resolve(undefined);
    let queue = this.#queues.get(owner);
    if (queue && queue.length >= this.limits.perOwner) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      if (!queue) this.#queues.set(owner, (queue = []));
      queue.push({ source, texts, deadline, resolve });
      this.#waiting++;
      this.#next();
    });
  }

  #start(): Worker {
    const { url, execArgv } = regexThreadModule();
    const workerData: RegexThreadData = { cacheSize: WORKER_CACHE };
    const w = new Worker(url, { execArgv, workerData, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    w.unref();
    this.#ready = false;
    const starting = setTimeout(() => void w.terminate(), THREAD_START_LIMIT_MS);
    starting.unref();
    w.on('message', (msg: RegexReply) => {
      if ('ready' in msg) {
        clearTimeout(starting);
        if (this.#worker !== w) return;
        this.#ready = true;
        this.#arm();
        return;
      }
      const running = this.#running;
      if (!running || running.id !== msg.id) return;
      clearTimeout(running.timer);
      this.#running = undefined;
      running.job.resolve(msg.result === null ? undefined : msg.result);
      this.#next();
    });
    const lost = () => {
      clearTimeout(starting);
      if (this.#worker !== w) return;
      this.#worker = undefined;
      const running = this.#running;
      if (running) {
        clearTimeout(running.timer);
        this.#running = undefined;
        running.job.resolve(undefined);
      }
      this.#next();
    };
    w.on('error', lost);
    w.on('exit', lost);
    return w;
  }

  /** Takes the next job, round-robin: the first owner's first job, and that owner goes to the back. */
  #take(): Job | undefined {
    for (const [owner, queue] of this.#queues) {
      this.#queues.delete(owner);
      const job = queue.shift()!;
      this.#waiting--;
      if (queue.length > 0) this.#queues.set(owner, queue);
      if (Date.now() < job.deadline) return job;
      job.resolve(undefined);
    }
    return undefined;
  }

  #next(): void {
    if (this.#running) return;
    const job = this.#take();
    if (!job) return;
    const worker = (this.#worker ??= this.#start());
    const id = this.#nextId++;
    this.#running = { id, job, timer: undefined };
    worker.postMessage({ id, source: job.source, texts: job.texts } satisfies RegexMessage);
    this.#arm();
  }

  /** Starts the running test's hard limit, once the worker is ready to run it. */
  #arm(): void {
    const running = this.#running;
    const worker = this.#worker;
    if (!running || running.timer || !this.#ready || !worker) return;
    running.timer = setTimeout(() => {
      // Overran: stop the thread mid-match; 'exit' answers this job undecided and starts the next.
      void worker.terminate();
    }, TEST_HARD_LIMIT_MS);
    running.timer.unref();
  }
}

const worker = new RegexWorker();

/**
 * Runs many regular-expression tests without ever holding the event loop for long: cheap tests
 * (see Pattern.cheap) run here in slices of at most SLICE_MS, with a turn of the event loop between
 * slices; costly ones go to the worker thread, round-robin with other owners' (tenants') work.
 * Answers in order; a test not decided by `deadline` (epoch ms) is `undefined`, and the caller
 * decides what that means (stop and resume later, or refuse).
 */
export async function runTests(tests: readonly RegexTest[], owner: string, deadline: number): Promise<(boolean | undefined)[]> {
  const results: (boolean | undefined)[] = new Array(tests.length);
  const costly: Promise<void>[] = [];
  let sliceStart = performance.now();
  // Steps run since the last turn: a turn is due past SLICE_MS or past INLINE_COST steps, whichever first.
  let steps = 0;
  for (let i = 0; i < tests.length; i++) {
    const test = tests[i]!;
    const { pattern } = test;
    const texts = textsOf(test);
    let cost = 0;
    for (const text of texts) cost += pattern.cost(text);
    if (cost <= INLINE_COST) {
      if (steps > 0 && steps + cost > INLINE_COST) {
        await yieldToLoop();
        sliceStart = performance.now();
        steps = 0;
        if (Date.now() >= deadline) break;
      }
      results[i] = texts.some((text) => pattern.test(text));
      steps += cost;
      if (steps > runnerCounters.maxStepsPerTurn) runnerCounters.maxStepsPerTurn = steps;
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToLoop();
        sliceStart = performance.now();
        steps = 0;
        if (Date.now() >= deadline) break;
      }
    } else {
      costly.push(worker.run(owner, pattern.source, texts, deadline).then((r) => void (results[i] = r)));
    }
  }
  await Promise.all(costly);
  return results;
}
