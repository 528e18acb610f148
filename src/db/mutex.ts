/**
 * A lock that hands over to one waiter at a time, first come first served: `unlock` passes the lock
 * straight to the longest waiter (it is never free in between, so nobody can jump the queue) and
 * wakes that one only. N waiters cost N wakeups, where a lock whose waiters all await one shared
 * promise and race again on every release costs N²/2 (each release wakes every one of them).
 */
export class FairMutex {
  #locked = false;
  readonly #waiters: (() => void)[] = [];
  #head = 0;
  /** Waiters woken so far (tests count them). */
  wakeups = 0;

  /** Resolves when the caller holds the lock. */
  lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Hands the lock to the longest waiter, or frees it when none waits. */
  unlock(): void {
    if (this.#head < this.#waiters.length) {
      const next = this.#waiters[this.#head]!;
      this.#waiters[this.#head++] = undefined as never;
      // Dropping the served part of the queue now and then keeps unlock O(1) without a shift() per call.
      if (this.#head >= 1024 && this.#head * 2 >= this.#waiters.length) {
        this.#waiters.splice(0, this.#head);
        this.#head = 0;
      }
      this.wakeups++;
      next();
      return;
    }
    this.#waiters.length = 0;
    this.#head = 0;
    this.#locked = false;
  }

  /** Callers waiting for the lock. */
  get waiting(): number {
    return this.#waiters.length - this.#head;
  }
}
