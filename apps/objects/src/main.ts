import { acceptGatewayConnections, AppConfig, ConfigError, loadConfig } from '@app/domain';
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
  const app = await createObjectsApp();
  await app.listen(config.objectsPort, process.env.HOST ?? '0.0.0.0');
  // Under `npm start`, the gateway may hand client connections straight to this process.
  acceptGatewayConnections(app.getHttpServer());
}

void main().catch((e) => {
  console.error('objects app failed to start:', e);
  process.exit(1);
});
