import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { isId, newId } from '../../ids.js';
import { isAllowedPushEndpoint } from './push-origins.js';
import type { VapidKeys } from './vapid.js';

export interface PushSubscription {
  id: string;
  endpoint: string;
  createdAt: string;
}

/** A user's browsers; more than this is not a real person's set of devices. */
export const MAX_PUSH_SUBSCRIPTIONS = 50;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

export type PushService = ReturnType<typeof createPushService>;

export function createPushService(deps: { db: Db; config: Pick<Config, 'pushAllowedOrigins'>; now: () => number; vapid: () => Promise<VapidKeys> }) {
  const { db, config, now } = deps;
  const present = (r: { id: string; endpoint: string; created_at: number }): PushSubscription => ({ id: r.id, endpoint: r.endpoint, createdAt: new Date(Number(r.created_at)).toISOString() });

  return {
    async publicKey(): Promise<string> {
      return (await deps.vapid()).publicKey;
    },

    /**
     * Saves a browser's PushSubscription. The endpoint must be on PUSH_ALLOWED_ORIGINS: the server
     * will POST to it, so anything else (a private address, plain http, another host) is refused.
     * Subscribing the same endpoint again answers the existing subscription.
     */
    async subscribe(userId: string, input: { endpoint: string; keys: { p256dh: string; auth: string } }): Promise<PushSubscription> {
      if (!isAllowedPushEndpoint(input.endpoint, config.pushAllowedOrigins)) {
        throw validationError('/endpoint', 'is not a push service this server sends to (see PUSH_ALLOWED_ORIGINS)');
      }
      const p256dh = Buffer.from(input.keys.p256dh, 'base64url');
      if (!B64URL.test(input.keys.p256dh) || p256dh.length !== 65 || p256dh[0] !== 4) throw validationError('/keys/p256dh', 'must be an uncompressed P-256 public key, base64url');
      if (!B64URL.test(input.keys.auth) || Buffer.from(input.keys.auth, 'base64url').length !== 16) throw validationError('/keys/auth', 'must be a 16-byte secret, base64url');
      const existing = await db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', userId).where('endpoint', '=', input.endpoint).executeTakeFirst();
      if (existing) {
        await db.updateTable('push_subscriptions').set({ p256dh: input.keys.p256dh, auth: input.keys.auth }).where('id', '=', existing.id).execute();
        return present(existing);
      }
      const count = await db.selectFrom('push_subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      if (Number(count.n) >= MAX_PUSH_SUBSCRIPTIONS) throw new AppError('VALIDATION_ERROR', `At most ${MAX_PUSH_SUBSCRIPTIONS} push subscriptions per user; delete unused ones first.`);
      const t = now();
      const row = { id: newId('psub', t), user_id: userId, endpoint: input.endpoint, p256dh: input.keys.p256dh, auth: input.keys.auth, created_at: t };
      try {
        await db.insertInto('push_subscriptions').values(row).execute();
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        const again = await db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', userId).where('endpoint', '=', input.endpoint).executeTakeFirstOrThrow();
        return present(again);
      }
      return present(row);
    },

    async list(userId: string): Promise<PushSubscription[]> {
      const rows = await db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
      return rows.map(present);
    },

    async remove(userId: string, id: string): Promise<void> {
      const result = isId('psub', id) ? await db.deleteFrom('push_subscriptions').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst() : undefined;
      if (!result || Number(result.numDeletedRows) === 0) throw notFound('push subscription');
    },
  };
}
