import { AppError } from '../../errors.js';

/**
 * A project member's role (docs/teams.md, "Roles"): `owner` (exactly one) ≥ `admin` ≥
 * `member`. Every project route names the least role it needs; an outsider gets 404 before any
 * role is considered, so the answer never says the project exists.
 */
export const ROLES = ['member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

export function isRole(value: string): value is Role {
  return Object.hasOwn(RANK, value);
}

export function hasRole(role: Role, least: Role): boolean {
  return RANK[role] >= RANK[least];
}

/** 403 FORBIDDEN_ROLE with `details: [{role, required}]`: the caller's role and the least role allowed. */
export function forbiddenRole(role: Role, required: Role, what = 'do this'): AppError {
  return new AppError('FORBIDDEN_ROLE', `Only a project ${required}${required === 'owner' ? '' : ' or owner'} can ${what}; you are ${role === 'admin' ? 'an' : 'a'} ${role} of this project.`, {
    details: [{ role, required }],
  });
}
