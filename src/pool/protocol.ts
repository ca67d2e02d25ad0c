// the only things the main thread and the workers share: the task and result shapes, and the flag by
// which a task leaves its queue (claimed by a thread, or dropped by the main thread).
import type { Dtype } from '../codec/dtype.js';
import type { RowParams } from '../kernels/row-kernels.js';
import { int32View } from '../memory/whole-views.js';

/** a task's flag in its job's cancel region: a task claims it (QUEUED → STARTED) before touching
 *  memory; the main thread drops a queued one (QUEUED → DROPPED), which then does nothing */
export const QUEUED = 0;
export const STARTED = 1;
export const DROPPED = 2;

/** moves a queued task's flag to STARTED (a thread claims it) or DROPPED (the main thread drops it);
 *  false when it was no longer queued (the other side got there first) */
export function leaveQueue(task: Task, to: typeof STARTED | typeof DROPPED): boolean {
  return Atomics.compareExchange(int32View(task.cancel.memory), task.cancel.byteOffset / 4 + task.slot, QUEUED, to) === QUEUED;
}

/** a typed-array view into shared memory: elements of its type, or bytes for a source */
export interface Region {
  memory: SharedArrayBuffer;
  byteOffset: number;
  length: number;
}

/** normalizes whole rows with one of kernels/row-kernels.ts (GroupNorm's row: one group of one sample) */
export interface RowTask<P extends RowParams = RowParams> {
  kind: 'rows';
  /** the kernel (params.kernel) and its own parameters */
  params: P;
  n: number;
  rowStart: number;
  rowEnd: number;
  inputDtype: Dtype;
  outDtype: Dtype;
  eps: number;
  epsOutside: boolean;
  /** float32 values (float64 when inputDtype is float64) */
  x: Region;
  /** when set: the request body's raw bytes of inputDtype (any alignment), loaded into x first */
  xSource: Region | null;
  /** same type as x; overwritten with h = x + residual, which is then normalized */
  residual: Region | null;
  residualSource: Region | null;
  /** outDtype storage: Float32Array, Float64Array, or Uint16Array bits */
  y: Region;
  /** Float64Array: weight_offset + weight, as many as the kernel's paramLength */
  scale: Region;
  /** Float64Array */
  bias: Region | null;
  /** Float32Array per row */
  mean: Region | null;
  rstd: Region | null;
  /** byte offset of the wasm kernels' prepared scale/bias (float32 in → float32 out), else null:
   *  the JS kernels run */
  prepared: number | null;
  /** float32 scratch for the wasm kernels' results when outDtype is float16/bfloat16, else null */
  wide: Region | null;
  /** Int32 flags, one per task of the job (`slot`): 0 queued, 1 started, 2 dropped. A task claims
   *  its flag before touching memory; a dropped one does nothing, so no task is ever cut off
   *  mid-write into memory that may be reused */
  cancel: Region;
  slot: number;
  /** test-only fault injection (buildApp({ faultInjection: true })); null in service */
  fault: TaskFault | null;
}

/** how a BatchNorm input [outer, C, inner] is cut into tiles: fixed by the shape alone, never by
 *  the number of workers, so the merged statistics are the same bits however the tiles are spread */
export interface TileGeometry {
  outer: number;
  channels: number;
  inner: number;
  outerPerTile: number;
  channelsPerTile: number;
  /** tiles per outer range: tile b covers outer range ⌊b / channelTiles⌋, channels (b mod channelTiles)·channelsPerTile … */
  channelTiles: number;
  tiles: number;
}

