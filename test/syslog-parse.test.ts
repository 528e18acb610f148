/**
 * Issue 28: syslog messages read (RFC 5424 and RFC 3164, with the RFCs' own examples) and cut from
 * a stream (RFC 6587), on their own: every field where docs/integrations.md puts it, the key taken from the
 * structured data and never kept, and no input (random bytes, a count of a terabyte, a frame sent a
 * byte at a time) costing more than one message's bytes or ending in anything but frames.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseLog } from '../src/features/logs/ingest/normalise.js';
import { cutUtf8, decodeSyslog, MAX_SYSLOG_BYTES, parseSyslog, SyslogFramer, type Frame } from '../src/features/logs/ingest/syslog.js';

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

describe('the key\'s element in any form of message', () => {
  const TS = '2026-11-28T12:00:00Z';

  it('is read and stripped wherever it stands: RFC 5424 near misses, RFC 3164, the message text, the header', () => {
    const forms = [
      `<14>2026-11-28T12:00:00Z host app - - [loglane@53595 key="${KEY}"] missing version`,
      `<14>1  ${TS}  host app - - [loglane@53595 key="${KEY}"] extra spaces`,
      `<14>1 ${TS} host app - - - message start [loglane@53595 key="${KEY}"] element after the start`,
      `<14>1 ${TS} host app - - [exampleSDID@32473 iut="3"] [loglane key="${KEY}"] after another element`,
      `<14>Nov 28 12:00:00 host app: [loglane@53595 key="${KEY}"] rfc 3164`,
      `<14>1 - [loglane@1 key="${KEY}"] - - - - in the header`,
      `<14>1 ${TS} host app - - [LOGLANE@53595 key="${KEY}"] another case`,
      `<14>1 ${TS} host app - - [loglane@53595 key="${KEY}"][loglane key="${KEY}"] twice, the same key`,
      `[loglane key="${KEY}"] no priority, nothing else`,
      `<14>1 13-45T99 host app - - [loglane key="${KEY}"] bad timestamp`,
    ];
    for (const text of forms) {
      const read = parseSyslog(text, NOW);
      expect(read.keyProblem, text).toBeUndefined();
      expect(read.key, text).toBe(KEY);
      expect(JSON.stringify(read.log), text).not.toContain(KEY);
      expect(JSON.stringify(read.log).toLowerCase(), text).not.toContain('loglane');
    }
    expect(parseSyslog(forms[2]!, NOW).log).toMatchObject({ message: 'message start element after the start', source: 'app', metadata: { hostname: 'host' } });
    expect(parseSyslog(forms[4]!, NOW).log).toMatchObject({ message: 'rfc 3164', source: 'app', metadata: { hostname: 'host' } });
  });

  it('one that does not read is a problem, never a message without a key', () => {
    const nearMisses = [
      `<14>1 ${TS} host app - - [loglane@53595 key='${KEY}'] single quotes`,
      `<14>1 ${TS} host app - - [loglane@53595 key=${KEY}] no quotes`,
      `<14>1 ${TS} host app - - [ loglane key="${KEY}"] a space after the bracket`,
      `<14>1 ${TS} host app - - [loglane@53595  key="${KEY}"] two spaces`,
      `<14>1 ${TS} host app - - [loglane@53595 kee="${KEY}"] another name`,
      `<14>1 ${TS} host app - - [loglane@53595 key=""] empty`,
      `<14>1 ${TS} host app - - [loglane@53595 key="${KEY}" unterminated`,
      `<14>1 ${TS} host app - - [loglane key="${KEY}"x] junk after the value`,
      `<14>Nov 28 12:00:00 host app: [loglane key=${KEY}] rfc 3164 without quotes`,
      `<14>1 ${TS} host app - - [loglane key="${KEY}"] [loglane key="llk_other"] two keys`,
    ];
    for (const text of nearMisses) expect(parseSyslog(text, NOW).keyProblem, text).toBeDefined();
    // Words that only begin like it are text.
    expect(parseSyslog('<14>1 - host app - - - see [loglane.example.com] and [loglanes]', NOW)).toMatchObject({ key: undefined, log: { message: 'see [loglane.example.com] and [loglanes]' } });
    expect(parseSyslog('<14>1 - host app - - - see [loglane.example.com]', NOW).keyProblem).toBeUndefined();
  });

  it('for any text around it, the key is found and never kept, or the message is a problem', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.constantFrom('loglane', 'loglane@53595', 'Loglane', ' loglane'), fc.constantFrom('"', "'", ''), (before, after, id, quote) => {
        const read = parseSyslog(`<14>${before}[${id} key=${quote}${KEY}${quote}]${after}`, NOW);
        if (read.keyProblem === undefined) expect(JSON.stringify(read.log)).not.toContain(KEY);
      }),
      { numRuns: 500 },
    );
  });
});

describe('text at the 64 KiB edge', () => {
  it('a character split by the cut is dropped, not the message; bytes that are not UTF-8 are U+FFFD', () => {
    const euro = Buffer.from('€'.repeat(30_000));
    // The framing cut the message inside a character: that character goes, the rest is kept.
    expect(decodeSyslog(euro.subarray(0, MAX_SYSLOG_BYTES), true)).toBe('€'.repeat(Math.floor(MAX_SYSLOG_BYTES / 3)));
    expect(decodeSyslog(Buffer.from([0x61, 0xe2, 0x82]), false)).toBe('a\uFFFD');
    expect(decodeSyslog(Buffer.from([0x61, 0xe9, 0x62]), true)).toBe('a\uFFFDb');
  });

  it('text of more than 64 KiB once read is cut on a character and marked, never longer', () => {
    const latin1 = decodeSyslog(Buffer.concat([Buffer.from('<14>1 - host app - - - '), Buffer.alloc(40_000, 0xe9)]), false);
    const { log } = parseSyslog(latin1, NOW);
    expect(Buffer.byteLength(log.message)).toBeLessThanOrEqual(MAX_SYSLOG_BYTES);
    expect(log.message).toMatch(/^\uFFFD+$/);
    expect(log.metadata).toMatchObject({ truncated: true });
    expect(normaliseLog(log, NOW).ok).toBe(true);
    const emoji = parseSyslog('<14>1 - host app - - - ' + '😀'.repeat(20_000), NOW).log;
    expect(Buffer.byteLength(emoji.message)).toBeLessThanOrEqual(MAX_SYSLOG_BYTES);
    expect(emoji.message).toMatch(/^(😀)+$/u);
    expect(cutUtf8('short', MAX_SYSLOG_BYTES)).toBeUndefined();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 20_000, maxLength: 40_000 }), (text) => {
        const cut = cutUtf8(text, MAX_SYSLOG_BYTES) ?? text;
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_SYSLOG_BYTES);
        expect(text.startsWith(cut)).toBe(true);
      }),
      { numRuns: 20 },
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

  it('stops where its reader says, and gives back the bytes it has not read, which read later give the same frames', () => {
    const stream = Buffer.from('5 hello<1>line one\n7 <1>x yz\n3 abc' + 'x'.repeat(70_000) + '\nlast\n');
    const all = new SyslogFramer().push(stream);
    const f = new SyslogFramer();
    const got: Frame[] = [];
    let chunk: Buffer | undefined = stream;
    while (chunk) {
      // One frame at a time: the rest goes back, as a paused connection puts it back on its socket.
      chunk = f.read(chunk, (fr) => {
        got.push(fr);
        return false;
      });
    }
    expect(texts(got)).toEqual(texts(all));
    expect(got.map((fr) => fr.truncated)).toEqual(all.map((fr) => fr.truncated));
  });
});

describe('reading a message costs its length, not its length squared', () => {
  /** Runs `work`, counting the characters String.prototype.indexOf looks through (to what it finds, or to the end). */
  function scanned(work: () => void): number {
    const original = String.prototype.indexOf;
    let n = 0;
    String.prototype.indexOf = function (this: string, search: string, from?: number) {
      const start = Math.max(0, Math.min(from ?? 0, this.length));
      const at = original.call(this, search, from);
      n += (at < 0 ? this.length : at) - start;
      return at;
    };
    try {
      work();
    } finally {
      String.prototype.indexOf = original;
    }
    return n;
  }

  it('7,200 "[loglane " that do not read, then "=" (64 KB): one element is tried, the message is refused, and the text is looked through a bounded number of times', () => {
    for (const text of [`<14>1 - h a - - - ${'[loglane '.repeat(7200)}=`, `<14>${'[loglane '.repeat(7200)}=`, `<14>1 - h a - - - ${'[loglane a'.repeat(6500)}="x"`]) {
      let parsed: ReturnType<typeof parseSyslog> | undefined;
      const n = scanned(() => {
        parsed = parseSyslog(text, NOW);
      });
      expect(parsed!.keyProblem).toBeDefined();
      // Before, each element looked on to the end of the text: about 7,200 × 32,000 characters.
      expect(n).toBeLessThanOrEqual(4 * text.length);
    }
  });
});
