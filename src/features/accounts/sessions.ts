import type { Executor } from '../../db/types.js';

/**
 * Which of the given logins (refresh-token families, the `sid` of access tokens) are still live: a
 * login is live while it holds a refresh token that is neither used, revoked nor expired. Logout,
 * a detected reuse, or the end of the refresh lifetime ends it. Live tails use this to end with the
 * login that opened them, on every node.
 */
export async function liveSessions(db: Executor, sessionIds: string[], now: number): Promise<Set<string>> {
  const live = new Set<string>();
  for (let i = 0; i < sessionIds.length; i += 500) {
    const rows = await db
      .selectFrom('refresh_tokens')
      .select('family_id')
      .distinct()
      .where('family_id', 'in', sessionIds.slice(i, i + 500))
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .execute();
    for (const r of rows) live.add(r.family_id);
  }
  return live;
}
