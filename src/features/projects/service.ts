import type { Db, Executor } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, notFound } from '../../errors.js';
import { isId, newId } from '../../ids.js';
import { findUserById } from '../accounts/repository.js';
import { checkLimit } from '../plans/plans.js';
import { decryptApiKey, encryptApiKey, generateApiKey, hashApiKey, isWellFormedApiKey, maskApiKey } from './api-keys.js';
import * as repo from './repository.js';
import { forbiddenRole, hasRole, isRole, type Role } from './roles.js';

export interface Project {
  id: string;
  name: string;
  apiKey: string;
  logCount: number;
  /** Bytes its logs and their indexes take on disk (the log store's estimate, at most a minute old). */
  storedBytes: number;
  /** The caller's role in the project. */
  role: Role;
  createdAt: string;
  updatedAt: string;
}

export type ApiKeyCheck = { ok: true; projectId: string; userId: string; plan: string } | { ok: false; reason: 'missing' | 'malformed' | 'unknown' };

export type ProjectsService = ReturnType<typeof createProjectsService>;

const iso = (ms: number) => new Date(ms).toISOString();
const projectNotFound = () => notFound('project');
/** How many times to retry on the (astronomically unlikely) collision of two generated keys. */
const KEY_ATTEMPTS = 3;

/** What each project action needs (docs/teams.md, "Roles"). */
const WHAT = { rename: 'rename the project', rotate: 'rotate its API key', delete: 'delete the project' } as const;

