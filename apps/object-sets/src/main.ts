import { acceptGatewayConnections, AppConfig, ConfigError, loadConfig } from '@app/domain';
import { createObjectSetsApp } from './create-app';

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
  const app = await createObjectSetsApp();
  await app.listen(config.objectSetsPort, process.env.HOST ?? '0.0.0.0');
  // Under `npm start`, the gateway may hand client connections straight to this process.
  acceptGatewayConnections(app.getHttpServer());
}

void main().catch((e) => {
  console.error('object-sets app failed to start:', e);
  process.exit(1);
});
