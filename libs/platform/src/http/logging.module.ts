import { DynamicModule, LoggerService, Module, OnApplicationShutdown } from '@nestjs/common';
import { Logger, LoggerModule } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import { stdTimeFunctions } from 'pino';
import type { Options as PinoHttpOptions } from 'pino-http';
import { AppConfig } from '../config';
import { shutdownTracing, traceLogMixin } from '../tracing/tracing-bootstrap';
import { REQUEST_LOG_LEVELS } from './request-id';

/** Nest's own start-up lines (modules loaded, each route mapped): debug, not info (README "Logs"). */
const NEST_START_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/** pino-http's options for `app` (docs: README "Logs"). */
export function loggerOptions(app: string, config: AppConfig): PinoHttpOptions {
  const pretty = config.logFormat === 'pretty';
  return {
    name: app,
    level: config.logLevel,
    timestamp: stdTimeFunctions.isoTime,
    // Set by requestIdMiddleware (configureApp), which runs first.
    genReqId: (req) => (req as { id?: string }).id ?? randomUUID(),
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    // trace_id and span_id on every line written inside a span (only when tracing is on).
    mixin: traceLogMixin(),
    autoLogging: { ignore: (req) => (req.url ?? '').startsWith('/health') },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
    },
    // One line a request that says what happened; the JSON line keeps req, res and responseTime too.
    customSuccessMessage: (req, res, ms) => `${req.method} ${req.url} ${res.statusCode} ${Math.round(ms)} ms`,
    customErrorMessage: (req, res, e) => `${req.method} ${req.url} ${res.statusCode} ${e.message}`,
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: {
              singleLine: true,
              translateTime: 'SYS:HH:MM:ss.l',
              ignore: 'pid,hostname,name,req,res,responseTime,context',
              messageFormat: '{name}{if context} [{context}]{end} {msg}',
            },
          },
        }
      : {}),
  };
}

/**
 * Logs with request ids; credentials are redacted. LOG_FORMAT `json` (the default when stdout is
 * not a terminal): one JSON object a line with the app's name and ISO times; `pretty` (the
 * default on a terminal): one readable line. The per-request logger (pino-http and its
 * request-scoped context) is installed only when requests are logged (LOG_LEVEL info or lower):
 * at warn and above it would cost every request work for lines that are never written.
 */
@Module({})
export class LoggingModule implements OnApplicationShutdown {
  static forApp(app: string): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            pinoHttp: loggerOptions(app, config),
            ...(REQUEST_LOG_LEVELS.includes(config.logLevel) ? {} : { forRoutes: [] }),
          }),
        }),
      ],
    };
  }

  /** The spans still batched go out before the app exits (tracing-bootstrap.ts). */
  async onApplicationShutdown(): Promise<void> {
    await shutdownTracing();
  }
}

/** The app's logger for Nest, with Nest's start-up lines at debug (NEST_START_CONTEXTS). */
export function appLogger(logger: Logger): LoggerService {
  const isStart = (params: unknown[]) => NEST_START_CONTEXTS.has(params[params.length - 1] as string);
  return {
    log: (message: unknown, ...params: unknown[]) => (isStart(params) ? logger.debug(message, ...params) : logger.log(message, ...params)),
    error: (message: unknown, ...params: unknown[]) => logger.error(message, ...params),
    warn: (message: unknown, ...params: unknown[]) => logger.warn(message, ...params),
    debug: (message: unknown, ...params: unknown[]) => logger.debug(message, ...params),
    verbose: (message: unknown, ...params: unknown[]) => logger.verbose(message, ...params),
    fatal: (message: unknown, ...params: unknown[]) => logger.fatal(message, ...params),
  };
}
