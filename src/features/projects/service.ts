import type { Db, Executor } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, notFound } from '../../errors.js';
import { isId, newId } from '../../ids.js';
import { findUserById } from '../accounts/repository.js';
import { checkLimit } from '../plans/plans.js';
import { apiKeyFormat, decryptApiKey, encryptApiKey, hashApiKey, isWellFormedApiKey, maskApiKey } from './api-keys.js';
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

/** Keys found to be no project's, remembered as such (by digest): at most this many, each this long. */
const UNKNOWN_KEYS = 10_000;
const UNKNOWN_KEY_MS = 30_000;
/** Keys looked up in one statement, at most; a call with more runs one statement after another. */
export const KEY_LOOKUP_BATCH = 500;
/** Rows of `projects` read per statement when the keys without a keyed checksum are gathered. */
const KEYS_PAGE = 500;
/** The set of keys without a keyed checksum is brought up to date at most this often, and only when a key needs it. */
const UNVOUCHED_REFRESH_MS = 30_000;
/** How far before the previous gathering a later one looks: nodes' clocks differ, and a row commits after its `updated_at` was taken. */
const UNVOUCHED_OVERLAP_MS = 5 * 60_000;
/** The first 16 hex digits (64 bits) of a key's digest: what the set of keys without a keyed checksum keeps. */
const digestTag = (hash: string) => hash.slice(0, 16);

/** Database lookups of API keys (tests and metrics count them). */
export interface KeyLookupCounts {
  /** Statements that looked keys up, and the keys they looked up. */
  statements: number;
  keys: number;
  /** Reads of the projects' stored keys (the set of keys without a keyed checksum: once at start, then at most every 30 s). */
  scans: number;
}

/** What each project action needs (docs/teams.md, "Roles"). */
const WHAT = { rename: 'rename the project', rotate: 'rotate its API key', delete: 'delete the project' } as const;

