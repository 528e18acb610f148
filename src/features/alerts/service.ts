import type { FastifyBaseLogger } from 'fastify';
import { RE2JS } from 're2js';
import type { Db } from '../../db/types.js';
import { lockRow } from '../../db/lock.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { formatDuration } from '../../duration.js';
import { isId, newId } from '../../ids.js';
import { findUserById } from '../accounts/repository.js';
import type { LogRowStored } from '../logs/repository.js';
import { presentLog, type Log } from '../logs/present.js';
import { checkLimit } from '../plans/plans.js';
import type { ProjectsService } from '../projects/service.js';
import { findOwnedProject } from '../projects/repository.js';
import * as repo from './repository.js';
import { bucketSize, matchBatch, parseChannels, parseCondition, parseCooldown, presentRule, type AlertRule, type ConditionInput } from './rules.js';

export interface CreateRuleInput {
  projectId: string;
  name: string;
  condition: ConditionInput;
  channels: string[];
  cooldown?: string;
}

export interface UpdateRuleInput {
  name?: string;
  condition?: ConditionInput;
  channels?: string[];
  cooldown?: string;
  enabled?: boolean;
  projectId?: string;
}

export interface HistoryEntry {
  id: string;
  alertId: string;
  triggeredAt: string;
  matchedCount: number;
  threshold: number;
  window: string;
  deliveries: { channel: string; status: string; error?: string }[];
  sample: Log[];
}

export type AlertsService = ReturnType<typeof createAlertsService>;

const ruleNotFound = () => notFound('alert rule');
const SAMPLE_SIZE = 5;

