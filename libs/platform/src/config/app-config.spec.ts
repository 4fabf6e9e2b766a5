import { availableParallelism } from 'node:os';
import { ConfigError, DEV_PAGING_TOKEN_SECRET, loadConfig } from './app-config';

describe('configuration', () => {
  const base = { DATABASE_URL: 'postgres://u@localhost/db' };

  it('applies the documented defaults', () => {
    const c = loadConfig(base);
    expect(c).toMatchObject({
      objectsPort: 3001,
      objectSetsPort: 3002,
      objectsUrl: 'http://127.0.0.1:3001',
      objectSetsUrl: 'http://127.0.0.1:3002',
      authMode: 'none',
      objectSetMemberLimit: 100000,
      membersCacheTtlSeconds: 60,
      ephemeralSetTtlSeconds: 86400,
    });
  });

  it('sizes the connection pool by the cores it may run on, at most 20, unless DB_POOL_SIZE says', () => {
    expect(loadConfig(base).dbPoolSize).toBe(Math.min(20, 4 * availableParallelism()));
    expect(loadConfig({ ...base, DB_POOL_SIZE: '32' }).dbPoolSize).toBe(32);
    expect(() => loadConfig({ ...base, DB_POOL_SIZE: '0' })).toThrow(/DB_POOL_SIZE/);
  });

  it('bounds what each connection keeps prepared: 16,384 characters a statement, 100 statements and 131,072 characters a connection, unless set', () => {
    expect(loadConfig(base).preparedStatements).toEqual({ maxChars: 16_384, perConnection: 100, charsPerConnection: 131_072 });
    const set = {
      PREPARED_STATEMENT_MAX_CHARS: '0',
      PREPARED_STATEMENTS_PER_CONNECTION: '10',
      PREPARED_STATEMENT_CHARS_PER_CONNECTION: '65536',
    };
    expect(loadConfig({ ...base, ...set }).preparedStatements).toEqual({ maxChars: 0, perConnection: 10, charsPerConnection: 65_536 });
    expect(() => loadConfig({ ...base, PREPARED_STATEMENTS_PER_CONNECTION: '-1' })).toThrow(/PREPARED_STATEMENTS_PER_CONNECTION/);
  });

  it('names every problem at once', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({ OBJECTS_PORT: 'eighty', MEMBERS_CACHE_TTL: '-5', AUTH_MODE: 'magic' });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/DATABASE_URL is required/),
        expect.stringMatching(/OBJECTS_PORT must be an integer/),
        expect.stringMatching(/MEMBERS_CACHE_TTL must be an integer/),
        expect.stringMatching(/AUTH_MODE/),
      ]),
    );
  });
});

describe('auth configuration', () => {
  const base = { DATABASE_URL: 'postgres://u@localhost/db' };
  it('needs a key for jwt mode', () => {
    expect(() => loadConfig({ ...base, AUTH_MODE: 'jwt' })).toThrow(/AUTH_JWT_SECRET/);
    expect(() => loadConfig({ ...base, AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'short' })).toThrow(/at least 32/);
    expect(() => loadConfig({ ...base, AUTH_MODE: 'jwt', AUTH_JWT_PUBLIC_KEY: 'not a key' })).toThrow(/PEM/);
    expect(loadConfig({ ...base, AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'x'.repeat(32), PAGING_TOKEN_SECRET: 'p'.repeat(32) }).authMode).toBe(
      'jwt',
    );
  });
  it('needs a real PAGING_TOKEN_SECRET with AUTH_MODE=jwt, whatever NODE_ENV: not missing, short, or a public default', () => {
    const jwt = { ...base, AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'x'.repeat(32) };
    for (const secret of [undefined, '', 'p'.repeat(31), DEV_PAGING_TOKEN_SECRET, 'change-me-in-production-please']) {
      for (const NODE_ENV of [undefined, 'development', 'production']) {
        expect(() => loadConfig({ ...jwt, NODE_ENV, PAGING_TOKEN_SECRET: secret })).toThrow(
          /PAGING_TOKEN_SECRET is required with AUTH_MODE=jwt/,
        );
      }
    }
    expect(loadConfig({ ...jwt, PAGING_TOKEN_SECRET: 'p'.repeat(32) }).pagingTokenSecret).toBe('p'.repeat(32));
  });
  it('AUTH_JWT_MAX_TTL: no maximum unless set, then seconds', () => {
    expect(loadConfig(base).authJwtMaxTtlSeconds).toBeUndefined();
    expect(loadConfig({ ...base, AUTH_JWT_MAX_TTL: '3600' }).authJwtMaxTtlSeconds).toBe(3600);
    expect(() => loadConfig({ ...base, AUTH_JWT_MAX_TTL: '1h' })).toThrow(/AUTH_JWT_MAX_TTL must be an integer/);
    expect(() => loadConfig({ ...base, AUTH_JWT_MAX_TTL: '0' })).toThrow(/AUTH_JWT_MAX_TTL/);
  });
  it('refuses a missing or development PAGING_TOKEN_SECRET in production', () => {
    const prod = { ...base, NODE_ENV: 'production', AUTH_ALLOW_NONE: 'true' };
    expect(() => loadConfig(prod)).toThrow(/PAGING_TOKEN_SECRET is required with NODE_ENV=production/);
    expect(() => loadConfig({ ...prod, PAGING_TOKEN_SECRET: DEV_PAGING_TOKEN_SECRET })).toThrow(/PAGING_TOKEN_SECRET/);
    expect(loadConfig({ ...prod, PAGING_TOKEN_SECRET: 'a-random-secret' }).pagingTokenSecret).toBe('a-random-secret');
    expect(loadConfig(base).pagingTokenSecret).toBe(DEV_PAGING_TOKEN_SECRET);
  });

  it('refuses AUTH_MODE=none in production unless AUTH_ALLOW_NONE=true', () => {
    expect(() => loadConfig({ ...base, NODE_ENV: 'production' })).toThrow(/AUTH_ALLOW_NONE/);
    expect(loadConfig({ ...base, NODE_ENV: 'production', AUTH_ALLOW_NONE: 'true', PAGING_TOKEN_SECRET: 's'.repeat(32) }).authMode).toBe(
      'none',
    );
  });
});

describe('metrics configuration', () => {
  const base = { DATABASE_URL: 'postgres://u@localhost/db' };
  it('METRICS_ENABLED is on by default, false turns it off, anything else is refused', () => {
    expect(loadConfig(base).metricsEnabled).toBe(true);
    expect(loadConfig({ ...base, METRICS_ENABLED: 'false' }).metricsEnabled).toBe(false);
    expect(loadConfig({ ...base, METRICS_ENABLED: 'true' }).metricsEnabled).toBe(true);
    expect(() => loadConfig({ ...base, METRICS_ENABLED: 'no' })).toThrow(/METRICS_ENABLED must be true or false/);
  });
});
