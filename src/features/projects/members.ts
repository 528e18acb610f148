/**
 * Project members and invitations (docs/teams.md; docs/api.md, "Teams: members, roles and
 * invitations"): list, change a role, remove or leave, hand over ownership, mute notifications;
 * invite by email (a single-use token kept only as its digest, 7 days, accepted only by the
 * invited address).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { isId, newId } from '../../ids.js';
import { randomToken, sha256Hex } from '../../secrets.js';
import { findUserById } from '../accounts/repository.js';
import { isValidEmail, normaliseEmail } from '../accounts/email-address.js';
import { invitationEmail, sendLater } from '../notifications/account-mail.js';
import type { Mailer } from '../notifications/email.js';
import * as repo from './repository.js';
import { forbiddenRole, hasRole, isRole, type Role } from './roles.js';
import type { Project, ProjectsService } from './service.js';

export const INVITATION_DAYS = 7;
/** How many invitations (and so mails) one project may send in an hour. */
export const INVITATIONS_PER_HOUR = 20;
/** How many invitations (and so mails) one user may send in an hour, from all their projects together (INVITATIONS_PER_SENDER_PER_HOUR). */
export const INVITATIONS_PER_SENDER_PER_HOUR = 20;
const INVITATION_MS = INVITATION_DAYS * 24 * 3600_000;

export interface Member {
  userId: string;
  email: string;
  role: Role;
  joinedAt: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
}

const iso = (ms: number) => new Date(Number(ms)).toISOString();
const toMember = (r: { user_id: string; email: string; role: string; joined_at: number }): Member => ({ userId: r.user_id, email: r.email, role: r.role as Role, joinedAt: iso(r.joined_at) });
const toInvitation = (r: { id: string; email: string; role: string; created_at: number; expires_at: number }): Invitation => ({ id: r.id, email: r.email, role: r.role as Role, createdAt: iso(r.created_at), expiresAt: iso(r.expires_at) });
const memberNotFound = () => notFound('member');

export type MembersService = ReturnType<typeof createMembersService>;

