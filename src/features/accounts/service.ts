import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { lockRow } from '../../db/lock.js';
import { isId, newId } from '../../ids.js';
import { resetEmail, sendLater } from '../notifications/account-mail.js';
import type { Mailer } from '../notifications/email.js';
import { randomToken, sha256Hex } from '../../secrets.js';
import { periodEnd } from '../plans/plans.js';
import { clientNetwork } from './client-address.js';
import { isValidEmail, normaliseEmail } from './email-address.js';
import { dummyHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';
import * as repo from './repository.js';
import type { AccessTokens } from './tokens.js';

export interface User {
  id: string;
  email: string;
  createdAt: string;
}

export interface Me extends User {
  subscription: { plan: string; status: string; periodEnd: string };
}

/** Where a login came from, as the sessions list shows it. */
export interface ClientInfo {
  userAgent?: string;
  ip?: string;
}

export interface Session {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  userAgent: string | null;
  ip: string | null;
  current: boolean;
}

/** How long a password reset link works. */
export const RESET_TOKEN_MINUTES = 30;
/** An account whose deletion began this long ago and is still there was left midway (a node stopped): housekeeping finishes it. */
export const UNFINISHED_DELETION_MS = 3600_000;

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

export type AccountsService = ReturnType<typeof createAccountsService>;

const iso = (ms: number) => new Date(ms).toISOString();
const toUser = (row: repo.UserRow): User => ({ id: row.id, email: row.email, createdAt: iso(row.created_at) });

const invalidCredentials = () => new AppError('INVALID_CREDENTIALS', 'The email or password is incorrect.');
const invalidRefreshToken = () => new AppError('INVALID_REFRESH_TOKEN', 'The refresh token is invalid, expired or already used. Sign in again.');

export function createAccountsService(deps: {
  db: Db;
  config: Pick<Config, 'defaultPlan' | 'publicUrl' | 'refreshTokenTtlMs' | 'loginMaxAttempts' | 'loginMaxAttemptsPerIp' | 'loginWindowMs' | 'signupMaxPerIp' | 'signupWindowMs'>;
  tokens: AccessTokens;
  now: () => number;
  log: FastifyBaseLogger;
  mailer: Mailer | undefined;
  /** Deletes every project the user owns, with everything in it (account deletion). */
  removeOwnedProjects: (userId: string) => Promise<void>;
  forgetInvitationsTo: (email: string) => Promise<void>;
  /** Told when an account is gone, so this node ends what it still holds open for it (live tails). */
  onAccountDeleted: (userId: string) => void;
  /** Forgets the user in the progress of alert deliveries still pending (whom a mail already reached). */
  forgetAsRecipient: (userId: string) => Promise<void>;
}) {
  const { db, config, tokens, now, log, mailer } = deps;

  /** Starts a new login: a new refresh-token family (its session row says where from) and an access token bound to it. */
  async function startSession(userId: string, client: ClientInfo): Promise<TokenPair> {
    const t = now();
    const familyId = newId('ses', t);
    await repo.insertSession(db, { id: familyId, user_id: userId, created_at: t, user_agent: client.userAgent?.slice(0, 256) ?? null, ip: client.ip ?? null });
    return { accessToken: await tokens.issue(userId, familyId), refreshToken: await newRefreshToken(db, userId, familyId) };
  }

  /**
   * Checks the password of a signed-in user (changing it, deleting the account) against the same
   * throttle as logins for their email, so a stolen access token cannot be used to guess it.
   */
  async function checkPassword(user: repo.UserRow, password: string, ip: string): Promise<void> {
    const taken = await reserve(throttleKeys(user.email, ip));
    let ok: boolean;
    try {
      ok = await verifyPassword(user.password_hash, password);
    } catch (err) {
      await release(taken, 'succeeded').catch(() => {});
      throw err;
    }
    await release(taken, ok ? 'succeeded' : 'failed');
    if (!ok) throw invalidCredentials();
  }

  async function signedInUser(userId: string): Promise<repo.UserRow> {
    const user = await repo.findUserById(db, userId);
    if (!user || user.deleting_since !== null) throw new AppError('UNAUTHORIZED', 'The access token is not valid.');
    return user;
  }

  async function newRefreshToken(executor: Parameters<typeof repo.insertRefreshToken>[0], userId: string, familyId: string): Promise<string> {
    const token = randomToken(32);
    const t = now();
    await repo.insertRefreshToken(executor, {
      id: newId('rt', t),
      user_id: userId,
      family_id: familyId,
      token_hash: sha256Hex(token),
      created_at: t,
      expires_at: t + config.refreshTokenTtlMs,
    });
    return token;
  }

  /**
   * The throttle keys a login attempt counts against, with each key's limit. Keys hold digests,
   * so any input makes a well-formed key and the table stores no addresses in the clear.
   */
  function throttleKeys(email: string, ip: string, counter: '' | 'reset-' = '') {
    return [
      { key: `${counter}email:${sha256Hex(email)}`, limit: config.loginMaxAttempts },
      { key: `${counter}ip:${sha256Hex(ip)}`, limit: config.loginMaxAttemptsPerIp },
    ];
  }

  type Reservation = { key: string; windowStart: number };

  /**
   * Reserves one password check against every key, before the check runs: the reservation is an
   * atomic conditional increment in the database, so concurrent logins on any number of nodes
   * can never check more than a key's limit within its window. Throws 429 when a key is full
   * (and gives back what it had taken).
   */
  async function reserve(keys: { key: string; limit: number }[]): Promise<Reservation[]> {
    const taken: Reservation[] = [];
    for (const { key, limit } of keys) {
      const windowStart = await repo.reserveAttempt(db, key, limit, now(), config.loginWindowMs);
      if (windowStart !== undefined) {
        taken.push({ key, windowStart });
        continue;
      }
      await release(taken, 'succeeded');
      const what = key.startsWith('reset-') ? 'password reset requests' : 'failed sign-in attempts';
      throw new AppError('RATE_LIMITED', `Too many ${what}. Try again later.`, { retryAfter: await waitFor(key, config.loginWindowMs) });
    }
    return taken;
  }

  /**
   * Reserves one sign-up for the client's network (an IPv6 client's /64), the same way a login
   * reserves its attempt: one conditional increment in the database, so the limit holds across
   * nodes and bursts. Throws 429 with the rest of the window when the network has made
   * SIGNUP_MAX_PER_IP accounts within SIGNUP_WINDOW.
   */
  async function reserveSignup(ip: string | undefined): Promise<Reservation> {
    const key = `signup-ip:${sha256Hex(clientNetwork(ip))}`;
    const windowStart = await repo.reserveAttempt(db, key, config.signupMaxPerIp, now(), config.signupWindowMs);
    if (windowStart === undefined) {
      throw new AppError('RATE_LIMITED', 'Too many accounts were created from this address. Try again later.', { retryAfter: await waitFor(key, config.signupWindowMs) });
    }
    return { key, windowStart };
  }

  /**
   * Seconds until a full key may take an attempt again: the rest of its window. (When checks in
   * flight fill it, a slot may free sooner, but those checks are most likely failures.)
   */
  async function waitFor(key: string, windowMs: number): Promise<number> {
    const row = await repo.findThrottle(db, key);
    const windowStart = row ? Number(row.window_start) : now();
    return Math.max(1, Math.ceil((windowStart + windowMs - now()) / 1000));
  }

  /**
   * The rest of an account's deletion, once it is marked (no project can be created for it, nor
   * handed to it, from then on): its projects with everything in them, then the user row, whose
   * foreign keys take its logins, push subscriptions, memberships, invitations and reset tokens.
   */
  async function finishDeletion(userId: string, email: string): Promise<void> {
    await deps.removeOwnedProjects(userId);
    await repo.deleteUser(db, userId);
    // Invitations still waiting for this address name it: they go too.
    await deps.forgetInvitationsTo(email);
    await deps.forgetAsRecipient(userId);
    deps.onAccountDeleted(userId);
  }

  async function release(taken: Reservation[], outcome: 'failed' | 'succeeded' | 'reset'): Promise<void> {
    for (const r of taken) await repo.endAttempt(db, r.key, r.windowStart, outcome);
  }

  return {
    /**
     * Creates an account. Each client network may create SIGNUP_MAX_PER_IP accounts per
     * SIGNUP_WINDOW (429 past it); a sign-up that fails (a taken email) gives its place back.
     */
    async signup(input: { email: string; password: string }, client: ClientInfo = {}): Promise<{ user: User } & TokenPair> {
      if (!isValidEmail(input.email)) throw validationError('/email', 'must be a valid email address');
      const reserved = await reserveSignup(client.ip);
      let row: repo.UserRow;
      try {
        const t = now();
        row = {
          id: newId('usr', t),
          email: normaliseEmail(input.email),
          password_hash: await hashPassword(input.password),
          plan: config.defaultPlan,
          plan_status: 'active',
          created_at: t,
          updated_at: t,
          deleting_since: null,
        };
        await repo.insertUser(db, row);
      } catch (err) {
        await repo.endAttempt(db, reserved.key, reserved.windowStart, 'succeeded').catch(() => {});
        if (isUniqueViolation(err)) throw new AppError('EMAIL_TAKEN', 'An account with this email already exists.');
        throw err;
      }
      // The account was made: it counts against the network's window (the throttle's "failures").
      await repo.endAttempt(db, reserved.key, reserved.windowStart, 'failed');
      return { user: toUser(row), ...(await startSession(row.id, client)) };
    },

    async login(input: { email: string; password: string }, ip: string, client: ClientInfo = {}): Promise<{ user: User } & TokenPair> {
      const email = normaliseEmail(input.email);
      const keys = throttleKeys(email, ip);
      const taken = await reserve(keys);
      let user: repo.UserRow | undefined;
      let ok = false;
      try {
        user = await repo.findUserByEmail(db, email);
        // An account being deleted is as unknown as a deleted one.
        if (user?.deleting_since != null) user = undefined;
        // An unknown email is verified against a dummy hash, so it takes as long as a wrong password.
        ok = (await verifyPassword(user?.password_hash ?? (await dummyHash()), input.password)) && user !== undefined;
      } catch (err) {
        // Not an answer about the password: the reservation is given back, uncounted.
        await release(taken, 'succeeded').catch(() => {});
        throw err;
      }
      if (!ok || !user) {
        await release(taken, 'failed');
        throw invalidCredentials();
      }
      // A success never counts. On the email it also ends the run of failures before it, unless
      // other checks for that email are in flight; the address keeps its failures.
      await repo.endAttempt(db, taken[0]!.key, taken[0]!.windowStart, 'reset');
      await release(taken.slice(1), 'succeeded');
      if (needsRehash(user.password_hash)) await repo.updatePasswordHash(db, user.id, await hashPassword(input.password), now());
      return { user: toUser(user), ...(await startSession(user.id, client)) };
    },

    /**
     * Trades a refresh token for a new pair. The token is consumed by one conditional update, so
     * of concurrent refreshes with one token exactly one succeeds. Presenting a token that was
     * already used is treated as theft (RFC 9700 §4.14.2): its whole family is revoked. Concurrent
     * refreshes of one token count as such a reuse too: the winner's new token dies with the family.
     */
    async refresh(refreshToken: string): Promise<TokenPair> {
      const hash = sha256Hex(refreshToken);
      const rotated = await db.transaction().execute(async (tx) => {
        const row = await repo.consumeRefreshToken(tx, hash, now());
        if (!row) return undefined;
        return { userId: row.user_id, familyId: row.family_id, refreshToken: await newRefreshToken(tx, row.user_id, row.family_id) };
      });
      if (rotated) {
        await repo.touchSession(db, rotated.familyId, now());
        return { accessToken: await tokens.issue(rotated.userId, rotated.familyId), refreshToken: rotated.refreshToken };
      }

      const known = await repo.findRefreshToken(db, hash);
      if (known && known.used_at !== null) {
        const revoked = await repo.revokeFamily(db, known.family_id, now());
        if (revoked > 0) log.warn({ userId: known.user_id, familyId: known.family_id }, 'refresh token reused: the whole login was revoked');
      }
      throw invalidRefreshToken();
    },

    /** Ends the login the refresh token belongs to, if it belongs to this user; silent otherwise. */
    async logout(userId: string, refreshToken: string): Promise<void> {
      const known = await repo.findRefreshToken(db, sha256Hex(refreshToken));
      if (known && known.user_id === userId) await repo.endSession(db, userId, known.family_id, now());
    },

    /** Whether the account still exists: a deleted account's access tokens answer 401 at once. */
    async exists(userId: string): Promise<boolean> {
      const user = await repo.findUserById(db, userId);
      return user !== undefined && user.deleting_since === null;
    },

    /** Changes the password; every other login ends (its refresh token fails), the caller's stays, and every reset link dies. */
    async changePassword(userId: string, sessionId: string, input: { currentPassword: string; newPassword: string }, ip: string): Promise<void> {
      const user = await signedInUser(userId);
      await checkPassword(user, input.currentPassword, ip);
      const passwordHash = await hashPassword(input.newPassword);
      await db.transaction().execute(async (tx) => {
        await lockRow(tx, 'users', userId);
        await repo.updatePasswordHash(tx, userId, passwordHash, now());
        await repo.endOtherSessions(tx, userId, sessionId, now());
        await repo.usePasswordResetsOf(tx, userId, now());
      });
    },

    /**
     * Mails a reset link to the account, if there is one; the answer is the same either way, and
     * the mail goes after it. Requests count per email and per address on their own counter.
     */
    async requestPasswordReset(input: { email: string }, ip: string): Promise<void> {
      const email = normaliseEmail(input.email);
      await release(await reserve(throttleKeys(email, ip, 'reset-')), 'failed');
      const user = isValidEmail(email) ? await repo.findUserByEmail(db, email) : undefined;
      if (!user || user.deleting_since !== null) return;
      const token = randomToken(32);
      const t = now();
      await repo.insertPasswordReset(db, { token_hash: sha256Hex(token), user_id: user.id, created_at: t, expires_at: t + RESET_TOKEN_MINUTES * 60_000 });
      sendLater(mailer, log, user.email, resetEmail(`${config.publicUrl}/reset-password#token=${token}`, RESET_TOKEN_MINUTES), 'password reset');
    },

    /**
     * Sets a new password with a reset token (once, within 30 minutes); every login of the account
     * ends, and so does every other reset link of it. Confirms of one account run one at a time
     * (under its row lock, as a password change does), so of two links used at once one wins.
     */
    async confirmPasswordReset(input: { token: string; newPassword: string }): Promise<void> {
      const passwordHash = await hashPassword(input.newPassword);
      const hash = sha256Hex(input.token);
      const done = await db.transaction().execute(async (tx) => {
        const owner = await repo.findPasswordResetOwner(tx, hash);
        if (!owner) return false;
        await lockRow(tx, 'users', owner);
        const userId = await repo.consumePasswordReset(tx, hash, now());
        if (!userId) return false;
        await repo.updatePasswordHash(tx, userId, passwordHash, now());
        await repo.endOtherSessions(tx, userId, undefined, now());
        await repo.usePasswordResetsOf(tx, userId, now());
        return true;
      });
      if (!done) throw validationError('/token', 'is unknown, already used or expired: ask for a new reset link');
    },

    /** The user's live logins, newest first; `current` marks the one that made this request. */
    async sessions(userId: string, sessionId: string): Promise<Session[]> {
      const rows = await repo.liveSessionsOf(db, userId, now());
      return rows.map((r) => ({ id: r.id, createdAt: iso(Number(r.created_at)), lastUsedAt: iso(Number(r.last_used_at)), userAgent: r.user_agent, ip: r.ip, current: r.id === sessionId }));
    },

    /** Ends one of the user's logins; another user's or an unknown one is a 404. */
    async revokeSession(userId: string, id: string): Promise<void> {
      const known = (isId('ses', id) || isId('rtf', id)) && (await repo.endSession(db, userId, id, now()));
      if (!known) throw notFound('session');
    },

    /**
     * Deletes the account after checking its password. It is marked first, under the user's row
     * lock that project creation and ownership transfer take too: from then on its access tokens
     * answer 401 and no project can be made for it or handed to it, so the projects purged next are
     * all it will ever own, and nothing of it is left when the user row goes (finishDeletion).
     */
    async deleteAccount(userId: string, input: { password: string }, ip: string): Promise<void> {
      const user = await signedInUser(userId);
      await checkPassword(user, input.password, ip);
      await db.transaction().execute(async (tx) => {
        await lockRow(tx, 'users', userId);
        await repo.markDeleting(tx, userId, now());
      });
      await finishDeletion(userId, user.email);
      for (const counter of ['', 'reset-'] as const) await repo.deleteThrottle(db, throttleKeys(user.email, ip, counter)[0]!.key);
    },

    async me(userId: string): Promise<Me | undefined> {
      const row = await repo.findUserById(db, userId);
      if (!row || row.deleting_since !== null) return undefined;
      return {
        ...toUser(row),
        subscription: { plan: row.plan, status: row.plan_status, periodEnd: iso(periodEnd(row.created_at, now())) },
      };
    },

    /**
     * Removes refresh tokens long past use and throttle windows that have closed, and finishes the
     * deletions a stopped node left midway.
     */
    async housekeeping(): Promise<{ refreshTokens: number; throttles: number; sessions: number; passwordResets: number; deletionsFinished: number }> {
      const t = now();
      const unfinished = await repo.unfinishedDeletions(db, t - UNFINISHED_DELETION_MS);
      for (const id of unfinished) {
        const user = await repo.findUserById(db, id);
        if (user) await finishDeletion(id, user.email);
      }
      return {
        deletionsFinished: unfinished.length,
        // Kept one extra lifetime after expiry, so a late replay still revokes its family.
        refreshTokens: await repo.deleteExpiredRefreshTokens(db, t - config.refreshTokenTtlMs),
        throttles: await repo.deleteStaleThrottles(db, t - Math.max(config.loginWindowMs, config.signupWindowMs)),
        sessions: await repo.deleteEmptySessions(db),
        passwordResets: await repo.deleteStalePasswordResets(db, t - RESET_TOKEN_MINUTES * 60_000),
      };
    },
  };
}
