/**
 * Issue 28: syslog messages read (RFC 5424 and RFC 3164, with the RFCs' own examples) and cut from
 * a stream (RFC 6587), on their own: every field where the contract puts it, the key taken from the
 * structured data and never kept, and no input (random bytes, a count of a terabyte, a frame sent a
 * byte at a time) costing more than one message's bytes or ending in anything but frames.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseLog } from '../src/features/logs/ingest/normalise.js';
import { MAX_SYSLOG_BYTES, parseSyslog, SyslogFramer, type Frame } from '../src/features/logs/ingest/syslog.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const KEY = 'llk_' + 'b'.repeat(38);

describe('reading a message', () => {
  it('RFC 5424, the RFC\'s example with structured data, and the key never kept', () => {
    const text = `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][loglane@53595 key="${KEY}"] \uFEFFAn application event log entry...`;
    const { key, log } = parseSyslog(text, NOW);
    expect(key).toBe(KEY);
    expect(log).toEqual({
      message: 'An application event log entry...',
      level: 'info',
      timestamp: '2003-10-11T22:14:15.003Z',
      source: 'evntslog',
      metadata: { facility: 'local4', hostname: 'mymachine.example.com', msgid: 'ID47', sd: { 'exampleSDID@32473': { iut: '3', eventSource: 'Application', eventID: '1011' } } },
    });
    expect(JSON.stringify(log)).not.toContain(KEY);
  });

  it('RFC 5424 with nil values, no structured data, no message, and escapes in a value', () => {
    expect(parseSyslog('<34>1 - - - - - -', NOW)).toEqual({ key: undefined, log: { message: '', level: 'fatal', metadata: { facility: 'auth' } } });
    const { key, log } = parseSyslog('<11>1 2026-11-28T11:59:00+01:00 host app 4242 - [loglane key="a\\"b\\\\c\\]d"] disk failed', NOW);
    expect(key).toBe('a"b\\c]d');
    expect(log).toMatchObject({ message: 'disk failed', level: 'error', timestamp: '2026-11-28T11:59:00+01:00', source: 'app', metadata: { procid: '4242', facility: 'user' } });
  });

  it('RFC 3164, the RFC\'s examples, its year-less time in UTC and in the previous year when it would be ahead', () => {
    expect(parseSyslog('<34>Oct 11 22:14:15 mymachine su: \'su root\' failed for lonvick on /dev/pts/8', NOW).log).toEqual({
      message: "'su root' failed for lonvick on /dev/pts/8",
      level: 'fatal',
      timestamp: '2026-10-11T22:14:15.000Z',
      source: 'su',
      metadata: { facility: 'auth', hostname: 'mymachine' },
    });
    expect(parseSyslog('<13>Dec 31 23:59:59 host cron[77]: job', NOW).log).toMatchObject({ timestamp: '2025-12-31T23:59:59.000Z', source: 'cron', metadata: { procid: '77', hostname: 'host' } });
    // Without a hostname, and without a tag.
    expect(parseSyslog('<14>Nov 28 11:00:00 sshd[1]: accepted', NOW).log).toMatchObject({ source: 'sshd', message: 'accepted', metadata: { procid: '1' } });
    expect(parseSyslog('<15>just text', NOW).log).toMatchObject({ message: 'just text', level: 'debug' });
    expect(parseSyslog('no priority at all', NOW).log).toMatchObject({ message: 'no priority at all', level: 'info', metadata: { facility: 'user' } });
  });

  it('maps the eight severities to levels', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((sev) => parseSyslog(`<${8 + sev}>1 - - - - - - x`, NOW).log.level)).toEqual(['fatal', 'fatal', 'fatal', 'error', 'warn', 'info', 'info', 'debug']);
  });

  it('gives normaliseLog a log it takes, or refuses with a reason, for any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string().map((s) => `<13>1 ${s}`), fc.string().map((s) => `<13>Nov 28 10:00:00 ${s}`)), (text) => {
        const { log } = parseSyslog(text, NOW, text.length % 2 === 0);
        const row = normaliseLog(log, NOW);
        if (!row.ok) expect(typeof row.message).toBe('string');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('cutting a stream into messages', () => {
  const texts = (frames: Frame[]) => frames.map((f) => f.bytes.toString());

  it('reads octet counting and newline framing, mixed, however the stream is cut', () => {
    const stream = Buffer.from('11 <13>1 - a b\n<14>plain line\r\n5 hello7 <1>x yz\n');
    const whole = new SyslogFramer();
    const expected = ['<13>1 - a b', '<14>plain line', 'hello', '<1>x yz'];
    expect(texts([...whole.push(stream), ...whole.end()])).toEqual(expected);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length }), { maxLength: 10 }), (cuts) => {
        const f = new SyslogFramer();
        const out: Frame[] = [];
        let at = 0;
        for (const c of [...cuts, stream.length]) {
          const end = Math.min(stream.length, at + c);
          out.push(...f.push(stream.subarray(at, end)));
          at = end;
          if (at >= stream.length) break;
        }
        out.push(...f.push(stream.subarray(at)), ...f.end());
        expect(texts(out)).toEqual(expected);
      }),
    );
  });

  it('cuts a message past 64 KiB, marks it, and skips the rest of it, holding no more than that', () => {
    const f = new SyslogFramer();
    const big = 'x'.repeat(MAX_SYSLOG_BYTES + 1000);
    const frames = [...f.push(Buffer.from(`${big.length} ${big}`)), ...f.push(Buffer.from(`${big}\nafter\n`))];
    expect(frames.map((fr) => [fr.bytes.length, fr.truncated])).toEqual([
      [MAX_SYSLOG_BYTES, true],
      [MAX_SYSLOG_BYTES, true],
      [5, false],
    ]);
    // A count of a terabyte: one cut message, and the stream's next bytes skipped, not held.
    const huge = new SyslogFramer();
    expect(huge.push(Buffer.from('1000000000000 ')).length).toBe(0);
    for (let i = 0; i < 100; i++) huge.push(Buffer.alloc(16 * 1024, 0x61));
    expect(huge.held).toBe(0);
  });

  it('a frame sent a byte at a time costs what it would sent whole', () => {
    const f = new SyslogFramer();
    const line = Buffer.from(`<13>${'y'.repeat(MAX_SYSLOG_BYTES - 100)}\n`);
    const frames: Frame[] = [];
    for (let i = 0; i < line.length; i++) frames.push(...f.push(line.subarray(i, i + 1)));
    expect(frames.map((fr) => fr.bytes.length)).toEqual([line.length - 1]);
    expect(f.held).toBe(0);
    // Joined once: copying the held bytes on every byte would be ~2 GB of copies.
    expect(f.copied).toBeLessThanOrEqual(2 * line.length);
  });

  it('never holds more than a message, whatever it is given', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(Buffer.from('99999 '), Buffer.from('\n'), Buffer.from('70000 '))), { maxLength: 40 }), (chunks) => {
        const f = new SyslogFramer();
        for (const c of chunks) {
          for (const fr of f.push(Buffer.from(c))) expect(fr.bytes.length).toBeLessThanOrEqual(MAX_SYSLOG_BYTES);
          expect(f.held).toBeLessThanOrEqual(MAX_SYSLOG_BYTES + 12);
        }
        f.end();
      }),
      { numRuns: 500 },
    );
  });
});
