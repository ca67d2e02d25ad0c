// the Prometheus metrics of one app instance (its own registry, so tests can build many apps).
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ServiceState } from './engine/admission.js';
import { CellCounter, CellHistogram } from './metric-cells.js';
import type { TensorMemory } from './memory/tensor-memory.js';
import type { WorkerPool } from './pool/worker-pool.js';

export interface Metrics {
  registry: Registry;
  /** by method, route, status */
  requests: CellCounter;
  requestDuration: CellHistogram;
  /** by op, dtype */
  rows: CellCounter;
  elements: CellCounter;
  bytes: CellCounter;
  taskWait: CellHistogram;
  taskRun: CellHistogram;
  /** by outcome */
  tasks: CellCounter;
  workerRestarts: Counter;
  /** gRPC calls (grpc-ecosystem's interceptor families): by service, method, type, code */
  grpcHandled: CellCounter;
  /** by service, method, type */
  grpcHandling: CellHistogram;
  /** requests answered on ModelStreamInfer streams, by model and outcome (ok, error) */
  streamRequests: CellCounter;
}

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(pool: WorkerPool, slabs: TensorMemory, state: ServiceState | null = null): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const registers = [registry];
  /** a gauge read when /metrics is scraped */
  const gauge = (name: string, help: string, read: () => number) => new Gauge({ name, help, registers, collect() { this.set(read()); } });
  gauge('norm_pool_queue_depth', 'tasks waiting for a worker thread', () => pool.queued);
  gauge('norm_pool_utilization', 'share of worker-thread capacity in use since start (0..1)', () => pool.piscina.utilization);
  gauge('norm_pool_workers', 'live worker threads', () => pool.piscina.threads.length);
  gauge('norm_tensor_memory_in_use_bytes', 'shared tensor memory held by requests', () => slabs.inUseBytes);
  gauge('norm_tensor_memory_reserved_bytes', 'shared tensor memory grown so far: in use or free for reuse', () => slabs.reservedBytes);
  if (state !== null) {
    gauge('norm_requests_working', 'requests holding a work slot (MAX_QUEUE + WORKERS at most): body in, answer not yet written', () => state.inFlight);
    gauge('norm_requests_receiving', 'requests admitted and still receiving their bodies (they hold no work slot)', () => state.receiving);
  }
  gauge('norm_tensor_memory_limit_bytes', 'the budget for tensor memory and arriving bodies together (MAX_TENSOR_MEMORY_BYTES)', () => slabs.limitBytes);
  return {
    registry,
    requests: new CellCounter({ name: 'http_requests_total', help: 'HTTP requests answered, by route and status', labelNames: ['method', 'route', 'status'], registers }),
    requestDuration: new CellHistogram({ name: 'http_request_duration_seconds', help: 'HTTP request latency, by route and status', labelNames: ['method', 'route', 'status'], buckets: SECONDS, registers }),
    rows: new CellCounter({ name: 'norm_rows_total', help: 'rows normalized (a group of groupnorm, a channel of batchnorm), by op and input dtype', labelNames: ['op', 'dtype'], registers }),
    elements: new CellCounter({ name: 'norm_elements_total', help: 'input elements normalized, by op and input dtype', labelNames: ['op', 'dtype'], registers }),
    bytes: new CellCounter({ name: 'norm_bytes_total', help: 'input tensor bytes normalized, by op and input dtype', labelNames: ['op', 'dtype'], registers }),
    taskWait: new CellHistogram({ name: 'norm_task_wait_seconds', help: 'time a pool task waited for a worker', buckets: SECONDS, registers }),
    taskRun: new CellHistogram({ name: 'norm_task_run_seconds', help: 'time a task ran on a worker or inline', buckets: SECONDS, registers }),
    tasks: new CellCounter({ name: 'norm_tasks_total', help: 'tasks by outcome: ok, failed, aborted (deadline or disconnect), rejected (queue full)', labelNames: ['outcome'], registers }),
    workerRestarts: new Counter({ name: 'norm_worker_restarts_total', help: 'worker threads that died and were replaced', registers }),
    grpcHandled: new CellCounter({ name: 'grpc_server_handled_total', help: 'gRPC calls completed on the server, by final code (a stream counts once)', labelNames: ['grpc_service', 'grpc_method', 'grpc_type', 'grpc_code'], registers }),
    grpcHandling: new CellHistogram({ name: 'grpc_server_handling_seconds', help: 'gRPC call duration until the server sent its final status', labelNames: ['grpc_service', 'grpc_method', 'grpc_type'], buckets: SECONDS, registers }),
    streamRequests: new CellCounter({ name: 'norm_stream_requests_total', help: 'requests answered on ModelStreamInfer streams, by model and outcome (ok or error)', labelNames: ['model', 'outcome'], registers }),
  };
}
