// a finished job → its §2 response: the fields for encoding, or the msgpack bytes already in place.
import { valueStorage } from '../codec/dtype.js';
import { encodeTensor, type Encoding, type TensorOut } from '../codec/write-tensor.js';
import type { Region } from '../pool/protocol.js';
import type { Job } from './allocate.js';

/** the whole msgpack answer when it is just `{output}` in the ordinary form: a view, no packing */
export function packedResponse(job: Job): Buffer | null {
  const { request: req, task } = job;
  if (req.numpyForm || task.residual !== null || task.mean !== null || task.rstd !== null) return null;
  return Buffer.from(job.slab.memory, job.packed.start, job.packed.length);
}

export function jobResponse(job: Job, encoding: Encoding): Record<string, unknown> {
  const { request: req, task } = job;
  const numpy = req.numpyForm;
  const at = (region: Region) => ({ memory: region.memory, byteOffset: region.byteOffset, length: region.length });
  const outStorage = req.outDtype === 'float16' || req.outDtype === 'bfloat16' ? 'bits' : req.outDtype;
  const output: TensorOut = { dtype: req.outDtype, shape: req.input.shape, storage: outStorage, ...at(task.y) };
  const body: Record<string, unknown> = { output: encodeTensor(output, encoding, numpy) };
  if (task.residual !== null) {
    const h: TensorOut = { dtype: req.input.dtype, shape: req.input.shape, storage: valueStorage(req.input.dtype), ...at(task.residual) };
    body.residual = encodeTensor(h, encoding, numpy);
  }
  const statShape = req.rowShape.length === 0 ? [1] : req.rowShape;
  if (task.mean !== null) {
    body.mean = encodeTensor({ dtype: 'float32', shape: statShape, storage: 'float32', ...at(task.mean) }, encoding, numpy);
  }
  if (task.rstd !== null) {
    body.rstd = encodeTensor({ dtype: 'float32', shape: statShape, storage: 'float32', ...at(task.rstd) }, encoding, numpy);
  }
  return body;
}
