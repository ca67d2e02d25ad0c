// phase two: lay out one tensor's inputs and outputs in a SharedArrayBuffer and copy
// the request's values in (the only copy of tensor bytes before the response).
import { valueStorage } from '../codec/dtype.js';
import { writeValues } from '../codec/read-tensor.js';
import type { NormTask, Region } from '../pool/protocol.js';
import type { CheckedRequest } from './check-request.js';

export interface Job {
  request: CheckedRequest;
  /** rows [0, rows) of this template are what runJob splits into tasks */
  task: NormTask;
}

const ALIGN = 8; // every region starts where a Float64Array may

function bytesOf(dtype: string, length: number): number {
  return length * (dtype === 'float64' ? 8 : dtype === 'float32' ? 4 : 2);
}

export function allocateJob(req: CheckedRequest): Job {
  const size = req.input.size;
  const valueType = valueStorage(req.input.dtype);
  const statLength = req.returnStats ? req.rows : 0;
  // a zero-row tensor computes nothing: its row length may be any size, so scale/bias stay empty
  const paramLength = req.rows === 0 ? 0 : req.n;

  let cursor = 0;
  const take = (byteLength: number, length: number): Region => {
    const region = { byteOffset: cursor, length };
    cursor += Math.ceil(byteLength / ALIGN) * ALIGN;
    return region;
  };
  const x = take(bytesOf(valueType, size), size);
  const residual = req.residual === null ? null : take(bytesOf(valueType, size), size);
  const y = take(bytesOf(req.outDtype, size), size);
  const scale = take(8 * paramLength, paramLength);
  const bias = req.bias === null ? null : take(8 * paramLength, paramLength);
  const mean = req.returnStats && req.op === 'layernorm' ? take(4 * statLength, statLength) : null;
  const rstd = req.returnStats ? take(4 * statLength, statLength) : null;

  const memory = new SharedArrayBuffer(cursor);
  const values = (region: Region) => valueType === 'float64'
    ? new Float64Array(memory, region.byteOffset, region.length)
    : new Float32Array(memory, region.byteOffset, region.length);
  writeValues(req.input, values(x));
  if (residual !== null && req.residual !== null) writeValues(req.residual, values(residual));
  const scaleView = new Float64Array(memory, scale.byteOffset, scale.length);
  if (paramLength > 0) {
    if (req.weight === null) {
      scaleView.fill(req.weightOffset + 1);
    } else {
      writeValues(req.weight, scaleView);
      // g = weight_offset + γ, once here in float64 instead of in every row
      if (req.weightOffset !== 0) for (let i = 0; i < scaleView.length; i++) scaleView[i] += req.weightOffset;
    }
    if (bias !== null && req.bias !== null) writeValues(req.bias, new Float64Array(memory, bias.byteOffset, bias.length));
  }

  return {
    request: req,
    task: {
      op: req.op, memory, n: req.n, rowStart: 0, rowEnd: req.rows,
      inputDtype: req.input.dtype, outDtype: req.outDtype,
      eps: req.eps, epsOutside: req.epsOutside,
      x, residual, y, scale, bias, mean, rstd, fault: null,
    },
  };
}
