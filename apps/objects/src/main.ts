// First: tracing (when configured) must be set up before anything it instruments loads.
import './tracing';
import { acceptGatewayConnections, AppConfig, ConfigError, loadConfig, stopWithParent } from '@app/platform';
import { createObjectsApp } from './create-app';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
  const created = createObjectsApp();
  // Under `npm start`, the app stops if npm start goes away without stopping it, even while it starts.
  stopWithParent(created);
  const app = await created;
  // Loopback unless HOST says otherwise (the container images set HOST=0.0.0.0).
  await app.listen(config.objectsPort, process.env.HOST || '127.0.0.1');
  // Under `npm start`, the gateway may hand client connections straight to this process.
  acceptGatewayConnections(app.getHttpServer());
}

void main().catch((e) => {
  console.error('objects app failed to start:', e);
  process.exit(1);
});
