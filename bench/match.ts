/**
 * What alert matching costs per log, in this process, without HTTP or a database: bench:alerts's
 * 100 rules (pattern or query kind) run by matchRules over bench:alerts's logs, in rounds of
 * `--batch` logs as the evaluation queue hands them over. Prints µs per log and the matches, so a
 * change to matchRules or the query predicate can be judged in seconds before bench:alerts.
 *
 *   npm run bench:match -- [--rules query|pattern] [--logs 50000] [--batch 2000] [--repeat 5]
 */
import { parseArgs } from 'node:util';
import { bucketSize, matchRules, parseRuleQuery, type Matcher } from '../src/features/alerts/rules.js';
import { levelIndex } from '../src/features/logs/levels.js';
import { compileRe2 } from '../src/features/logs/pattern.js';
import { parseDuration } from '../src/duration.js';
import { backgroundRules, logsFor, type RuleKind } from './alert-rules.js';
import { toRawRow } from './logs.js';

const { values } = parseArgs({
  options: {
    rules: { type: 'string', default: 'query' },
    logs: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '2000' },
    repeat: { type: 'string', default: '5' },
    count: { type: 'string', default: '100' },
  },
});
const kind = values.rules as RuleKind;
if (kind !== 'query' && kind !== 'pattern') throw new Error('--rules must be query or pattern');
const logCount = Number(values.logs);
const batch = Number(values.batch);
const repeat = Number(values.repeat);

const now = Date.now();
const matchers: (Matcher & { name: string })[] = backgroundRules(Number(values.count), kind).map((spec) => {
  const c = spec.condition;
  return {
    name: spec.name,
    level: levelIndex(c.level)!,
    source: c.source ?? null,
    windowMs: parseDuration(c.window)!,
    pattern: c.pattern === undefined ? null : compileRe2(c.pattern),
    query: c.query === undefined ? null : parseRuleQuery(c.query),
  };
});
// Stamped within the last second, inside every window, as a live stream's logs are.
const rows = logsFor(kind, logCount, 42, now - 1000, 1000 / logCount).map(toRawRow);

async function round(): Promise<{ ms: number; matches: number }> {
  let matches = 0;
  const start = performance.now();
  for (let i = 0; i < rows.length; i += batch) {
    // Fresh objects each round, as the evaluation queue's rows are.
    const slice = rows.slice(i, i + batch).map((r) => ({ ...r }));
    const { results, undecided } = await matchRules(matchers, slice, now, 5, 'bench', Date.now() + 60_000);
    if (undecided.length > 0) throw new Error(`${undecided.length} logs undecided`);
    for (const r of results.values()) matches += r.count;
  }
  return { ms: performance.now() - start, matches };
}

console.log(`matchRules: ${matchers.length} ${kind} rules, ${logCount.toLocaleString('en')} logs in rounds of ${batch}, Node ${process.version}`);
let first: number | undefined;
const perLog: number[] = [];
for (let r = 0; r < repeat; r++) {
  const { ms, matches } = await round();
  if (first === undefined) first = matches;
  else if (matches !== first) throw new Error(`round ${r + 1} counted ${matches} matches, round 1 ${first}`);
  perLog.push((ms * 1000) / logCount);
  console.log(`  round ${r + 1}: ${((ms * 1000) / logCount).toFixed(2)} µs/log, ${matches.toLocaleString('en')} matches`);
}
perLog.sort((a, b) => a - b);
console.log(`median ${perLog[Math.floor(perLog.length / 2)]!.toFixed(2)} µs/log (bucket of a 5m window: ${bucketSize(300_000)} ms)`);
