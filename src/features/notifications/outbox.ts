import type { FastifyBaseLogger } from 'fastify';
import webpush from 'web-push';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { formatDuration } from '../../duration.js';
import * as alerts from '../alerts/repository.js';
import { levelName } from '../logs/levels.js';
import { alertEmail, headerSafe, type Mailer } from './email.js';
import { isAllowedPushEndpoint } from './push-origins.js';
import type { VapidKeys } from './vapid.js';

/**
 * One Web Push message: encrypted (aes128gcm, RFC 8291) and signed (VAPID, RFC 8292) by the
 * web-push package, sent with fetch without following redirects, so the request goes to the
 * checked endpoint and nowhere else.
 */
async function sendWebPush(subscription: webpush.PushSubscription, payload: string, vapid: { subject: string; publicKey: string; privateKey: string }): Promise<void> {
  const request = webpush.generateRequestDetails(subscription, payload, { vapidDetails: vapid, TTL: 3600, urgency: 'high' });
  const res = await fetch(request.endpoint, {
    method: request.method,
    headers: request.headers as Record<string, string>,
    body: request.body ?? undefined,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer().catch(() => undefined);
  if (res.status < 200 || res.status > 299) throw Object.assign(new Error(`push service answered ${res.status}`), { statusCode: res.status });
}

/** What one attempt at a delivery came to. `retry` keeps it pending for another attempt. */
export type Outcome = { status: 'sent' | 'skipped' | 'failed' | 'retry'; error?: string; state?: string | null };

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
  vapid: () => Promise<VapidKeys>;
  /** Told of every delivery that ends (sent, failed or skipped). */
  onFinished?: (channel: string, status: 'sent' | 'failed' | 'skipped') => void;
}) {
  const { db, config, now, log, mailer } = deps;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function sendEmail(ctx: alerts.FiringContext): Promise<Outcome> {
    if (!mailer) return { status: 'skipped', error: 'email is not configured on this server (SMTP_URL)' };
    await mailer.send(ctx.ownerEmail, alertEmail(ctx, config.publicUrl));
    return { status: 'sent' };
  }

  async function sendPush(ctx: alerts.FiringContext, state: string | null): Promise<Outcome> {
    const subs = await db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', ctx.userId).execute();
    // Subscriptions already reached in an earlier attempt are not sent to again.
    const done = new Set<string>(state ? (JSON.parse(state) as { done: string[] }).done : []);
    const todo = subs.filter((s) => !done.has(s.id));
    if (subs.length === 0) return { status: 'skipped', error: 'no push subscriptions' };
    const keys = await deps.vapid();
    const payload = JSON.stringify({
      title: headerSafe(`${ctx.ruleName} ${ctx.kind === 'resolved' ? 'resolved' : 'fired'}`, 120),
      body: `${ctx.matchedCount} ${levelName(Number(ctx.level))} logs within ${formatDuration(Number(ctx.windowMs))} in ${headerSafe(ctx.projectName, 100)}`,
      ruleId: ctx.ruleId,
      projectId: ctx.projectId,
      historyId: ctx.historyId,
      kind: ctx.kind,
      url: `${config.publicUrl}/projects/${ctx.projectId}/alerts/${ctx.ruleId}`,
    });
    const errors: string[] = [];
    for (const sub of todo) {
      if (!isAllowedPushEndpoint(sub.endpoint, config.pushAllowedOrigins)) {
        errors.push('a subscription endpoint is no longer allowed (PUSH_ALLOWED_ORIGINS)');
        done.add(sub.id);
        continue;
      }
      try {
        await sendWebPush({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, payload, { subject: config.vapidSubject, ...keys });
        done.add(sub.id);
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode;
        if (status === 404 || status === 410) {
          // The browser unsubscribed: forget the subscription.
          await db.deleteFrom('push_subscriptions').where('id', '=', sub.id).execute();
          done.add(sub.id);
        } else {
          errors.push(status ? `push service answered ${status}` : `push failed: ${(err as Error).message}`);
        }
      }
    }
    const stillTodo = todo.filter((s) => !done.has(s.id)).length;
    const nextState = JSON.stringify({ done: [...done] });
    if (stillTodo > 0) return { status: 'retry', error: errors.join('; '), state: nextState };
    if (errors.length > 0 && done.size === errors.length) return { status: 'failed', error: errors.join('; '), state: nextState };
    return { status: 'sent', state: nextState };
  }

  async function attempt(id: string): Promise<void> {
    const t = now();
    const delivery = await alerts.claimDelivery(db, id, t, LOCK_MS);
    if (!delivery) return;
    let outcome: Outcome;
    try {
      const ctx = await alerts.firingContext(db, delivery.history_id);
      if (!ctx) outcome = { status: 'skipped', error: 'the alert no longer exists' };
      else if (delivery.channel === 'email') outcome = await sendEmail(ctx);
      else if (delivery.channel === 'push') outcome = await sendPush(ctx, delivery.state);
      else outcome = { status: 'skipped', error: `unknown channel ${delivery.channel}` };
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
        await alerts.finishDelivery(db, id, { next_attempt_at: finished + delay, error: outcome.error ?? null, state: outcome.state ?? delivery.state, updated_at: finished });
        schedule(delay);
        return;
      }
    }
    if (outcome.status === 'failed') log.warn({ deliveryId: id, channel: delivery.channel, error: outcome.error }, 'alert delivery failed');
    await alerts.finishDelivery(db, id, { status: outcome.status, error: outcome.error ?? null, state: outcome.state ?? delivery.state, updated_at: finished });
    deps.onFinished?.(delivery.channel, outcome.status as 'sent' | 'failed' | 'skipped');
  }

  async function drainDue(): Promise<void> {
    do {
      again = false;
      const due = await alerts.dueDeliveries(db, now(), 20);
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
