// Organization roles (Zulip's codes) and the system groups that mirror them.
export const ROLE = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;
export type Role = (typeof ROLE)[keyof typeof ROLE];
export const ROLES: readonly number[] = Object.values(ROLE);

export const BOT_TYPE = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3, EMBEDDED: 4 } as const;

/** System groups, outermost first; each contains the next as a subgroup (nobody stands alone). */
export const SYSTEM_GROUPS = [
  'role:internet',
  'role:everyone',
  'role:members',
  'role:fullmembers',
  'role:moderators',
  'role:administrators',
  'role:owners',
] as const;
export const NOBODY_GROUP = 'role:nobody';
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number] | typeof NOBODY_GROUP;

/**
 * The system group a role puts a user in directly (Zulip's get_system_user_group_for_user). Members
 * are also direct members of role:fullmembers once past the waiting period (updateFullMembersGroup).
 */
export function systemGroupForRole(role: number): SystemGroupName {
  switch (role) {
    case ROLE.OWNER:
      return 'role:owners';
    case ROLE.ADMINISTRATOR:
      return 'role:administrators';
    case ROLE.MODERATOR:
      return 'role:moderators';
    case ROLE.MEMBER:
      return 'role:members';
    default:
      return 'role:everyone';
  }
}

export const isAdminRole = (role: number) => role <= ROLE.ADMINISTRATOR;
