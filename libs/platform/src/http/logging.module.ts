import { Module, OnApplicationShutdown } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../config';
import { shutdownTracing, traceLogMixin } from '../tracing/tracing-bootstrap';
import { REQUEST_LOG_LEVELS } from './request-id';

/**
 * Structured logs with request ids; credentials are redacted. The per-request logger (pino-http
 * and its request-scoped context) is installed only when requests are logged (LOG_LEVEL info or
 * lower): at warn and above it would cost every request work for lines that are never written.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        pinoHttp: {
          level: config.logLevel,
          // Set by requestIdMiddleware (configureApp), which runs first.
          genReqId: (req) => (req as { id?: string }).id ?? randomUUID(),
          redact: ['req.headers.authorization', 'req.headers.cookie'],
          // trace_id and span_id on every line written inside a span (only when tracing is on).
          mixin: traceLogMixin(),
          autoLogging: { ignore: (req) => (req.url ?? '').startsWith('/health') },
          serializers: {
            req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
          },
        },
        ...(REQUEST_LOG_LEVELS.includes(config.logLevel) ? {} : { forRoutes: [] }),
      }),
    }),
  ],
})
export class LoggingModule implements OnApplicationShutdown {
  /** The spans still batched go out before the app exits (tracing-bootstrap.ts). */
  async onApplicationShutdown(): Promise<void> {
    await shutdownTracing();
  }
}
