// a request laid out in its slab: the task phases that compute it and the tensors it answers with.
import type { Dtype } from '../codec/dtype.js';
import type { TensorOut } from '../codec/write-tensor.js';
import type { Slab } from '../memory/slab-pool.js';
import type { Region, Task } from '../pool/protocol.js';
import type { CheckedRequest } from './checked-request.js';

export interface Phase {
  /** the template: run.ts gives each task a share of units [0, units) */
  task: Task;
  units: number;
  elementsPerUnit: number;
  /** runs the SIMD kernels (cheaper per element, so more of it is done inline) */
  simd: boolean;
}

export interface Job {
  request: CheckedRequest;
  slab: Slab;
  /** run one after the other */
  phases: Phase[];
  /** main-thread work once phase i is done (BatchNorm: merging the block statistics) */
  afterPhase: ((phase: number) => void) | null;
  /** the answer's tensors, in answer order */
  outputs: [string, TensorOut][];
  /** when set, the whole answer = slab bytes [start, start + length) once computed */
  direct: { start: number; length: number } | null;
}

const ALIGN = 8; // every region starts where a Float64Array may

export const align = (bytes: number) => Math.ceil(bytes / ALIGN) * ALIGN;

/** byte offsets of named regions laid out one after another, each aligned, and their total */
export function layOut(plan: [string, number][]): { offsets: Record<string, number>; end: number } {
  const offsets: Record<string, number> = {};
  let cursor = 0;
  for (const [name, bytes] of plan) {
    offsets[name] = cursor;
    cursor += align(bytes);
  }
  return { offsets, end: cursor };
}

/** a result tensor at `region`, stored as the kernels write `dtype` */
export function tensorAt(region: Region, dtype: Dtype, shape: number[], storage: TensorOut['storage']): TensorOut {
  return { dtype, shape, storage, memory: region.memory, byteOffset: region.byteOffset, length: region.length };
}

/** how the kernels hold a tensor of `dtype`: float16/bfloat16 outputs as bits */
export function outputStorage(dtype: Dtype): TensorOut['storage'] {
  return dtype === 'float16' || dtype === 'bfloat16' ? 'bits' : dtype;
}
