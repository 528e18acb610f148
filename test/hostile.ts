/**
 * Runs an attack beside a bystander tenant and reports what the bystander saw: every answer to
 * its own small ingest requests, the latency of /healthz probes taken throughout, and the peak
 * RSS of the process (the server runs in it). The hostile-tenant tests assert on what holds on any
 * machine (no 5xx, nothing lost, bounds on memory and work); the time figures are reported only,
 * and `npm run bench:hostile` collects them (LOGLANE_HOSTILE_REPORT names the file each run's
 * report is appended to) for docs/benchmarks.md.
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';
import { waitFor, type TestServer } from './harness.js';

export interface BystanderReport {
  /** Bystander ingest requests sent, and how many were answered 202. */
  requests: number;
  accepted: number;
  /** Logs the bystander had acknowledged (202): every one must be stored. */
  acknowledgedLogs: number;
  /** Answers by status. */
  statuses: Record<number, number>;
  /** Answers the bystander should never see: anything but 2xx, or a 429/503 without Retry-After. */
  bad: string[];
  healthz: { n: number; p50: number; p99: number; max: number; failures: number };
  peakRssMb: number;
  elapsedMs: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Runs `attack` while a bystander project (key `bystanderKey`) sends a batch of 5 logs at a time,
 * one request after another, and /healthz is probed every `probeEveryMs`. Both go on for at least
 * `minMs` and until the attack settles. The attack's own failures are rethrown after the report.
 */
export async function beside<T>(s: TestServer, bystanderKey: string, attack: () => Promise<T>, options: { minMs?: number; probeEveryMs?: number; /** Names the attack in the report `bench:hostile` collects. */ label?: string } = {}): Promise<{ result: T; report: BystanderReport }> {
  // Read once: the loops below must not touch the server's stand-in (useServer) after a test that
  // timed out has had its server closed; they end once the attack settles.
  const { url, engine } = s;
  const minMs = options.minMs ?? 1000;
  const probeEveryMs = options.probeEveryMs ?? 20;
  const started = performance.now();
  let attackDone = false;
  const report: BystanderReport = { requests: 0, accepted: 0, acknowledgedLogs: 0, statuses: {}, bad: [], healthz: { n: 0, p50: 0, p99: 0, max: 0, failures: 0 }, peakRssMb: 0, elapsedMs: 0 };
  const running = () => !attackDone || performance.now() - started < minMs;

  const rss = setInterval(() => {
    report.peakRssMb = Math.max(report.peakRssMb, process.memoryUsage().rss / 1048576);
  }, 25);

  const bystander = (async () => {
    let n = 0;
    while (running()) {
      const batch = Array.from({ length: 5 }, () => ({ message: `bystander log ${n++}`, level: 'info', source: 'bystander' }));
      try {
        const res = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': bystanderKey }, body: JSON.stringify(batch) });
        const text = await res.text();
        report.requests++;
        report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
        if (res.status === 202) {
          report.accepted++;
          report.acknowledgedLogs += 5;
        } else if ((res.status === 429 || res.status === 503) && res.headers.get('retry-after')) {
          // sleep: the bystander backs off a little when told to, as a client would, and goes on sending
          await new Promise((r) => setTimeout(r, 50));
        } else {
          report.bad.push(`${res.status} ${text.slice(0, 200)}`);
        }
      } catch (err) {
        report.requests++;
        report.bad.push(`request failed: ${(err as Error).message}`);
      }
    }
  })();

  const latencies: number[] = [];
  const probes = (async () => {
    while (running()) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/healthz`);
        await res.arrayBuffer();
        if (res.status !== 200) report.healthz.failures++;
      } catch {
        report.healthz.failures++;
      }
      const ms = performance.now() - t0;
      latencies.push(ms);
      // sleep: the probes are paced, one every probeEveryMs, through the attack
      if (ms < probeEveryMs) await new Promise((r) => setTimeout(r, probeEveryMs - ms));
    }
  })();

  let result: T | undefined;
  let failure: unknown;
  let failed = false;
  try {
    result = await attack();
  } catch (err) {
    failed = true;
    failure = err;
  } finally {
    attackDone = true;
  }
  await Promise.all([bystander, probes]);
  clearInterval(rss);
  latencies.sort((a, b) => a - b);
  report.healthz.n = latencies.length;
  report.healthz.p50 = Math.round(percentile(latencies, 50) * 10) / 10;
  report.healthz.p99 = Math.round(percentile(latencies, 99) * 10) / 10;
  report.healthz.max = Math.round((latencies[latencies.length - 1] ?? 0) * 10) / 10;
  report.peakRssMb = Math.round(report.peakRssMb);
  report.elapsedMs = Math.round(performance.now() - started);
  // One line per run, so a test's output carries the figures docs/reliability.md quotes.
  console.log(`[hostile ${engine}] ${options.label ?? ''} ${JSON.stringify(report)}`);
  const reportFile = process.env.LOGLANE_HOSTILE_REPORT;
  if (reportFile) appendFileSync(reportFile, JSON.stringify({ engine, label: options.label ?? 'unnamed attack', ...report }) + '\n');
  if (failed) throw failure;
  return { result: result as T, report };
}

/**
 * The bystander saw only 2xx (or 429/503 with Retry-After), had some of its logs accepted, and
 * every /healthz probe answered 200. How fast they answered depends on the machine, so it is not
 * asserted here: `npm run bench:hostile` reports it.
 */
export function expectUnharmed(report: BystanderReport): void {
  expect(report.bad).toEqual([]);
  expect(report.accepted).toBeGreaterThan(0);
  expect(report.healthz.failures).toBe(0);
  expect(report.healthz.n).toBeGreaterThan(10);
}

/**
 * A client for a child process (`node -e SEARCH_SCRIPT url tokens count`): reads `count` answers of
 * `url` at once with fetch streaming (the tokens, a comma list, taken in turn), counting their logs
 * without keeping them, and prints what each got as JSON. In a child, the memory and the event-loop
 * turns a test measures are the server's alone.
 */
export const SEARCH_SCRIPT = `
const [url, tokens, count] = process.argv.slice(1);
const list = tokens.split(',');
const one = async (i) => {
  const res = await fetch(url, { headers: { authorization: 'Bearer ' + list[i % list.length] } });
  let bytes = 0, logs = 0, carry = '', end = '';
  const mark = '{"id":"log_';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    bytes += chunk.length;
    const text = carry + decoder.decode(chunk, { stream: true });
    for (let at = text.indexOf(mark); at >= 0; at = text.indexOf(mark, at + 1)) logs++;
    carry = text.slice(-(mark.length - 1));
    end = (end + text).slice(-300);
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), bytes, logs, end };
};
Promise.all(Array.from({ length: Number(count) }, (_, i) => one(i))).then((r) => process.stdout.write(JSON.stringify(r)));
`;

export interface PageRead {
  status: number;
  retryAfter: string | null;
  bytes: number;
  logs: number;
  end: string;
}

/**
 * Stores `items` in the project through the ingest service on the enterprise plan's rate (a test's
 * setup, not its attack), waiting while the server sheds them (RATE_LIMITED, OVERLOADED).
 */
export async function ingestPatiently(s: TestServer, projectId: string, items: { value: unknown }[], what: string, everyMs = 100): Promise<void> {
  await waitFor(
    async () => {
      try {
        await s.app.services.logs.ingest(projectId, 'enterprise', items);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code !== 'RATE_LIMITED' && (err as { code?: string }).code !== 'OVERLOADED') throw err;
        return false;
      }
    },
    60_000,
    what,
    everyMs,
  );
}
