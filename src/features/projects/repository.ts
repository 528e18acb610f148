import { forUpdate } from '../../db/lock.js';
import type { Executor, ProjectsTable } from '../../db/types.js';

export type ProjectRow = Omit<ProjectsTable, 'log_count' | 'last_seq'> & { log_count: number };
/** A project as one of its members sees it: the row and the member's role. */
export type MemberProjectRow = ProjectRow & { role: string; notifications_muted: number };

const COLUMNS = ['projects.id', 'projects.user_id', 'projects.name', 'projects.api_key_hash', 'projects.api_key_ciphertext', 'projects.log_count', 'projects.created_at', 'projects.updated_at'] as const;

export async function insertProject(db: Executor, row: Omit<ProjectRow, 'log_count'>): Promise<void> {
  await db.insertInto('projects').values({ ...row, log_count: 0 }).execute();
  await db.insertInto('project_members').values({ project_id: row.id, user_id: row.user_id, role: 'owner', joined_at: row.created_at, notifications_muted: 0 }).execute();
}

/** The projects a user owns: what the plan's project cap counts. */
export async function countProjects(db: Executor, userId: string): Promise<number> {
  const row = await db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The ids of the projects a user owns. */
export async function ownedProjectIds(db: Executor, userId: string): Promise<string[]> {
  return (await db.selectFrom('projects').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
}

function memberProjects(db: Executor, userId: string) {
  return db
    .selectFrom('projects')
    .innerJoin('project_members', (j) => j.onRef('project_members.project_id', '=', 'projects.id').on('project_members.user_id', '=', userId))
    .select([...COLUMNS, 'project_members.role', 'project_members.notifications_muted']);
}

/** The projects the user owns or is a member of, with the user's role. */
export function listProjects(db: Executor, userId: string): Promise<MemberProjectRow[]> {
  return memberProjects(db, userId).orderBy('projects.created_at').orderBy('projects.id').execute();
}

/** The project if the user is one of its members, with their role; an outsider's view is as empty as a missing project's. */
export function findMemberProject(db: Executor, userId: string, id: string): Promise<MemberProjectRow | undefined> {
  return memberProjects(db, userId).where('projects.id', '=', id).executeTakeFirst();
}

export function findProject(db: Executor, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

export function updateProjectName(db: Executor, id: string, name: string, now: number): Promise<ProjectRow | undefined> {
  return db.updateTable('projects').set({ name, updated_at: now }).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
}

export function replaceApiKey(db: Executor, id: string, key: { hash: string; ciphertext: string }, now: number): Promise<ProjectRow | undefined> {
  return db.updateTable('projects').set({ api_key_hash: key.hash, api_key_ciphertext: key.ciphertext, updated_at: now }).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
}

/** Deletes the project and everything under it; run it in a transaction. */
export async function deleteProject(db: Executor, id: string): Promise<boolean> {
  // Lock the row first (PostgreSQL): an ingest commit for this project waits, then finds it gone,
  // so no log can be added between deleting the logs and deleting the project.
  const query = db.selectFrom('projects').select('id').where('id', '=', id);
  const found = await forUpdate(db, query).executeTakeFirst();
  if (!found) return false;
  await db.deleteFrom('logs').where('project_id', '=', id).execute();
  await db.deleteFrom('log_counts').where('project_id', '=', id).execute();
  await db.deleteFrom('log_source_counts').where('project_id', '=', id).execute();
  await db.deleteFrom('log_packs').where('project_id', '=', id).execute();
  await db.deleteFrom('log_block_blooms').where('project_id', '=', id).execute();
  await db.deleteFrom('log_blocks').where('project_id', '=', id).execute();
  await db.deleteFrom('idempotency_keys').where('project_id', '=', id).execute();
  // Members, invitations, rules (with their counts, history and deliveries) and destinations go by cascade.
  const result = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * The ingest path's lookup of keys by their digests, in one statement (keep `hashes` to a few
 * hundred): by digest only, every time, so a rotated key is refused at once on every node.
 */
export function findProjectsByKeyHashes(db: Executor, hashes: string[]) {
  return db
    .selectFrom('projects')
    .innerJoin('users', 'users.id', 'projects.user_id')
    .select(['projects.api_key_hash', 'projects.id', 'projects.user_id', 'users.plan'])
    .where('projects.api_key_hash', 'in', hashes)
    .execute();
}

/**
 * A page of projects' stored keys (digest and ciphertext) in id order after `afterId`, only those
 * changed (created, rotated, renamed) at or after `since` when it is given.
 */
export function keysPage(db: Executor, afterId: string, limit: number, since?: number) {
  let q = db.selectFrom('projects').select(['id', 'api_key_hash', 'api_key_ciphertext']).where('id', '>', afterId);
  if (since !== undefined) q = q.where('updated_at', '>=', since);
  return q.orderBy('id').limit(limit).execute();
}

/** Which of the (project, user) pairs are still memberships, as `project\nuser` keys. */
export async function membershipsOf(db: Executor, pairs: { projectId: string; userId: string }[]): Promise<Set<string>> {
  const out = new Set<string>();
  const projectIds = [...new Set(pairs.map((p) => p.projectId))];
  const wanted = new Set(pairs.map((p) => `${p.projectId}\n${p.userId}`));
  const userIds = [...new Set(pairs.map((p) => p.userId))];
  for (let i = 0; i < projectIds.length; i += 500) {
    let q = db.selectFrom('project_members').select(['project_id', 'user_id']).where('project_id', 'in', projectIds.slice(i, i + 500));
    // Only the users asked about, while their list fits one statement (else every member, filtered below).
    if (userIds.length <= 500) q = q.where('user_id', 'in', userIds);
    const rows = await q.execute();
    for (const r of rows) {
      const key = `${r.project_id}\n${r.user_id}`;
      if (wanted.has(key)) out.add(key);
    }
  }
  return out;
}

// Members

export function listMembers(db: Executor, projectId: string) {
  return db
    .selectFrom('project_members')
    .innerJoin('users', 'users.id', 'project_members.user_id')
    .select(['project_members.user_id', 'users.email', 'project_members.role', 'project_members.joined_at'])
    .where('project_members.project_id', '=', projectId)
    .orderBy('project_members.joined_at')
    .orderBy('project_members.user_id')
    .execute();
}

export function findMember(db: Executor, projectId: string, userId: string) {
  return db
    .selectFrom('project_members')
    .innerJoin('users', 'users.id', 'project_members.user_id')
    .select(['project_members.user_id', 'users.email', 'project_members.role', 'project_members.joined_at', 'project_members.notifications_muted'])
    .where('project_members.project_id', '=', projectId)
    .where('project_members.user_id', '=', userId)
    .executeTakeFirst();
}

/** Adds a member; an existing membership is left as it is. */
export async function addMember(db: Executor, projectId: string, userId: string, role: string, now: number): Promise<void> {
  await db
    .insertInto('project_members')
    .values({ project_id: projectId, user_id: userId, role, joined_at: now, notifications_muted: 0 })
    .onConflict((oc) => oc.columns(['project_id', 'user_id']).doNothing())
    .execute();
}

export async function setMemberRole(db: Executor, projectId: string, userId: string, role: string): Promise<void> {
  await db.updateTable('project_members').set({ role }).where('project_id', '=', projectId).where('user_id', '=', userId).execute();
}

export async function removeMember(db: Executor, projectId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('project_members').where('project_id', '=', projectId).where('user_id', '=', userId).where('role', '!=', 'owner').executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function setOwner(db: Executor, projectId: string, userId: string, now: number): Promise<void> {
  await db.updateTable('projects').set({ user_id: userId, updated_at: now }).where('id', '=', projectId).execute();
}

export async function setMuted(db: Executor, projectId: string, userId: string, muted: boolean): Promise<void> {
  await db.updateTable('project_members').set({ notifications_muted: muted ? 1 : 0 }).where('project_id', '=', projectId).where('user_id', '=', userId).execute();
}

/** Who gets a project's alert notifications: every member who has not muted it. */
export function notifiedMembers(db: Executor, projectId: string) {
  return db
    .selectFrom('project_members')
    .innerJoin('users', 'users.id', 'project_members.user_id')
    .select(['users.id as userId', 'users.email as email'])
    .where('project_members.project_id', '=', projectId)
    .where('project_members.notifications_muted', '=', 0)
    .orderBy('project_members.joined_at')
    .execute();
}

// Invitations

export const INVITATION_COLUMNS = ['id', 'project_id', 'email', 'role', 'invited_by', 'created_at', 'expires_at', 'accepted_at'] as const;

export async function insertInvitation(db: Executor, row: { id: string; project_id: string; email: string; role: string; token_hash: string; invited_by: string; created_at: number; expires_at: number }): Promise<void> {
  await db.insertInto('project_invitations').values({ ...row, accepted_at: null }).execute();
}

/** How many invitations the project made since `since` (revoked ones included), and when the oldest of them was made. */
export async function invitationsSince(db: Executor, projectId: string, since: number): Promise<{ count: number; oldest: number }> {
  const row = await db
    .selectFrom('project_invitations')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('project_id', '=', projectId)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), oldest: Number(row.oldest ?? since) };
}

/** How many invitations the user sent since `since`, from every project (revoked ones included), and when the oldest of them was made. */
export async function invitationsSentSince(db: Executor, userId: string, since: number): Promise<{ count: number; oldest: number }> {
  const row = await db
    .selectFrom('project_invitations')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('invited_by', '=', userId)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), oldest: Number(row.oldest ?? since) };
}

