// the answer's framing, in one place: finished jobs → the §2 response body in the negotiated encoding.
// An answer that is just `{output}` in msgpack's ordinary form goes out straight from the slab (its
// header written before the output when the job is allocated); anything else is packed here.
import { Packr } from 'msgpackr/pack';
import { DTYPES, valueStorage } from '../codec/dtype.js';
import { outputPrefix } from '../codec/msgpack-prefix.js';
import { encodeTensor, type Encoding, type TensorOut } from '../codec/write-tensor.js';
import type { Region } from '../pool/protocol.js';
import type { Job } from './allocate.js';
import type { CheckedRequest } from './checked-request.js';

// byte views of shared memory pack as bin; records off so any msgpack reader decodes plain maps
const packr = new Packr({ useRecords: false });

/** the msgpack bytes before the output when the answer can be sent straight from memory, else null */
export function directPrefix(req: CheckedRequest, encoding: Encoding, batch: boolean): Buffer | null {
  if (batch || encoding !== 'msgpack' || req.numpyForm || req.residual !== null || req.stats.length > 0) return null;
  return outputPrefix(req.outDtype, req.input.shape, req.input.size * DTYPES[req.outDtype].itemsize);
}

/** one body for the jobs: `{results: […]}` for a batch, else the one job's fields */
export function encodeResponse(jobs: Job[], encoding: Encoding, batch: boolean): Buffer | string {
  const direct = batch ? null : jobs[0].direct;
  if (direct !== null) return Buffer.from(jobs[0].slab.memory, direct.start, direct.length);
  const results = jobs.map((job) => resultFields(job, encoding));
  const body = batch ? { results } : results[0];
  return encoding === 'msgpack' ? packr.pack(body) : JSON.stringify(body);
}

function resultFields(job: Job, encoding: Encoding): Record<string, unknown> {
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
  for (const stat of req.stats) {
    const region = stat === 'mean' ? task.mean! : task.rstd!;
    body[stat] = encodeTensor({ dtype: 'float32', shape: statShape, storage: 'float32', ...at(region) }, encoding, numpy);
  }
  return body;
}
