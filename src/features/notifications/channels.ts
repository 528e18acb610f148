/**
 * The alert channels, by name: what one attempt at a delivery on each does. The outbox looks a
 * delivery's channel up here; the test endpoint calls the same senders once, with no state.
 *
 * A sender answers an Outcome: `sent`, `skipped` (with why), `failed` (with the error) or `retry`
 * (try again later; `state` remembers what this attempt already reached, so a retry sends only to
 * the rest).
 */
import { createHmac } from 'node:crypto';
import webpush from 'web-push';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { formatDuration } from '../../duration.js';
import { levelName } from '../logs/levels.js';
import type { Log } from '../logs/present.js';
import type { DestinationsService, DestinationType } from './destinations.js';
import { firingLogsUrl } from '../alerts/links.js';
import { alertEmail, headerSafe, type Mailer } from './email.js';
import { BREAKER_FAILURES, createOutbound, RefusedError } from './outbound.js';
import { isAllowedPushEndpoint } from './push-origins.js';
import type { FiringContext, Recipient } from './repository.js';
import type { VapidKeys } from './vapid.js';

/** What one attempt at a delivery came to. `retry` keeps it pending for another attempt. */
export type Outcome = { status: 'sent' | 'skipped' | 'failed' | 'retry'; error?: string; state?: string | null };

export type Sender = (ctx: FiringContext, state: string | null) => Promise<Outcome>;

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

/** `Loglane-Signature` of a body: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the secret as shown (UTF-8). */
export function signature(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** How a message names the event: "fired", "resolved" or "test notification". */
const eventWord = (kind: string) => (kind === 'resolved' ? 'resolved' : kind === 'test' ? 'test notification' : 'fired');

const eventType = (kind: string) => (kind === 'resolved' ? 'alert.resolved' : kind === 'test' ? 'alert.test' : 'alert.triggered');

/** A rule's condition as the API shows it. */
function conditionOf(ctx: FiringContext) {
  return {
    level: levelName(Number(ctx.level)),
    threshold: ctx.threshold,
    window: formatDuration(Number(ctx.windowMs)),
    ...(ctx.source !== null ? { source: ctx.source } : {}),
    ...(ctx.pattern !== null ? { pattern: ctx.pattern } : {}),
    ...(ctx.query !== null ? { query: ctx.query } : {}),
    comparison: ctx.comparison,
  };
}

/**
 * A webhook's body (docs/alerts.md, "Channels"): the event, the rule, its state after it, the count
 * and sample, the rule's page (`url`) and its matching logs in the explorer (`links.logs`).
 */
export function webhookBody(ctx: FiringContext, publicUrl: string): string {
  return JSON.stringify({
    type: eventType(ctx.kind),
    alert: { id: ctx.ruleId, name: ctx.ruleName, projectId: ctx.projectId, condition: conditionOf(ctx) },
    // The state the event left the rule in (a retried delivery is sent later, when it may have moved on).
    state: ctx.kind === 'resolved' ? 'ok' : ctx.kind === 'triggered' ? 'firing' : ctx.ruleState,
    matchedCount: ctx.matchedCount,
    threshold: ctx.threshold,
    window: formatDuration(Number(ctx.windowMs)),
    at: new Date(Number(ctx.triggeredAt)).toISOString(),
    sample: JSON.parse(ctx.sample) as Log[],
    url: `${publicUrl}/alerts/${ctx.ruleId}`,
    links: { alert: `${publicUrl}/alerts/${ctx.ruleId}`, logs: firingLogsUrl(ctx, publicUrl) },
  });
}

/** Slack's mrkdwn takes &, < and > as markup. */
const slackText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A Slack incoming-webhook message: a plain `text` (notifications, old clients) ending in a "View
 * matching logs" link, and Block Kit blocks with that link and the rule's page as buttons.
 */
export function slackBody(ctx: FiringContext, publicUrl: string): string {
  const what = eventWord(ctx.kind);
  const icon = ctx.kind === 'resolved' ? ':white_check_mark:' : ctx.kind === 'test' ? ':test_tube:' : ':rotating_light:';
  const level = levelName(Number(ctx.level));
  const window = formatDuration(Number(ctx.windowMs));
  const title = headerSafe(`${ctx.ruleName} ${what}`, 140);
  // Cut short: a section's text holds 3,000 characters at most (the link has them whole).
  const selected = `${ctx.pattern ? ` matching /${headerSafe(ctx.pattern, 300)}/` : ''}${ctx.query ? ` selected by \`${headerSafe(ctx.query, 500)}\`` : ''}`;
  const summary = `${ctx.matchedCount} ${level} log${ctx.matchedCount === 1 ? '' : 's'}${ctx.source ? ` from ${ctx.source}` : ''}${selected} within ${window} in ${headerSafe(ctx.projectName, 100)} (${ctx.comparison === 'below' ? 'fires below' : 'threshold'} ${ctx.threshold})`;
  const sample = (JSON.parse(ctx.sample) as Log[]).map((l) => `${l.timestamp} ${l.level.toUpperCase()} ${l.message.slice(0, 200)}`);
  const url = `${publicUrl}/alerts/${ctx.ruleId}`;
  const logs = firingLogsUrl(ctx, publicUrl);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: title.slice(0, 150) } },
    { type: 'section', text: { type: 'mrkdwn', text: `${icon} ${slackText(summary)}` } },
  ];
  if (sample.length > 0) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `\`\`\`${slackText(sample.join('\n')).slice(0, 2900)}\`\`\`` } });
  blocks.push({
    type: 'actions',
    elements: [
      { type: 'button', text: { type: 'plain_text', text: 'View matching logs' }, url: logs },
      { type: 'button', text: { type: 'plain_text', text: 'Open in Loglane' }, url },
    ],
  });
  // A link in mrkdwn is <url|label>: the URL's own & < > are escaped as in any text.
  return JSON.stringify({ text: `${slackText(`${title}: ${summary}`)} <${slackText(logs)}|View matching logs>`, blocks });
}

