import { SignJWT } from 'jose';

/** The HS256 secret the auth e2e tests configure (AUTH_JWT_SECRET). */
export const TEST_JWT_SECRET = 'test-secret-for-the-e2e-suite-0123456789';

/** The paging-token secret the auth e2e tests configure: AUTH_MODE=jwt requires a real one (PAGING_TOKEN_SECRET). */
export const TEST_PAGING_TOKEN_SECRET = 'test-paging-secret-for-the-e2e-suite-0123456789';

export const JWT_ENV = { AUTH_MODE: 'jwt', AUTH_JWT_SECRET: TEST_JWT_SECRET, PAGING_TOKEN_SECRET: TEST_PAGING_TOKEN_SECRET };

/** A signed token; `expiresIn` seconds from now (negative: already expired); `claims` added to the payload (`roles`, `iss`, `aud`, …). */
export function token(
  sub: string,
  environments: string[],
  opts: { expiresIn?: number; secret?: string; roles?: string[]; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ environments, ...(opts.roles ? { roles: opts.roles } : {}), ...opts.claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(now + (opts.expiresIn ?? 300))
    .sign(new TextEncoder().encode(opts.secret ?? TEST_JWT_SECRET));
}

export const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
