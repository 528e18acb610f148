/**
 * Cluster ingest benchmark: logs per second with 1, 2 and 3 server processes sharing one PostgreSQL.
 *
 *   npm run bench:cluster -- [--nodes 1,2,3] [--projects 1,4] [--clients 12] [--duration 20] [--pg-url URL]
 *
 * For each node count N and each project count P: a fresh PostgreSQL database, N built servers
 * (dist/cli.js) on it with one SECRET_KEY (bench/server.ts: the first node migrates, the others find
 * the schema done), one account, P projects (created on different nodes, which also shows an access
 * token from one node works on the others). Then `--clients` keep-alive clients send 1,000-log
 * batches for `--duration` seconds, client i to node i mod N and each (node, project) pair in turn,
 * so every project is spread over every node. Two project counts, because one project's commits
 * serialise on its row (`update projects … returning last_seq` holds the row lock until commit):
 * with one project, more nodes cannot commit in parallel, with several they can.
 *
 * Measured over the timed load: logs/s and its ratio to one node (same P), p50/p99 latency of the
 * 202 answers, each node's CPU seconds (/proc/<pid>/stat), the CPU of PostgreSQL's processes
 * (/proc, split into the bench database's backends, PostgreSQL's own background processes such as
 * the WAL writer, and other databases' backends, which are someone else's work), the load
 * generator's own CPU, and how busy the whole machine was. CPU is also given in cores (seconds of
 * CPU per second of wall time), which is what shows saturation: a node at ~1 core is CPU-bound (one
 * JavaScript thread), the machine at its core count means everything competes for CPU, and
 * PostgreSQL's backends far below their share while throughput stalls means waiting on locks or
 * fsync. The load generator runs here, on the same machine, so it competes for CPU too.
 *
 * Checks that every project's logCount, and its rows counted in the database, equal the logs
 * acknowledged with 202. Prints a table and writes bench/results/cluster-<timestamp>.json and
 * bench/results/latest-cluster.json (format: the ClusterResults interface below); `npm run
 * bench:chart` draws the latter into docs/img/cluster-throughput.svg.
 *
 * Exits 1 if a server does not start or stop cleanly, an answer is not 202/429/503, or a count
 * differs (the figures are printed all the same); 2 on bad options.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { buildBodies, progressLine, runLoad, type Bodies, type LoadResult, type Target } from './load.js';
import { COMMON_OPTIONS, parseBenchArgs, optionsOrExit } from './options.js';
import { machineCpu, PostgresCpuMonitor, processCpuSeconds, peakRssBytes, type PostgresCpu } from './proc.js';
import { fmt, groupServerOutput, mb, percentile, round, table, writeResults } from './report.js';
import { call, createDatabase, startServer, type RunningServer } from './server.js';

const BATCH_SIZE = 1_000;
const MAX_NODES = 8;

const USAGE = `Usage: npm run bench:cluster -- [options]

  --nodes <list>                   node counts to measure, comma-separated (default 1,2,3)
  --projects <list>                project counts to measure at each node count (default 1,4):
                                   one project shows the per-project commit order, several do not
  --clients <n>                    concurrent HTTP clients, spread over the nodes (default 12)
  --duration <seconds>             length of each timed run (default 20)
  --pg-url <url>                   PostgreSQL admin connection, used to create and drop the bench
                                   databases (default ${COMMON_OPTIONS['pg-url'].default})
  -h, --help                       show this help

PostgreSQL only: a cluster needs it (--engine postgres is accepted and changes nothing).`;

interface Options {
  nodes: number[];
  projects: number[];
  clients: number;
  durationS: number;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    nodes: { type: 'string', default: '1,2,3' },
    projects: { type: 'string', default: '1,4' },
    clients: { type: 'string', default: '12' },
    duration: { type: 'string', default: '20' },
  });
  const list = (raw: string, max: number) => {
    const items = raw.split(',').map((s) => s.trim());
    const nums = items.map(Number);
    return items.length > 0 && nums.every((n, i) => /^\d+$/.test(items[i]!) && n >= 1 && n <= max) ? [...new Set(nums)] : undefined;
  };
  const nodes = list(values.nodes, MAX_NODES);
  const projects = list(values.projects, 100);
  const clients = Number(values.clients);
  const durationS = Number(values.duration);
  const problems = [
    values.engine === 'sqlite' ? '--engine sqlite: a cluster needs PostgreSQL (nodes cannot share a SQLite file)' : undefined,
    nodes ? undefined : `--nodes must be whole numbers from 1 to ${MAX_NODES}, comma-separated (got "${values.nodes}")`,
    projects ? undefined : `--projects must be whole numbers from 1 to 100, comma-separated (got "${values.projects}")`,
    Number.isInteger(clients) && clients >= 1 ? undefined : `--clients must be a whole number of at least 1 (got "${values.clients}")`,
    Number.isFinite(durationS) && durationS > 0 ? undefined : `--duration must be a positive number of seconds (got "${values.duration}")`,
  ].filter((p) => p !== undefined);
  if (nodes && clients < Math.max(...nodes)) problems.push(`--clients (${clients}) must be at least the largest node count (${Math.max(...nodes)}), or some node gets no load`);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { nodes: nodes!, projects: projects!, clients, durationS, pgAdminUrl };
}

/** One run (N nodes, P projects), as written to the JSON file. */
export interface ClusterRun {
  nodes: number;
  projects: number;
  clients: number;
  seconds: number;
  acknowledgedLogs: number;
  logsPerSec: number;
  /** logsPerSec over the one-node run with the same project count (null without one). */
  ratioToOneNode: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  requests: LoadResult['statuses'];
  perNode: { clients: number; acknowledgedLogs: number; cpuS: number | null; cpuCores: number | null; peakRssBytes: number | null; exit: number | string }[];
  perProject: { clients: number; acknowledgedLogs: number; logCount: number; storedRows: number }[];
  /** CPU of the local PostgreSQL's processes during the load (null where /proc shows none). */
  postgres: { databaseS: number; backgroundS: number; otherS: number; databaseCores: number; backgroundCores: number } | null;
  /**
   * What the bench database's client backends were doing, sampled from pg_stat_activity every
   * 200 ms: state → backends in it on average ('running', 'waiting: Lock/transactionid',
   * 'waiting: IO/WALSync', 'idle in transaction (the node's turn)', …), busiest first.
   */
  backendStates: Record<string, number>;
  loadGeneratorCpuS: number;
  /**
   * The whole machine: busy cores on average over the load, out of `cores`; and how many of them
   * went to none of the nodes, the load generator or PostgreSQL's processes for this database and
   * in the background, i.e. other work on the machine (the figures are clean only when it is ~0).
   */
  machine: { cores: number; busyCores: number | null; otherCores: number | null };
  countsMatch: boolean;
  /** What the nodes logged at warn or above, grouped. */
  serverWarnings: { level: string; line: string; count: number }[];
  failures: string[];
}

