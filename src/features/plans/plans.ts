/** The plans and their limits (spec §8), as one table of data. `null` means unlimited. */
export const PLANS = {
  free: { maxProjects: 1, maxAlertsPerProject: 2 },
  starter: { maxProjects: 5, maxAlertsPerProject: 10 },
  pro: { maxProjects: 20, maxAlertsPerProject: 50 },
  enterprise: { maxProjects: null, maxAlertsPerProject: null },
} as const satisfies Record<string, { maxProjects: number | null; maxAlertsPerProject: number | null }>;

export type PlanName = keyof typeof PLANS;

export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export function isPlanName(value: string): value is PlanName {
  return Object.hasOwn(PLANS, value);
}

/**
 * Default ingest rates per plan, in logs per second per project (0: no limit). Settings
 * INGEST_RATE_<PLAN> override them.
 */
export const DEFAULT_INGEST_RATES: Record<PlanName, number> = { free: 1_000, starter: 5_000, pro: 20_000, enterprise: 0 };

/**
 * Subscription states: only `active` is used today; the rest are reserved (docs/api.md, "Accounts
 * and tokens").
 */
export const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'past_due', 'canceled'] as const;

/**
 * The end of the current monthly period: the first monthly anniversary of `anchor` after `now`.
 * A period anchored on the 31st ends on the last day of shorter months.
 */
export function periodEnd(anchor: number, now: number): number {
  const start = new Date(anchor);
  for (let months = 1; ; months++) {
    const candidate = addMonthsUtc(start, months);
    if (candidate > now) return candidate;
  }
}

function addMonthsUtc(date: Date, months: number): number {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(date.getUTCDate(), lastDay), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), date.getUTCMilliseconds());
}

export type LimitedResource = 'projects' | 'alerts';

const LIMIT_FIELD = { projects: 'maxProjects', alerts: 'maxAlertsPerProject' } as const;
const NOUN = { projects: ['project', 'projects'], alerts: ['alert rule per project', 'alert rules per project'] } as const;

export function limitOf(plan: string, resource: LimitedResource): number | null {
  return isPlanName(plan) ? PLANS[plan][LIMIT_FIELD[resource]] : 0;
}

export type LimitCheck = { ok: true } | { ok: false; limit: number; message: string };

/**
 * Whether one more of `resource` fits the plan, given how many exist. The refusal names the
 * smallest plan that would allow more, so the person knows what to do.
 */
export function checkLimit(plan: string, resource: LimitedResource, existing: number): LimitCheck {
  const limit = limitOf(plan, resource);
  if (limit === null || existing < limit) return { ok: true };
  const [one, many] = NOUN[resource];
  const better = PLAN_NAMES.find((p) => {
    const l = PLANS[p][LIMIT_FIELD[resource]];
    return l === null || l > limit;
  });
  const count = (n: number | null) => (n === null ? `unlimited ${many}` : `${n} ${n === 1 ? one : many}`);
  const upgrade = better ? ` The ${better} plan allows ${count(PLANS[better][LIMIT_FIELD[resource]])}.` : '';
  return { ok: false, limit, message: `Your ${plan} plan allows ${count(limit)}.${upgrade}` };
}
