import { describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { formatDuration, parseDuration } from '../src/duration.js';
import { newId } from '../src/ids.js';
import { safeUrl } from '../src/logger.js';
import { needsRehash } from '../src/features/accounts/passwords.js';
import { isValidEmail, normaliseEmail } from '../src/features/accounts/email-address.js';
import { periodEnd } from '../src/features/plans/plans.js';
import { translateError } from '../src/http/errors.js';
import { AppError } from '../src/errors.js';
import { apiKeyFormat, decryptApiKey, encryptApiKey, maskApiKey } from '../src/features/projects/api-keys.js';
import { checkLimit } from '../src/features/plans/plans.js';
import { bucketSize, matchRules, parseChannels, parseCondition } from '../src/features/alerts/rules.js';
import { isAllowedPushEndpoint } from '../src/features/notifications/push-origins.js';
import { headerSafe } from '../src/features/notifications/email.js';
import { RE2JS } from 're2js';
import fc from 'fast-check';
import { compilePattern } from '../src/features/logs/filter.js';
import { compileRe2, requiredLiteral } from '../src/features/logs/pattern.js';
import { EvaluationQueue } from '../src/features/alerts/evaluation-queue.js';
import type { LogRowStored } from '../src/features/logs/store/repository.js';
import { logJson, presentLog } from '../src/features/logs/present.js';
import { MAX_METADATA_BYTES, normaliseLog } from '../src/features/logs/ingest/normalise.js';

describe('durations', () => {
  it('parses the documented forms', () => {
    expect(parseDuration('900')).toBe(900_000);
    expect(parseDuration('900s')).toBe(900_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    for (const bad of ['', 'm', '15 m', '1.5h', '-1s', '15M', '1w', 'soon']) expect(parseDuration(bad), bad).toBeUndefined();
  });
  it('formats back to the largest whole unit', () => {
    expect(formatDuration(900_000)).toBe('15m');
    expect(formatDuration(86_400_000)).toBe('1d');
    expect(formatDuration(90_000)).toBe('90s');
  });
});

describe('ids', () => {
  it('are prefixed, 26 URL-safe characters, unique, and sort by time', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => newId('usr', 1_700_000_000_000 + i * 7));
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^usr_[0-9a-hjkmnp-tv-z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('config', () => {
  it('has working defaults with no environment at all', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, host: '0.0.0.0', engine: 'sqlite', accessTokenTtlMs: 900_000, refreshTokenTtlMs: 604_800_000, loginMaxAttempts: 10, loginWindowMs: 900_000, loginMaxAttemptsPerIp: 100, defaultPlan: 'free' });
    expect(Object.isFrozen(c)).toBe(true);
  });
  it('lists every problem at once', () => {
    try {
      loadConfig({ PORT: '99999', DATABASE_URL: 'mysql://x', SECRET_KEY: 'short', LOGIN_WINDOW: '0s', LOGIN_MAX_ATTEMPTS: 'ten', TRUST_PROXY: 'maybe' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      for (const name of ['PORT', 'DATABASE_URL', 'SECRET_KEY', 'LOGIN_WINDOW', 'LOGIN_MAX_ATTEMPTS', 'TRUST_PROXY']) expect(problems).toContain(name);
    }
  });
  it('requires SECRET_KEY with PostgreSQL only', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrow(/SECRET_KEY is required/);
    expect(loadConfig({ DATABASE_URL: 'postgres://localhost/x', SECRET_KEY: 'k'.repeat(32) }).engine).toBe('postgres');
  });
});

describe('emails', () => {
  it('normalise by trimming and lower-casing; refuse control characters and broken unicode', () => {
    expect(normaliseEmail('  Ann@Example.COM ')).toBe('ann@example.com');
    expect(isValidEmail(' ann@example.com ')).toBe(true);
    for (const bad of ['ann', 'ann@', '@example.com', 'ann@example', 'a b@example.com', 'a\u0000@example.com', 'a\ud800@example.com', `${'a'.repeat(250)}@example.com`]) {
      expect(isValidEmail(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('subscription period', () => {
  it('ends on the next monthly anniversary, clamped to short months', () => {
    const jan31 = Date.UTC(2026, 0, 31, 12);
    expect(new Date(periodEnd(jan31, Date.UTC(2026, 1, 10))).toISOString()).toBe('2026-02-28T12:00:00.000Z');
    expect(new Date(periodEnd(jan31, Date.UTC(2026, 2, 1))).toISOString()).toBe('2026-03-31T12:00:00.000Z');
    expect(new Date(periodEnd(jan31, jan31)).toISOString()).toBe('2026-02-28T12:00:00.000Z');
  });
});

describe('password hashes', () => {
  it('are re-hashed when weaker than today\'s parameters', () => {
    expect(needsRehash('$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA')).toBe(false);
    expect(needsRehash('$argon2id$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaA')).toBe(true);
    expect(needsRehash('$argon2i$v=19$m=65536,t=3,p=1$c2FsdHNhbHQ$aGFzaA')).toBe(true);
    expect(needsRehash('$2b$10$abcdefghijklmnopqrstuv')).toBe(true);
  });
});

describe('log hygiene', () => {
  it('redacts credential-looking query parameters from logged URLs', () => {
    expect(safeUrl('/v1/x?api_key=llk_secret&token=abc&level=error')).toBe('/v1/x?api_key=%5BRedacted%5D&token=%5BRedacted%5D&level=error');
    expect(safeUrl('/v1/x')).toBe('/v1/x');
  });
});

describe('error translation', () => {
  it('maps app errors, Fastify errors and unknown errors to the documented error codes', () => {
    expect(translateError(new AppError('RATE_LIMITED', 'slow down', { retryAfter: 3 }))).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfter: 3 });
    expect(translateError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }))).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    const internal = translateError(new Error('SQLITE_BUSY: secret detail'));
    expect(internal).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    expect(internal.message).not.toContain('SQLITE');
  });
});

describe('API keys', () => {
  // The format itself (the keyed checksum, CRC32 keys of earlier versions) is tested in test/api-keys.test.ts.
  const generateApiKey = () => apiKeyFormat(Buffer.alloc(32, 9)).generate();
  it('masks as first 8, an ellipsis, last 4', () => {
    expect(maskApiKey('llk_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab')).toBe('llk_ABCD…89ab');
  });
  it('encrypt with the project id as associated data', () => {
    const key = Buffer.alloc(32, 7);
    const apiKey = generateApiKey();
    const sealed = encryptApiKey(key, 'proj_a', apiKey);
    expect(sealed).not.toContain(apiKey.slice(4, 12));
    expect(encryptApiKey(key, 'proj_a', apiKey)).not.toBe(sealed); // a fresh nonce each time
    expect(decryptApiKey(key, 'proj_a', sealed)).toBe(apiKey);
    expect(() => decryptApiKey(key, 'proj_b', sealed)).toThrow();
    const [v, nonce, body, tag] = sealed.split('.');
    const flip = (t: string) => (t[0] === 'A' ? 'B' : 'A') + t.slice(1);
    expect(() => decryptApiKey(key, 'proj_a', [v, nonce, flip(body!), tag].join('.'))).toThrow();
    expect(() => decryptApiKey(key, 'proj_a', [v, nonce, body, flip(tag!)].join('.'))).toThrow();
    expect(() => decryptApiKey(key, 'proj_a', [v, nonce, body, tag!.slice(0, 6)].join('.'))).toThrow();
  });
});

describe('plan limits', () => {
  it('refuse at the cap and name the plan that allows more', () => {
    expect(checkLimit('free', 'projects', 0)).toEqual({ ok: true });
    expect(checkLimit('free', 'projects', 1)).toEqual({ ok: false, limit: 1, message: 'Your free plan allows 1 project. The starter plan allows 5 projects.' });
    expect(checkLimit('pro', 'alerts', 50)).toMatchObject({ ok: false, limit: 50, message: expect.stringContaining('The enterprise plan allows unlimited alert rules per project.') });
    expect(checkLimit('enterprise', 'projects', 1_000_000)).toEqual({ ok: true });
  });
});

describe('alert rules', () => {
  it('parse conditions into their stored form', () => {
    expect(parseCondition({ level: 'Error', threshold: 5, window: '5m', source: '', pattern: 'a|b' })).toEqual({ comparison: 'above', level: 4, threshold: 5, windowMs: 300_000, source: null, pattern: 'a|b', query: null });
    expect(parseCondition({ level: 'info', threshold: 1, window: '1d', comparison: 'below' }).comparison).toBe('below');
    expect(() => parseCondition({ level: 'info', threshold: 1, window: '1d', comparison: 'sideways' })).toThrow();
    expect(parseCondition({ level: 'error', threshold: 1, window: '1m', query: '  @res.statusCode:>=500 ' })).toMatchObject({ query: '  @res.statusCode:>=500 ' });
    expect(parseCondition({ level: 'error', threshold: 1, window: '1m', query: '   ' })).toMatchObject({ query: null });
    expect(() => parseCondition({ level: 'error', threshold: 5, window: '5' })).toThrow();
    try {
      parseCondition({ level: 'error', threshold: 1, window: '1m', query: '@status:' });
      expect.unreachable('an unfinished query is refused');
    } catch (err) {
      expect((err as AppError).details).toEqual([{ path: '/condition/query', message: expect.stringMatching(/^at column 9: /) }]);
    }
    expect(parseChannels(['push', 'email', 'push'])).toEqual(['email', 'push']);
    expect(parseChannels(['slack', 'webhook', 'email'])).toEqual(['email', 'webhook', 'slack']);
  });
  it('count a batch by level, source, pattern and window, into buckets of a sixtieth of the window', async () => {
    expect(bucketSize(300_000)).toBe(5000);
    expect(bucketSize(1000)).toBe(1000);
    const now = 1_000_000_000;
    const rows = [
      { ts: now - 1000, level: 4, source: 'api', message: 'db timeout', metadata: null },
      { ts: now - 2000, level: 4, source: 'api', message: 'ok', metadata: null },
      { ts: now - 3000, level: 3, source: 'api', message: 'db timeout', metadata: null },
      { ts: now - 4000, level: 4, source: 'web', message: 'db timeout', metadata: null },
      { ts: now - 400_000, level: 4, source: 'api', message: 'db timeout', metadata: null },
      { ts: now - 6000, level: 4, source: 'api', message: 'net timeout', metadata: null },
    ];
    const rule = { level: 4, source: 'api', windowMs: 300_000, pattern: compilePattern('timeout') };
    const other = { level: 3, source: null, windowMs: 300_000, pattern: null };
    const { results, undecided } = await matchRules([rule, other], rows, now, 5, 'proj_test', Date.now() + 5000);
    expect(undecided).toEqual([]);
    expect(results.get(other)?.count).toBe(1);
    const m = results.get(rule)!;
    expect(m.count).toBe(2);
    expect(m.sample.map((r) => r.message)).toEqual(['db timeout', 'net timeout']);
    expect([...m.buckets.values()].reduce((a, b) => a + b, 0)).toBe(2);
  });
});

describe('pattern prefilter', () => {
  it('finds the literal every match must contain, and gives up where it cannot prove one', () => {
    expect(requiredLiteral('mfa=none')).toEqual({ literal: 'mfa=none', exact: true });
    expect(requiredLiteral('^(GET|POST) /v1/orders\\b.* 50[24] ')).toEqual({ literal: ' /v1/orders', exact: false });
    expect(requiredLiteral('job sync .* failed on attempt [3-5]/5')).toEqual({ literal: ' failed on attempt ', exact: false });
    expect(requiredLiteral('amount [1-9]\\d{2}\\.00 EUR')).toEqual({ literal: 'amount ', exact: false });
    expect(requiredLiteral('\\.00 EUR')).toEqual({ literal: '.00 EUR', exact: false });
    // A brace that does not start {n}, {n,} or {n,m} is a literal to RE2, and must not hide what follows.
    expect(requiredLiteral('{|}aa')).toBeNull();
    expect(requiredLiteral('a{b}c')).toEqual({ literal: 'a{b}c', exact: true });
    expect(requiredLiteral('took{2,}ms done')).toEqual({ literal: 'ms done', exact: false });
    // Character codes and Unicode classes take arguments that are not literal text.
    expect(requiredLiteral('\\x41BC')).toEqual({ literal: 'BC', exact: false });
    expect(requiredLiteral('\\x{263a}ok')).toEqual({ literal: 'ok', exact: false });
    expect(requiredLiteral('\\p{Greek}+ word')).toEqual({ literal: ' word', exact: false });
    expect(requiredLiteral('\\pLxyz')).toEqual({ literal: 'xyz', exact: false });
    expect(requiredLiteral('\\101bc')).toEqual({ literal: 'bc', exact: false });
    expect(requiredLiteral('timeouts?')).toEqual({ literal: 'timeout', exact: false });
    expect(requiredLiteral('ab+cde')).toEqual({ literal: 'cde', exact: false });
    expect(requiredLiteral('colou?r')).toEqual({ literal: 'colo', exact: false });
    expect(requiredLiteral('x{0,3}yz')).toEqual({ literal: 'yz', exact: false });
    for (const none of ['a|bc', 'abc|d', '(?i)timeout', '(?:ab)cd|e', '\\Qa.b\\E', '\\b(404|429)\\b', 'a.b', '[abc]d']) expect(requiredLiteral(none), none).toBeNull();
  });
  it('answers exactly as RE2 does', () => {
    const alphabet = ['a', 'b', 'c', ' ', '.', '\\', '|', '(', ')', '[', ']', '^', '$', '*', '+', '?', '{', '}', '1', '2', ',', 'd', ':', '-', '😀', 'x', 'p', 'L', '4', '6', '\\x61', '\\141', '\\pL'];
    const patterns = fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 10 }).map((cs) => cs.join(''));
    const texts = fc.array(fc.constantFrom('a', 'b', 'c', ' ', '.', '1', '2', 'd', '😀', '{', '}', '|', 'x', 'p', 'L', '4', '6'), { maxLength: 16 }).map((cs) => cs.join(''));
    let compared = 0;
    fc.assert(
      fc.property(patterns, fc.array(texts, { minLength: 1, maxLength: 10 }), (pattern, inputs) => {
        let re: RE2JS;
        try {
          re = RE2JS.compile(pattern);
        } catch {
          return; // not a valid pattern: the API refuses it before anything runs it
        }
        const fast = compileRe2(pattern);
        for (const text of inputs) {
          compared++;
          expect(fast.test(text), `/${pattern}/ on "${text}"`).toBe(re.test(text));
        }
      }),
      { numRuns: 3000 },
    );
    expect(compared).toBeGreaterThan(1000);
  });
});

describe('alert evaluation queue', () => {
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ seq: i, message: 'm', source: null, metadata: null }) as unknown as LogRowStored);
  it('takes what was committed during a round together in the next, and counts its backlog', async () => {
    const rounds: [string, number][][] = [];
    let release: () => void = () => {};
    const q = new EvaluationQueue(
      async (work) => {
        rounds.push([...work].map(([p, r]) => [p, r.length]));
        if (rounds.length === 1) await new Promise<void>((r) => (release = r));
      },
      (err) => {
        throw err;
      },
    );
    q.add('p1', rows(10));
    expect(q.backlog).toBe(10);
    q.add('p1', rows(5));
    q.add('p2', rows(7));
    q.add('p1', rows(1));
    expect(q.backlog).toBe(23);
    release();
    await q.drain();
    expect(rounds).toEqual([[['p1', 10]], [['p1', 6], ['p2', 7]]]);
    expect(q.backlog).toBe(0);
  });
  it('goes on after a failed round, reporting the error', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const q = new EvaluationQueue(
      async () => {
        if (++calls === 1) throw new Error('database busy');
      },
      (err) => errors.push(err),
    );
    q.add('p', rows(3));
    await q.drain();
    q.add('p', rows(2));
    await q.drain();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    expect(q.backlog).toBe(0);
  });
});

