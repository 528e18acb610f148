import { describe, expect, it } from 'vitest';
import { SseParser, TailClient, type TailStatus } from './tail.ts';

describe('SSE parsing', () => {
  it('splits events across arbitrary chunk boundaries and line endings', () => {
    const text = 'retry: 2000\n: connected\n\nid: 1\nevent: log\ndata: {"n":1}\n\r\nid: 2\r\nevent: log\r\ndata: {"n":\ndata: 2}\r\n\r\n: keep-alive\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...parser.push(bytes.slice(i, i + size)));
      expect(events).toEqual([
        { event: 'log', id: '1', data: '{"n":1}' },
        { event: 'log', id: '2', data: '{"n":\n2}' },
      ]);
      expect(parser.retry).toBe(2000);
    }
  });

  it('decodes UTF-8 split inside a character', () => {
    const bytes = new TextEncoder().encode('event: log\ndata: ünïcødé ✓\n\n');
    const parser = new SseParser();
    const out = [...parser.push(bytes.slice(0, 14)), ...parser.push(bytes.slice(14))];
    expect(out[0]!.data).toBe('ünïcødé ✓');
  });
});

/** A stream the test writes SSE text into, then ends or breaks. */
function controllableStream() {
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctrl = c) });
  const enc = new TextEncoder();
  return {
    response: new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    write: (s: string) => ctrl.enqueue(enc.encode(s)),
    end: () => ctrl.close(),
    fail: () => ctrl.error(new TypeError('network error')),
  };
}

const frame = (seq: number) => `id: ${seq}\nevent: log\ndata: {"seq":${seq}}\n\n`;

async function until(check: () => boolean): Promise<void> {
  // sleep: the pause between two looks at the condition (this is the web tests' waitFor; it fails when the condition never comes)
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error('condition not reached');
}

describe('live tail client', () => {
  it('resumes after a dropped connection from the last event it saw', async () => {
    const opened: Array<string | undefined> = [];
    const streams: Array<ReturnType<typeof controllableStream>> = [];
    const got: number[] = [];
    const statuses: TailStatus[] = [];
    const client = new TailClient<{ seq: number }>({
      open: async (lastEventId) => {
        opened.push(lastEventId);
        const s = controllableStream();
        streams.push(s);
        return s.response;
      },
      onEvents: (items) => got.push(...items.map((i) => i.seq)),
      onStatus: (s) => statuses.push(s),
      sleep: async () => undefined,
    });
    client.start();
    await until(() => streams.length === 1);
    streams[0]!.write(': connected\n\n' + frame(1) + frame(2));
    await until(() => got.length === 2);
    streams[0]!.fail();
    await until(() => streams.length === 2);
    expect(opened).toEqual([undefined, '2']);
    // The server replays from after id 2.
    streams[1]!.write(frame(3));
    await until(() => got.length === 3);
    expect(got).toEqual([1, 2, 3]);
    expect(statuses).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    await client.stop();
    expect(statuses.at(-1)).toBe('stopped');
  });

  it('pauses by closing the stream and resumes from where it stopped', async () => {
    const opened: Array<string | undefined> = [];
    const streams: Array<ReturnType<typeof controllableStream>> = [];
    const got: number[] = [];
    let aborted = 0;
    const client = new TailClient<{ seq: number }>({
      open: async (lastEventId, signal) => {
        opened.push(lastEventId);
        const s = controllableStream();
        signal.addEventListener('abort', () => {
          aborted++;
          s.fail();
        });
        streams.push(s);
        return s.response;
      },
      onEvents: (items) => got.push(...items.map((i) => i.seq)),
      onStatus: () => undefined,
    });
    client.start();
    await until(() => streams.length === 1);
    streams[0]!.write(frame(10) + frame(11));
    await until(() => got.length === 2);
    await client.pause();
    expect(client.status).toBe('paused');
    expect(aborted).toBe(1);
    client.resume();
    await until(() => streams.length === 2);
    expect(opened).toEqual([undefined, '11']);
    streams[1]!.write(frame(12));
    await until(() => got.length === 3);
    expect(got).toEqual([10, 11, 12]);
    await client.stop();
  });

  it('gives up at once on a refusal that retrying cannot fix, with the server message', async () => {
    let details: string | undefined;
    const client = new TailClient({
      open: async () => new Response(JSON.stringify({ error: { code: 'VALIDATION_ERROR', message: 'pattern is not a valid RE2 expression' } }), { status: 400 }),
      onEvents: () => undefined,
      onStatus: (s, d) => {
        if (s === 'failed') details = d;
      },
    });
    client.start();
    await until(() => client.status === 'failed');
    expect(details).toBe('pattern is not a valid RE2 expression');
  });

  it('retries a 429 or 503 with backoff and stops after the attempt limit', async () => {
    const delays: number[] = [];
    let opens = 0;
    const client = new TailClient({
      open: async () => (opens++, new Response('{}', { status: 503 })),
      onEvents: () => undefined,
      onStatus: () => undefined,
      backoff: (n) => 100 * 2 ** n,
      sleep: async (ms) => void delays.push(ms),
      maxAttempts: 4,
    });
    client.start();
    await until(() => client.status === 'failed');
    expect(opens).toBe(4);
    expect(delays).toEqual([100, 200, 400]);
  });
});
