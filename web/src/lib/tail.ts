/**
 * Live tail over fetch streaming (the access token goes in a header, never in the URL, so no
 * EventSource). Each event's id is remembered; after a dropped connection or a pause, the stream
 * reopens with `Last-Event-ID` and the server replays exactly what was missed.
 */

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/** Splits a Server-Sent Events byte stream, fed in arbitrary chunks, into events. */
export class SseParser {
  private buffer = '';
  private decoder = new TextDecoder();
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  /** The `retry:` the server asked for, in milliseconds. */
  retry: number | undefined;

  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone \r at the end may be half of \r\n: wait for the next chunk.
      if (width === 1 && this.buffer[nl] === '\r' && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + width);
      if (line === '') {
        if (this.data.length > 0) out.push({ event: this.event || 'message', id: this.id, data: this.data.join('\n') });
        this.event = '';
        this.data = [];
        this.id = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
      else if (field === 'id' && !value.includes('\0')) this.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
    }
    return out;
  }
}

export type TailStatus = 'connecting' | 'live' | 'paused' | 'reconnecting' | 'stopped' | 'failed';

export interface TailOptions<T> {
  /** Opens the stream; `lastEventId` is set when resuming. Must reject or return a non-2xx Response on failure. */
  open: (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;
  onEvents: (items: T[]) => void;
  onStatus: (status: TailStatus, detail?: string) => void;
  parse?: (data: string) => T;
  /** Backoff between reconnects, in ms: attempt → delay. */
  backoff?: (attempt: number) => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Failures after which the tail gives up (a 4xx other than 401/429 gives up at once). */
  maxAttempts?: number;
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

/**
 * Runs a live tail until stopped. Pausing closes the stream and keeps the last id; resuming
 * reopens it from there, so the logs that arrived meanwhile come through once, in order.
 */
export class TailClient<T = unknown> {
  lastEventId: string | undefined;
  status: TailStatus = 'stopped';
  private controller: AbortController | null = null;
  private run: Promise<void> | null = null;

  constructor(private readonly options: TailOptions<T>) {}

  start(): void {
    if (this.run) return;
    const controller = new AbortController();
    this.controller = controller;
    this.run = this.loop(controller.signal).finally(() => {
      if (this.controller === controller) {
        this.controller = null;
        this.run = null;
      }
    });
  }

  /** Stops reading but remembers where it was; `resume()` continues from there. */
  async pause(): Promise<void> {
    await this.halt();
    this.setStatus('paused');
  }

  resume(): void {
    this.start();
  }

  async stop(): Promise<void> {
    await this.halt();
    this.lastEventId = undefined;
    this.setStatus('stopped');
  }

  private async halt(): Promise<void> {
    const run = this.run;
    this.controller?.abort();
    this.controller = null;
    this.run = null;
    await run?.catch(() => undefined);
  }

  private setStatus(status: TailStatus, detail?: string): void {
    this.status = status;
    this.options.onStatus(status, detail);
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const parse = this.options.parse ?? ((d: string) => JSON.parse(d) as T);
    const backoff = this.options.backoff ?? ((n: number) => Math.min(30_000, 500 * 2 ** n));
    const sleep = this.options.sleep ?? defaultSleep;
    const maxAttempts = this.options.maxAttempts ?? 8;
    let failures = 0;
    this.setStatus(this.lastEventId ? 'reconnecting' : 'connecting');
    while (!signal.aborted) {
      let detail = 'The live tail was interrupted.';
      try {
        const res = await this.options.open(this.lastEventId, signal);
        if (!res.ok || !res.body) {
          const giveUp = res.status >= 400 && res.status < 500 && res.status !== 401 && res.status !== 429 && res.status !== 408;
          let message = `The server answered ${res.status}.`;
          try {
            message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? message;
          } catch {
            /* not JSON */
          }
          if (giveUp) {
            this.setStatus('failed', message);
            return;
          }
          detail = message;
        } else {
          const parser = new SseParser();
          const reader = res.body.getReader();
          // A stream that ignores the abort signal still stops when the tail is paused or stopped.
          const cancel = () => void reader.cancel().catch(() => undefined);
          signal.addEventListener('abort', cancel, { once: true });
          let announced = false;
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            if (!announced) {
              announced = true;
              failures = 0;
              this.setStatus('live');
            }
            const events = parser.push(value);
            const items: T[] = [];
            for (const e of events) {
              if (e.id !== undefined) this.lastEventId = e.id;
              if (e.event === 'log') items.push(parse(e.data));
            }
            if (items.length) this.options.onEvents(items);
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        detail = err instanceof Error ? err.message : String(err);
      }
      if (signal.aborted) return;
      failures++;
      if (failures >= maxAttempts) {
        this.setStatus('failed', `${detail} Gave up after ${failures} attempts.`);
        return;
      }
      this.setStatus('reconnecting', detail);
      await sleep(backoff(failures - 1), signal);
    }
  }
}
