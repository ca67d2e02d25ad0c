// phase two for the row-wise ops: lay out one tensor's work in a shared slab. Binary input stays
// where the body put it (read in place when aligned, else loaded row by row by the workers); when
// the answer can go out straight from memory (response.ts decides), the output sits right after its
// msgpack header.
import { DTYPES, valueStorage, type Dtype } from '../codec/dtype.js';
import { writeValues } from '../codec/read-tensor.js';
import type { SlabSource } from '../memory/slab-carver.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import type { RowTask } from '../pool/protocol.js';
import type { TensorOut } from '../codec/write-tensor.js';
import { rowKernel } from '../kernels/row-kernels.js';
import { constParams } from '../kernels/const-params.js';
import { preparedBytes, type WasmKernels } from '../kernels/wasm-kernels.js';
import { producedOutputs, type CheckedRequest, type RowRequest } from './checked-request.js';
import { COST, openJobSlab, outputStorage, placement, placeValues, regionOf, tensorAt, type Job } from './job.js';

/** the regions of a row job's slab, in this order (openJobSlab's plan) */
const PLAN = { cancel: 0, prepared: 1, wide: 2, scale: 3, bias: 4, mean: 5, rstd: 6, x: 7, residual: 8 } as const;

/** the parameters' length: a zero-row tensor computes nothing, and its row length may be any size,
 *  so its scale and bias stay empty */
function paramLengthOf(req: RowRequest): number {
  return req.rows === 0 ? 0 : rowKernel(req.params).paramLength(req.params, req.n);
}

/** the SIMD kernels take float32 values (float16/bfloat16 are widened to them) to float32 results,
 *  narrowed afterwards for a float16/bfloat16 output (within the contract's bound for those).
 *  Decided from the request alone: every row of it computes the same way on any thread. */
function usesSimd(req: RowRequest, paramLength: number): boolean {
  return valueStorage(req.input.dtype) === 'float32' && req.outDtype !== 'float64' && paramLength > 0 && rowKernel(req.params).simdApplies(req.params, req.n);
}

const isHalf = (dtype: Dtype) => dtype === 'float16' || dtype === 'bfloat16';

/** the SIMD kernels store this request's output, float32, at any byte offset: its answer may sit anywhere */
export function outputAtAnyOffset(req: CheckedRequest): boolean {
  return req.layout === 'rows' && !isHalf(req.outDtype) && usesSimd(req, paramLengthOf(req));
}

/**
 * `maxTasks`: the most tasks the job may be split into (one cancel flag each); `prefix`: the answer's
 * bytes before the output, when it is sent straight from memory, else null; `answerPhase`: where
 * such an answer should start, mod 8 (AnswerFormat), when the kernels allow; `source`: where the
 * job's slab comes from (a batch's carver), by default `slabs` itself; `yAt`: the output's byte
 * offset when the caller placed it (only where outputAtAnyOffset), else null
 */