interface TargetsState {
  /** Destinations (or push subscriptions) reached. */
  done: string[];
  /** Destinations that failed for good (refused, redirected, 4xx), with why. */
  failed?: Record<string, string>;
}

export function createChannels(deps: {
  db: Db;
  config: Config;
  mailer: Mailer | undefined;
  vapid: () => Promise<VapidKeys>;
  destinations: Pick<DestinationsService, 'targets'>;
  /** Who a project's alerts go to by email and push: its members who have not muted it. */
  recipients: (projectId: string) => Promise<Recipient[]>;
  now: () => number;
}) {
  const { db, config, mailer, destinations, now } = deps;
  const outbound = createOutbound({ now });

  const recipientsOf = async (ctx: FiringContext): Promise<Recipient[]> => ctx.recipients ?? (await deps.recipients(ctx.projectId));

  /** A mail to every recipient; a retry mails only those an earlier attempt did not reach. */
  const email: Sender = async (ctx, state) => {
    if (!mailer) return { status: 'skipped', error: 'email is not configured on this server (SMTP_URL)' };
    const recipients = await recipientsOf(ctx);
    if (recipients.length === 0) return { status: 'skipped', error: 'every member muted this project\'s notifications' };
    const done = new Set<string>(state ? (JSON.parse(state) as TargetsState).done : []);
    const message = alertEmail(ctx, config.publicUrl);
    const errors: string[] = [];
    for (const r of recipients) {
      if (done.has(r.userId)) continue;
      try {
        await mailer.send(r.email, message);
        done.add(r.userId);
      } catch (err) {
        // No address in the error: it is kept in the project's history, which outlives a member.
        errors.push((err as Error).message);
      }
    }
    // Only the current recipients are remembered: a member who left (or deleted the account) is not.
    const nextState = JSON.stringify({ done: recipients.filter((r) => done.has(r.userId)).map((r) => r.userId) });
    if (errors.length > 0) return { status: 'retry', error: `mail to ${errors.length} of ${recipients.length} recipients failed: ${[...new Set(errors)].join('; ')}`, state: nextState };
    return { status: 'sent', state: nextState };
  };

  const push: Sender = async (ctx, state) => {
    const recipients = await recipientsOf(ctx);
    const subs = recipients.length === 0 ? [] : await db.selectFrom('push_subscriptions').selectAll().where('user_id', 'in', recipients.map((r) => r.userId)).orderBy('created_at').execute();
    // Subscriptions already reached in an earlier attempt are not sent to again.
    const done = new Set<string>(state ? (JSON.parse(state) as TargetsState).done : []);
    const todo = subs.filter((s) => !done.has(s.id));
    if (subs.length === 0) return { status: 'skipped', error: 'no push subscriptions' };
    const keys = await deps.vapid();
    const payload = JSON.stringify({
      title: headerSafe(`${ctx.ruleName} ${eventWord(ctx.kind)}`, 120),
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
    const nextState = JSON.stringify({ done: subs.filter((s) => done.has(s.id)).map((s) => s.id) });
    if (stillTodo > 0) return { status: 'retry', error: errors.join('; '), state: nextState };
    if (errors.length > 0 && done.size === errors.length) return { status: 'failed', error: errors.join('; '), state: nextState };
    return { status: 'sent', state: nextState };
  };

  /**
   * Every destination of the type in the rule's project: `sent` once each answered 2xx; a refused
   * address, a redirect or a 4xx fails that destination for good; a 5xx, a timeout or a network
   * error is retried (the others are not sent again), and so is a destination its breaker keeps
   * away after failures in a row (outbound.ts). `skipped` when the project has none. Requests go in
   * the project's own slots, so its slow destinations hold up no other project's.
   */
  const toDestinations =
    (type: DestinationType): Sender =>
    async (ctx, state) => {
      const targets = await destinations.targets(ctx.projectId, type);
      if (targets.length === 0) return { status: 'skipped', error: 'no destinations' };
      const previous: TargetsState = state ? (JSON.parse(state) as TargetsState) : { done: [] };
      const done = new Set(previous.done);
      const failed: Record<string, string> = { ...previous.failed };
      const retryable: string[] = [];
      // Side by side: one slow destination (5 s at most) does not hold up the others.
      await Promise.all(
        targets.map(async (target) => {
          if (done.has(target.id) || failed[target.id] !== undefined) return;
          const body = type === 'webhook' ? webhookBody(ctx, config.publicUrl) : slackBody(ctx, config.publicUrl);
          const headers: Record<string, string> = type === 'webhook' && target.secret !== null ? { 'loglane-signature': signature(target.secret, body, Math.floor(now() / 1000)) } : {};
          const until = outbound.breakers.blockedUntil(target.id);
          if (until !== undefined) {
            retryable.push(`${target.name}: not tried: it failed ${BREAKER_FAILURES} times in a row; tried again after ${new Date(until).toISOString()}`);
            return;
          }
          try {
            const { status } = await outbound.postJson(target.url, body, headers, config.webhookAllowedOrigins, ctx.projectId);
            if (status >= 200 && status <= 299) {
              done.add(target.id);
              outbound.breakers.succeeded(target.id);
            } else if (status >= 500 || status === 429 || status === 408) {
              retryable.push(`${target.name}: answered ${status}`);
              outbound.breakers.failed(target.id);
            } else {
              failed[target.id] = `${target.name}: answered ${status}${status >= 300 && status <= 399 ? ' (redirects are not followed)' : ''}`;
              outbound.breakers.succeeded(target.id);
            }
          } catch (err) {
            if (err instanceof RefusedError) failed[target.id] = `${target.name}: refused: ${err.message}`;
            else {
              retryable.push(`${target.name}: ${(err as Error).message}`);
              outbound.breakers.failed(target.id);
            }
          }
        }),
      );
      const nextState = JSON.stringify({ done: [...done], failed });
      const errors = [...Object.values(failed), ...retryable].join('; ');
      if (retryable.length > 0) return { status: 'retry', error: errors, state: nextState };
      if (Object.keys(failed).length > 0) return { status: 'failed', error: errors, state: nextState };
      return { status: 'sent', state: nextState };
    };

  const registry: Record<string, Sender> = { email, push, webhook: toDestinations('webhook'), slack: toDestinations('slack') };
  return {
    /** The sender of a channel, or undefined for a name no channel has. */
    of: (channel: string): Sender | undefined => registry[channel],
    /** The server is stopping: requests waiting for a slot are refused, those in flight cut. */
    close: () => outbound.close(),
  };
}

export type Channels = ReturnType<typeof createChannels>;