export interface ClusterResults {
  kind: 'cluster';
  startedAt: string;
  node: string;
  cpus: number;
  postgresVersion: string;
  clients: number;
  durationS: number;
  batchSize: number;
  avgLogBytes: number;
  runs: ClusterRun[];
}

/** Client i's node and project: client i takes the (node, project) pairs in turn, nodes first. */
function assign(clients: number, nodes: number, projects: number): { node: number; project: number }[] {
  return Array.from({ length: clients }, (_, i) => {
    const pair = i % (nodes * projects);
    return { node: pair % nodes, project: Math.floor(pair / nodes) };
  });
}

async function measure(nodeCount: number, projectCount: number, bodies: Bodies, options: Options): Promise<ClusterRun> {
  const database = await createDatabase('postgres', options.pgAdminUrl);
  const dbName = new URL(database.databaseUrl!).pathname.slice(1);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  const nodes: RunningServer[] = [];
  const failures: string[] = [];
  try {
    // The first node migrates; the others start together and find the schema up to date.
    nodes.push(await startServer(database, agent));
    const others = await Promise.allSettled(Array.from({ length: nodeCount - 1 }, () => startServer(database, agent)));
    for (const o of others) if (o.status === 'fulfilled') nodes.push(o.value);
    const notStarted = others.find((o) => o.status === 'rejected');
    if (notStarted) throw notStarted.reason;
    const started = [...nodes];

    const { accessToken } = await call<{ accessToken: string }>(agent, `${nodes[0]!.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, {
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: randomBytes(12).toString('hex'),
    });
    const projects: { id: string; apiKey: string }[] = [];
    for (let p = 0; p < projectCount; p++) {
      projects.push(await call(agent, `${nodes[p % nodeCount]!.baseUrl}/v1/projects`, 'POST', 201, accessToken, { name: `bench ${p + 1}` }));
    }
    const assignment = assign(options.clients, nodeCount, projectCount);
    const targets: Target[] = assignment.map(({ node, project }) => ({ node, project, baseUrl: nodes[node]!.baseUrl, apiKey: projects[project]!.apiKey }));

    // CPU baselines, then a sample of PostgreSQL's processes every second (backends that exit lose at most one).
    const pgCpu = new PostgresCpuMonitor(dbName);
    pgCpu.start();
    const waits = await sampleWaits(database.databaseUrl!);
    const nodeCpu0 = nodes.map((n) => processCpuSeconds(n.pid));
    const nodeCpuLast = [...nodeCpu0];
    const machine0 = machineCpu();
    const self0 = process.cpuUsage();
    const progress = progressLine(`${nodeCount} node(s), ${projectCount} project(s)`, options.durationS);
    const load = await runLoad({
      agent,
      targets,
      nodes: nodeCount,
      projects: projectCount,
      bodies,
      durationS: options.durationS,
      rate: 0,
      onTick(elapsedS, logs) {
        pgCpu.sample();
        nodes.forEach((n, i) => (nodeCpuLast[i] = processCpuSeconds(n.pid) ?? nodeCpuLast[i]));
        progress.tick(elapsedS, logs);
      },
    });
    progress.done();
    pgCpu.sample();
    const backendStates = await waits.stop();
    const nodeCpuS = nodes.map((n, i) => {
      const now = processCpuSeconds(n.pid) ?? nodeCpuLast[i];
      return now === undefined || nodeCpu0[i] === undefined ? undefined : now - nodeCpu0[i];
    });
    const machine1 = machineCpu();
    const self = process.cpuUsage(self0);
    const peaks = nodes.map((n) => peakRssBytes(n.pid));
    failures.push(...load.failures);

    // What was stored: logCount through the API (from each project's own node) and the rows themselves.
    const logCounts: number[] = [];
    for (let p = 0; p < projectCount; p++) {
      logCounts.push((await call<{ logCount: number }>(agent, `${nodes[p % nodeCount]!.baseUrl}/v1/projects/${projects[p]!.id}`, 'GET', 200, accessToken)).logCount);
    }
    const storedRows = await countRows(database.databaseUrl!, projects.map((p) => p.id));

    const exits: (number | NodeJS.Signals)[] = [];
    for (const n of nodes.splice(0)) exits.push(await n.stop());
    exits.forEach((e, i) => e !== 0 && failures.push(`node ${i + 1} did not stop cleanly on SIGTERM (exit ${e})`));
    // Complete now that the nodes have exited, so it includes anything logged while stopping.
    const serverWarnings = started.flatMap((n, i) => groupServerOutput(n.output).map((g) => ({ ...g, line: `node ${i + 1}: ${g.line}` })));

    const perProject = projects.map((_, p) => ({
      clients: assignment.filter((a) => a.project === p).length,
      acknowledgedLogs: load.byProject[p]!,
      logCount: logCounts[p]!,
      storedRows: storedRows[p]!,
    }));
    for (const [p, r] of perProject.entries()) {
      if (r.logCount !== r.acknowledgedLogs || r.storedRows !== r.acknowledgedLogs) {
        failures.push(`project ${p + 1}: ${fmt(r.acknowledgedLogs)} logs acknowledged, logCount ${fmt(r.logCount)}, ${fmt(r.storedRows)} rows stored`);
      }
    }
    // No postgres process in /proc: PostgreSQL runs elsewhere, and its CPU is not seen from here.
    const pgS: PostgresCpu | undefined = pgCpu.processes === 0 ? undefined : pgCpu.result();
    const seconds = load.seconds;
    const cores = (s: number | undefined) => (s === undefined ? null : round(s / seconds, 2));
    return {
      nodes: nodeCount,
      projects: projectCount,
      clients: options.clients,
      seconds: round(seconds, 2)!,
      acknowledgedLogs: load.acknowledgedLogs,
      logsPerSec: Math.round(load.acknowledgedLogs / seconds),
      ratioToOneNode: null,
      p50Ms: round(percentile(load.latencies, 50), 1),
      p99Ms: round(percentile(load.latencies, 99), 1),
      requests: load.statuses,
      perNode: nodeCpuS.map((cpuS, i) => ({
        clients: assignment.filter((a) => a.node === i).length,
        acknowledgedLogs: load.byNode[i]!,
        cpuS: round(cpuS, 2),
        cpuCores: cores(cpuS),
        peakRssBytes: peaks[i] ?? null,
        exit: exits[i]!,
      })),
      perProject,
      postgres: pgS === undefined
        ? null
        : { databaseS: round(pgS.databaseS, 2)!, backgroundS: round(pgS.backgroundS, 2)!, otherS: round(pgS.otherS, 2)!, databaseCores: cores(pgS.databaseS)!, backgroundCores: cores(pgS.backgroundS)! },
      backendStates,
      loadGeneratorCpuS: round((self.user + self.system) / 1e6, 2)!,
      machine: machineShare(machine0, machine1, seconds, [...nodeCpuS, pgS?.databaseS, pgS?.backgroundS, (self.user + self.system) / 1e6]),
      countsMatch: perProject.every((r) => r.logCount === r.acknowledgedLogs && r.storedRows === r.acknowledgedLogs),
      serverWarnings,
      failures,
    };
  } finally {
    // Stops whatever is still running after a failure (a node that is already stopped is not in the list).
    await Promise.all(nodes.map((n) => n.stop()));
    agent.destroy();
    await database.drop();
  }
}

/** The machine's busy cores over the run, and the part of them that none of `ours` (CPU seconds each) explains. */
function machineShare(before: ReturnType<typeof machineCpu>, after: ReturnType<typeof machineCpu>, seconds: number, ours: (number | undefined)[]): ClusterRun['machine'] {
  const cores = os.cpus().length;
  if (before === undefined || after === undefined) return { cores, busyCores: null, otherCores: null };
  const busyS = after.busyS - before.busyS;
  const known = ours.every((s) => s !== undefined);
  const oursS = ours.reduce<number>((sum, s) => sum + (s ?? 0), 0);
  return { cores, busyCores: round(busyS / seconds, 2), otherCores: known ? round(Math.max(0, busyS - oursS) / seconds, 2) : null };
}

/** How often pg_stat_activity is sampled for what the bench database's backends are doing. */
const WAIT_SAMPLE_MS = 200;

/**
 * Samples pg_stat_activity every WAIT_SAMPLE_MS for the bench database's client backends and
 * answers, per state, how many backends were in it on average: running (CPU), waiting on a lock
 * (another transaction's project row), on I/O such as the WAL fsync at commit, or idle in a
 * transaction, i.e. waiting for the node's next statement while holding what it has locked.
 * Backends idle between transactions are left out.
 */
async function sampleWaits(databaseUrl: string): Promise<{ stop(): Promise<Record<string, number>> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const counts = new Map<string, number>();
  let samples = 0;
  let busy = Promise.resolve();
  const timer = setInterval(() => {
    busy = busy.then(async () => {
      const { rows } = await client.query<{ state: string | null; wait_event_type: string | null; wait_event: string | null }>(
        `select state, wait_event_type, wait_event from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend' and state <> 'idle'`,
      );
      samples++;
      for (const r of rows) {
        const key = r.state === 'active'
          ? (r.wait_event_type === null ? 'running' : `waiting: ${r.wait_event_type}/${r.wait_event}`)
          : r.state === 'idle in transaction' ? 'idle in transaction (the node\'s turn)' : String(r.state);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }).catch(() => {});
  }, WAIT_SAMPLE_MS);
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      await client.end();
      const average: Record<string, number> = {};
      for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1])) average[key] = round(n / Math.max(1, samples), 2)!;
      return average;
    },
  };
}