describe('push endpoints', () => {
  const allowed = ['https://fcm.googleapis.com', 'https://*.push.apple.com', 'http://127.0.0.1:4000'];
  it('are allowed by exact origin or host pattern only', () => {
    expect(isAllowedPushEndpoint('https://fcm.googleapis.com/fcm/send/abc', allowed)).toBe(true);
    expect(isAllowedPushEndpoint('https://web.push.apple.com/xyz', allowed)).toBe(true);
    expect(isAllowedPushEndpoint('http://127.0.0.1:4000/push/1', allowed)).toBe(true);
    for (const bad of ['http://fcm.googleapis.com/x', 'https://fcm.googleapis.com.evil.com/x', 'https://push.apple.com.evil/x', 'https://evilpush.apple.com/x', 'https://a@fcm.googleapis.com/x', 'http://127.0.0.1:4001/x', 'https://127.0.0.1:4000/x', 'file:///etc/passwd', 'nonsense']) {
      expect(isAllowedPushEndpoint(bad, allowed), bad).toBe(false);
    }
  });
});

describe('email headers', () => {
  it('user text is one bounded line', () => {
    expect(headerSafe('a\r\nBcc: x@y.z')).toBe('a Bcc: x@y.z');
    expect(headerSafe('x\u2028y')).toBe('x y');
    expect(headerSafe('z'.repeat(500), 20)).toHaveLength(20);
  });
});

