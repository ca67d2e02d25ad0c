// a batch's alike items as one job. When a batch is answered straight from memory (pipeline.ts's
// layOutTogether), items of one row-wise op with the same row count, row length and eps, float32 in
// and out, read where they lie, with no weight, bias, residual or statistics, differ only in where
// their input and output lie: one task template, one cancel slab and the kept parameters serve them
// all, and the run counts one task, not one per item. Each item was a job of its own, with its slab,
// plan, task and timing (allocateRowJob and the run's bookkeeping in a profile of /v1/batch of 64).
import { constParams } from '../kernels/const-params.js';
import type { WasmKernels } from '../kernels/wasm-kernels.js';
import { int32View } from '../memory/int32-view.js';
import type { SlabSource } from '../memory/slab-carver.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import type { ItemsTask, Region } from '../pool/protocol.js';
import { outputAtAnyOffset } from './allocate.js';
import type { CheckedRequest, RowRequest } from './checked-request.js';
import { COST, placement, type Job } from './job.js';

/** what makes items alike, when an item can join others: null when it runs as a job of its own */
export function itemsKey(req: CheckedRequest): string | null {
  if (req.layout !== 'rows' || (req.params.kernel !== 'rmsnorm' && req.params.kernel !== 'layernorm')) return null;
  if (req.input.dtype !== 'float32' || req.outDtype !== 'float32' || req.rows === 0) return null;
  if (req.weight !== null || req.bias !== null || req.residual !== null || req.stats.length > 0) return null;
  if (!outputAtAnyOffset(req) || !('inPlace' in placement(req.input, 'float32', true))) return null;
  // rmsnorm's one parameter (sumLength) is n wherever the SIMD kernels apply
  return `${req.params.kernel} ${req.rows} ${req.n} ${req.eps} ${req.epsOutside} ${req.weightOffset}`;
}

/** the indices of items alike by itemsKey, in groups of two or more */
export function alikeGroups(checked: CheckedRequest[]): number[][] {
  const groups = new Map<string, number[]>();
  checked.forEach((item, i) => {
    const key = itemsKey(item);
    if (key === null) return;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [i]);
    else group.push(i);
  });
  return [...groups.values()].filter((group) => group.length > 1);
}

/**
 * one job for alike items (alikeGroups), each output at its byte offset `yAt[i]`; null when their
 * kept parameters cannot be had (g = -0, or the kept area full): each item then runs on its own.
 * `maxTasks`: the most tasks the job may be split into; `source`: the batch's carver
 */
export function allocateItemsJob(
  items: RowRequest[], yAt: number[], slabs: TensorMemory, wasm: WasmKernels, maxTasks: number, source: SlabSource,
): Job | null {
  const first = items[0];
  const kept = constParams(slabs, wasm, first.weightOffset + 1, first.n);
  if (kept === null) return null;
  const slab = source.acquire(4 * maxTasks);
  const { memory } = slab;
  int32View(memory).fill(0, slab.offset / 4, slab.offset / 4 + maxTasks); // slabs are reused
  const at: number[] = [];
  for (let i = 0; i < items.length; i++) at.push(inputAt(items[i]), yAt[i]);
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

/** the byte offset of an item's input, read where it lies (itemsKey made sure it can be) */
function inputAt(req: RowRequest): number {
  const place = placement(req.input, 'float32', true);
  if (!('inPlace' in place)) throw new Error('allocateItemsJob: an item whose input cannot be read where it lies');
  return place.inPlace.byteOffset;
}
