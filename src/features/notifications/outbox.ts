import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import type { Channels, Outcome } from './channels.js';
import type { Mailer } from './email.js';
import * as outbox from './repository.js';

export type { Outcome } from './channels.js';

const LOCK_MS = 60_000;
const POLL_MS = 1000;
/** Deliveries one project has in flight on this node at once (each may reach 20 destinations). */
export const PROJECT_DELIVERIES = 2;
/** Deliveries in flight on this node at once, over every project. */
export const MAX_DELIVERIES = 32;

/**
 * The notification outbox. Firing writes one pending delivery per channel in the same transaction
 * as the history entry; this loop claims due deliveries (one conditional update, so one node at a
 * time), sends, and records the outcome, retrying with exponential backoff up to
 * DELIVERY_MAX_ATTEMPTS. A node that dies mid-send leaves a lock that runs out, and the delivery is
 * tried again (at least once, never lost).
 *
 * It is a pipeline, not rounds: each project has PROJECT_DELIVERIES slots (MAX_DELIVERIES in all),
 * a delivery starts as soon as its project has a free slot, and the due deliveries are picked
 * across projects in turn (every project's oldest first), so one project's deliveries that hang
 * until their timeouts hold its own slots only, never another project's delivery.
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
  let filling: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** Deliveries in flight on this node, and how many each project has. */
  const inFlight = new Set<Promise<void>>();
  const perProject = new Map<string, number>();
  /** The deliveries in flight here (a fill may read one again before its claim is written). */
  const started = new Set<string>();

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
    // A finished delivery keeps no progress: it named the users (and subscriptions) it reached.
    await outbox.finishDelivery(db, id, { status: outcome.status, error: outcome.error ?? null, state: null, updated_at: finished });
    deps.onFinished?.(delivery.channel, outcome.status as 'sent' | 'failed' | 'skipped');
  }

  /** Starts due deliveries while there are free slots, fairly across projects. */
  async function fill(): Promise<void> {
    do {
      again = false;
      const free = MAX_DELIVERIES - inFlight.size;
      if (free <= 0) return;
      const full = [...perProject].filter(([, n]) => n >= PROJECT_DELIVERIES).map(([p]) => p);
      const due = await outbox.dueDeliveries(db, now(), PROJECT_DELIVERIES, free, full);
      let starts = 0;
      for (const d of due) {
        if (stopped || inFlight.size >= MAX_DELIVERIES) break;
        const held = perProject.get(d.project_id) ?? 0;
        if (held >= PROJECT_DELIVERIES || started.has(d.id)) continue;
        perProject.set(d.project_id, held + 1);
        started.add(d.id);
        starts++;
        const run: Promise<void> = attempt(d.id)
          .catch((err: unknown) => log.error({ err }, 'alert delivery crashed'))
          .finally(() => {
            inFlight.delete(run);
            started.delete(d.id);
            const n = (perProject.get(d.project_id) ?? 1) - 1;
            if (n <= 0) perProject.delete(d.project_id);
            else perProject.set(d.project_id, n);
            // A slot is free: the next due delivery may start now, not at the next poll.
            kick();
          });
        inFlight.add(run);
      }
      // A full page may have more behind it.
      if (starts > 0 && due.length === free) again = true;
    } while (again && !stopped);
  }

  function schedule(delay: number) {
    setTimeout(() => kick(), delay + 10).unref();
  }

  /** Starts due deliveries now (coalesced with a fill already going); never waits for a send. */
  function kick(): void {
    if (stopped) return;
    if (filling) {
      again = true;
      return;
    }
    filling = fill()
      .catch((err: unknown) => log.error({ err }, 'alert outbox failed'))
      .finally(() => {
        filling = undefined;
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
      // Requests waiting for a slot are refused and those in flight cut: their deliveries stay
      // pending and are tried again after the lock runs out (here or on another node).
      channels.close();
      await filling;
      await Promise.all(inFlight);
      mailer?.close();
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
