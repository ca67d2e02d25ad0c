// a request laid out in its slab: the task phases that compute it and the tensors it answers with.
import { DTYPES, type Dtype } from '../codec/dtype.js';
import { writeValues, type TensorIn } from '../codec/read-tensor.js';
import type { TensorOut } from '../codec/write-tensor.js';
import { bytesView, int32View } from '../memory/whole-views.js';
import type { SlabSource } from '../memory/slab-carver.js';
import type { Slab } from '../memory/tensor-memory.js';
import type { Region, Task } from '../pool/protocol.js';
import type { CheckedRequest } from './checked-request.js';

export interface Phase {
  /** the template: run.ts gives each task a share of units [0, units) */
  task: Task;
  units: number;
  elementsPerUnit: number;
  /** per element, what its work costs in elements of the SIMD kernels (COST): the cheaper, the
   *  more of it is done inline */
  cost: number;
  /** units are a batch's items (allocate-items.ts): inline when one unit is small enough, as each
   *  item ran as a job of its own (on the pool, 256 items of 1×4096 float32 measured no faster) */
  inlineByUnit?: boolean;
}

/** per element, what work costs against the SIMD kernels (measured: a hop to a warm worker costs
 *  ~200 µs, the SIMD kernels' work for ~170 Ki float32 elements; see config.ts). Writing a value as
 *  text takes ~150-200 ns (JSON.stringify's own pace), so a JSON answer of a thousand values is
 *  written inline, a longer one by the workers */
export const COST = { simd: 1, js: 8, text: 128 } as const;

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

/** the whole answer, straight from the slab (the job must have `direct`) */
export function directBytes(job: Job): Buffer {
  return Buffer.from(job.slab.memory, job.direct!.start, job.direct!.length);
}

const ALIGN = 8; // every region starts where a Float64Array may

export const align = (bytes: number) => Math.ceil(bytes / ALIGN) * ALIGN;

/** a result tensor at `region`, stored as the kernels write `dtype` */
export function tensorAt(region: Region, dtype: Dtype, shape: number[], storage: TensorOut['storage']): TensorOut {
  return { dtype, shape, storage, memory: region.memory, byteOffset: region.byteOffset, length: region.length };
}

/** how the kernels hold a tensor of `dtype`: float16/bfloat16 outputs as bits */
export function outputStorage(dtype: Dtype): TensorOut['storage'] {
  return dtype === 'float16' || dtype === 'bfloat16' ? 'bits' : dtype;
}

export interface JobSlab {
  slab: Slab;
  /** each planned region's byte offset in the shared memory, in plan order */
  offsets: number[];
  y: Region;
  direct: Job['direct'];
}

/** planned region `i` of a job's slab, as `length` elements */
export function regionOf(job: JobSlab, i: number, length: number): Region {
  return { memory: job.slab.memory, byteOffset: job.offsets[i], length };
}

/** where an answer's framing of `prefixLength` bytes starts, from an 8-aligned offset: so that the
 *  output after it is 8-aligned, or at `phase` (the answer's first byte mod 8, AnswerFormat) when
 *  given. Slabs start at a multiple of 8 (the allocator's granule) */
export function answerStart(prefixLength: number, phase: number | null): number {
  return phase === null ? align(prefixLength) - prefixLength : phase;
}

/**
 * one slab for a job: the planned regions (`sizes`, in bytes, in order; the first is the cancel flags,
 * cleared: slabs are reused) one after another, each aligned, then y, aligned, with the answer's
 * `prefix` (if any) right before it so both go out as one run of bytes. `phase`, when not null,
 * places the answer's first byte at that offset mod 8 instead, y wherever it then falls (only for y
 * written by the SIMD kernels, which store at any alignment). `sizes` becomes the offsets: a plan is
 * one array of numbers, made and used once per job (an array of named pairs and a record of offsets
 * cost ~0.5 µs a small request). `yAt`, when not null: y's byte offset in the memory, placed by the
 * caller (a batch answered straight from memory, its framing around y already written): the slab
 * then holds the planned regions alone
 */
export function openJobSlab(
  slabs: SlabSource, sizes: number[], prefix: Buffer | null, yLength: number, yBytes: number, phase: number | null = null, yAt: number | null = null,
): JobSlab {
  const cancelBytes = sizes[0];
  let end = 0;
  for (let i = 0; i < sizes.length; i++) {
    const bytes = sizes[i];
    sizes[i] = end;
    end += align(bytes);
  }
  const prefixLength = prefix?.length ?? 0;
  const prefixStart = end + answerStart(prefixLength, prefix === null ? null : phase);
  const yOffset = prefixStart + prefixLength;
  const slab = slabs.acquire(yAt === null ? yOffset + yBytes : end);
  // the newest buffer: it covers y wherever the caller placed it, as the memory only grows
  const { memory, offset: base } = slab;
  for (let i = 0; i < sizes.length; i++) sizes[i] += base;
  int32View(memory).fill(0, sizes[0] / 4, (sizes[0] + cancelBytes) / 4);
  if (prefix !== null) bytesView(memory).set(prefix, base + prefixStart);
  return {
    slab,
    offsets: sizes,
    y: { memory, byteOffset: yAt ?? base + yOffset, length: yLength },
    direct: prefix === null ? null : { start: base + prefixStart, length: prefixLength + yBytes },
  };
}

/** where a tensor's values come from: in place, loaded by the workers, or written here */
export type Placement = { inPlace: Region } | { source: Region } | { write: TensorIn };

/** `anyAlignment`: the SIMD kernels load at any byte offset, so their input needs no aligning copy */
export function placement(t: TensorIn, valueType: Dtype, anyAlignment: boolean): Placement {
  if (t.source.kind !== 'bytes') return { write: t };
  const { bytes } = t.source;
  const memory = bytes.buffer;
  if (!(memory instanceof SharedArrayBuffer)) return { write: t };
  const itemsize = DTYPES[t.dtype].itemsize;
  if (t.dtype === valueType && (anyAlignment || bytes.byteOffset % itemsize === 0)) {
    return { inPlace: { memory, byteOffset: bytes.byteOffset, length: t.size } };
  }
  return { source: { memory, byteOffset: bytes.byteOffset, length: bytes.byteLength } };
}

/** the region the kernels read a placed tensor from (`own`: its own region when not in place), and
 *  the raw bytes the workers load into it first, if any; a list or typed array is written now */
export function placeValues(p: Placement, own: () => Region, valueType: 'float32' | 'float64'): [Region, Region | null] {
  if ('inPlace' in p) return [p.inPlace, null];
  const r = own();
  if ('write' in p) writeValues(p.write, valueType === 'float64' ? new Float64Array(r.memory, r.byteOffset, r.length) : new Float32Array(r.memory, r.byteOffset, r.length));
  return [r, 'source' in p ? p.source : null];
}