function encodeCursor(at: number, id: string): string {
  return Buffer.from(`h1.${at}.${id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: number; id: string } {
  const m = /^h1\.(\d{1,16})\.(alh_[0-9a-z]{26})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError('querystring:/cursor', 'is not a cursor this server issued');
  return { at: Number(m[1]), id: m[2]! };
}

export function createAlertsService(deps: { db: Db; now: () => number; log: FastifyBaseLogger; projects: ProjectsService; onFired: () => void }) {
  const { db, now, log, onFired } = deps;
  /** Compiled patterns by source text: compiling once per rule, not once per batch. */
  const patterns = new Map<string, RE2JS>();
  const compiled = (pattern: string | null) => {
    if (pattern === null) return null;
    let re = patterns.get(pattern);
    if (!re) {
      re = RE2JS.compile(pattern);
      if (patterns.size > 10_000) patterns.clear();
      patterns.set(pattern, re);
    }
    return re;
  };

  async function owned(userId: string, id: string): Promise<repo.RuleRow> {
    const row = isId('alt', id) ? await repo.findOwnedRule(db, userId, id) : undefined;
    if (!row) throw ruleNotFound();
    return row;
  }

  /** Writes the firing (history + one pending delivery per channel) if this node wins the claim. */
  async function fire(rule: repo.RuleRow, count: number, sample: LogRowStored[]): Promise<boolean> {
    const t = now();
    const fired = await db.transaction().execute(async (tx) => {
      const claimed = await repo.claimFiring(tx, rule.id, t);
      if (!claimed) return false;
      const historyId = newId('alh', t);
      await repo.insertHistory(tx, {
        id: historyId,
        rule_id: rule.id,
        project_id: rule.project_id,
        triggered_at: t,
        matched_count: count,
        threshold: claimed.threshold,
        window_ms: claimed.window_ms,
        sample: JSON.stringify(sample.map(presentLog)),
      });
      for (const channel of claimed.channels.split(',').filter(Boolean)) {
        await repo.insertDelivery(tx, { id: newId('dlv', t), history_id: historyId, channel, status: 'pending', attempts: 0, next_attempt_at: t, locked_until: null, error: null, state: null, updated_at: t });
      }
      return true;
    });
    if (fired) {
      log.info({ ruleId: rule.id, projectId: rule.project_id, count }, 'alert fired');
      onFired();
    }
    return fired;
  }

  return {
    async create(userId: string, input: CreateRuleInput): Promise<AlertRule> {
      const condition = parseCondition(input.condition);
      const channels = parseChannels(input.channels);
      const cooldownMs = parseCooldown(input.cooldown);
      const name = input.name.trim();
      if (name === '') throw validationError('/name', 'must not be blank');
      return db.transaction().execute(async (tx) => {
        // The project row's lock serialises creates under one project, so the cap holds under races.
        const project = isId('proj', input.projectId) ? await findOwnedProject(tx, userId, input.projectId) : undefined;
        if (!project) throw notFound('project');
        await lockRow(tx, 'projects', project.id);
        const user = await findUserById(tx, userId);
        if (!user) throw new AppError('UNAUTHORIZED', 'The access token is not valid.');
        const check = checkLimit(user.plan, 'alerts', await repo.countRules(tx, project.id));
        if (!check.ok) throw new AppError('PLAN_LIMIT_EXCEEDED', check.message, { details: { resource: 'alerts', limit: check.limit, plan: user.plan } });
        const t = now();
        const row: repo.RuleRow = {
          id: newId('alt', t),
          project_id: project.id,
          name,
          level: condition.level,
          threshold: condition.threshold,
          window_ms: condition.windowMs,
          source: condition.source,
          pattern: condition.pattern,
          channels: channels.join(','),
          cooldown_ms: cooldownMs,
          enabled: 1,
          last_triggered_at: null,
          created_at: t,
          updated_at: t,
        };
        await repo.insertRule(tx, row);
        return presentRule(row);
      });
    },

    async list(userId: string, projectId: string | undefined): Promise<AlertRule[]> {
      if (projectId !== undefined) {
        const project = isId('proj', projectId) ? await findOwnedProject(db, userId, projectId) : undefined;
        if (!project) throw notFound('project');
      }
      return (await repo.listRules(db, userId, projectId)).map(presentRule);
    },

    async get(userId: string, id: string): Promise<AlertRule> {
      return presentRule(await owned(userId, id));
    },

    async update(userId: string, id: string, input: UpdateRuleInput): Promise<AlertRule> {
      const row = await owned(userId, id);
      if (input.projectId !== undefined && input.projectId !== row.project_id) throw validationError('/projectId', 'cannot change; create the rule in the other project instead');
      const changes: Partial<repo.RuleRow> = { updated_at: now() };
      if (input.name !== undefined) {
        const name = input.name.trim();
        if (name === '') throw validationError('/name', 'must not be blank');
        changes.name = name;
      }
      if (input.condition !== undefined) {
        const c = parseCondition(input.condition);
        Object.assign(changes, { level: c.level, threshold: c.threshold, window_ms: c.windowMs, source: c.source, pattern: c.pattern });
      }
      if (input.channels !== undefined) changes.channels = parseChannels(input.channels).join(',');
      if (input.cooldown !== undefined) changes.cooldown_ms = parseCooldown(input.cooldown);
      if (input.enabled !== undefined) changes.enabled = input.enabled ? 1 : 0;
      const updated = await repo.updateRule(db, id, changes);
      if (!updated) throw ruleNotFound();
      return presentRule(updated);
    },

    async remove(userId: string, id: string): Promise<void> {
      await owned(userId, id);
      await repo.deleteRule(db, id);
    },

    async history(userId: string, id: string, limit: number, cursor: string | undefined): Promise<{ data: HistoryEntry[]; nextCursor: string | null }> {
      await owned(userId, id);
      const rows = await repo.historyPage(db, id, cursor ? decodeCursor(cursor) : undefined, limit + 1);
      const page = rows.slice(0, limit);
      const deliveries = await repo.deliveriesOf(db, page.map((r) => r.id));
      const last = page[page.length - 1];
      return {
        data: page.map((r) => ({
          id: r.id,
          alertId: r.rule_id,
          triggeredAt: new Date(Number(r.triggered_at)).toISOString(),
          matchedCount: r.matched_count,
          threshold: r.threshold,
          window: formatDuration(Number(r.window_ms)),
          deliveries: deliveries
            .filter((d) => d.history_id === r.id)
            .map((d) => ({ channel: d.channel, status: d.status, ...(d.error ? { error: d.error } : {}) })),
          sample: JSON.parse(r.sample) as Log[],
        })),
        nextCursor: rows.length > limit && last ? encodeCursor(Number(last.triggered_at), last.id) : null,
      };
    },

    /**
     * Checks a committed batch against its project's enabled rules: the matches are counted in
     * the database (per rule and time bucket, so every node sees the same window count), and a
     * rule whose window count reaches its threshold fires if it wins the claim.
     */
    async evaluate(projectId: string, batch: () => LogRowStored[]): Promise<void> {
      const rules = await repo.enabledRules(db, projectId);
      if (rules.length === 0) return;
      const rows = batch();
      const t = now();
      const matched: { rule: repo.RuleRow; from: number; sample: LogRowStored[] }[] = [];
      const counts: { ruleId: string; bucket: number; n: number }[] = [];
      for (const rule of rules) {
        const windowMs = Number(rule.window_ms);
        const match = matchBatch({ level: rule.level, source: rule.source, windowMs }, compiled(rule.pattern), rows, t, SAMPLE_SIZE);
        if (match.count === 0) continue;
        for (const [bucket, n] of match.buckets) counts.push({ ruleId: rule.id, bucket, n });
        const size = bucketSize(windowMs);
        const from = t - windowMs;
        matched.push({ rule, from: from - (from % size), sample: match.sample });
      }
      if (matched.length === 0) return;
      // Two statements per batch: add every rule's matches, then read back every matched rule's window.
      await repo.addCounts(db, counts);
      const buckets = await repo.countsSince(db, matched.map((m) => m.rule.id), Math.min(...matched.map((m) => m.from)));
      for (const { rule, from, sample } of matched) {
        const count = buckets.reduce((sum, b) => (b.rule_id === rule.id && Number(b.bucket) >= from ? sum + Number(b.n) : sum), 0);
        if (count >= rule.threshold) await fire(rule, count, sample);
      }
    },

    /** Drops counter buckets older than the longest window. */
    async housekeeping(): Promise<void> {
      await repo.deleteOldCounts(db, now() - 8 * 86_400_000);
    },
  };
}
