// the engine: everything a front end needs from the service, whatever its transport — admission,
// API keys, readiness, metrics and the pipeline over the worker pool and shared memory. A Fastify
// dialect (http/) and, later, a gRPC server are thin callers of it; nothing here knows a URL.
import type { Config } from '../config.js';
import { runPipeline, type PipelineRequest, type PipelineResult } from '../jobs/pipeline.js';
import { loadWasmKernels, type WasmKernels } from '../kernels/wasm-kernels.js';
import { createTensorMemory, type TensorMemory } from '../memory/tensor-memory.js';
import { createMetrics, type Metrics } from '../metrics.js';
import { createWorkerPool, type WorkerPool } from '../pool/worker-pool.js';
import { createAdmission, type Admission, type ServiceState } from './admission.js';
import { createKeyCheck } from './api-keys.js';

export interface Readiness { ready: boolean; status: 'ready' | 'starting' | 'draining' | 'failed'; workers: number }

export interface Engine {
  readonly config: Readonly<Config>;
  readonly pool: WorkerPool;
  readonly slabs: TensorMemory;
  /** this thread's SIMD kernels: inline work and per-request preparation */
  readonly wasm: WasmKernels;
  readonly metrics: Metrics;
  /** drain state, shared with the entry point's signal handling */
  readonly state: ServiceState;
  readonly admission: Admission;
  /** null when the server has no API keys; else whether an Authorization value carries one */
  readonly checkKey: ((authorization: string | undefined) => boolean) | null;
  /** with faultInjection: where tasks with the `hold` fault wait (pool/protocol.ts); else null */
  readonly faultGate: Int32Array | null;
  readiness(): Readiness;
  /** the answer at once when it was computed inline (jobs/pipeline.ts), else a promise of it */
  run(request: PipelineRequest): PipelineResult | Promise<PipelineResult>;
  close(): Promise<void>;
}

/** resolves once the workers have loaded their kernels, or failed to (then the engine stays unready) */
export async function createEngine(config: Readonly<Config>, log: (err: Error, message: string) => void): Promise<Engine> {
  const state: ServiceState = { draining: false, poolFailed: false, inFlight: 0, receiving: 0 };
  const slabs = createTensorMemory(config.maxTensorMemoryBytes);
  const wasm = loadWasmKernels(slabs.memory); // this thread's copy
  const faultGate = config.faultInjection ? new Int32Array(new SharedArrayBuffer(8)) : null;
  const pool = createWorkerPool(config, slabs.memory, (err) => log(err, 'worker pool error'), faultGate);
  const metrics = createMetrics(pool, slabs, state);
  pool.piscina.on('workerDestroy', () => {
    if (!pool.closing) metrics.workerRestarts.inc();
  });
  // a build whose workers cannot load their kernels never turns ready
  state.poolFailed = !(await pool.warmUp());
  const resources = { pool, slabs, wasm, metrics, limits: config };
  const engine: Engine = {
    config, pool, slabs, wasm, metrics, state, faultGate,
    admission: createAdmission(config, state),
    checkKey: createKeyCheck(config.apiKeys),
    readiness() {
      const workers = pool.piscina.threads.length;
      if (state.draining || pool.closing) return { ready: false, status: 'draining', workers };
      if (state.poolFailed) return { ready: false, status: 'failed', workers };
      if (workers < pool.workers) return { ready: false, status: 'starting', workers };
      return { ready: true, status: 'ready', workers };
    },
    run: (request) => runPipeline(resources, request),
    close: () => pool.close(),
  };
  return engine;
}
