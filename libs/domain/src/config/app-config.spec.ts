import { ConfigError, loadConfig } from './app-config';

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
