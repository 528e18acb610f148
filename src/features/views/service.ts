/**
 * Saved views (docs/api.md, "Saved views"): a named search of a project, its query, time range,
 * columns and split, that every member of the project sees and opens. Any member saves one; its
 * creator or an admin (or the owner) changes or deletes it. Names are unique in a project ignoring
 * case, and a project holds at most MAX_VIEWS.
 */
import type { Db } from '../../db/types.js';
import { isUniqueViolation } from '../../db/errors.js';
import { lockRow } from '../../db/lock.js';
import { parseDuration } from '../../duration.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { charCount } from '../../http/schemas.js';
import { isId, newId } from '../../ids.js';
import { parseQuery } from '../logs/query/index.js';
import { parseField } from '../logs/query/parse.js';
import { parseTime } from '../logs/query/text.js';
import { hasRole, type Role } from '../projects/roles.js';
import type { ProjectsService } from '../projects/service.js';

/** Views one project may hold, whatever its plan. */
export const MAX_VIEWS = 100;
/** Columns one view may show. */
export const MAX_COLUMNS = 20;
/** The longest "last …" range a view may keep (400 days: more than any plan's retention). */
const MAX_LAST_MS = 400 * 86_400_000;
/** The log's own fields a column may name, besides metadata paths. */
const LOG_FIELDS = new Set(['timestamp', 'level', 'source', 'message', 'receivedAt', 'id']);

export type ViewRange = { last: string } | { from: string; to: string };

export interface ViewInput {
  name: string;
  query?: string;
  range: { last?: string; from?: string; to?: string };
  columns?: string[];
  groupBy?: string | null;
}

export interface View {
  id: string;
  projectId: string;
  name: string;
  query: string;
  range: ViewRange;
  columns: string[];
  groupBy: string | null;
  createdBy: { id: string; email: string | null };
  createdAt: string;
  updatedAt: string;
}

interface ViewRow {
  id: string;
  project_id: string;
  name: string;
  query: string;
  range: string;
  columns: string;
  group_by: string | null;
  created_by: string;
  created_at: number | string;
  updated_at: number | string;
  email: string | null;
}

/** Whether `name` is a column a view may show: a field of the log, or a metadata path (`@a.b`, or `a.b` as groupBy takes it). */
export function checkColumn(name: string, path: string): string {
  const text = name.trim();
  if (text === '' || text.length > 300) throw validationError(path, 'must be a field name or @path of 1 to 300 characters');
  if (LOG_FIELDS.has(text)) return text;
  parseField(text, path);
  return text;
}

/** The checked and normalised parts of a view: what is stored. */
function checked(input: ViewInput): { name: string; query: string; range: ViewRange; columns: string[]; groupBy: string | null } {
  const name = input.name.trim();
  if (name.length < 1 || charCount(name) > 100) throw validationError('/name', 'must be 1 to 100 characters');
  const query = (input.query ?? '').trim();
  if (query !== '') parseQuery(query, '/query');
  const range = checkRange(input.range);
  const columns = (input.columns ?? []).map((c, i) => checkColumn(c, `/columns/${i}`));
  if (columns.length > MAX_COLUMNS) throw validationError('/columns', `must hold at most ${MAX_COLUMNS} columns`);
  if (new Set(columns).size !== columns.length) throw validationError('/columns', 'must not name a column twice');
  let groupBy: string | null = null;
  if (input.groupBy !== undefined && input.groupBy !== null && input.groupBy.trim() !== '') {
    groupBy = input.groupBy.trim();
    parseField(groupBy, '/groupBy');
  }
  return { name, query, range, columns, groupBy };
}

