#!/usr/bin/env node
// Mints a development JWT for AUTH_MODE=jwt with an HS256 secret.
//   AUTH_JWT_SECRET=... node scripts/mint-dev-token.mjs --sub ada --env prod --env staging [--ttl 3600]
//   (--env '*' for every environment; --role ontology-admin, repeatable, to publish the ontology)
import { SignJWT } from 'jose';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    sub: { type: 'string', default: 'developer' },
    env: { type: 'string', multiple: true, default: ['*'] },
    ttl: { type: 'string', default: '3600' },
    role: { type: 'string', multiple: true, default: [] },
    secret: { type: 'string' },
  },
});
const secret = values.secret ?? process.env.AUTH_JWT_SECRET;
if (!secret || secret.length < 32) {
  console.error('Set AUTH_JWT_SECRET (at least 32 characters) or pass --secret.');
  process.exit(2);
}
const ttl = Number(values.ttl);
if (!Number.isInteger(ttl) || ttl < 1) {
  console.error('--ttl must be a positive number of seconds');
  process.exit(2);
}
const token = await new SignJWT({ environments: values.env, ...(values.role.length ? { roles: values.role } : {}) })
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject(values.sub)
  .setIssuedAt()
  .setExpirationTime(Math.floor(Date.now() / 1000) + ttl)
  .sign(new TextEncoder().encode(secret));
console.log(token);
