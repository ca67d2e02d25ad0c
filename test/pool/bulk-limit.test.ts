// bulk text work (a long JSON body to parse, a long JSON answer to write) runs on all workers but one:
// normalization work that comes after it still finds a worker. Held at the fault gate, not timed.
import { afterEach, expect, it } from 'vitest';
import { GATE_HELD, GATE_OPEN, type Region, type RowTask, type TextTask } from '../../src/pool/protocol.js';
import { createWorkerPool, type WorkerPool } from '../../src/pool/worker-pool.js';

const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
const shared = memory.buffer as unknown as SharedArrayBuffer;
const gate = new Int32Array(new SharedArrayBuffer(8));
let pool: WorkerPool | undefined;

afterEach(async () => {
  Atomics.store(gate, GATE_OPEN, 1);
  Atomics.notify(gate, GATE_OPEN);
  await pool?.close();
});

async function held(count: number): Promise<void> {
  for (;;) {
    const seen = Atomics.load(gate, GATE_HELD);
    if (seen >= count) return;
    const wait = Atomics.waitAsync(gate, GATE_HELD, seen);
    if (wait.async) await wait.value;
  }
}

// each task its own cancel flag (a 4-byte slot); no task touches more memory than that
let slots = 0;
const region = (byteOffset: number, length: number): Region => ({ memory: shared, byteOffset, length });
const cancelFlag = () => region(4 * slots++, 1);

/** a text task of no blocks, held at the gate once started */
const heldText = (): TextTask => ({
  kind: 'text', blockStart: 0, blockEnd: 0, blockValues: 1, values: { ...region(1024, 0), dtype: 'float32', storage: 'float32' },
  nonFinite: 'quoted', text: region(2048, 0), spans: region(2048, 0), cancel: cancelFlag(), slot: 0, fault: { kind: 'hold' },
});

/** a normalization of no rows */
const rows = (): RowTask => ({
  kind: 'rows', params: { kernel: 'rmsnorm' } as RowTask['params'], n: 4, rowStart: 0, rowEnd: 0, inputDtype: 'float32', outDtype: 'float32',
  eps: 1e-6, epsOutside: false, x: region(4096, 0), xSource: null, residual: null, residualSource: null, y: region(4096, 0),
  scale: region(4096, 0), bias: null, mean: null, rstd: null, prepared: null, wide: null, cancel: cancelFlag(), slot: 0, fault: null,
});

it('with 2 workers, a second bulk task waits while a normalization task after it runs', async () => {
  pool = createWorkerPool({ workers: 2, maxQueue: 8 }, memory, (err) => { throw err; }, gate);
  expect(await pool.warmUp()).toBe(true);
  const never = new AbortController().signal;
  const first = pool.run(heldText(), never);
  await held(1);
  const second = pool.run(heldText(), never);
  const normalization = await pool.run(rows(), never);
  expect(normalization).toMatchObject({ ok: true, skipped: false });
  // the second bulk task is still waiting: one worker holds the first, the other was kept for this one
  expect(pool.queued).toBe(1);
  expect(Atomics.load(gate, GATE_HELD)).toBe(1);
  Atomics.store(gate, GATE_OPEN, 1);
  Atomics.notify(gate, GATE_OPEN);
  expect(await first).toMatchObject({ ok: true, skipped: false });
  expect(await second).toMatchObject({ ok: true, skipped: false });
});

it('with 1 worker, bulk work still runs', async () => {
  pool = createWorkerPool({ workers: 1, maxQueue: 8 }, memory, (err) => { throw err; }, gate);
  Atomics.store(gate, GATE_OPEN, 1);
  expect(await pool.warmUp()).toBe(true);
  const never = new AbortController().signal;
  expect(await pool.run(heldText(), never)).toMatchObject({ ok: true, skipped: false });
});
