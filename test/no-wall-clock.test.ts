/**
 * The suite must pass on a busy machine: no test asserts how long something took against a fixed
 * number of milliseconds. Such figures belong to `bench/` (docs/benchmarks.md); a test asserts
 * what holds on any machine (the outcome, counted work, bytes, memory); even a bound worked out from
 * an idle baseline moves with the machine's load, so it is refused too. This test reads every test
 * source and refuses an `expect(<a duration>)` given an upper bound by toBeLessThan(OrEqual).
 *
 * Nor does a test sleep a fixed time hoping something has happened by then: it waits for the thing
 * (`waitFor` in harness.ts). Where time itself is the subject (pacing a load, a stall that must
 * last, a random moment to crash at), the sleep carries a `// sleep: <why>` comment on its line or
 * in the comment just above it; a sleep without one is refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What names a duration or a latency in an expect's subject. */
const DURATION = /Date\.now\(\)|performance\.now\(\)|\bp(50|90|95|99)\b|\.p(50|90|95|99)\b|worst|elapsed|latenc|duration|\w+Ms\b|\bms\b|\btimes\b|\bhealth\b|\bseconds?\b/;
/** An upper bound: on a duration, a threshold, whether written out or worked out. */
const AGAINST_LITERAL = /\)\s*\.toBeLessThan(OrEqual)?\(/;

/** The lines of `source` (1-based numbers) that assert a duration against a literal. */
export function wallClockAssertions(source: string): number[] {
  const found: number[] = [];
  source.split('\n').forEach((line, i) => {
    const at = line.indexOf('expect(');
    if (at < 0) return;
    const matcher = AGAINST_LITERAL.exec(line.slice(at));
    if (!matcher) return;
    const subject = line.slice(at + 'expect('.length, at + matcher.index);
    if (DURATION.test(subject)) found.push(i + 1);
  });
  return found;
}

/** A pause: a promise resolved by a timer, or a call of a sleep/delay helper (not its definition). */
const SLEEP = /setTimeout\(\s*(r|res|resolve|done)\s*,|(?<![\w.])(sleep|delay)\(|await\s+setTimeout\(/;
const SLEEP_DEFINITION = /(function\s+(sleep|delay)\b|(const|let)\s+(sleep|delay)\s*=)/;
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*)/;

/** The lines of `source` (1-based numbers) that sleep without a `// sleep:` reason. */
export function unexplainedSleeps(source: string): number[] {
  const lines = source.split('\n');
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (!SLEEP.test(line) || SLEEP_DEFINITION.test(line)) return;
    if (COMMENT_LINE.test(line) && !/setTimeout|sleep\(|delay\(/.test(line.replace(/^\s*(\/\/|\*|\/\*).*/, ''))) return; // a comment that mentions sleep(
    if (/\/\/\s*sleep:/.test(line)) return;
    for (let j = i - 1; j >= 0 && COMMENT_LINE.test(lines[j]!); j--) if (/sleep:/.test(lines[j]!)) return;
    found.push(i + 1);
  });
  return found;
}

function testSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testSources(p);
    return /\.(test\.)?tsx?$/.test(e.name) ? [p] : [];
  });
}

/** `file:line` of every place `detector` finds in the suite's sources (test/ and the console's tests), this file aside. */
function offendersOf(detector: (source: string) => number[]): string[] {
  return [...testSources(path.join(ROOT, 'test')), ...testSources(path.join(ROOT, 'web', 'src')).filter((f) => f.includes('.test.'))]
    .filter((file) => file !== fileURLToPath(import.meta.url))
    .flatMap((file) => detector(readFileSync(file, 'utf8')).map((line) => `${path.relative(ROOT, file)}:${line}`));
}

/** `detector` finds the one-line samples in `bad` (at line 1) and nothing in `good`. */
function expectDetector(detector: (source: string) => number[], bad: string[], good: string[]): void {
  for (const sample of bad) expect(detector(sample), sample).toEqual([1]);
  for (const sample of good) expect(detector(sample), sample).toEqual([]);
}

/** The samples of assertions the detector must refuse are built from these, so that a search of the suite for thresholds does not take them for real ones. */
const E = 'expect';
const LESS = 'toBeLessThan';

describe('no test asserts a wall-clock threshold', () => {
  it('the detector finds the forms it is for, and leaves counts, bytes and ratios alone', () => {
    const bad = [
      `${E}(Date.now() - t0).${LESS}(2000);`,
      `${E}(performance.now() - started).${LESS}OrEqual(100);`,
      `${E}(report.healthz.p99).${LESS}(100);`,
      `${E}(worstMs).${LESS}(100);`,
      `${E}(ran.ms).${LESS}(5000);`,
      `${E}(Math.max(...times)).${LESS}(2_000);`,
      `${E}(elapsedMs, label).${LESS}(30);`,
      `${E}(Date.now() - t0).${LESS}(2000 + 3000);`,
      `${E}(worstMs).${LESS}(10 * Math.max(idleWorstMs, 10));`,
    ];
    const good = [
      'expect(evalCounters.maxDecisionUnits).toBeLessThan(25_000);',
      'expect(growth).toBeLessThan(256);',
      'expect(res.status, label).toBeLessThan(500);',
      'expect(Date.now() - t0).toBeGreaterThan(1000);',
      'expect(grams.size).toBeLessThanOrEqual(8);',
    ];
    expectDetector(wallClockAssertions, bad, good);
  });

  it('holds for every test source', () => {
    expect(offendersOf(wallClockAssertions)).toEqual([]);
  });
});

describe('no test sleeps a fixed time without saying why', () => {
  it('the detector finds bare sleeps and accepts explained ones, definitions and deadlines of another kind', () => {
    const bad = [
      'await new Promise((r) => setTimeout(r, 100));',
      'await new Promise((resolve) => setTimeout(resolve, 20));',
      'await sleep(600);',
      'for (let i = 0; i < 100 && !check(); i++) await delay(100);',
      "await setTimeout(50); // from 'node:timers/promises'",
    ];
    const good = [
      'await sleep(700); // sleep: the process must be mid-load when it is killed',
      '// sleep: pacing the attacker, one batch per 100 ms\nawait new Promise((r) => setTimeout(r, 100));',
      '/**\n * sleep: a random moment to crash at\n */\nawait sleep(Math.random() * 40);',
      'const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));',
      'function delay(ms) {',
      "const timer = setTimeout(() => reject(new Error('late')), 20_000);",
      'await waitFor(() => tail.logs().length === 3, 4000, "three logs");',
      '// waits for the outbox, never a sleep(…) of fixed length',
    ];
    expectDetector(unexplainedSleeps, bad, good);
    expect(unexplainedSleeps('// about the tail\nawait sleep(5);')).toEqual([2]);
  });

  it('holds for every test source', () => {
    expect(offendersOf(unexplainedSleeps)).toEqual([]);
  });
});
