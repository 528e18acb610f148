/**
 * Live tail over fetch streaming (the access token goes in a header, never in the URL, so no
 * EventSource). Each event's id is remembered; after a dropped connection or a pause, the stream
 * reopens with `Last-Event-ID` and the server replays exactly what was missed.
 */

import { SseParser } from '../../../packages/client/src/sse.ts';

export { SseParser };
export type { SseEvent } from '../../../packages/client/src/sse.ts';

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
              // The server ended the stream on purpose (an expired token, an ended login): say why,
              // and reconnect (with a refreshed token) from the last event.
              else if (e.event === 'end') detail = endReason(e.data) ?? detail;
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

/** The reason in an `event: end` frame's data (`{"reason": "..."}`), if it has one. */
function endReason(data: string): string | undefined {
  try {
    const reason = (JSON.parse(data) as { reason?: unknown }).reason;
    return typeof reason === 'string' ? `The server ended the live tail: ${reason}.` : undefined;
  } catch {
    return undefined;
  }
}
