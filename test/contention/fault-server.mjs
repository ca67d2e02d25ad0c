// the service as a real process with its fault gate, for tests that hold work from another process:
// the app dist/server.js builds, from the same environment, with faultInjection on (a tests-only
// option that no environment variable sets). Every task that reaches the gate is logged ("gate
// held", with the count so far) and SIGUSR2 opens it, so the test synchronizes on the log, not on time.
//   node test/contention/fault-server.mjs   (started by startServer in test/service/helpers.ts)
import { buildApp } from '../../dist/app.js';
import { loadConfig } from '../../dist/config.js';
import { GATE_HELD, GATE_OPEN } from '../../dist/pool/protocol.js';

const config = loadConfig();
const app = await buildApp({ ...config, faultInjection: true });
const gate = app.faultGate;

process.once('SIGUSR2', () => {
  Atomics.store(gate, GATE_OPEN, 1);
  Atomics.notify(gate, GATE_OPEN);
  app.log.info('gate open');
});

async function reportHeld() {
  for (let seen = 0; ;) {
    const wait = Atomics.waitAsync(gate, GATE_HELD, seen);
    if (wait.async) await wait.value;
    seen = Atomics.load(gate, GATE_HELD);
    app.log.info({ held: seen }, 'gate held');
  }
}
void reportHeld();

await app.ready();
await app.listen({ port: config.port, host: config.host });
