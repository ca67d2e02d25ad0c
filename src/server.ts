// entry point: read the environment, build the app, listen, drain on SIGTERM/SIGINT.
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const config = loadConfig();
const app = await buildApp(config);

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'draining');
    app.close().then(() => process.exit(0), (err) => {
      app.log.error({ err }, 'close failed');
      process.exit(1);
    });
  });
}

await app.listen({ port: config.port, host: config.host });