export function createProjectsService(deps: {
  db: Db;
  encryptionKey: Buffer;
  /** The key of API keys' checksums (secrets.ts deriveKey(secret, 'api-key-checksum')). */
  checksumKey: Buffer;
  now: () => number;
  /** Takes a project's logs away ahead of its deletion, where one statement would stall the server (the log store's purgeProject). */
  purgeLogs: (projectId: string) => Promise<void>;
  /** The bytes each project's logs take on disk (the log store's storedBytes). */
  storedBytes: (projectIds: string[]) => Promise<Map<string, number>>;
}) {
  const { db, encryptionKey, now } = deps;
  const deletedListeners: ((projectId: string) => void)[] = [];
  const format = apiKeyFormat(deps.checksumKey);

  /** Deletes the project and everything under it: its logs first in steps, then the rest in one transaction. */
  async function deleteOne(id: string): Promise<boolean> {
    await deps.purgeLogs(id);
    const deleted = await db.transaction().execute((tx) => repo.deleteProject(tx, id));
    if (deleted) {
      forgetUnvouched(id);
      for (const listener of deletedListeners) listener(id);
    }
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
    const apiKey = format.generate();
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

  // API keys. A key is looked up in the database only when it could be a project's: its checksum is
  // keyed with this server's secret, or its digest is one of the keys handed out without such a
  // checksum (made before checksums were keyed, with a CRC32 anyone can compute; or under another
  // secret). That set is gathered from the stored keys at start and, when a key needs it, at most
  // every UNVOUCHED_REFRESH_MS for the rows changed since (a node running older code may still make
  // such keys); no server makes them now, so it hardly grows, and a key rotated or deleted leaves it
  // (on this node at once, on another at its next gathering or restart): at most one entry a
  // project. Whether a key still works is always the database's answer, on every node: only "could
  // this key exist at all" is decided here.
  const counts: KeyLookupCounts = { statements: 0, keys: 0, scans: 0 };
  /** Digest → until when it is known to be no project's key. */
  const unknownKeys = new Map<string, number>();
  /** Digest → the lookup under way, which a concurrent check of the same key joins. */
  const inFlight = new Map<string, Promise<ApiKeyCheck>>();
  /** Digest tags of the keys handed out without a keyed checksum, and each one's project. */
  let unvouched: Set<string> | undefined;
  const unvouchedOf = new Map<string, string>();
  let gathering: Promise<void> | undefined;
  let gatheredFrom = -Infinity;

  function vouchedFor(row: { id: string; api_key_ciphertext: string }): boolean {
    try {
      return format.checksumOf(decryptApiKey(encryptionKey, row.id, row.api_key_ciphertext)) === 'keyed';
    } catch {
      return false; // sealed under another secret: its key is not known here, its digest is
    }
  }

  /** Reads the stored keys (all of them the first time, then those changed since the last read) a page at a time. */
  async function gather(): Promise<void> {
    const started = now();
    const since = unvouched === undefined ? undefined : gatheredFrom - UNVOUCHED_OVERLAP_MS;
    const set = unvouched ?? new Set<string>();
    counts.scans++;
    for (let after = ''; ; ) {
      const rows = await repo.keysPage(db, after, KEYS_PAGE, since);
      for (const row of rows) {
        forgetUnvouched(row.id, set);
        if (vouchedFor(row)) continue;
        const tag = digestTag(row.api_key_hash);
        set.add(tag);
        unvouchedOf.set(row.id, tag);
      }
      if (rows.length < KEYS_PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    unvouched = set;
    gatheredFrom = started;
  }

  /** The project's key, if it was one without a keyed checksum, leaves the set (rotated or deleted). */
  function forgetUnvouched(projectId: string, set = unvouched): void {
    const tag = unvouchedOf.get(projectId);
    if (tag === undefined) return;
    unvouchedOf.delete(projectId);
    set?.delete(tag);
  }

  function regather(): Promise<void> {
    return (gathering ??= gather().finally(() => {
      gathering = undefined;
    }));
  }

  /** Whether a key without a keyed checksum is one that was handed out (then the database decides). */
  async function isUnvouchedKey(hash: string): Promise<boolean> {
    if (unvouched === undefined) await regather();
    if (unvouched!.has(digestTag(hash))) return true;
    if (now() - gatheredFrom < UNVOUCHED_REFRESH_MS) return false;
    await regather();
    return unvouched!.has(digestTag(hash));
  }

  /** The digest to look up, or the answer when none is needed. */
  async function precheck(key: string | undefined): Promise<string | ApiKeyCheck> {
    if (!key) return { ok: false, reason: 'missing' };
    if (!isWellFormedApiKey(key)) return { ok: false, reason: 'malformed' };
    const checksum = format.checksumOf(key);
    const hash = hashApiKey(key);
    if (checksum !== 'keyed' && !(await isUnvouchedKey(hash))) return { ok: false, reason: checksum === 'legacy' ? 'unknown' : 'malformed' };
    const until = unknownKeys.get(hash);
    if (until !== undefined) {
      if (until > now()) return { ok: false, reason: 'unknown' };
      unknownKeys.delete(hash);
    }
    return hash;
  }

  async function lookUpStatement(hashes: string[]): Promise<Map<string, ApiKeyCheck>> {
    counts.statements++;
    counts.keys += hashes.length;
    const out = new Map<string, ApiKeyCheck>();
    for (const row of await repo.findProjectsByKeyHashes(db, hashes)) out.set(row.api_key_hash, { ok: true, projectId: row.id, userId: row.user_id, plan: row.plan });
    for (const hash of hashes) {
      if (out.has(hash)) continue;
      out.set(hash, { ok: false, reason: 'unknown' });
      unknownKeys.delete(hash);
      unknownKeys.set(hash, now() + UNKNOWN_KEY_MS);
      if (unknownKeys.size > UNKNOWN_KEYS) unknownKeys.delete(unknownKeys.keys().next().value!);
    }
    return out;
  }

  /** Looks the digests up, KEY_LOOKUP_BATCH to a statement, one statement after another; a digest already being looked up joins that lookup. */
  async function lookUp(hashes: Iterable<string>): Promise<Map<string, ApiKeyCheck>> {
    const out = new Map<string, ApiKeyCheck>();
    const waits: Promise<void>[] = [];
    const fresh: string[] = [];
    for (const hash of new Set(hashes)) {
      const pending = inFlight.get(hash);
      if (pending) waits.push(pending.then((check) => void out.set(hash, check)));
      else fresh.push(hash);
    }
    let previous: Promise<unknown> = Promise.resolve();
    for (let i = 0; i < fresh.length; i += KEY_LOOKUP_BATCH) {
      const chunk = fresh.slice(i, i + KEY_LOOKUP_BATCH);
      const statement = previous.then(() => lookUpStatement(chunk));
      previous = statement.catch(() => undefined);
      for (const hash of chunk) {
        const check = statement.then((found) => found.get(hash)!);
        inFlight.set(hash, check);
        const forget = () => void inFlight.delete(hash);
        check.then(forget, forget);
        waits.push(check.then((c) => void out.set(hash, c)));
      }
    }
    await Promise.all(waits);
    return out;
  }

  return {
    /** Gathers the keys handed out without a keyed checksum, so that the first such key costs no wait. */
    async start(): Promise<void> {
      await regather();
    },

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
        forgetUnvouched(id);
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

    /**
     * Resolves an API key to its project. A key of the wrong shape, one whose checksum does not
     * hold and one without a keyed checksum that was never handed out cost no query; a key found
     * to be no project's is remembered as such (UNKNOWN_KEY_MS); concurrent checks of one key
     * share one lookup. A key that works is looked up every time, so a rotated or deleted key is
     * refused at once on every node.
     */
    async verifyApiKey(key: string | undefined): Promise<ApiKeyCheck> {
      const hash = await precheck(key);
      if (typeof hash !== 'string') return hash;
      return (await lookUp([hash])).get(hash)!;
    },

    /**
     * At once and with no query: false when the key surely is no project's (its shape, its
     * checksum, or a key without a keyed checksum that was never handed out), true when it may be
     * one (verifyApiKey decides). Before the set of keys handed out without a keyed checksum is
     * first read it says true (and starts the read); when the set is due to be brought up to date,
     * it answers from the set as last read while the new read runs.
     */
    keyCouldExist(key: string): boolean {
      if (!isWellFormedApiKey(key)) return false;
      if (format.checksumOf(key) === 'keyed') return true;
      if (unvouched === undefined) {
        regather().catch(() => {}); // a failure is met again, and answered, by verifyApiKey
        return true;
      }
      // Due to be read again: that starts, and meanwhile the set as last read answers (a key of an
      // earlier version made by an older node in the last 30 s waits for the new read).
      if (now() - gatheredFrom >= UNVOUCHED_REFRESH_MS) regather().catch(() => {});
      return unvouched.has(digestTag(hashApiKey(key)));
    },

    /** verifyApiKey for many keys at once: those that need the database are looked up KEY_LOOKUP_BATCH to a statement. */
    async verifyApiKeys(keys: Iterable<string>): Promise<Map<string, ApiKeyCheck>> {
      const distinct = [...new Set(keys)];
      const prechecked = await Promise.all(distinct.map(precheck));
      const found = await lookUp(prechecked.filter((p): p is string => typeof p === 'string'));
      const out = new Map<string, ApiKeyCheck>();
      distinct.forEach((key, i) => {
        const p = prechecked[i]!;
        out.set(key, typeof p === 'string' ? found.get(p)! : p);
      });
      return out;
    },

    /** How many times API keys were looked up in the database, and in how many statements. */
    keyLookups(): KeyLookupCounts {
      return { ...counts };
    },
  };
}