function checkRange(range: ViewInput['range']): ViewRange {
  const keys = Object.keys(range);
  if (range.last !== undefined) {
    if (keys.length !== 1) throw validationError('/range', 'must be either {"last": "<duration>"} or {"from": <time>, "to": <time>}');
    const ms = parseDuration(range.last);
    if (ms === undefined || ms < 1000 || ms > MAX_LAST_MS || !/^\d+(s|m|h|d)$/.test(range.last.trim())) throw validationError('/range/last', 'must be a duration from 1s to 400d, such as 15m, 24h or 7d');
    return { last: range.last.trim() };
  }
  if (range.from === undefined || range.to === undefined || keys.length !== 2) throw validationError('/range', 'must be either {"last": "<duration>"} or {"from": <time>, "to": <time>}');
  const from = parseTime(range.from.trim());
  const to = parseTime(range.to.trim());
  if (from === undefined) throw validationError('/range/from', 'must be an ISO 8601 time or epoch milliseconds');
  if (to === undefined) throw validationError('/range/to', 'must be an ISO 8601 time or epoch milliseconds');
  if (from > to) throw validationError('/range/from', 'must not be after `to`');
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

const nameTaken = (name: string) =>
  new AppError('VIEW_NAME_TAKEN', `This project already has a view called "${name}" (names are compared ignoring case); choose another name or update that view.`, {
    details: [{ path: '/name', message: 'is taken in this project' }],
  });

export type ViewsService = ReturnType<typeof createViewsService>;

export function createViewsService(deps: { db: Db; now: () => number; projects: Pick<ProjectsService, 'assertRole'> }) {
  const { db, now, projects } = deps;

  const present = (r: ViewRow): View => ({
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    query: r.query,
    range: JSON.parse(r.range) as ViewRange,
    columns: JSON.parse(r.columns) as string[],
    groupBy: r.group_by,
    createdBy: { id: r.created_by, email: r.email },
    createdAt: new Date(Number(r.created_at)).toISOString(),
    updatedAt: new Date(Number(r.updated_at)).toISOString(),
  });

  function select() {
    return db
      .selectFrom('saved_views')
      .leftJoin('users', 'users.id', 'saved_views.created_by')
      .select(['saved_views.id', 'saved_views.project_id', 'saved_views.name', 'saved_views.query', 'saved_views.range', 'saved_views.columns', 'saved_views.group_by', 'saved_views.created_by', 'saved_views.created_at', 'saved_views.updated_at', 'users.email']);
  }

  async function find(projectId: string, viewId: string): Promise<View> {
    const row = isId('viw', viewId) ? await select().where('saved_views.id', '=', viewId).where('saved_views.project_id', '=', projectId).executeTakeFirst() : undefined;
    if (!row) throw notFound('view');
    return present(row as ViewRow);
  }

  /** Throws 403 unless the caller made the view or is an admin or the owner of its project. */
  function assertMayChange(userId: string, role: Role, view: View, what: string): void {
    if (view.createdBy.id === userId || hasRole(role, 'admin')) return;
    throw new AppError('FORBIDDEN_ROLE', `Only the member who saved this view, or a project admin or owner, can ${what} it; you are a ${role} of this project.`, {
      details: [{ role, required: 'admin' }],
    });
  }

  return {
    async list(userId: string, projectId: string): Promise<View[]> {
      await projects.assertRole(userId, projectId);
      const rows = await select().where('saved_views.project_id', '=', projectId).orderBy('saved_views.name_key').orderBy('saved_views.id').execute();
      return rows.map((r) => present(r as ViewRow));
    },

    async get(userId: string, projectId: string, viewId: string): Promise<View> {
      await projects.assertRole(userId, projectId);
      return find(projectId, viewId);
    },

    async create(userId: string, projectId: string, input: ViewInput): Promise<View> {
      await projects.assertRole(userId, projectId);
      const view = checked(input);
      const t = now();
      const id = newId('viw', t);
      try {
        await db.transaction().execute(async (tx) => {
          // The project row's lock serialises saves under one project, so the cap holds under races.
          await lockRow(tx, 'projects', projectId);
          const held = await tx.selectFrom('saved_views').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
          if (Number(held.n) >= MAX_VIEWS) {
            throw new AppError('PLAN_LIMIT_EXCEEDED', `A project holds at most ${MAX_VIEWS} saved views; delete one first.`, { details: { resource: 'views', limit: MAX_VIEWS } });
          }
          const taken = await tx.selectFrom('saved_views').select('id').where('project_id', '=', projectId).where('name_key', '=', view.name.toLowerCase()).executeTakeFirst();
          if (taken) throw nameTaken(view.name);
          await tx
            .insertInto('saved_views')
            .values({
              id,
              project_id: projectId,
              name: view.name,
              name_key: view.name.toLowerCase(),
              query: view.query,
              range: JSON.stringify(view.range),
              columns: JSON.stringify(view.columns),
              group_by: view.groupBy,
              created_by: userId,
              created_at: t,
              updated_at: t,
            })
            .execute();
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(view.name);
        throw err;
      }
      return find(projectId, id);
    },

    async update(userId: string, projectId: string, viewId: string, input: ViewInput): Promise<View> {
      const role = await projects.assertRole(userId, projectId);
      const existing = await find(projectId, viewId);
      assertMayChange(userId, role, existing, 'change');
      const view = checked(input);
      try {
        await db.transaction().execute(async (tx) => {
          const taken = await tx.selectFrom('saved_views').select('id').where('project_id', '=', projectId).where('name_key', '=', view.name.toLowerCase()).where('id', '!=', viewId).executeTakeFirst();
          if (taken) throw nameTaken(view.name);
          const done = await tx
            .updateTable('saved_views')
            .set({
              name: view.name,
              name_key: view.name.toLowerCase(),
              query: view.query,
              range: JSON.stringify(view.range),
              columns: JSON.stringify(view.columns),
              group_by: view.groupBy,
              updated_at: Math.max(now(), Date.parse(existing.updatedAt)),
            })
            .where('id', '=', viewId)
            .where('project_id', '=', projectId)
            .executeTakeFirst();
          if (Number(done.numUpdatedRows) === 0) throw notFound('view');
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(view.name);
        throw err;
      }
      return find(projectId, viewId);
    },

    async remove(userId: string, projectId: string, viewId: string): Promise<void> {
      const role = await projects.assertRole(userId, projectId);
      const existing = await find(projectId, viewId);
      assertMayChange(userId, role, existing, 'delete');
      await db.deleteFrom('saved_views').where('id', '=', viewId).where('project_id', '=', projectId).execute();
    },
  };
}
