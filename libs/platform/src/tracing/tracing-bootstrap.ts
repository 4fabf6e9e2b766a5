/**
 * Tracing on or off, decided before Nest loads. Each app's main.ts imports its `tracing.ts`
 * first, which calls startTracing: with OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, the OpenTelemetry SDK starts (tracing-sdk.ts), so the
 * http, express, undici and pg instrumentations patch those modules as Nest loads them;
 * without it, the SDK is never even required and nothing is patched.
 * This file imports nothing, so that importing it first loads nothing else first.
 */
let started: { logMixin: () => Record<string, string>; shutdown: () => Promise<void> } | undefined;

export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/** Starts the SDK when configured (see above); `serviceName` unless OTEL_SERVICE_NAME names one. */
export function startTracing(serviceName: string): void {
  if (!tracingConfigured()) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require('./tracing-sdk') as typeof import('./tracing-sdk');
  started = sdk.startTracingSdk(serviceName);
}

/** Sends the spans still batched (the app is stopping); nothing when tracing is off. */
export async function shutdownTracing(): Promise<void> {
  await started?.shutdown().catch(() => undefined);
}

/** The pino mixin that puts trace_id and span_id on log lines written inside a span; none when tracing is off. */
export function traceLogMixin(): (() => Record<string, string>) | undefined {
  return started?.logMixin;
}