export function createMembersService(deps: {
  db: Db;
  now: () => number;
  log: FastifyBaseLogger;
  projects: Pick<ProjectsService, 'access' | 'get'>;
  mailer: Mailer | undefined;
  publicUrl: string;
  /** Invitations one user may send per hour from all their projects together. */
  invitationsPerSenderPerHour?: number;
}) {
  const { db, now, log, projects, mailer, publicUrl } = deps;
  const perSender = deps.invitationsPerSenderPerHour ?? INVITATIONS_PER_SENDER_PER_HOUR;
  const removedListeners: ((projectId: string, userId: string) => void)[] = [];

  /** The target member of a route, or 404 (a user id of any shape that is not a member). */
  async function target(projectId: string, userId: string) {
    const row = isId('usr', userId) ? await repo.findMember(db, projectId, userId) : undefined;
    if (!row || !isRole(row.role)) throw memberNotFound();
    return { ...row, role: row.role };
  }

  return {
    /** Every member, the owner first. Any member may look. */
    async list(userId: string, projectId: string): Promise<Member[]> {
      await projects.access(userId, projectId);
      const rows = await repo.listMembers(db, projectId);
      return [...rows.filter((r) => r.role === 'owner'), ...rows.filter((r) => r.role !== 'owner')].map(toMember);
    },

    /** Owner only: makes a member an admin or an admin a member. The owner's own role changes only by a transfer. */
    async setRole(userId: string, projectId: string, memberId: string, role: 'admin' | 'member'): Promise<Member> {
      await projects.access(userId, projectId, 'owner', 'change roles');
      const member = await target(projectId, memberId);
      if (member.role === 'owner') throw validationError('/userId', 'is the owner: hand the project over with POST /v1/projects/:id/transfer instead');
      await repo.setMemberRole(db, projectId, memberId, role);
      return toMember({ ...member, role });
    },

    /**
     * Removes a member, or the caller leaves. Admins remove members; only the owner removes admins;
     * nobody removes the owner (who must transfer first). The removed user's tails end at once.
     */
    async remove(userId: string, projectId: string, memberId: string): Promise<void> {
      const { role } = await projects.access(userId, projectId);
      if (memberId === userId) {
        if (role === 'owner') throw validationError('/userId', 'is the owner, who cannot leave: transfer the project to an admin first');
      } else {
        if (!hasRole(role, 'admin')) throw forbiddenRole(role, 'admin', 'remove members');
        const member = await target(projectId, memberId);
        if (member.role === 'owner') throw validationError('/userId', 'is the owner, who cannot be removed');
        if (member.role === 'admin' && role !== 'owner') throw forbiddenRole(role, 'owner', 'remove an admin');
      }
      if (!(await repo.removeMember(db, projectId, memberId))) throw memberNotFound();
      for (const listener of removedListeners) listener(projectId, memberId);
    },

    /**
     * Owner only: hands the project to one of its admins; the old owner becomes an admin. Allowed
     * past the new owner's project cap (caps only block new projects).
     */
    async transfer(userId: string, projectId: string, newOwnerId: string): Promise<Project> {
      await db.transaction().execute(async (tx) => {
        await lockRow(tx, 'projects', projectId);
        await projects.access(userId, projectId, 'owner', 'transfer the project', tx);
        // The new owner's row lock, which account deletion takes to mark the account: a project is
        // never handed to an account whose deletion has begun (it would be left behind).
        const newOwner = isId('usr', newOwnerId) && (await lockRow(tx, 'users', newOwnerId)) ? await findUserById(tx, newOwnerId) : undefined;
        const member = newOwner && newOwner.deleting_since === null ? await repo.findMember(tx, projectId, newOwnerId) : undefined;
        if (!member) throw memberNotFound();
        if (member.role === 'owner') throw validationError('/userId', 'is already the owner');
        if (member.role !== 'admin') throw validationError('/userId', 'must be an admin of the project: make them an admin first');
        await repo.setMemberRole(tx, projectId, userId, 'admin');
        await repo.setMemberRole(tx, projectId, newOwnerId, 'owner');
        await repo.setOwner(tx, projectId, newOwnerId, now());
      });
      return projects.get(userId, projectId);
    },

    async muted(userId: string, projectId: string): Promise<{ muted: boolean }> {
      const { muted } = await projects.access(userId, projectId);
      return { muted };
    },

    async setMuted(userId: string, projectId: string, muted: boolean): Promise<{ muted: boolean }> {
      await projects.access(userId, projectId);
      await repo.setMuted(db, projectId, userId, muted);
      return { muted };
    },

    /** Admins invite members; only the owner invites admins. The mail carries the token, which is stored only as its digest. */
    async invite(userId: string, projectId: string, input: { email: string; role: 'admin' | 'member' }): Promise<Invitation> {
      const { row: project, role } = await projects.access(userId, projectId, 'admin', 'invite people');
      if (input.role === 'admin' && role !== 'owner') throw forbiddenRole(role, 'owner', 'invite an admin');
      if (!isValidEmail(input.email)) throw validationError('/email', 'must be a valid email address');
      const email = normaliseEmail(input.email);
      const inviter = await findUserById(db, userId);
      const token = randomToken(32);
      const t = now();
      const row = { id: newId('inv', t), project_id: projectId, email, role: input.role, token_hash: sha256Hex(token), invited_by: userId, created_at: t, expires_at: t + INVITATION_MS };
      // Each invitation sends a mail: a project sends at most INVITATIONS_PER_HOUR, and one sender
      // INVITATIONS_PER_SENDER_PER_HOUR (configurable) from all their projects together, each counted under its
      // row lock (the project's, then the sender's) so racing requests (on any node) cannot pass it.
      const retryAfter = (oldest: number) => Math.max(1, Math.ceil((oldest + 3600_000 - t) / 1000));
      await db.transaction().execute(async (tx) => {
        await lockRow(tx, 'projects', projectId);
        const recent = await repo.invitationsSince(tx, projectId, t - 3600_000);
        if (recent.count >= INVITATIONS_PER_HOUR) {
          throw new AppError('RATE_LIMITED', `A project can send at most ${INVITATIONS_PER_HOUR} invitations an hour; try again later.`, { retryAfter: retryAfter(recent.oldest) });
        }
        await lockRow(tx, 'users', userId);
        const sent = await repo.invitationsSentSince(tx, userId, t - 3600_000);
        if (sent.count >= perSender) {
          throw new AppError('RATE_LIMITED', `One person can send at most ${perSender} invitations an hour, from all their projects together; try again later.`, { retryAfter: retryAfter(sent.oldest) });
        }
        await repo.insertInvitation(tx, row);
      });
      const link = `${publicUrl}/invitations#token=${token}`;
      sendLater(mailer, log, email, invitationEmail({ projectName: project.name, inviterEmail: inviter?.email ?? 'A Loglane user', role: input.role, link, days: INVITATION_DAYS }), 'invitation');
      return toInvitation(row);
    },

    async invitations(userId: string, projectId: string): Promise<Invitation[]> {
      await projects.access(userId, projectId, 'admin', 'see invitations');
      return (await repo.pendingInvitations(db, projectId, now())).map(toInvitation);
    },

    /** Revokes a pending invitation; an admin invitation only by the owner. */
    async revokeInvitation(userId: string, projectId: string, invitationId: string): Promise<void> {
      const { role } = await projects.access(userId, projectId, 'admin', 'revoke invitations');
      const row = isId('inv', invitationId) ? await repo.findInvitation(db, projectId, invitationId, now()) : undefined;
      if (!row) throw notFound('invitation');
      if (row.role === 'admin' && role !== 'owner') throw forbiddenRole(role, 'owner', 'revoke an admin invitation');
      await repo.expireInvitation(db, row.id, now());
    },

    /**
     * Accepts an invitation for the signed-in user, whose email must be the invited one. Anything
     * else (unknown, used, expired, another email) is one 404, and leaves the invitation pending.
     * A user who is already a member keeps their role.
     */
    async accept(userId: string, token: string): Promise<{ project: Project }> {
      const user = await findUserById(db, userId);
      if (!user) throw notFound('invitation');
      const projectId = await db.transaction().execute(async (tx) => {
        const invitation = await repo.findPendingInvitationByToken(tx, sha256Hex(token), user.email, now());
        if (!invitation || !(await repo.markInvitationAccepted(tx, invitation.id, now()))) return undefined;
        await repo.addMember(tx, invitation.project_id, userId, invitation.role, now());
        return invitation.project_id;
      });
      if (!projectId) throw notFound('invitation');
      return { project: await projects.get(userId, projectId) };
    },

    /** Calls `fn` whenever a member is removed or leaves through this node. */
    onRemoved(fn: (projectId: string, userId: string) => void): void {
      removedListeners.push(fn);
    },

    /** Deletes the invitations addressed to an email (its account is being deleted). */
    forgetInvitationsTo: (email: string) => repo.deleteInvitationsTo(db, email),

    /** Who a project's alert notifications go to: every member who has not muted it. */
    notified: (projectId: string) => repo.notifiedMembers(db, projectId),

    housekeeping: () => repo.deleteStaleInvitations(db, now() - INVITATION_MS),
  };
}