/** BatchNorm: `stats` writes each tile's per-channel mean and M2; `apply` writes y for its tiles */
export interface ChannelTask {
  kind: 'channelStats' | 'channelApply';
  tileStart: number;
  tileEnd: number;
  geometry: TileGeometry;
  inputDtype: Dtype;
  outDtype: Dtype;
  /** float32 values (float64 when inputDtype is float64); at any byte offset when every phase is SIMD */
  x: Region;
  /** when set, this task first loads its tiles of x from these raw bytes of inputDtype */
  xSource: Region | null;
  /** the SIMD kernels run (float32 values; the output pass for a float32 output only), else the JS
   *  ones: allocate decides from the request alone, so every task of a request computes the same
   *  way, and a thread without the kernels fails the task rather than compute other bits */
  simd: boolean;
  /** byte offset of the SIMD output pass's float32 parameters (kernels/channel-params.ts), else null */
  prepared: number | null;
  /** Float64Array: per tile, per channel of the tile, its mean and M2 */
  partials: Region;
  /** Float64Array per channel: μ, r·γ and β of y = (x − μ)·(r·γ) + β */
  shift: Region;
  factor: Region;
  bias: Region;
  y: Region;
  cancel: Region;
  slot: number;
  fault: TaskFault | null;
}

/** a JSON answer's numbers: blocks [blockStart, blockEnd) of a tensor's values written as text
 *  ("1.5,-0.25,…"), each block right after the one before it (codec/number-text.ts) */
export interface TextTask {
  kind: 'text';
  blockStart: number;
  blockEnd: number;
  /** values per block: block b holds values [b·blockValues, (b+1)·blockValues) */
  blockValues: number;
  values: NumberSource;
  /** how JSON cannot say NaN and ±Infinity: as strings ("NaN", /v1) or as bare tokens (NaN, the OIP) */
  nonFinite: NonFinite;
  /** bytes; a task starts writing at its first block's worst-case offset, b·blockValues·MAX_NUMBER_CHARS */
  text: Region;
  /** Uint32 per block: where its text starts and ends, in bytes from text's start */
  spans: Region;
  cancel: Region;
  slot: number;
  fault: TaskFault | null;
}

/** a tensor's values as they lie in shared memory: float16/bfloat16 as bits, else float32 or float64 */
export interface NumberSource extends Region {
  dtype: Dtype;
  storage: 'bits' | 'float32' | 'float64';
}

export type NonFinite = 'quoted' | 'bare';

/** a batch's alike items run as one task (jobs/allocate-items.ts): item i's rows, as `rows` describes
 *  them, read from byte offset at[2i] and written to at[2i + 1]; this task runs items [itemStart,
 *  itemEnd), on the SIMD kernels only (every item is float32 in and out, read where it lies) */
export interface ItemsTask {
  kind: 'items';
  /** each item's rows: kernel, parameters, row count and length, eps; its x and y are the first item's */
  rows: RowTask;
  itemStart: number;
  itemEnd: number;
  at: number[];
  cancel: Region;
  slot: number;
  fault: TaskFault | null;
}

export type Task = RowTask | ChannelTask | TextTask | ItemsTask;

/** a long JSON body parsed on a worker (codec/json-lists.ts): `json`, /v1's strict JSON with
 *  fastify's prototype-poisoning checks; `oip`, JSON with bare NaN / Infinity tokens (OIP.md) */
export interface ParseTask {
  kind: 'parseJson';
  /** the body's UTF-8 bytes, in shared memory */
  text: Region;
  dialect: 'json' | 'oip';
}

/** a long `data` list taken out of the parsed body: where it was, and its values */
export interface ParsedList {
  path: (string | number)[];
  values: Float64Array;
}

/** the body with its long lists taken out (each left as []), or why it is not JSON */
export type ParseResult = { ok: true; body: unknown; lists: ParsedList[] } | { ok: false; message: string };

/** sent once per worker at start-up: the worker loads its kernels and answers, nothing else */
export interface WarmUp {
  kind: 'warmUp';
}

/** `crash`: the worker exits; `hold`: the task claims its flag, then is held until the test opens the gate */
export type TaskFault = { kind: 'crash' } | { kind: 'hold' };

/** slots of the fault gate, a shared Int32Array the tests keep (app.faultGate): the number of held
 *  tasks that have claimed their flag, and whether the gate is open (0 closed, 1 open) */
export const GATE_HELD = 0;
export const GATE_OPEN = 1;

/** workers answer with data, never by throwing: thrown errors lose their fields crossing threads */
export type TaskResult =
  | { ok: true; startedAt: number; finishedAt: number; skipped: boolean }
  | { ok: false; code: 'NORM_ERR_WORKER_FAILED'; message: string };