/**
 * Invitations still pending: not accepted, not expired (a revoked one expired when it was revoked),
 * and whose sender still holds the role to send them (an admin for a member's, the owner for an
 * admin's). An invitation carries its sender's authority: it dies when the sender is removed,
 * leaves, or loses the role, and is never accepted, listed or revoked after.
 */
function pending(db: Executor, now: number) {
  return db
    .selectFrom('project_invitations')
    .select(INVITATION_COLUMNS.map((c) => `project_invitations.${c}` as const))
    .where('project_invitations.accepted_at', 'is', null)
    .where('project_invitations.expires_at', '>', now)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('project_members')
          .select('project_members.user_id')
          .whereRef('project_members.project_id', '=', 'project_invitations.project_id')
          .whereRef('project_members.user_id', '=', 'project_invitations.invited_by')
          .where((m) => m.or([m('project_members.role', '=', 'owner'), m.and([m('project_members.role', '=', 'admin'), m('project_invitations.role', '=', 'member')])])),
      ),
    );
}

/** Pending invitations of a project, oldest first. */
export function pendingInvitations(db: Executor, projectId: string, now: number) {
  return pending(db, now).where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
}

/** A pending invitation of the project. */
export function findInvitation(db: Executor, projectId: string, id: string, now: number) {
  return pending(db, now).where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

/** Revokes an invitation: it expires now (the row stays until housekeeping, so it still counts against the hourly cap). */
export async function expireInvitation(db: Executor, id: string, now: number): Promise<void> {
  await db.updateTable('project_invitations').set({ expires_at: now }).where('id', '=', id).execute();
}

/** A pending invitation by its token's digest, for this email only; undefined otherwise. */
export function findPendingInvitationByToken(db: Executor, tokenHash: string, email: string, now: number) {
  return pending(db, now).where('token_hash', '=', tokenHash).where('email', '=', email).executeTakeFirst();
}

/** Marks an invitation accepted, once: of concurrent accepts exactly one gets true. */
export async function markInvitationAccepted(db: Executor, id: string, now: number): Promise<boolean> {
  const result = await db.updateTable('project_invitations').set({ accepted_at: now }).where('id', '=', id).where('accepted_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteInvitationsTo(db: Executor, email: string): Promise<void> {
  await db.deleteFrom('project_invitations').where('email', '=', email).execute();
}

/** Forgets invitations accepted or expired more than `before`. */
export async function deleteStaleInvitations(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('project_invitations').where((eb) => eb.or([eb('expires_at', '<', before), eb('accepted_at', '<', before)])).executeTakeFirst();
  return Number(result.numDeletedRows);
}
