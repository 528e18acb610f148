import type { Executor } from '../../../db/types.js';
import { AppError } from '../../../errors.js';

/** How long a key remembers its answer (docs/api.md, "Idempotency": 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** An in-flight claim older than this never committed (a commit marks it done) and may be taken over. */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export type Claim = { kind: 'proceed' } | { kind: 'replay'; response: string };

/**
 * Claims an Idempotency-Key for one ingest request. The first request with a key goes ahead; a
 * retry with the same body gets the first answer back once it has committed (409 while it is still
 * in flight); the same key with another body is a 422. Keys expire after 24 hours.
 */
export async function claimKey(db: Executor, projectId: string, key: string, bodyHash: string, now: number): Promise<Claim> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ project_id: projectId, key, body_hash: bodyHash, state: 'in_flight', response: null, created_at: now })
      .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: 'proceed' };

    const row = await db.selectFrom('idempotency_keys').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
    if (!row) continue; // released meanwhile: try again
    const age = now - Number(row.created_at);
    const expired = age >= IDEMPOTENCY_TTL_MS;
    if (!expired && row.body_hash !== bodyHash) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different body; use a new key for a new batch.');
    }
    if (!expired && row.state === 'done' && row.response !== null) return { kind: 'replay', response: row.response };
    if (expired || age >= IDEMPOTENCY_LEASE_MS) {
      // Take the key over, only if nobody else did in between.
      const taken = await db
        .updateTable('idempotency_keys')
        .set({ body_hash: bodyHash, state: 'in_flight', response: null, created_at: now })
        .where('project_id', '=', projectId)
        .where('key', '=', key)
        .where('created_at', '=', row.created_at)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) > 0) return { kind: 'proceed' };
    }
    throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry in a moment.', { retryAfter: 1 });
  }
  throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry in a moment.', { retryAfter: 1 });
}

/** Frees a key whose request failed before committing, so a retry can go ahead. */
export async function releaseKey(db: Executor, projectId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('project_id', '=', projectId).where('key', '=', key).where('state', '=', 'in_flight').execute();
}

export async function deleteExpiredKeys(db: Executor, now: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<', now - IDEMPOTENCY_TTL_MS).execute();
}
