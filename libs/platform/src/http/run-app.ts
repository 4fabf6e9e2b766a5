import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { AppConfig, ConfigError, loadConfig } from '../config/app-config';
import { acceptGatewayConnections } from './gateway-handoff';
import { stopWithParent } from './stop-with-parent';

/**
 * An app's main: reads the configuration (a bad one: its message and exit code 2), creates the
 * app, listens on its port and takes the connections the gateway hands over. A failure to start
 * prints `<name> app failed to start:` and exits with 1.
 */
export function runApp(
  name: string,
  create: () => Promise<INestApplication>,
  port: (config: AppConfig) => number,
  portVariable: string,
): void {
  void start(create, port).catch((e) => {
    const { code, port: taken, address } = e as { code?: string; port?: number; address?: string };
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      // The variable that sets the port, not only the error's address (README Configuration).
      console.error(
        `${name} app failed to start: port ${taken} (${portVariable}) on ${address} is ${code === 'EADDRINUSE' ? 'already in use' : 'not allowed'}; set ${portVariable} to a free port`,
      );
    } else {
      console.error(`${name} app failed to start:`, e);
    }
    process.exit(1);
  });
}

async function start(create: () => Promise<INestApplication>, port: (config: AppConfig) => number): Promise<void> {
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
  const created = create();
  // Under `npm start`, the app stops if npm start goes away without stopping it, even while it starts.
  stopWithParent(created);
  const app = await created;
  // Loopback unless HOST says otherwise (the container images set HOST=0.0.0.0).
  await app.listen(port(config), process.env.HOST || '127.0.0.1');
  // Under `npm start`, the gateway may hand client connections straight to this process.
  acceptGatewayConnections(app.getHttpServer() as Server);
}
