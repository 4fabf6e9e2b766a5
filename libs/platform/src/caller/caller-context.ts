import type { ReadContext } from '../replicas/read-context';

/**
 * Who is calling: every request gets one (docs/api.md §8). With AUTH_MODE=none the user comes from
 * `X-User-Id` (or `anonymous`) and every environment is visible.
 */
export interface CallerContext {
  userId: string;
  /** `'*'` means every environment. */
  environments: '*' | readonly string[];
  /** The raw Authorization header, forwarded to the other service. */
  authorization?: string;
  /** What the request asks of the data it reads (docs/api.md §11), forwarded with calls to the other app. */
  consistency?: ReadContext;
  /**
   * The roles of the token's roles claim (AUTH_MODE=jwt; empty when it has none). Undefined with
   * AUTH_MODE=none, where there are no roles to check: every caller may do everything.
   */
  roles?: readonly string[];
  /** When the credentials expire (ms since 1970; AUTH_MODE=jwt: the token's `exp`): a live event stream ends then (docs/api.md §12). */
  expiresAt?: number;
}

/** Whether the caller holds `role`; always with AUTH_MODE=none (roles undefined). */
export function hasRole(caller: CallerContext, role: string): boolean {
  return caller.roles === undefined || caller.roles.includes(role);
}

export const ALL_ENVIRONMENTS = '*';

export function canSeeEnvironment(caller: CallerContext, environmentId: string): boolean {
  return caller.environments === ALL_ENVIRONMENTS || caller.environments.includes(environmentId);
}

/** The visible environments as a SQL parameter: null means "no restriction". */
export function visibleEnvironmentsParam(caller: CallerContext): string[] | null {
  return caller.environments === ALL_ENVIRONMENTS ? null : [...caller.environments];
}
