import { sql } from 'kysely';
import type { Executor, RefreshTokensTable, UsersTable } from '../../db/types.js';

export type UserRow = UsersTable;

export async function insertUser(db: Executor, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updatePasswordHash(db: Executor, id: string, passwordHash: string, now: number): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).execute();
}

/** Returns false when no user has that email. */
export async function setPlanByEmail(db: Executor, email: string, plan: string, now: number): Promise<boolean> {
  const result = await db.updateTable('users').set({ plan, updated_at: now }).where('email', '=', email).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

// Refresh tokens

export async function insertRefreshToken(db: Executor, row: Omit<RefreshTokensTable, 'used_at' | 'revoked_at'>): Promise<void> {
  await db.insertInto('refresh_tokens').values({ ...row, used_at: null, revoked_at: null }).execute();
}

/**
 * Marks a live token used, in one conditional update: of any number of concurrent callers with
 * the same token, exactly one gets the row back.
 */
export function consumeRefreshToken(db: Executor, tokenHash: string, now: number) {
  return db
    .updateTable('refresh_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id', 'family_id'])
    .executeTakeFirst();
}

export function findRefreshToken(db: Executor, tokenHash: string) {
  return db.selectFrom('refresh_tokens').select(['user_id', 'family_id', 'used_at', 'revoked_at', 'expires_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Revokes every still-live token of one login. */
export async function revokeFamily(db: Executor, familyId: string, now: number): Promise<number> {
  const result = await db.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes tokens that expired more than `graceMs` ago; they can no longer be used or replayed usefully. */
export async function deleteExpiredRefreshTokens(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('refresh_tokens').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Login throttling: fixed windows counted in the database so every node sees the same numbers.

export function findThrottles(db: Executor, keys: string[]) {
  return db.selectFrom('login_throttle').selectAll().where('key', 'in', keys).execute();
}

/** Counts one failure for a key; a window older than `windowMs` starts over at 1. */
export async function recordFailure(db: Executor, key: string, now: number, windowMs: number): Promise<void> {
  const staleBefore = now - windowMs;
  await db
    .insertInto('login_throttle')
    .values({ key, window_start: now, failures: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures: sql<number>`case when login_throttle.window_start <= ${staleBefore} then 1 else login_throttle.failures + 1 end`,
        window_start: sql<number>`case when login_throttle.window_start <= ${staleBefore} then ${now} else login_throttle.window_start end`,
      }),
    )
    .execute();
}

export async function clearThrottle(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', key).execute();
}

export async function deleteStaleThrottles(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('login_throttle').where('window_start', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