describe('log presentation', () => {
  it('the JSON text built around stored metadata equals the parsed-and-serialised form', () => {
    const rows = [
      { seq: 1, ts: 0, received_at: 5, level: 4, source: null, message: 'plain', metadata: null },
      { seq: 123456789, ts: 1_795_000_000_123, received_at: 1_795_000_000_456, level: 0, source: 'api "x"', message: 'quotes " and \\ and \n newline \u2028 🦄 \ufffd', metadata: JSON.stringify({ a: [1, { b: null }], s: 'ü\u0000', __proto__x: 1 }) },
      { seq: 7, ts: 1, received_at: 1, level: 5, source: '', message: '', metadata: JSON.parse('[0]') && '{"__proto__":{"polluted":true}}' },
    ];
    for (const row of rows) expect(JSON.parse(logJson(row))).toEqual(JSON.parse(JSON.stringify(presentLog(row))));
  });
  it('timestamps print exactly as Date#toISOString, whatever the order and range', () => {
    const ms = fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 - 1 }), fc.integer({ min: 1_795_000_000_000, max: 1_795_000_010_000 }), fc.constantFrom(-1, -999, -1000, -1001, 0, 999, 253402300799999, 253402300800000, -62167219200001));
    fc.assert(
      fc.property(fc.array(ms, { minLength: 1, maxLength: 20 }), (times) => {
        for (const t of times) {
          const log = JSON.parse(logJson({ seq: 1, ts: t, received_at: t + 1, level: 2, source: null, message: '', metadata: null }));
          expect([log.timestamp, log.receivedAt]).toEqual([new Date(t).toISOString(), new Date(t + 1).toISOString()]);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('log normalisation', () => {
  it('metadata is refused for its size exactly when it serialises past 64 KiB, whatever its shape', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: -40, max: 40 }), (v, delta) => {
        const pad = MAX_METADATA_BYTES - Buffer.byteLength(JSON.stringify({ v, pad: '' })) + delta;
        if (pad < 0) return;
        const metadata = { v, pad: 'x'.repeat(pad) };
        const n = normaliseLog({ message: 'm', metadata }, 0);
        expect(n.ok ? 'ok' : n.message).toBe(Buffer.byteLength(JSON.stringify(metadata)) <= MAX_METADATA_BYTES ? 'ok' : 'metadata is larger than 64 KiB serialised');
      }),
      { numRuns: 500 },
    );
  });

  it('metadata surely past the limit is refused before it is serialised', () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      for (const metadata of [{ big: 'x'.repeat(MAX_METADATA_BYTES) }, { many: Array.from({ length: 100_000 }, () => 0) }]) {
        expect(normaliseLog({ message: 'm', metadata }, 0)).toEqual({ ok: false, message: 'metadata is larger than 64 KiB serialised' });
        expect(normaliseLog({ message: 'm', extra: metadata }, 0)).toEqual({ ok: false, message: 'metadata is larger than 64 KiB serialised' });
      }
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });
});
