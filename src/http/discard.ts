import type { IncomingMessage } from 'node:http';

/** A token bucket over real time, in bytes: how long to wait before reading more. */
export class Pace {
  #tokens: number;
  #at = performance.now();

  constructor(
    private readonly bytesPerSecond: number,
    private readonly burstBytes: number,
  ) {
    this.#tokens = burstBytes;
  }

  /** Charges `bytes`; answers the milliseconds to wait before the next read (0: read on). */
  charge(bytes: number): number {
    const now = performance.now();
    this.#tokens = Math.min(this.burstBytes, this.#tokens + ((now - this.#at) / 1000) * this.bytesPerSecond);
    this.#at = now;
    this.#tokens -= bytes;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.bytesPerSecond) * 1000;
  }
}

/**
 * Refused bodies (every error answered before its body was read) are read and dropped at most this fast in all (a burst of 16 MiB aside): reading
 * is what a flood of refused requests costs the server, and read slowly it also slows their
 * sender (TCP), instead of taking the CPU from everyone else's requests.
 */
export const DISCARD_BYTES_PER_SECOND = 64 * 1024 * 1024;
export const discardPace = new Pace(DISCARD_BYTES_PER_SECOND, 16 * 1024 * 1024);

/**
 * Reads the rest of a request body and throws it away, at most `maxBytes` within `maxMs`, no
 * faster than `pace` allows; true when it was read to its end. For a request refused before its
 * body was read: the client can then read the refusal instead of a reset connection.
 */
export function discardBody(raw: IncomingMessage, maxBytes: number, maxMs: number, pace?: Pace): Promise<boolean> {
  if (raw.complete) return Promise.resolve(true);
  if (raw.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let read = 0;
    let done = false;
    let paused: NodeJS.Timeout | undefined;
    const finish = (ok: boolean) => {
      done = true;
      clearTimeout(timer);
      clearTimeout(paused);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      raw.off('error', onClose);
      if (!ok) raw.pause();
      resolve(ok);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxBytes) return finish(false);
      const wait = pace?.charge(chunk.length) ?? 0;
      if (wait > 0 && paused === undefined) {
        raw.pause();
        paused = setTimeout(() => {
          paused = undefined;
          if (!done) raw.resume();
        }, wait);
      }
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const timer = setTimeout(() => finish(false), maxMs);
    timer.unref();
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('close', onClose);
    raw.on('error', onClose);
    raw.resume();
  });
}
