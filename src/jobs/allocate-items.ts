// a batch's alike items as one job. When a batch is answered straight from memory (pipeline.ts's
// layOutTogether), RMSNorm or LayerNorm items with the same row count, row length, eps, eps placement
// and weight offset, float32 in and out, read where they lie, with no weight, bias, residual or
// statistics, differ only in where their input and output lie: one task template, one cancel slab
// and the kept parameters serve them all, and the run counts one task, not one per item. Each item
// was a job of its own, with its slab, plan, task and timing (allocateRowJob and the run's
// bookkeeping in a profile of /v1/batch of 64).
import { constParams } from '../kernels/const-params.js';
import type { WasmKernels } from '../kernels/wasm-kernels.js';
import { int32View } from '../memory/whole-views.js';
import type { SlabSource } from '../memory/slab-carver.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import type { ItemsTask, Region } from '../pool/protocol.js';
import { outputAtAnyOffset } from './allocate.js';
import type { CheckedRequest, RowRequest } from './checked-request.js';
import { COST, placement, type Job } from './job.js';

/** where an item's input lies when it can join others (a byte offset), else null: it runs as a job
 *  of its own */
function joinableAt(req: CheckedRequest): number | null {
  if (req.layout !== 'rows' || (req.params.kernel !== 'rmsnorm' && req.params.kernel !== 'layernorm')) return null;
  if (req.input.dtype !== 'float32' || req.outDtype !== 'float32' || req.rows === 0) return null;
  if (req.weight !== null || req.bias !== null || req.residual !== null || req.stats.length > 0) return null;
  if (!outputAtAnyOffset(req)) return null;
  const place = placement(req.input, 'float32', true);
  return 'inPlace' in place ? place.inPlace.byteOffset : null;
}

/** computed alike: the same kernel over the same rows with the same eps and g (rmsnorm's one
 *  parameter, sumLength, is n wherever the SIMD kernels apply). -0 and 0 compare equal, and give
 *  the same bits as eps or weight_offset */
function alike(a: RowRequest, b: RowRequest): boolean {
  return a.params.kernel === b.params.kernel && a.rows === b.rows && a.n === b.n && a.eps === b.eps
    && a.epsOutside === b.epsOutside && a.weightOffset === b.weightOffset;
}

export interface AlikeGroup {
  /** the items' indices in the batch */
  items: number[];
  /** each one's input, a byte offset in the shared memory */
  inputAt: number[];
}

/** a batch of many kinds is compared with this many groups at most; later kinds run on their own.
 *  Comparing fields (not a key string per item: its hashing and flattening cost ~15 µs a 64-item
 *  batch in perf) keeps an item's cost at a few comparisons */
const MAX_GROUPS = 8;

/** the batch's items that are alike, in groups of two or more */
export function alikeGroups(checked: CheckedRequest[]): AlikeGroup[] {
  const groups: (AlikeGroup & { first: RowRequest })[] = [];
  for (let i = 0; i < checked.length; i++) {
    const item = checked[i];
    const at = joinableAt(item);
    if (at === null) continue;
    const row = item as RowRequest;
    const group = groups.find((g) => alike(g.first, row));
    if (group !== undefined) {
      group.items.push(i);
      group.inputAt.push(at);
    } else if (groups.length < MAX_GROUPS) {
      groups.push({ first: row, items: [i], inputAt: [at] });
    }
  }
  return groups.filter((g) => g.items.length > 1);
}

/**
 * one job for alike items (alikeGroups), their inputs at byte offsets `xAt`, their outputs at `yAt`;
 * null when their kept parameters cannot be had (the kept area is full): each item then runs on its
 * own. `maxTasks`: the most tasks the job may be split into; `source`: the batch's carver
 */
export function allocateItemsJob(
  items: RowRequest[], xAt: number[], yAt: number[], slabs: TensorMemory, wasm: WasmKernels, maxTasks: number, source: SlabSource,
): Job | null {
  const first = items[0];
  const kept = constParams(slabs, wasm, first.weightOffset + 1, first.n);
  if (kept === null) return null;
  const slab = source.acquire(4 * maxTasks);
  const { memory } = slab;
  int32View(memory).fill(0, slab.offset / 4, slab.offset / 4 + maxTasks); // slabs are reused
  const at: number[] = [];
  for (let i = 0; i < items.length; i++) at.push(xAt[i], yAt[i]);
  const size = first.input.size;
  const cancel: Region = { memory, byteOffset: slab.offset, length: maxTasks };
  const task: ItemsTask = {
    kind: 'items',
    rows: {
      kind: 'rows',
      params: first.params, n: first.n,
      rowStart: 0, rowEnd: first.rows,
      inputDtype: 'float32', outDtype: 'float32',
      eps: first.eps, epsOutside: first.epsOutside,
      x: { memory, byteOffset: at[0], length: size }, xSource: null, residual: null, residualSource: null,
      y: { memory, byteOffset: at[1], length: size },
      scale: kept.scale, bias: null, mean: null, rstd: null,
      cancel, slot: 0, prepared: kept.prepared, wide: null, fault: null,
    },
    itemStart: 0, itemEnd: items.length, at,
    cancel, slot: 0, fault: null,
  };
  return {
    request: first,
    slab,
    phases: [{ task, units: items.length, elementsPerUnit: size, cost: COST.simd, inlineByUnit: true }],
    afterPhase: null,
    // the batch's answer holds every output already, framed
    outputs: [],
    direct: null,
  };
}
