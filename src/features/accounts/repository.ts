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
// A login reserves its attempt (pending + 1) before the password is checked, in one conditional
// upsert that succeeds only while failures + pending stay under the limit; the check then turns
// its reservation into a failure, or gives it back. However many requests race, no more than the
// limit can be checked in a window.

export function findThrottle(db: Executor, key: string) {
  return db.selectFrom('login_throttle').selectAll().where('key', '=', key).executeTakeFirst();
}

/**
 * Takes one attempt for a key, or returns undefined when failures + pending already reach `limit`
 * in the current window. A window older than `windowMs` starts over (its failures and any
 * reservations left by a crashed node are forgotten). Returns the window the reservation lives in.
 */
export async function reserveAttempt(db: Executor, key: string, limit: number, now: number, windowMs: number): Promise<number | undefined> {
  const staleBefore = now - windowMs;
  const stale = sql<boolean>`login_throttle.window_start <= ${staleBefore}`;
  const row = await db
    .insertInto('login_throttle')
    .values({ key, window_start: now, failures: 0, pending: 1 })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({
          failures: sql<number>`case when ${stale} then 0 else login_throttle.failures end`,
          pending: sql<number>`case when ${stale} then 1 else login_throttle.pending + 1 end`,
          window_start: sql<number>`case when ${stale} then ${now} else login_throttle.window_start end`,
        })
        .where(sql<boolean>`${stale} or login_throttle.failures + login_throttle.pending < ${limit}`),
    )
    .returning('window_start')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.window_start);
}

/**
 * Ends a reserved attempt: gives back its reservation (if its window is still the current one) and
 * counts a failure when it failed. With `reset` (a success on the email key) the failures are
 * forgotten too, but only when no other attempt for the key is still in flight: a burst can never
 * use one right password to clear the count of the wrong ones beside it.
 */
export async function endAttempt(db: Executor, key: string, windowStart: number, outcome: 'failed' | 'succeeded' | 'reset'): Promise<void> {
  const release = sql<number>`case when login_throttle.window_start = ${windowStart} and login_throttle.pending > 0 then login_throttle.pending - 1 else login_throttle.pending end`;
  const failures =
    outcome === 'failed'
      ? sql<number>`login_throttle.failures + 1`
      : outcome === 'reset'
        ? sql<number>`case when ${release} = 0 then 0 else login_throttle.failures end`
        : sql<number>`login_throttle.failures`;
  await db.updateTable('login_throttle').set({ failures, pending: release }).where('key', '=', key).execute();
}

export async function deleteStaleThrottles(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('login_throttle').where('window_start', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Sessions: one row per login (refresh-token family)

export async function insertSession(db: Executor, row: { id: string; user_id: string; created_at: number; user_agent: string | null; ip: string | null }): Promise<void> {
  await db.insertInto('sessions').values({ ...row, last_used_at: row.created_at }).execute();
}

export async function touchSession(db: Executor, id: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ last_used_at: now }).where('id', '=', id).execute();
}

/** The user's logins that still hold a live refresh token, newest first. */
export function liveSessionsOf(db: Executor, userId: string, now: number) {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('refresh_tokens')
          .select('refresh_tokens.id')
          .whereRef('refresh_tokens.family_id', '=', 'sessions.id')
          .where('refresh_tokens.used_at', 'is', null)
          .where('refresh_tokens.revoked_at', 'is', null)
          .where('refresh_tokens.expires_at', '>', now),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(200)
    .execute();
}

/** Ends one login of the user: its refresh tokens revoked, its row gone. False when the user has no such login. */
export async function endSession(db: Executor, userId: string, id: string, now: number): Promise<boolean> {
  const tokens = await db.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', id).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
  const row = await db.deleteFrom('sessions').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(row.numDeletedRows) > 0 || Number(tokens.numUpdatedRows) > 0;
}

/** Ends every login of the user but `keep` (if given). */
export async function endOtherSessions(db: Executor, userId: string, keep: string | undefined, now: number): Promise<void> {
  let tokens = db.updateTable('refresh_tokens').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null);
  let sessions = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keep !== undefined) {
    tokens = tokens.where('family_id', '!=', keep);
    sessions = sessions.where('id', '!=', keep);
  }
  await tokens.execute();
  await sessions.execute();
}

/** Logins whose every refresh token has gone (expired and swept). */
export async function deleteEmptySessions(db: Executor): Promise<number> {
  const result = await db
    .deleteFrom('sessions')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('refresh_tokens').select('refresh_tokens.id').whereRef('refresh_tokens.family_id', '=', 'sessions.id'))))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Password resets

export async function insertPasswordReset(db: Executor, row: { token_hash: string; user_id: string; created_at: number; expires_at: number }): Promise<void> {
  await db.insertInto('password_resets').values({ ...row, used_at: null }).execute();
}

/** Whose reset token this is (used or not), so the confirm can lock that account first. */
export async function findPasswordResetOwner(db: Executor, tokenHash: string): Promise<string | undefined> {
  return (await db.selectFrom('password_resets').select('user_id').where('token_hash', '=', tokenHash).executeTakeFirst())?.user_id;
}

/** Ends every reset token of the account still unused: its password has just changed. */
export async function usePasswordResetsOf(db: Executor, userId: string, now: number): Promise<void> {
  await db.updateTable('password_resets').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

/** Uses a live reset token, once: of concurrent confirms exactly one gets the user back. */
export async function consumePasswordReset(db: Executor, tokenHash: string, now: number): Promise<string | undefined> {
  const row = await db
    .updateTable('password_resets')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

export async function deleteStalePasswordResets(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('password_resets').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Marks the account as being deleted (run it under the user's row lock); false if it is gone. */
export async function markDeleting(db: Executor, id: string, now: number): Promise<boolean> {
  const result = await db.updateTable('users').set({ deleting_since: now }).where('id', '=', id).where('deleting_since', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Accounts whose deletion began before `before` and never finished (a node stopped midway). */
export async function unfinishedDeletions(db: Executor, before: number): Promise<string[]> {
  return (await db.selectFrom('users').select('id').where('deleting_since', 'is not', null).where('deleting_since', '<', before).execute()).map((r) => r.id);
}

export async function deleteUser(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteThrottle(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', key).execute();
}
