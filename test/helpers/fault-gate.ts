// the app's fault gate (buildApp({ faultInjection: true })): a task sent with `X-Test-Fault: hold`
// claims its flag, counts itself here, and waits until the test opens the gate. Tests synchronize on
// it with Atomics, never with sleeps.
import type { FastifyInstance } from 'fastify';
import { GATE_HELD, GATE_OPEN } from '../../src/pool/protocol.js';

export interface FaultGate {
  /** resolves once `count` held tasks have started (claimed their flag) */
  held(count: number): Promise<void>;
  /** lets every held task, and every later one, run on */
  open(): void;
}

export function faultGate(app: FastifyInstance): FaultGate {
  const gate = app.faultGate;
  if (gate === null) throw new Error('the app was built without faultInjection');
  return {
    async held(count) {
      for (;;) {
        const seen = Atomics.load(gate, GATE_HELD);
        if (seen >= count) return;
        const wait = Atomics.waitAsync(gate, GATE_HELD, seen);
        if (wait.async) await wait.value;
      }
    },
    open() {
      Atomics.store(gate, GATE_OPEN, 1);
      Atomics.notify(gate, GATE_OPEN);
    },
  };
}

/** closes an app whose held tasks would otherwise hold its pool open forever */
export async function closeApp(app: FastifyInstance | undefined): Promise<void> {
  if (app === undefined) return;
  if (app.faultGate !== null) faultGate(app).open();
  await app.close();
}
