/**
 * The regex runner's worker queue (src/features/logs/regex-runner.ts): waiting tests are capped per
 * owner (a project) and in all, so one tenant cannot fill the queue and get the others refused; and
 * the caches of compiled patterns evict the least recently used.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lruCache } from '../src/features/logs/pattern.js';
import { MAX_WAITING, MAX_WAITING_PER_OWNER, RegexWorker, regexThreadModule } from '../src/features/logs/regex-runner.js';

const soon = () => Date.now() + 20_000;

describe('the worker queue', () => {
  it('caps waiting tests per owner, and all owners together under a larger ceiling', async () => {
    expect(MAX_WAITING).toBeGreaterThan(MAX_WAITING_PER_OWNER);
    const w = new RegexWorker({ perOwner: 3, total: 5 });
    const deadline = soon();
    // The first job starts at once; three more wait; a fifth would be the owner's fourth waiting.
    const a = [0, 1, 2, 3, 4].map((i) => w.run('proj_a', 'x+', `x${i}`, deadline));
    // Another owner still gets in, up to the total of five waiting.
    const b = [0, 1, 2].map((i) => w.run('proj_b', i === 1 ? 'y' : 'x+', `x${i}`, deadline));
    const c = w.run('proj_c', 'x+', 'x', deadline);
    expect(await Promise.all(a)).toEqual([true, true, true, true, undefined]);
    expect(await Promise.all(b)).toEqual([true, false, undefined]);
    expect(await c).toBeUndefined();
    // Once the queue drains, every owner is taken again.
    expect(await Promise.all([w.run('proj_a', 'x+', 'x', soon()), w.run('proj_c', 'x+', 'x', soon())])).toEqual([true, true]);
  });

  it('answers right across more distinct patterns than its cache holds', async () => {
    const w = new RegexWorker();
    const deadline = soon();
    const sources = Array.from({ length: 260 }, (_, i) => `^p${i}$`);
    const answers = await Promise.all(sources.flatMap((s, i) => [w.run('proj_a', s, `p${i}`, deadline), w.run('proj_a', sources[0]!, `p${i}`, deadline)]));
    expect(answers).toEqual(sources.flatMap((_, i) => [true, i === 0]));
  });
});

describe('the worker thread', () => {
  it('is a module file beside the runner: the .ts with tsx registered under the sources, the .js beside the built runner', async () => {
    const sources = regexThreadModule();
    expect(fileURLToPath(sources.url).endsWith('/src/features/logs/regex-runner.worker.ts')).toBe(true);
    expect(existsSync(sources.url)).toBe(true);
    expect(sources.execArgv.join(' ')).toContain('register()');
    // From dist/ (tsc -p tsconfig.build.json writes regex-runner.worker.js beside regex-runner.js), no tsx.
    expect(regexThreadModule('file:///srv/loglane/dist/features/logs/regex-runner.js')).toEqual({ url: new URL('file:///srv/loglane/dist/features/logs/regex-runner.worker.js'), execArgv: [] });
    // And the thread started from it answers, an invalid pattern undecided.
    const w = new RegexWorker();
    expect(await Promise.all([w.run('proj_a', '^a+$', 'aaa', soon()), w.run('proj_a', '^a+$', ['b', 'c'], soon()), w.run('proj_a', '(', 'x', soon())])).toEqual([true, false, undefined]);
  });
});

describe('lruCache', () => {
  it('evicts the entry used longest ago, not the oldest one set, nor all of them', () => {
    const cache = lruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1);
    cache.set('d', 4);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
    // Setting a key again refreshes it rather than adding a second entry.
    cache.set('a', 5);
    cache.set('e', 6);
    expect([cache.get('a'), cache.get('c'), cache.get('d'), cache.get('e')]).toEqual([5, undefined, 4, 6]);
  });
});
