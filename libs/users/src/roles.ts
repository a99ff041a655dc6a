import { GRANTS } from '@switchboard/auth';

export const ROLES = ['admin', 'marketer', 'agent'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/**
 * A person's role maps to the same grants as an API client (docs/console.md):
 * - admin: every grant;
 * - marketer: every grant but `/account` (whose answer holds the account's callback signing secret);
 * - agent: `/conversations` and `/send-message` only (the inbox).
 */
export function grantsOfRole(role: Role): string[] {
  switch (role) {
    case 'admin':
      return [...GRANTS];
    case 'marketer':
      return GRANTS.filter((g) => g !== '/account');
    case 'agent':
      return ['/conversations', '/send-message'];
  }
}