export function createProjectsService(deps: {
  db: Db;
  encryptionKey: Buffer;
  now: () => number;
  /** Takes a project's logs away ahead of its deletion, where one statement would stall the server (the log store's purgeProject). */
  purgeLogs: (projectId: string) => Promise<void>;
  /** The bytes each project's logs take on disk (the log store's storedBytes). */
  storedBytes: (projectIds: string[]) => Promise<Map<string, number>>;
}) {
  const { db, encryptionKey, now } = deps;
  const deletedListeners: ((projectId: string) => void)[] = [];

  /** Deletes the project and everything under it: its logs first in steps, then the rest in one transaction. */
  async function deleteOne(id: string): Promise<boolean> {
    await deps.purgeLogs(id);
    const deleted = await db.transaction().execute((tx) => repo.deleteProject(tx, id));
    if (deleted) for (const listener of deletedListeners) listener(id);
    return deleted;
  }

  function present(row: repo.ProjectRow, role: Role, keyForm: 'full' | 'masked', storedBytes: number): Project {
    const apiKey = decryptApiKey(encryptionKey, row.id, row.api_key_ciphertext);
    return {
      id: row.id,
      name: row.name,
      apiKey: keyForm === 'full' ? apiKey : maskApiKey(apiKey),
      logCount: Number(row.log_count),
      storedBytes,
      role,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    };
  }

  function sealedKey(projectId: string) {
    const apiKey = generateApiKey();
    return { apiKey, hash: hashApiKey(apiKey), ciphertext: encryptApiKey(encryptionKey, projectId, apiKey) };
  }

  async function withFreshKey<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (err) {
        if (!isUniqueViolation(err) || attempt >= KEY_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * The project and the caller's role in it, when the caller's role is at least `least`: 404 for
   * anyone who is not a member (however the id looks), 403 FORBIDDEN_ROLE for a member below it.
   */
  async function access(userId: string, id: string, least: Role = 'member', what?: string, executor: Executor = db): Promise<{ row: repo.ProjectRow; role: Role; muted: boolean }> {
    const found = isId('proj', id) ? await repo.findMemberProject(executor, userId, id) : undefined;
    if (!found || !isRole(found.role)) throw projectNotFound();
    if (!hasRole(found.role, least)) throw forbiddenRole(found.role, least, what);
    return { row: found, role: found.role, muted: Number(found.notifications_muted) === 1 };
  }

  return {
    /** The project, the caller's role and whether they muted it; in `executor`'s transaction when given (under a lock). */
    access,

    /** Throws 404 unless the user is a member of the project, and 403 unless their role is at least `least`. */
    async assertRole(userId: string, id: string, least: Role = 'member', what?: string): Promise<Role> {
      return (await access(userId, id, least, what)).role;
    },

    /**
     * Creates a project if the owner's plan allows one more. The plan is read, the projects counted
     * and the row inserted in one transaction under a lock on the user's row, so parallel creates
     * (on any number of nodes) cannot exceed the cap. Only owned projects count. An account being
     * deleted creates none: its deletion marks it under the same lock, then purges what it owns.
     */
    async create(userId: string, name: string): Promise<Project> {
      return withFreshKey(() =>
        db.transaction().execute(async (tx) => {
          await lockRow(tx, 'users', userId);
          const user = await findUserById(tx, userId);
          // An account being deleted makes no project (its deletion marked it under this same lock).
          if (!user || user.deleting_since !== null) throw new AppError('UNAUTHORIZED', 'The access token is not valid: its account no longer exists.');
          const check = checkLimit(user.plan, 'projects', await repo.countProjects(tx, userId));
          if (!check.ok) {
            throw new AppError('PLAN_LIMIT_EXCEEDED', check.message, { details: { resource: 'projects', limit: check.limit, plan: user.plan } });
          }
          const t = now();
          const id = newId('proj', t);
          const key = sealedKey(id);
          const row = { id, user_id: userId, name, api_key_hash: key.hash, api_key_ciphertext: key.ciphertext, created_at: t, updated_at: t };
          await repo.insertProject(tx, row);
          return present({ ...row, log_count: 0 }, 'owner', 'full', 0);
        }),
      );
    },

    /** The projects the user owns or is a member of. */
    async list(userId: string): Promise<Project[]> {
      const rows = (await repo.listProjects(db, userId)).filter((row) => isRole(row.role));
      const sizes = await deps.storedBytes(rows.map((r) => r.id));
      return rows.map((row) => present(row, row.role as Role, 'masked', sizes.get(row.id) ?? 0));
    },

    /** The project as this member sees it, with its full key. */
    async get(userId: string, id: string): Promise<Project> {
      const { row, role } = await access(userId, id);
      return present(row, role, 'full', (await deps.storedBytes([id])).get(id) ?? 0);
    },

    async rename(userId: string, id: string, name: string): Promise<Project> {
      const { role } = await access(userId, id, 'admin', WHAT.rename);
      const row = await repo.updateProjectName(db, id, name, now());
      if (!row) throw projectNotFound();
      return present(row, role, 'masked', (await deps.storedBytes([id])).get(id) ?? 0);
    },

    /** Replaces the key; the old one stops working when this returns (lookups go to the database). */
    async rotateKey(userId: string, id: string): Promise<{ apiKey: string }> {
      await access(userId, id, 'admin', WHAT.rotate);
      return withFreshKey(async () => {
        const key = sealedKey(id);
        const row = await repo.replaceApiKey(db, id, key, now());
        if (!row) throw projectNotFound();
        return { apiKey: key.apiKey };
      });
    },

    /** Deletes the project and everything under it. Owner only. */
    async remove(userId: string, id: string): Promise<void> {
      await access(userId, id, 'owner', WHAT.delete);
      if (!(await deleteOne(id))) throw projectNotFound();
    },

    /** Deletes every project the user owns (account deletion), each in its own transaction. */
    async removeOwnedBy(userId: string): Promise<void> {
      for (const id of await repo.ownedProjectIds(db, userId)) await deleteOne(id);
    },

    /** Calls `fn` with the id of every project deleted through this node, once it is gone. */
    onDeleted(fn: (projectId: string) => void): void {
      deletedListeners.push(fn);
    },

    /** Which of the (project, user) pairs are still memberships, as `project\nuser` keys. */
    memberships(pairs: { projectId: string; userId: string }[]): Promise<Set<string>> {
      return pairs.length === 0 ? Promise.resolve(new Set()) : repo.membershipsOf(db, pairs);
    },

    /** Resolves an API key to its project. A malformed key or a bad checksum costs no query. */
    async verifyApiKey(key: string | undefined): Promise<ApiKeyCheck> {
      if (!key) return { ok: false, reason: 'missing' };
      if (!isWellFormedApiKey(key)) return { ok: false, reason: 'malformed' };
      const row = await repo.findProjectByKeyHash(db, hashApiKey(key));
      return row ? { ok: true, projectId: row.id, userId: row.user_id, plan: row.plan } : { ok: false, reason: 'unknown' };
    },
  };
}
