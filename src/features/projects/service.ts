import type { Db } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, notFound } from '../../errors.js';
import { isId, newId } from '../../ids.js';
import { findUserById } from '../accounts/repository.js';
import { checkLimit } from '../plans/plans.js';
import { decryptApiKey, encryptApiKey, generateApiKey, hashApiKey, isWellFormedApiKey, maskApiKey } from './api-keys.js';
import * as repo from './repository.js';

export interface Project {
  id: string;
  name: string;
  apiKey: string;
  logCount: number;
  createdAt: string;
  updatedAt: string;
}

export type ApiKeyCheck = { ok: true; projectId: string; userId: string; plan: string } | { ok: false; reason: 'missing' | 'malformed' | 'unknown' };

export type ProjectsService = ReturnType<typeof createProjectsService>;

const iso = (ms: number) => new Date(ms).toISOString();
const projectNotFound = () => notFound('project');
/** How many times to retry on the (astronomically unlikely) collision of two generated keys. */
const KEY_ATTEMPTS = 3;

export function createProjectsService(deps: { db: Db; encryptionKey: Buffer; now: () => number }) {
  const { db, encryptionKey, now } = deps;
  const deletedListeners: ((projectId: string) => void)[] = [];

  function present(row: repo.ProjectRow, keyForm: 'full' | 'masked'): Project {
    const apiKey = decryptApiKey(encryptionKey, row.id, row.api_key_ciphertext);
    return {
      id: row.id,
      name: row.name,
      apiKey: keyForm === 'full' ? apiKey : maskApiKey(apiKey),
      logCount: Number(row.log_count),
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

  return {
    /**
     * Creates a project if the owner's plan allows one more. The plan is read, the projects counted
     * and the row inserted in one transaction under a lock on the user's row, so parallel creates
     * (on any number of nodes) cannot exceed the cap.
     */
    async create(userId: string, name: string): Promise<Project> {
      return withFreshKey(() =>
        db.transaction().execute(async (tx) => {
          await lockRow(tx, 'users', userId);
          const user = await findUserById(tx, userId);
          if (!user) throw new AppError('UNAUTHORIZED', 'The access token is not valid.');
          const check = checkLimit(user.plan, 'projects', await repo.countProjects(tx, userId));
          if (!check.ok) {
            throw new AppError('PLAN_LIMIT_EXCEEDED', check.message, { details: { resource: 'projects', limit: check.limit, plan: user.plan } });
          }
          const t = now();
          const id = newId('proj', t);
          const key = sealedKey(id);
          const row = { id, user_id: userId, name, api_key_hash: key.hash, api_key_ciphertext: key.ciphertext, created_at: t, updated_at: t };
          await repo.insertProject(tx, row);
          return present({ ...row, log_count: 0 }, 'full');
        }),
      );
    },

    async list(userId: string): Promise<Project[]> {
      return (await repo.listProjects(db, userId)).map((row) => present(row, 'masked'));
    },

    async get(userId: string, id: string): Promise<Project> {
      const row = isId('proj', id) ? await repo.findOwnedProject(db, userId, id) : undefined;
      if (!row) throw projectNotFound();
      return present(row, 'full');
    },

    async rename(userId: string, id: string, name: string): Promise<Project> {
      const row = isId('proj', id) ? await repo.updateProjectName(db, userId, id, name, now()) : undefined;
      if (!row) throw projectNotFound();
      return present(row, 'masked');
    },

    /** Throws 404 unless the user owns the project. */
    async assertOwned(userId: string, id: string): Promise<void> {
      const row = isId('proj', id) ? await repo.findOwnedProject(db, userId, id) : undefined;
      if (!row) throw projectNotFound();
    },

    /** Replaces the key; the old one stops working when this returns (lookups go to the database). */
    async rotateKey(userId: string, id: string): Promise<{ apiKey: string }> {
      if (!isId('proj', id)) throw projectNotFound();
      return withFreshKey(async () => {
        const key = sealedKey(id);
        const row = await repo.replaceApiKey(db, userId, id, key, now());
        if (!row) throw projectNotFound();
        return { apiKey: key.apiKey };
      });
    },

    /** Deletes the project and everything under it, in one transaction. */
    async remove(userId: string, id: string): Promise<void> {
      const deleted = isId('proj', id) && (await db.transaction().execute((tx) => repo.deleteProject(tx, userId, id)));
      if (!deleted) throw projectNotFound();
      for (const listener of deletedListeners) listener(id);
    },

    /** Calls `fn` with the id of every project deleted through this node, once it is gone. */
    onDeleted(fn: (projectId: string) => void): void {
      deletedListeners.push(fn);
    },

    /** The owner of each of `ids` that still exists. */
    ownersOf(ids: string[]): Promise<Map<string, string>> {
      return ids.length === 0 ? Promise.resolve(new Map()) : repo.ownersOf(db, ids);
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