/** Rows in `logs` per project, counted in the database itself. */
async function countRows(databaseUrl: string, projectIds: string[]): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ project_id: string; n: string }>('select project_id, count(*) as n from logs group by project_id');
    const counts = new Map(rows.map((r) => [r.project_id, Number(r.n)]));
    return projectIds.map((id) => counts.get(id) ?? 0);
  } finally {
    await client.end();
  }
}

async function postgresVersion(adminUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  } finally {
    await client.end();
  }
}

function printTable(runs: ClusterRun[]): void {
  const cores = (v: number | null) => (v === null ? 'n/a' : fmt(v, 2));
  const rows = runs.map((r) => [
    String(r.nodes),
    String(r.projects),
    fmt(r.logsPerSec),
    r.ratioToOneNode === null ? '' : `×${fmt(r.ratioToOneNode, 2)}`,
    r.p50Ms === null ? 'n/a' : fmt(r.p50Ms),
    r.p99Ms === null ? 'n/a' : fmt(r.p99Ms),
    r.perNode.map((n) => cores(n.cpuCores)).join(' / '),
    r.postgres ? `${fmt(r.postgres.databaseCores, 2)} + ${fmt(r.postgres.backgroundCores, 2)}` : 'n/a',
    fmt(r.loadGeneratorCpuS / r.seconds, 2),
    r.machine.busyCores === null ? 'n/a' : `${fmt(r.machine.busyCores, 2)} / ${r.machine.cores}`,
    r.machine.otherCores === null ? 'n/a' : fmt(r.machine.otherCores, 2),
    `${r.requests['202']}/${r.requests['429']}/${r.requests['503']}/${r.requests.other}`,
    r.countsMatch ? '✓' : '✗',
  ]);
  console.log(table(
    ['nodes', 'projects', 'logs/s', 'vs 1', 'p50 ms', 'p99 ms', 'node CPU (cores each)', 'PG CPU db+bg', 'loadgen', 'machine busy', 'not ours', '202/429/503/other', 'stored = acked'],
    rows,
    [0, 1, 2, 3, 4, 5, 8, 10],
  ));
  console.log('\nCPU in cores: CPU seconds per second of the run. PG CPU: the bench database\'s backends + PostgreSQL\'s own background processes (WAL writer, checkpointer…).');
  console.log('Not ours: busy cores that none of the nodes, the load generator or that PostgreSQL work account for: other work on the machine.');
  const noisy = runs.filter((r) => (r.machine.otherCores ?? 0) > 0.2);
  if (noisy.length > 0) console.log(`Other work took more than 0.2 cores during ${noisy.length} run(s): those figures are not clean (a shared machine).`);
  for (const r of runs) {
    const other = r.postgres && r.postgres.otherS > 0.05 * r.seconds ? `; other databases' backends used ${fmt(r.postgres.otherS, 1)} CPU s meanwhile (someone else's load)` : '';
    const rss = r.perNode.map((n) => (n.peakRssBytes === null ? 'n/a' : `${fmt(mb(n.peakRssBytes))} MB`)).join(' / ');
    console.log(`${r.nodes} node(s), ${r.projects} project(s): logs by node ${r.perNode.map((n) => fmt(n.acknowledgedLogs)).join(' / ')}; peak RSS ${rss}${other}`);
    const states = Object.entries(r.backendStates).map(([state, n]) => `${fmt(n, 2)} ${state}`).join(', ');
    console.log(`  PostgreSQL backends on average: ${states || 'none busy'}`);
    // Warnings (such as SMTP_URL not being set) stay in the JSON; errors and crashes are shown.
    for (const w of r.serverWarnings.filter((g) => !['warn', 'info', 'debug', 'trace'].includes(g.level)).slice(0, 5)) console.log(`  the nodes wrote ${w.count}× ${w.line}`);
    for (const f of r.failures) console.log(`  FAILED: ${f}`);
  }
}

