import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { Unauthorized } from '@app/domain';
import { TokenVerifier } from './token-verifier';

const SECRET = 'a-development-secret-of-at-least-32-chars';
const key = new TextEncoder().encode(SECRET);
const now = () => Math.floor(Date.now() / 1000);

function hs256(claims: Record<string, unknown>, opts: { exp?: number; nbf?: number } = {}) {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (opts.exp !== undefined) jwt.setExpirationTime(opts.exp);
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(key);
}

describe('bearer token verification', () => {
  const verifier = new TokenVerifier({ authJwtSecret: SECRET });

  it('turns sub and environments into the caller (no roles claim: no roles)', async () => {
    const exp = now() + 60;
    const token = await hs256({ sub: 'ada', environments: ['prod', 'staging'] }, { exp });
    await expect(verifier.verify(`Bearer ${token}`)).resolves.toEqual({
      userId: 'ada',
      environments: ['prod', 'staging'],
      authorization: `Bearer ${token}`,
      roles: [],
      expiresAt: exp * 1000,
    });
    const withRoles = await hs256({ sub: 'ada', environments: ['prod'], roles: ['ontology-admin'] }, { exp: now() + 60 });
    await expect(verifier.verify(`Bearer ${withRoles}`)).resolves.toMatchObject({ roles: ['ontology-admin'] });
  });

  it('reads ["*"] as every environment', async () => {
    const token = await hs256({ sub: 'root', environments: ['*'] }, { exp: now() + 60 });
    await expect(verifier.verify(`Bearer ${token}`)).resolves.toMatchObject({ environments: '*' });
  });

  it('tolerates 30 s of clock skew on exp and nbf, and no more', async () => {
    await expect(verifier.verify(`Bearer ${await hs256({ sub: 'a', environments: [] }, { exp: now() - 20 })}`)).resolves.toBeDefined();
    await expect(
      verifier.verify(`Bearer ${await hs256({ sub: 'a', environments: [] }, { exp: now() + 60, nbf: now() + 20 })}`),
    ).resolves.toBeDefined();
    await expect(verifier.verify(`Bearer ${await hs256({ sub: 'a', environments: [] }, { exp: now() - 40 })}`)).rejects.toThrow(/expired/);
    await expect(
      verifier.verify(`Bearer ${await hs256({ sub: 'a', environments: [] }, { exp: now() + 60, nbf: now() + 40 })}`),
    ).rejects.toThrow(Unauthorized);
  });

  it.each([
    ['no header', undefined, /missing/],
    ['another scheme', 'Basic dXNlcjpwYXNz', /Bearer/],
    ['garbage', 'Bearer not-a-jwt', /Bearer/],
  ])('rejects %s', async (_n, header, reason) => {
    await expect(verifier.verify(header)).rejects.toThrow(reason);
  });

  it('rejects a bad signature, a missing exp, and bad claims', async () => {
    const other = await new SignJWT({ sub: 'a', environments: [] })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(now() + 60)
      .sign(new TextEncoder().encode('another-secret-another-secret-another'));
    await expect(verifier.verify(`Bearer ${other}`)).rejects.toThrow(/signature/);
    await expect(verifier.verify(`Bearer ${await hs256({ sub: 'a', environments: [] })}`)).rejects.toThrow(/exp/);
    await expect(verifier.verify(`Bearer ${await hs256({ environments: [] }, { exp: now() + 60 })}`)).rejects.toThrow(/sub/);
    await expect(verifier.verify(`Bearer ${await hs256({ sub: 'a', environments: 'prod' }, { exp: now() + 60 })}`)).rejects.toThrow(
      /environments/,
    );
    await expect(verifier.verify(`Bearer ${await hs256({ sub: 'a' }, { exp: now() + 60 })}`)).rejects.toThrow(/environments/);
  });

  it('with AUTH_JWT_MAX_TTL, refuses a token valid for longer: exp too far after iat, or after now', async () => {
    const bounded = new TokenVerifier({ authJwtSecret: SECRET, authJwtMaxTtlSeconds: 3600 });
    const claims = { sub: 'a', environments: [] };
    for (const exp of [1e20, now() + 7200]) {
      await expect(bounded.verify(`Bearer ${await hs256(claims, { exp })}`)).rejects.toThrow(
        /valid for longer than AUTH_JWT_MAX_TTL allows \(3600 s\)/,
      );
      // Without the maximum, as before: any exp in the future.
      await expect(verifier.verify(`Bearer ${await hs256(claims, { exp })}`)).resolves.toBeDefined();
    }
    // Issued two hours ago for two hours and a minute: within the hour now, too long a lifetime.
    const old = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(now() - 7200)
      .setExpirationTime(now() + 60)
      .sign(key);
    await expect(bounded.verify(`Bearer ${old}`)).rejects.toThrow(/AUTH_JWT_MAX_TTL/);
    await expect(bounded.verify(`Bearer ${await hs256(claims, { exp: now() + 3600 })}`)).resolves.toMatchObject({ userId: 'a' });
    // Without iat: measured from now.
    const noIat = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(now() + 600)
      .sign(key);
    await expect(bounded.verify(`Bearer ${noIat}`)).resolves.toMatchObject({ userId: 'a' });
  });

  it('carries WWW-Authenticate: Bearer on every failure', async () => {
    const error = await verifier.verify(undefined).catch((e) => e);
    expect(error).toMatchObject({ status: 401, errorName: 'Unauthorized', headers: { 'WWW-Authenticate': 'Bearer' } });
  });

  it.each(['RS256', 'ES256'])('verifies %s with a PEM public key and refuses HS256 then', async (alg) => {
    const pair = await generateKeyPair(alg);
    const pem = await exportSPKI(pair.publicKey);
    const v = new TokenVerifier({ authJwtPublicKey: pem });
    const token = await new SignJWT({ sub: 'ada', environments: ['prod'] })
      .setProtectedHeader({ alg })
      .setExpirationTime(now() + 60)
      .sign(pair.privateKey);
    await expect(v.verify(`Bearer ${token}`)).resolves.toMatchObject({ userId: 'ada', environments: ['prod'] });
    await expect(v.verify(`Bearer ${await hs256({ sub: 'a', environments: [] }, { exp: now() + 60 })}`)).rejects.toThrow(Unauthorized);
  });
});
