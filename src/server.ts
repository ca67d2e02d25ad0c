// entry point: read the environment, build the app, listen, drain on SIGTERM/SIGINT.
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const config = loadConfig();
const app = await buildApp(config);

const DRAIN_GRACE_MS = 5_000; // beyond the longest deadline, for the last responses to flush

let draining = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (draining) return;
    draining = true;
    app.service.draining = true; // /readyz turns 503, new /v1 work gets 503
    app.log.info({ signal, inFlight: app.service.inFlight }, 'draining');
    // in-flight requests end by their deadline at the latest; then give up
    setTimeout(() => {
      app.log.error('drain timed out');
      process.exit(1);
    }, config.requestTimeoutMs + DRAIN_GRACE_MS).unref();
    app.close().then(() => {
      app.log.info('drained');
      process.exit(0);
    }, (err) => {
      app.log.error({ err }, 'close failed');
      process.exit(1);
    });
  });
}

await app.listen({ port: config.port, host: config.host });
