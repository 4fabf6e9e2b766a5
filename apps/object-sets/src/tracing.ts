import { startTracing } from '@app/platform/tracing/tracing-bootstrap';

// Imported first by main.ts: the OpenTelemetry SDK, when configured, must patch http, express, undici and pg before they load.
startTracing('object-sets');
