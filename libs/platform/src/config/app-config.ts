import { createPublicKey } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { DEFAULT_PREPARED_STATEMENT_LIMITS, PreparedStatementLimits } from '../database/postgres';

/**
 * Configuration read from the environment (names and defaults as the README's "Configuration" lists them),
 * validated once at start: a bad value stops the app with a message naming every problem.
 */
export type AuthMode = 'none' | 'jwt';

/**
 * DB_POOL_SIZE's default: 4 connections per core this process may run on, at most 20 (8 on a
 * 2-core machine). More statements at once than PostgreSQL has cores to run them only take turns:
 * on 2 cores, 32 concurrent bulk reads of 1,000 objects answered about 1.5-2 times faster with a
 * pool of 8 than with 20 (bench/independent, 2026-11-26), and GET one was unchanged.
 */
export function defaultDbPoolSize(): number {
  return Math.min(20, 4 * availableParallelism());
}

export class AppConfig {
  nodeEnv: string;
  logLevel: string;
  /** LOG_FORMAT: `pretty` (one readable line; the default when stdout is a terminal) or `json`. */
  logFormat: 'pretty' | 'json';
  databaseUrl: string;
  objectsPort: number;
  objectSetsPort: number;
  /** Where the object-sets app reaches the objects app, and vice versa. */
  objectsUrl: string;
  objectSetsUrl: string;
  authMode: AuthMode;
  /** HS256 shared secret (AUTH_MODE=jwt). */
  authJwtSecret?: string;
  /** RS256/ES256 public key, PEM (AUTH_MODE=jwt). */
  authJwtPublicKey?: string;
  /** When set, a token's `iss` must equal it (AUTH_JWT_ISSUER). */
  authJwtIssuer?: string;
  /** When set, a token's `aud` must hold it (AUTH_JWT_AUDIENCE). */
  authJwtAudience?: string;
  /** Longest a token may be valid, in seconds (AUTH_JWT_MAX_TTL; unset: no maximum): `exp` at most this long after `iat`, and after now. */
  authJwtMaxTtlSeconds?: number;
  /** The claim that lists a caller's roles (AUTH_ROLES_CLAIM, `roles`; a dotted path such as `realm_access.roles` reaches into an object). */
  authRolesClaim: string;
  /** The role that may publish the ontology in AUTH_MODE=jwt (AUTH_ONTOLOGY_ADMIN_ROLE, `ontology-admin`). */
  authOntologyAdminRole: string;
  objectSetMemberLimit: number;
  membersCacheTtlSeconds: number;
  ephemeralSetTtlSeconds: number;
  pagingTokenSecret: string;
  /** Most bytes of a request body (BODY_LIMIT, 1mb); the operations of HttpOptions.largeBodyRoutes take their own limit, or LARGE_BODY_LIMIT (64mb) where that is lower or they have none. */
  bodyLimit: string;
  largeBodyLimit: string;
  dbPoolSize: number;
  /** Hot standbys of DATABASE_URL each app reads from (docs/api.md §11): DATABASE_REPLICA_URLS, or the app's own variable. */
  objectsDatabaseReplicaUrls: string[];
  objectSetsDatabaseReplicaUrls: string[];
  /** A read without a token may be served by a replica that replayed everything committed this long before. */
  replicaMaxLagMs: number;
  /** How long a read with a token waits for a replica that has replayed it before going to the primary. */
  replicaWaitMs: number;
  /** A replica taken out of rotation is tried again after this long. */
  replicaRetrySeconds: number;
  /** GET /metrics and the counters behind it (METRICS_ENABLED, default true). */
  metricsEnabled: boolean;
  /** Server-side limit of a read statement (READ_STATEMENT_TIMEOUT_MS, 15 s); past it the request is 503. */
  readStatementTimeoutMs: number;
  /** Server-side limit of each statement of a write transaction (WRITE_STATEMENT_TIMEOUT_MS, 120 s). */
  writeStatementTimeoutMs: number;
  /** Live object sets (docs/api.md §12): open event streams per app instance (EVENTS_MAX_STREAMS, 10,000) and per caller (EVENTS_MAX_STREAMS_PER_CALLER, 100). */
  eventsMaxStreams: number;
  eventsMaxStreamsPerCaller: number;
  /** The most time between two writes to an event stream: a `: ping` comment when nothing else was sent (EVENTS_HEARTBEAT_MS, 15 s). */
  eventsHeartbeatMs: number;
  /** Most objects one instant of a set's events is evaluated on one by one before it is evaluated as a whole (EVENTS_CANDIDATE_LIMIT, 10,000). */
  eventsCandidateLimit: number;
  /** Most changes a resumed event stream catches up on before it gets `reset` instead (EVENTS_RESUME_MAX_CHANGES, 100,000). */
  eventsResumeMaxChanges: number;
  /**
   * What each connection keeps prepared: PREPARED_STATEMENT_MAX_CHARS (16,384; longer statements
   * run unnamed), PREPARED_STATEMENTS_PER_CONNECTION (100) and PREPARED_STATEMENT_CHARS_PER_CONNECTION
   * (131,072), past which the least recently used statement is deallocated. 0 prepares nothing.
   */
  preparedStatements: PreparedStatementLimits;
  /** Expensive reads one caller may run at once in one app instance (EXPENSIVE_READS_PER_CALLER, 4); see ExpensiveReads. */
  expensiveReadsPerCaller: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const DEV_PAGING_TOKEN_SECRET = 'ontology-object-service-development-paging-secret';
/**
 * Paging-token secrets anyone can read (this code's development default, docker-compose.yml's
 * default): with one, anyone can sign paging tokens of their own.
 */
export const PUBLIC_PAGING_TOKEN_SECRETS: readonly string[] = [DEV_PAGING_TOKEN_SECRET, 'change-me-in-production-please'];
/** The shortest PAGING_TOKEN_SECRET accepted with AUTH_MODE=jwt (as AUTH_JWT_SECRET). */
export const MIN_PAGING_TOKEN_SECRET_LENGTH = 32;

export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got '${raw}')`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback?: string): string => {
    const raw = env[name] || fallback;
    if (!raw) {
      problems.push(`${name} is required`);
      return '';
    }
    try {
      new URL(raw);
    } catch {
      problems.push(`${name} must be a URL (got '${raw}')`);
    }
    return raw;
  };
  const urlList = (name: string, fallback: string[]): string[] => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const urls = raw
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    for (const u of urls) {
      try {
        new URL(u);
      } catch {
        problems.push(`${name} must be comma-separated URLs (got '${u}')`);
      }
    }
    return urls;
  };
  const replicaUrls = urlList('DATABASE_REPLICA_URLS', []);
  const objectsPort = int('OBJECTS_PORT', 3001, 1, 65535);
  const objectSetsPort = int('OBJECT_SETS_PORT', 3002, 1, 65535);
  const authMode = (env.AUTH_MODE || 'none') as AuthMode;
  const nodeEnv = env.NODE_ENV || 'development';
  const authJwtSecret = env.AUTH_JWT_SECRET || undefined;
  // PEM keys often arrive through env files with literal "\n"
  const authJwtPublicKey = env.AUTH_JWT_PUBLIC_KEY ? env.AUTH_JWT_PUBLIC_KEY.replace(/\\n/g, '\n') : undefined;
  if (authMode !== 'none' && authMode !== 'jwt') problems.push(`AUTH_MODE must be 'none' or 'jwt' (got '${env.AUTH_MODE}')`);
  if (authMode === 'jwt') {
    if (!authJwtSecret && !authJwtPublicKey)
      problems.push('AUTH_MODE=jwt needs AUTH_JWT_SECRET (HS256) or AUTH_JWT_PUBLIC_KEY (RS256/ES256, PEM)');
    if (authJwtSecret && authJwtPublicKey) problems.push('set only one of AUTH_JWT_SECRET and AUTH_JWT_PUBLIC_KEY');
    if (authJwtSecret && authJwtSecret.length < 32) problems.push('AUTH_JWT_SECRET must be at least 32 characters');
    if (authJwtPublicKey) {
      try {
        createPublicKey(authJwtPublicKey);
      } catch {
        problems.push('AUTH_JWT_PUBLIC_KEY is not a PEM public key');
      }
    }
  }
  const pagingSecret = env.PAGING_TOKEN_SECRET;
  if (
    authMode === 'jwt' &&
    (!pagingSecret || pagingSecret.length < MIN_PAGING_TOKEN_SECRET_LENGTH || PUBLIC_PAGING_TOKEN_SECRETS.includes(pagingSecret))
  ) {
    // Callers are told apart: none may sign a paging token (a position of its choosing) of its own.
    problems.push(
      `PAGING_TOKEN_SECRET is required with AUTH_MODE=jwt: a random value of at least ${MIN_PAGING_TOKEN_SECRET_LENGTH} characters, the same on every replica (not the development or docker-compose default)`,
    );
  } else if (nodeEnv === 'production' && (!pagingSecret || pagingSecret === DEV_PAGING_TOKEN_SECRET)) {
    // The development default is public: with it anyone can sign paging tokens of their own.
    problems.push('PAGING_TOKEN_SECRET is required with NODE_ENV=production (a random value, the same on every replica)');
  }
  if (authMode === 'none' && nodeEnv === 'production' && env.AUTH_ALLOW_NONE !== 'true') {
    problems.push(
      'AUTH_MODE=none is refused with NODE_ENV=production; set AUTH_MODE=jwt, or AUTH_ALLOW_NONE=true to accept that anyone can read and write everything',
    );
  }
  const config = Object.assign(new AppConfig(), {
    nodeEnv,
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: (env.LOG_FORMAT || (process.stdout.isTTY ? 'pretty' : 'json')) as AppConfig['logFormat'],
    databaseUrl: url('DATABASE_URL'),
    objectsPort,
    objectSetsPort,
    objectsUrl: url('OBJECTS_URL', `http://127.0.0.1:${objectsPort}`),
    objectSetsUrl: url('OBJECT_SETS_URL', `http://127.0.0.1:${objectSetsPort}`),
    authMode,
    authJwtSecret,
    authJwtPublicKey,
    authJwtIssuer: env.AUTH_JWT_ISSUER || undefined,
    authJwtAudience: env.AUTH_JWT_AUDIENCE || undefined,
    authJwtMaxTtlSeconds: env.AUTH_JWT_MAX_TTL ? int('AUTH_JWT_MAX_TTL', 0, 1, 315_360_000) : undefined,
    authRolesClaim: env.AUTH_ROLES_CLAIM || 'roles',
    authOntologyAdminRole: env.AUTH_ONTOLOGY_ADMIN_ROLE || 'ontology-admin',
    objectSetMemberLimit: int('OBJECT_SET_MEMBER_LIMIT', 100_000),
    membersCacheTtlSeconds: int('MEMBERS_CACHE_TTL', 60, 0),
    ephemeralSetTtlSeconds: int('EPHEMERAL_SET_TTL', 86_400),
    pagingTokenSecret: env.PAGING_TOKEN_SECRET || DEV_PAGING_TOKEN_SECRET,
    bodyLimit: env.BODY_LIMIT || '1mb',
    largeBodyLimit: env.LARGE_BODY_LIMIT || '64mb',
    dbPoolSize: int('DB_POOL_SIZE', defaultDbPoolSize(), 1, 1000),
    objectsDatabaseReplicaUrls: urlList('OBJECTS_DATABASE_REPLICA_URLS', replicaUrls),
    objectSetsDatabaseReplicaUrls: urlList('OBJECT_SETS_DATABASE_REPLICA_URLS', replicaUrls),
    replicaMaxLagMs: int('REPLICA_MAX_LAG_MS', 1000, 0, 3_600_000),
    replicaWaitMs: int('REPLICA_WAIT_MS', 100, 0, 60_000),
    replicaRetrySeconds: int('REPLICA_RETRY_S', 5, 1, 86_400),
    metricsEnabled: (env.METRICS_ENABLED || 'true').toLowerCase() !== 'false',
    readStatementTimeoutMs: int('READ_STATEMENT_TIMEOUT_MS', 15_000, 1, 2_147_483_647),
    writeStatementTimeoutMs: int('WRITE_STATEMENT_TIMEOUT_MS', 120_000, 1, 2_147_483_647),
    eventsMaxStreams: int('EVENTS_MAX_STREAMS', 10_000, 1, 1_000_000),
    eventsMaxStreamsPerCaller: int('EVENTS_MAX_STREAMS_PER_CALLER', 100, 1, 1_000_000),
    eventsHeartbeatMs: int('EVENTS_HEARTBEAT_MS', 15_000, 100, 3_600_000),
    eventsCandidateLimit: int('EVENTS_CANDIDATE_LIMIT', 10_000, 1, 1_000_000),
    eventsResumeMaxChanges: int('EVENTS_RESUME_MAX_CHANGES', 100_000, 1, 100_000_000),
    preparedStatements: {
      maxChars: int('PREPARED_STATEMENT_MAX_CHARS', DEFAULT_PREPARED_STATEMENT_LIMITS.maxChars, 0, 1_073_741_824),
      perConnection: int('PREPARED_STATEMENTS_PER_CONNECTION', DEFAULT_PREPARED_STATEMENT_LIMITS.perConnection, 0, 1_000_000),
      charsPerConnection: int(
        'PREPARED_STATEMENT_CHARS_PER_CONNECTION',
        DEFAULT_PREPARED_STATEMENT_LIMITS.charsPerConnection,
        0,
        1_073_741_824,
      ),
    },
    expensiveReadsPerCaller: int('EXPENSIVE_READS_PER_CALLER', 4, 1, 10_000),
  });
  if (!['true', 'false'].includes((env.METRICS_ENABLED || 'true').toLowerCase())) {
    problems.push(`METRICS_ENABLED must be true or false (got '${env.METRICS_ENABLED}')`);
  }
  if (!['pretty', 'json'].includes(config.logFormat)) problems.push(`LOG_FORMAT must be pretty or json (got '${config.logFormat}')`);
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got '${config.logLevel}')`);
  }
  if (!/^\d+(b|kb|mb|gb)?$/i.test(config.bodyLimit)) problems.push(`BODY_LIMIT must look like 1mb (got '${config.bodyLimit}')`);
  if (!/^\d+(b|kb|mb|gb)?$/i.test(config.largeBodyLimit))
    problems.push(`LARGE_BODY_LIMIT must look like 64mb (got '${config.largeBodyLimit}')`);
  if (problems.length) throw new ConfigError(problems);
  return config;
}