const options = optionsOrExit(parseOptions, USAGE);

const bodies = buildBodies(BATCH_SIZE);
const pgVersion = await postgresVersion(options.pgAdminUrl).catch((err: unknown) => {
  console.error(`cannot reach PostgreSQL at ${options.pgAdminUrl}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
console.log(`${options.clients} clients × ${fmt(BATCH_SIZE)}-log batches (${fmt(bodies.avgLogBytes)} bytes per log) for ${options.durationS} s per run; ` +
  `nodes ${options.nodes.join(', ')} × projects ${options.projects.join(', ')}; ${os.cpus().length} CPUs, Node ${process.version}, PostgreSQL ${pgVersion}\n`);

const startedAt = new Date().toISOString();
const runs: ClusterRun[] = [];
let failed = false;
for (const n of options.nodes) {
  for (const p of options.projects) {
    try {
      const run = await measure(n, p, bodies, options);
      runs.push(run);
      if (run.failures.length > 0) failed = true;
      console.error(`  ${n} node(s), ${p} project(s): ${fmt(run.logsPerSec)} logs/s${run.failures.length > 0 ? ' (FAILED, see below)' : ''}`);
    } catch (err) {
      console.log(`${n} node(s), ${p} project(s): FAILED: ${err instanceof Error ? err.message : String(err)}`);
      failed = true;
    }
  }
}
for (const r of runs) {
  const one = runs.find((o) => o.nodes === 1 && o.projects === r.projects);
  r.ratioToOneNode = one && one.logsPerSec > 0 ? round(r.logsPerSec / one.logsPerSec, 2) : null;
}
console.log();
printTable(runs);

const results: ClusterResults = {
  kind: 'cluster',
  startedAt,
  node: process.version,
  cpus: os.cpus().length,
  postgresVersion: pgVersion,
  clients: options.clients,
  durationS: options.durationS,
  batchSize: BATCH_SIZE,
  avgLogBytes: round(bodies.avgLogBytes, 1)!,
  runs,
};
const files = writeResults('cluster', results);
console.log(`\nResults: ${files.run} (and ${files.latest})`);
if (failed) {
  console.error('\nThe benchmark found problems (see FAILED above).');
  process.exitCode = 1;
}
