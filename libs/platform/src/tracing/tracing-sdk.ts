import { context, trace } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { IncomingMessage } from 'node:http';

/** Probes and scrapes are not traced: they would bury the requests in spans of their own. */
const UNTRACED_PATHS = ['/health', '/metrics'];

/**
 * The OpenTelemetry Node SDK with the instrumentations the apps need: incoming HTTP (and the
 * W3C traceparent it carries), Express routes, Node's fetch (undici), which the object-sets app
 * calls the objects app with and which sends traceparent on, and pg statements. The exporter
 * and its protocol come from the standard OTEL_* variables (OTLP, http/protobuf by default;
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json or grpc). Only traces: metrics are Prometheus (GET
 * /metrics), logs are pino's. Loaded only when tracing is configured (tracing-bootstrap.ts).
 */
export function startTracingSdk(serviceName: string): { logMixin: () => Record<string, string>; shutdown: () => Promise<void> } {
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || serviceName,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.some((p) => (req.url ?? '').startsWith(p)),
      }),
      // Route handlers and routers; Nest's middleware layers would add a span each to every request.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new UndiciInstrumentation(),
      // Statements outside a request (migrations, the ephemeral-set sweeper) make no root spans.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return {
    logMixin: (): Record<string, string> => {
      const span = trace.getSpan(context.active());
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    shutdown: () => sdk.shutdown(),
  };
}
