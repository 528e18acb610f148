/**
 * What a bystander tenant sees while a hostile tenant attacks: the time figures of the
 * hostile-tenant tests, which the tests themselves only report (a busy machine must not fail
 * `npm test`).
 *
 *   npm run bench:hostile -- [--engine sqlite|postgres|both] [--files 'test/hostile-*.test.ts'] [--pg-url URL]
 *
 * Runs the hostile-tenant test files with vitest, one file at a time (`--maxWorkers 1`, so
 * the attacks do not overlap), with LOGLANE_HOSTILE_REPORT naming a file that every attack run
 * beside the bystander (test/hostile.ts `beside`) appends its report to. Each report gives the
 * bystander's answers (2xx of requests), its /healthz probes taken every 20 ms through the attack
 * (p50, p99, max), and the peak RSS of the test process, which holds the server. Prints a table
 * and writes bench/results/hostile-<timestamp>.json and bench/results/latest-hostile.json.
 *
 * Exits 1 when a test fails (its figures are still printed), 2 on bad options.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { fmt, table, writeResults } from './report.js';

const USAGE = `Usage: npm run bench:hostile -- [options]

  --files <glob>                   test files to run (default test/hostile-*.test.ts)
${COMMON_USAGE}`;

interface Report {
  engine: string;
  label: string;
  requests: number;
  accepted: number;
  acknowledgedLogs: number;
  bad: string[];
  healthz: { n: number; p50: number; p99: number; max: number; failures: number };
  peakRssMb: number;
  elapsedMs: number;
}

const options = optionsOrExit((argv) => {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, { files: { type: 'string', default: 'test/hostile-*.test.ts' } });
  if (engineProblem) throw new Error(engineProblem);
  return { engines: engines!, files: String(values.files), pgAdminUrl };
}, USAGE);

const root = path.resolve(import.meta.dirname, '..');
/** The files of one folder whose names match `pattern` (`*` for any run of characters), relative to the root. */
function matching(pattern: string): string[] {
  const dir = path.dirname(pattern);
  const name = new RegExp(`^${path.basename(pattern).split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  const abs = path.join(root, dir);
  return fs.existsSync(abs) ? fs.readdirSync(abs).filter((f) => name.test(f)).map((f) => path.join(dir, f)).sort() : [];
}
const files = matching(options.files);
if (files.length === 0) {
  console.error(`no test file matches ${options.files}`);
  process.exit(2);
}
const reportFile = path.join(os.tmpdir(), `loglane-hostile-${process.pid}.jsonl`);
fs.rmSync(reportFile, { force: true });

console.log(`running ${files.length} file(s) on ${options.engines.join(' and ')}: ${files.join(' ')}`);
const run = spawnSync('npx', ['vitest', 'run', ...files, '--maxWorkers', '1', '--reporter', 'dot'], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, LOGLANE_HOSTILE_REPORT: reportFile, LOGLANE_TEST_ENGINES: options.engines.join(','), TEST_DATABASE_URL: options.pgAdminUrl },
});

const reports: Report[] = fs.existsSync(reportFile)
  ? fs.readFileSync(reportFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Report)
  : [];
fs.rmSync(reportFile, { force: true });

const rows = reports.map((r) => [
  r.label,
  r.engine,
  `${fmt(r.accepted)}/${fmt(r.requests)}`,
  String(r.bad.length),
  fmt(r.healthz.n),
  fmt(r.healthz.p50, 1),
  fmt(r.healthz.p99, 1),
  fmt(r.healthz.max, 1),
  fmt(r.peakRssMb),
  fmt(r.elapsedMs / 1000, 1),
]);
console.log(`\n${table(['attack', 'engine', 'bystander 2xx', 'bad', 'probes', 'p50 ms', 'p99 ms', 'max ms', 'peak RSS MB', 's'], rows, [2, 3, 4, 5, 6, 7, 8, 9])}`);
const saved = writeResults('hostile', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
  command: `npm run bench:hostile -- ${process.argv.slice(2).join(' ')}`.trim(),
  files,
  testsPassed: run.status === 0,
  reports,
});
console.log(`\nsaved ${saved.latest}`);
if (run.status !== 0) {
  console.error('some hostile-tenant tests failed: see above');
  process.exit(1);
}
