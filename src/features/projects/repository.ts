import { forUpdate } from '../../db/lock.js';
import type { Executor, ProjectsTable } from '../../db/types.js';

export type ProjectRow = Omit<ProjectsTable, 'log_count' | 'last_seq'> & { log_count: number };

const COLUMNS = ['id', 'user_id', 'name', 'api_key_hash', 'api_key_ciphertext', 'log_count', 'created_at', 'updated_at'] as const;

export async function insertProject(db: Executor, row: Omit<ProjectRow, 'log_count'>): Promise<void> {
  await db.insertInto('projects').values({ ...row, log_count: 0 }).execute();
}

export async function countProjects(db: Executor, userId: string): Promise<number> {
  const row = await db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export function listProjects(db: Executor, userId: string): Promise<ProjectRow[]> {
  return db.selectFrom('projects').select(COLUMNS).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

/** The project if the user owns it; another user's project is as absent as a missing one. */
export function findOwnedProject(db: Executor, userId: string, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').select(COLUMNS).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export function updateProjectName(db: Executor, userId: string, id: string, name: string, now: number): Promise<ProjectRow | undefined> {
  return db.updateTable('projects').set({ name, updated_at: now }).where('id', '=', id).where('user_id', '=', userId).returning(COLUMNS).executeTakeFirst();
}

export function replaceApiKey(db: Executor, userId: string, id: string, key: { hash: string; ciphertext: string }, now: number): Promise<ProjectRow | undefined> {
  return db
    .updateTable('projects')
    .set({ api_key_hash: key.hash, api_key_ciphertext: key.ciphertext, updated_at: now })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Deletes the project and everything under it; run it in a transaction. */
export async function deleteProject(db: Executor, userId: string, id: string): Promise<boolean> {
  // Lock the row first (PostgreSQL): an ingest commit for this project waits, then finds it gone,
  // so no log can be added between deleting the logs and deleting the project.
  const query = db.selectFrom('projects').select('id').where('id', '=', id).where('user_id', '=', userId);
  const owned = await forUpdate(db, query).executeTakeFirst();
  if (!owned) return false;
  await db.deleteFrom('logs').where('project_id', '=', id).execute();
  await db.deleteFrom('log_counts').where('project_id', '=', id).execute();
  await db.deleteFrom('log_source_counts').where('project_id', '=', id).execute();
  await db.deleteFrom('log_block_blooms').where('project_id', '=', id).execute();
  await db.deleteFrom('log_blocks').where('project_id', '=', id).execute();
  const result = await db.deleteFrom('projects').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The ingest path's lookup: by digest only, every time, so a rotated key is refused at once on every node. */
export function findProjectByKeyHash(db: Executor, hash: string) {
  return db
    .selectFrom('projects')
    .innerJoin('users', 'users.id', 'projects.user_id')
    .select(['projects.id', 'projects.user_id', 'users.plan'])
    .where('projects.api_key_hash', '=', hash)
    .executeTakeFirst();
}

/** Each of `ids` that exists, with its owner. */
export async function ownersOf(db: Executor, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom('projects').select(['id', 'user_id']).where('id', 'in', ids.slice(i, i + 500)).execute();
    for (const r of rows) out.set(r.id, r.user_id);
  }
  return out;
}
