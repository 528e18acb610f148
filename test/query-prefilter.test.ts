/**
 * The raw-text prefilter (query/prefilter.ts) may only rule out logs the predicate rejects: for
 * random logs (with İ, the Kelvin sign, ß, emoji and escapes in their texts) and random query trees,
 * every log the query matches passes the prefilter; and it does rule out most logs for a needle.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { levelIndex } from '../src/features/logs/levels.js';
import { matchLogs, parseQuery, prefilterOf, type QueryLog } from '../src/features/logs/query/index.js';
import { keyedLog, keyedQueryText, queryText, randomLog } from './query-arbitraries.js';

const stored = (l: { timestamp: number; level: string; source?: string; message: string; metadata?: unknown }): QueryLog => {
  return { ts: l.timestamp, level: levelIndex(l.level)!, source: l.source ?? null, message: l.message, metadata: l.metadata === undefined ? null : JSON.stringify(l.metadata) };
};

/** The query of a generated text, or undefined when the text does not parse (the generators make some that do not). */
function parsedOrNone(text: string) {
  try {
    return parseQuery(text);
  } catch {
    return undefined;
  }
}

it('passes every log the query matches (random logs and queries)', async () => {
  const logs = fc.sample(randomLog, { numRuns: 300, seed: 4242 }).map(stored);
  let withPrefilter = 0;
  let ruledOut = 0;
  await fc.assert(
    fc.asyncProperty(queryText, async (text) => {
      const query = parsedOrNone(text);
      if (!query) return;
      const prefilter = prefilterOf(query.root);
      if (prefilter === undefined) return;
      withPrefilter++;
      const verdicts = await matchLogs(query, logs, 'proj_prefilter', Date.now() + 10_000);
      logs.forEach((log, i) => {
        const passes = prefilter(log);
        if (!passes) ruledOut++;
        if (verdicts[i] === true) expect(passes, `${text} on ${JSON.stringify(log)}`).toBe(true);
      });
    }),
    { numRuns: 400, seed: 99 },
  );
  expect(withPrefilter).toBeGreaterThan(50);
  expect(ruledOut).toBeGreaterThan(0);
});

it('passes every log the query matches, over generated metadata keys (empty, dots, NFC and NFD, past 512 characters)', async () => {
  const drawn = fc.sample(keyedLog(true), { numRuns: 200, seed: 2525 });
  const logs = drawn.map(stored);
  let matched = 0;
  await fc.assert(
    fc.asyncProperty(keyedQueryText(drawn), async (text) => {
      const query = parsedOrNone(text);
      if (!query) return;
      const prefilter = prefilterOf(query.root);
      const verdicts = await matchLogs(query, logs, 'proj_prefilter', Date.now() + 10_000);
      logs.forEach((log, i) => {
        if (verdicts[i] !== true) return;
        matched++;
        if (prefilter) expect(prefilter(log), `${text} on ${JSON.stringify(log)}`).toBe(true);
      });
    }),
    { numRuns: 300, seed: 77 },
  );
  expect(matched).toBeGreaterThan(100);
});

it('keeps the logs whose folded text only matches through İ, the Kelvin sign and the like, and rules out the rest', () => {
  const log = (message: string, metadata: object | null = null): QueryLog => ({ ts: 0, level: 2, source: null, message, metadata: metadata && JSON.stringify(metadata) });
  const kafka = prefilterOf(parseQuery('kafka').root)!;
  expect(kafka(log('\u212Aafka down'))).toBe(true); // K (Kelvin) folds to k
  expect(kafka(log('broker', { svc: 'KAFKA' }))).toBe(true);
  expect(kafka(log('broker down', { svc: 'db' }))).toBe(false);
  const field = prefilterOf(parseQuery('@reqId:req_5eed').root)!;
  expect(field(log('served', { reqId: 'REQ_5EED' }))).toBe(true);
  expect(field(log('req_5eed in the message only', { reqId: 'other' }))).toBe(false);
  const message = prefilterOf(parseQuery('message:timeout').root)!;
  expect(message(log('upstream timeout'))).toBe(true);
  expect(message(log('ok', { note: 'timeout' }))).toBe(false);
  // A phrase with a quote gives no needle: JSON escapes it in the metadata.
  expect(prefilterOf(parseQuery('"say \\"hi\\""').root)).toBeUndefined();
  expect(prefilterOf(parseQuery('-kafka').root)).toBeUndefined();
});
