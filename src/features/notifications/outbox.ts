import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import type { Channels, Outcome } from './channels.js';
import type { Mailer } from './email.js';
import * as outbox from './repository.js';

export type { Outcome } from './channels.js';

const LOCK_MS = 60_000;
const POLL_MS = 1000;

/**
 * The notification outbox. Firing writes one pending delivery per channel in the same transaction
 * as the history entry; this loop claims due deliveries (one conditional update, so one node at a
 * time), sends, and records the outcome, retrying with exponential backoff up to
 * DELIVERY_MAX_ATTEMPTS. A node that dies mid-send leaves a lock that runs out, and the delivery is
 * tried again (at least once, never lost).
 */
export function createOutbox(deps: {
  db: Db;
  config: Config;
  now: () => number;
  log: FastifyBaseLogger;
  mailer: Mailer | undefined;
  channels: Channels;
  /** Told of every delivery that ends (sent, failed or skipped). */
  onFinished?: (channel: string, status: 'sent' | 'failed' | 'skipped') => void;
}) {
  const { db, config, now, log, mailer, channels } = deps;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function attempt(id: string): Promise<void> {
    const t = now();
    const delivery = await outbox.claimDelivery(db, id, t, LOCK_MS);
    if (!delivery) return;
    let outcome: Outcome;
    try {
      const ctx = await outbox.firingContext(db, delivery.history_id);
      const send = channels.of(delivery.channel);
      if (!ctx) outcome = { status: 'skipped', error: 'the alert no longer exists' };
      else if (!send) outcome = { status: 'skipped', error: `unknown channel ${delivery.channel}` };
      else outcome = await send(ctx, delivery.state);
    } catch (err) {
      outcome = { status: 'retry', error: err instanceof Error ? err.message : String(err) };
    }
    const finished = now();
    if (outcome.status === 'retry') {
      if (delivery.attempts >= config.deliveryMaxAttempts) {
        outcome = { ...outcome, status: 'failed', error: `${outcome.error ?? 'failed'} (gave up after ${delivery.attempts} attempts)` };
      } else {
        const delay = config.deliveryRetryBaseMs * 2 ** (delivery.attempts - 1);
        log.warn({ deliveryId: id, channel: delivery.channel, attempt: delivery.attempts, error: outcome.error }, 'alert delivery failed; will retry');
        await outbox.finishDelivery(db, id, { next_attempt_at: finished + delay, error: outcome.error ?? null, state: outcome.state ?? delivery.state, updated_at: finished });
        schedule(delay);
        return;
      }
    }
    if (outcome.status === 'failed') log.warn({ deliveryId: id, channel: delivery.channel, error: outcome.error }, 'alert delivery failed');
    await outbox.finishDelivery(db, id, { status: outcome.status, error: outcome.error ?? null, state: outcome.state ?? delivery.state, updated_at: finished });
    deps.onFinished?.(delivery.channel, outcome.status as 'sent' | 'failed' | 'skipped');
  }

  async function drainDue(): Promise<void> {
    do {
      again = false;
      const due = await outbox.dueDeliveries(db, now(), 20);
      await Promise.all(due.map((d) => attempt(d.id).catch((err: unknown) => log.error({ err }, 'alert delivery crashed'))));
      if (due.length === 20) again = true;
    } while (again && !stopped);
  }

  function schedule(delay: number) {
    setTimeout(() => kick(), delay + 10).unref();
  }

  /** Processes due deliveries now (coalesced with a run already going). */
  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drainDue()
      .catch((err: unknown) => log.error({ err }, 'alert outbox failed'))
      .finally(() => {
        running = undefined;
      });
  }

  return {
    kick,
    start() {
      timer = setInterval(kick, POLL_MS);
      timer.unref();
      kick();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
      mailer?.close();
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
