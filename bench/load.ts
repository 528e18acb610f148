/**
 * The ingest load of the cluster and RSS benchmarks: pre-serialised request bodies, and keep-alive
 * clients that POST them to /v1/logs, each at its own node and project, either as fast as the
 * server answers or paced to a total rate.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateLogs, LiveBody } from './logs.js';
import { fmt } from './report.js';
import { send } from './server.js';

/** Failure messages of one kind kept for the report; the counts stay exact. */
const MAX_EXAMPLES = 5;

export interface Bodies {
  bodies: LiveBody[];
  logsPerBody: number;
  avgLogBytes: number;
}

/** `count` distinct JSON request bodies of `batchSize` logs each (seeded), restamped up to now at each send. */
export function buildBodies(batchSize: number, count = 50): Bodies {
  const total = batchSize * count;
  const hourMs = 3_600_000;
  const logs = generateLogs(total, 42, Date.now() - hourMs, Math.max(1, Math.floor(hourMs / total)));
  const bodies: LiveBody[] = [];
  for (let i = 0; i < total; i += batchSize) bodies.push(new LiveBody(logs.slice(i, i + batchSize)));
  const bytes = bodies.reduce((sum, b) => sum + b.length, 0);
  return { bodies, logsPerBody: batchSize, avgLogBytes: bytes / total };
}

/** Where one client sends: a node's base URL and a project's key, with their indexes for the counts. */
export interface Target {
  node: number;
  project: number;
  baseUrl: string;
  apiKey: string;
}

export interface LoadOptions {
  agent: http.Agent;
  /** One target per client. */
  targets: Target[];
  nodes: number;
  projects: number;
  bodies: Bodies;
  durationS: number;
  /** Total logs per second over all clients; 0: as fast as the server answers. */
  rate: number;
  /** Called about once a second while the load runs, with the logs acknowledged so far. */
  onTick?: (elapsedS: number, acknowledgedLogs: number) => void;
}

export interface LoadResult {
  seconds: number;
  acknowledgedLogs: number;
  /** Request body bytes of the 202 answers. */
  acknowledgedBytes: number;
  /** Latencies of the 202 answers, ms, sorted. */
  latencies: number[];
  statuses: { '202': number; '429': number; '503': number; other: number };
  /** Logs acknowledged with 202, by node index and by project index. */
  byNode: number[];
  byProject: number[];
  failures: string[];
}

/**
 * One loop per target, each sending the next body and waiting for the answer, until the duration
 * is over; requests in flight at the deadline are waited for and counted, and the elapsed time runs
 * until the last one is answered. With a rate, sends follow one shared schedule (a client that
 * falls behind sends at once, but the schedule never owes more than one second of backlog).
 * 429 and 503 are waited out as Retry-After says; anything but 202/429/503 is a failure.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { agent, targets, bodies, rate } = options;
  const result: LoadResult = {
    seconds: 0,
    acknowledgedLogs: 0,
    acknowledgedBytes: 0,
    latencies: [],
    statuses: { '202': 0, '429': 0, '503': 0, other: 0 },
    byNode: new Array<number>(options.nodes).fill(0),
    byProject: new Array<number>(options.projects).fill(0),
    failures: [],
  };
  const otherExamples: string[] = [];
  // The generator should only make valid logs; any rejection is a bug on one side or the other.
  let rejectedLogs = 0;
  let rejectedExample: string | undefined;
  let next = 0;

  const start = performance.now();
  const deadline = start + options.durationS * 1000;
  const intervalMs = rate > 0 ? (bodies.logsPerBody / rate) * 1000 : 0;
  let nextSendAt = start;

  async function client(target: Target): Promise<void> {
    const url = `${target.baseUrl}/v1/logs`;
    const headers = { 'x-api-key': target.apiKey, 'content-type': 'application/json' };
    while (performance.now() < deadline) {
      if (rate > 0) {
        const now = performance.now();
        const at = Math.max(nextSendAt, now - 1000);
        nextSendAt = at + intervalMs;
        if (at >= deadline) return;
        if (at > now) await sleep(at - now);
      }
      const body = bodies.bodies[next++ % bodies.bodies.length]!.at(Date.now());
      const sent = performance.now();
      let res;
      try {
        res = await send(agent, url, 'POST', headers, body);
      } catch (err) {
        // The server is probably gone; retrying would only spin.
        result.failures.push(`a client of node ${target.node + 1} stopped: request failed: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
      const latency = performance.now() - sent;
      if (res.status === 202) {
        const answer = JSON.parse(res.body) as { accepted: number; rejected: { message: string }[] };
        result.statuses['202']++;
        result.acknowledgedLogs += answer.accepted;
        result.acknowledgedBytes += body.length;
        result.byNode[target.node]! += answer.accepted;
        result.byProject[target.project]! += answer.accepted;
        result.latencies.push(latency);
        rejectedLogs += answer.rejected.length;
        rejectedExample ??= answer.rejected[0]?.message;
      } else if (res.status === 429 || res.status === 503) {
        result.statuses[res.status === 429 ? '429' : '503']++;
        // Back off as asked, but not past the end of the run.
        const retryAfterS = Number(res.headers['retry-after']);
        await sleep(Math.min((Number.isFinite(retryAfterS) ? retryAfterS : 1) * 1000, Math.max(0, deadline - performance.now())));
      } else {
        result.statuses.other++;
        if (otherExamples.length < MAX_EXAMPLES) otherExamples.push(`node ${target.node + 1}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      }
    }
  }

  const ticker = options.onTick && setInterval(() => options.onTick!((performance.now() - start) / 1000, result.acknowledgedLogs), 1000);
  try {
    await Promise.all(targets.map(client));
  } finally {
    if (ticker) clearInterval(ticker);
  }
  result.seconds = (performance.now() - start) / 1000;
  result.latencies.sort((a, b) => a - b);
  if (result.statuses.other > 0) result.failures.push(`${result.statuses.other} answer(s) other than 202/429/503, e.g.:\n${otherExamples.map((e) => `    ${e}`).join('\n')}`);
  if (rejectedLogs > 0) result.failures.push(`the server rejected ${rejectedLogs} generated log(s), e.g.: ${rejectedExample}`);
  return result;
}

/**
 * A progress line on stderr: rewritten every second on a terminal, else printed every `everyS`
 * seconds. Answers a function to call each second with the elapsed time and the logs so far, and
 * one to clear the line.
 */
export function progressLine(label: string, durationS: number, everyS = 5): { tick: (elapsedS: number, logs: number) => void; done: () => void } {
  const tty = process.stderr.isTTY;
  let last = { at: 0, logs: 0 };
  let printed = 0;
  return {
    tick(elapsedS, logs) {
      const rate = (logs - last.logs) / Math.max(0.001, elapsedS - last.at);
      last = { at: elapsedS, logs };
      const line = `  ${label}: ${fmt(elapsedS)} / ${durationS} s   ${fmt(rate)} logs/s now   ${fmt(logs)} acknowledged`;
      if (tty) process.stderr.write(`\r${line.padEnd(90)}`);
      else if (Math.floor(elapsedS / everyS) > printed) {
        printed = Math.floor(elapsedS / everyS);
        process.stderr.write(`${line}\n`);
      }
    },
    done() {
      if (tty) process.stderr.write(`\r${' '.repeat(90)}\r`);
    },
  };
}