export function allocateRowJob(
  req: RowRequest, slabs: TensorMemory, maxTasks: number, wasm: WasmKernels, prefix: Buffer | null, answerPhase: number | null,
  source: SlabSource = slabs, yAt: number | null = null,
): Job {
  const size = req.input.size;
  const valueType = valueStorage(req.input.dtype);
  const valueBytes = DTYPES[valueType].itemsize;
  const paramLength = paramLengthOf(req);
  const statLength = req.rows;
  const hasMean = req.stats.includes('mean');
  const hasRstd = req.stats.includes('rstd');
  const useWasm = usesSimd(req, paramLength);
  const halfOutput = isHalf(req.outDtype);
  if (yAt !== null && !(useWasm && !halfOutput)) throw new Error('allocateRowJob: only the SIMD kernels write an output at any offset');
  // no weight and no bias: the same parameters as every such request of this row length, kept once
  const kept = useWasm && req.weight === null && req.bias === null ? constParams(slabs, wasm, req.weightOffset + 1, paramLength) : null;
  // with a residual, the JS add reads the input through a Float32Array, which needs alignment
  const inputPlace = placement(req.input, valueType, useWasm && req.residual === null);
  const residualPlace = req.residual === null ? null : placement(req.residual, valueType, false);

  // sizes first (in the order of PLAN), then one slab
  const laid = openJobSlab(source, [
    4 * maxTasks,
    useWasm && kept === null ? preparedBytes(paramLength) : 0,
    useWasm && halfOutput ? 4 * size : 0,
    kept === null ? 8 * paramLength : 0,
    req.bias === null ? 0 : 8 * paramLength,
    hasMean ? 4 * statLength : 0,
    hasRstd ? 4 * statLength : 0,
    'inPlace' in inputPlace ? 0 : valueBytes * size,
    residualPlace === null || 'inPlace' in residualPlace ? 0 : valueBytes * size,
  ], prefix, size, size * DTYPES[req.outDtype].itemsize, useWasm && !halfOutput ? answerPhase : null, yAt);
  const { slab, y, direct } = laid;
  const { memory } = slab;
  const region = (i: number, length: number) => regionOf(laid, i, length);
  const [x, xSource] = placeValues(inputPlace, () => region(PLAN.x, size), valueType);
  const [residual, residualSource] = residualPlace === null ? [null, null] : placeValues(residualPlace, () => region(PLAN.residual, size), valueType);

  const scale = kept?.scale ?? region(PLAN.scale, paramLength);
  const bias = req.bias === null ? null : region(PLAN.bias, paramLength);
  const prepared = kept?.prepared ?? (useWasm ? laid.offsets[PLAN.prepared] : null);
  if (paramLength > 0 && kept === null) {
    if (bias !== null && req.bias !== null) writeValues(req.bias, new Float64Array(memory, bias.byteOffset, bias.length));
    if (req.weight === null && prepared !== null) {
      // no weight: the kernels write g = weight_offset + 1 and its float32 copies in one pass
      wasm.prepareConstF32(req.weightOffset + 1, scale.byteOffset, bias?.byteOffset ?? null, paramLength, prepared);
    } else {
      const scaleView = new Float64Array(memory, scale.byteOffset, scale.length);
      if (req.weight === null) {
        scaleView.fill(req.weightOffset + 1);
      } else {
        writeValues(req.weight, scaleView);
        // g = weight_offset + γ, once here in float64 instead of in every row
        if (req.weightOffset !== 0) for (let i = 0; i < scaleView.length; i++) scaleView[i] += req.weightOffset;
      }
      if (prepared !== null) wasm.prepareF32(scale.byteOffset, bias?.byteOffset ?? null, paramLength, prepared);
    }
  }

  const mean = hasMean ? region(PLAN.mean, statLength) : null;
  const rstd = hasRstd ? region(PLAN.rstd, statLength) : null;
  const task: RowTask = {
    kind: 'rows',
    params: req.params, n: req.n,
    rowStart: 0, rowEnd: req.rows,
    inputDtype: req.input.dtype, outDtype: req.outDtype,
    eps: req.eps, epsOutside: req.epsOutside,
    x, xSource, residual, residualSource, y, scale, bias, mean, rstd,
    cancel: region(PLAN.cancel, maxTasks),
    slot: 0,
    prepared,
    wide: useWasm && halfOutput ? region(PLAN.wide, size) : null,
    fault: null,
  };
  const tensors: Record<string, TensorOut> = { output: tensorAt(y, req.outDtype, req.input.shape, outputStorage(req.outDtype)) };
  if (residual !== null) tensors.residual = tensorAt(residual, req.input.dtype, req.input.shape, valueType);
  if (mean !== null) tensors.mean = tensorAt(mean, 'float32', req.statShape, 'float32');
  if (rstd !== null) tensors.rstd = tensorAt(rstd, 'float32', req.statShape, 'float32');
  return {
    request: req,
    slab,
    phases: [{ task, units: req.rows, elementsPerUnit: req.n, cost: prepared !== null ? COST.simd : COST.js }],
    afterPhase: null,
    outputs: producedOutputs(req).map((name) => [name, tensors[name]]),
    direct,
  };
}
