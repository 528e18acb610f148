import type { Role } from './types.ts';

/**
 * What each role may do in a project (docs/teams.md, "Roles"): the console disables
 * what the caller's role may not use, and says which role it needs, instead of letting the server
 * refuse with FORBIDDEN_ROLE.
 */
const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

export function atLeast(role: Role | undefined, required: Role): boolean {
  return role !== undefined && RANK[role] >= RANK[required];
}

/** The title of a control the role may not use, or undefined when it may. */
export function needsRole(role: Role | undefined, required: Role, what?: string): string | undefined {
  if (atLeast(role, required)) return undefined;
  const doing = what ? `${what} needs` : 'Needs';
  return required === 'owner' ? `${doing} the owner role${role ? ` (you are ${article(role)} ${role})` : ''}.` : `${doing} the ${required} role or higher${role ? ` (you are ${article(role)} ${role})` : ''}.`;
}

function article(role: Role): string {
  return role === 'owner' ? 'the' : role === 'admin' ? 'an' : 'a';
}

export const ROLE_LABEL: Record<Role, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' };
