/**
 * A project's alert destinations: webhooks (signed with a secret shown once) and Slack incoming
 * webhooks. A rule whose `channels` name `webhook` or `slack` notifies every destination of that
 * type in its project. URLs are checked when saved (outbound.ts refusedUrl) and again, with their
 * resolved addresses, at each send.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { isId, newId } from '../../ids.js';
import { randomToken, seal, unseal } from '../../secrets.js';
import type { ProjectsService } from '../projects/service.js';
import { refusedUrl } from './outbound.js';

export const DESTINATION_TYPES = ['webhook', 'slack'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** Destinations one project may hold. */
export const MAX_DESTINATIONS = 20;

export interface Destination {
  id: string;
  type: DestinationType;
  name: string;
  url: string;
  createdAt: string;
}

/** A destination as a delivery uses it: with its secret opened (webhooks). */
export interface Target {
  id: string;
  name: string;
  url: string;
  secret: string | null;
}

export type DestinationsService = ReturnType<typeof createDestinationsService>;

export function createDestinationsService(deps: { db: Db; now: () => number; encryptionKey: Buffer; config: Pick<Config, 'webhookAllowedOrigins'>; projects: Pick<ProjectsService, 'assertRole'> }) {
  const { db, now, encryptionKey, config, projects } = deps;
  const present = (r: { id: string; type: string; name: string; url: string; created_at: number | string }): Destination => ({
    id: r.id,
    type: r.type as DestinationType,
    name: r.name,
    url: r.url,
    createdAt: new Date(Number(r.created_at)).toISOString(),
  });

  return {
    async create(userId: string, projectId: string, input: { type: string; name?: string; url: string }): Promise<Destination & { secret?: string }> {
      await projects.assertRole(userId, projectId, 'admin', 'manage alert destinations');
      if (!(DESTINATION_TYPES as readonly string[]).includes(input.type)) throw validationError('/type', 'must be webhook or slack');
      const url = input.url.trim();
      const refused = refusedUrl(url, config.webhookAllowedOrigins);
      if (refused) throw validationError('/url', refused);
      const name = (input.name ?? '').trim() || `${input.type} ${new URL(url).host}`;
      const t = now();
      const id = newId('dst', t);
      const secret = input.type === 'webhook' ? `whsec_${randomToken(24)}` : undefined;
      const row = { id, project_id: projectId, type: input.type, name, url, secret_sealed: secret === undefined ? null : seal(encryptionKey, id, secret), created_at: t };
      await db.transaction().execute(async (tx) => {
        // The project row's lock serialises creates under one project, so the cap holds under races.
        await lockRow(tx, 'projects', projectId);
        const held = await tx.selectFrom('alert_destinations').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
        if (Number(held.n) >= MAX_DESTINATIONS) throw new AppError('VALIDATION_ERROR', `A project holds at most ${MAX_DESTINATIONS} destinations; delete one first.`, { details: [{ path: '/', message: `at most ${MAX_DESTINATIONS} destinations per project` }] });
        await tx.insertInto('alert_destinations').values(row).execute();
      });
      return { ...present(row), ...(secret !== undefined ? { secret } : {}) };
    },

    async list(userId: string, projectId: string): Promise<Destination[]> {
      await projects.assertRole(userId, projectId, 'admin', 'manage alert destinations');
      const rows = await db.selectFrom('alert_destinations').select(['id', 'type', 'name', 'url', 'created_at']).where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
      return rows.map(present);
    },

    async remove(userId: string, projectId: string, id: string): Promise<void> {
      await projects.assertRole(userId, projectId, 'admin', 'manage alert destinations');
      const gone = isId('dst', id) ? await db.deleteFrom('alert_destinations').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst() : undefined;
      if (!gone || Number(gone.numDeletedRows) === 0) throw notFound('destination');
    },

    /** The project's destinations of a type, secrets opened, for sending. */
    async targets(projectId: string, type: DestinationType): Promise<Target[]> {
      const rows = await db.selectFrom('alert_destinations').select(['id', 'name', 'url', 'secret_sealed']).where('project_id', '=', projectId).where('type', '=', type).orderBy('created_at').orderBy('id').execute();
      return rows.map((r) => ({ id: r.id, name: r.name, url: r.url, secret: r.secret_sealed === null ? null : unseal(encryptionKey, r.id, r.secret_sealed) }));
    },
  };
}
