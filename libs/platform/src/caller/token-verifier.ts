import { createPublicKey, KeyObject } from 'node:crypto';
import { errors, jwtVerify } from 'jose';
import { AppConfig } from '../config/app-config';
import { Unauthorized, identifierFault } from '@app/domain';
import { ALL_ENVIRONMENTS, CallerContext } from './caller-context';

/** Clock skew tolerated on `exp` and `nbf`. */
export const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Verifies `Authorization: Bearer <JWT>` (docs/api.md §8): HS256 with AUTH_JWT_SECRET, or RS256 /
 * ES256 with AUTH_JWT_PUBLIC_KEY. `sub` is the user id; `environments` the visible
 * environment ids or `["*"]`; the roles claim (AUTH_ROLES_CLAIM) the caller's roles. With
 * AUTH_JWT_ISSUER / AUTH_JWT_AUDIENCE set, `iss` must equal the one and `aud` hold the other.
 * Every failure is 401 Unauthorized with `WWW-Authenticate: Bearer`.
 */
export class TokenVerifier {
  private readonly key: Uint8Array | KeyObject;
  private readonly algorithms: string[];
  private readonly issuer?: string;
  private readonly audience?: string;
  private readonly rolesPath: string[];
  private readonly maxTtlSeconds?: number;

  constructor(
    config: Pick<AppConfig, 'authJwtSecret' | 'authJwtPublicKey'> &
      Partial<Pick<AppConfig, 'authJwtIssuer' | 'authJwtAudience' | 'authRolesClaim' | 'authJwtMaxTtlSeconds'>>,
  ) {
    this.maxTtlSeconds = config.authJwtMaxTtlSeconds;
    this.issuer = config.authJwtIssuer;
    this.audience = config.authJwtAudience;
    this.rolesPath = (config.authRolesClaim ?? 'roles').split('.');
    if (config.authJwtSecret) {
      this.key = new TextEncoder().encode(config.authJwtSecret);
      this.algorithms = ['HS256'];
    } else if (config.authJwtPublicKey) {
      this.key = createPublicKey(config.authJwtPublicKey);
      this.algorithms = ['RS256', 'ES256'];
    } else {
      throw new Error('TokenVerifier needs AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY');
    }
  }

  async verify(authorization: string | undefined): Promise<CallerContext> {
    if (!authorization) throw new Unauthorized('missing Authorization: Bearer token');
    const match = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)\s*$/i.exec(authorization);
    if (!match) throw new Unauthorized('Authorization header must be "Bearer <JWT>"');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(match[1], this.key, {
        algorithms: this.algorithms,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp'],
        ...(this.issuer ? { issuer: this.issuer } : {}),
        ...(this.audience ? { audience: this.audience } : {}),
      }));
    } catch (e) {
      if (e instanceof errors.JWTExpired) throw new Unauthorized('token has expired');
      if (e instanceof errors.JWTClaimValidationFailed) throw new Unauthorized(`token claim '${e.claim}' is invalid: ${e.reason}`);
      if (e instanceof errors.JWSSignatureVerificationFailed) throw new Unauthorized('token signature is invalid');
      if (e instanceof errors.JOSEAlgNotAllowed)
        throw new Unauthorized(`token algorithm is not allowed (expected ${this.algorithms.join(' or ')})`);
      throw new Unauthorized('token is malformed or cannot be verified');
    }
    if (this.maxTtlSeconds !== undefined) this.checkLifetime(payload);
    const sub = payload.sub;
    if (typeof sub !== 'string' || identifierFault(sub)) throw new Unauthorized("token claim 'sub' must be a valid user id");
    const environments = payload.environments;
    if (!Array.isArray(environments) || !environments.every((e) => typeof e === 'string' && !identifierFault(e))) {
      throw new Unauthorized('token claim \'environments\' must be a list of environment ids, or ["*"]');
    }
    let roles: unknown = payload;
    for (const key of this.rolesPath)
      roles =
        roles !== null && typeof roles === 'object' && Object.hasOwn(roles, key) ? (roles as Record<string, unknown>)[key] : undefined;
    if (roles !== undefined && !(Array.isArray(roles) && roles.every((r) => typeof r === 'string'))) {
      throw new Unauthorized(`token claim '${this.rolesPath.join('.')}' must be a list of role names`);
    }
    return {
      userId: sub,
      environments: environments.includes(ALL_ENVIRONMENTS) ? ALL_ENVIRONMENTS : [...new Set(environments as string[])],
      authorization,
      roles: roles ?? [],
      expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : undefined,
    };
  }

  /**
   * AUTH_JWT_MAX_TTL: a token valid for longer is refused, however it was signed (`exp: 1e20`
   * would otherwise never expire): `exp` at most that long after `iat` (when the token has one)
   * and after now (with the clock skew tolerated on `exp`).
   */
  private checkLifetime(payload: Record<string, unknown>): void {
    const max = this.maxTtlSeconds!;
    const exp = payload.exp as number;
    const iat = typeof payload.iat === 'number' ? payload.iat : undefined;
    const now = Date.now() / 1000;
    if (exp - now > max + CLOCK_TOLERANCE_SECONDS || (iat !== undefined && exp - iat > max)) {
      throw new Unauthorized(`token is valid for longer than AUTH_JWT_MAX_TTL allows (${max} s)`);
    }
  }
}
