// /v1's answers: finished jobs → the §2 response body, `{results: […]}` for a batch, in the negotiated encoding.
// An answer that is just `{output}` in msgpack's ordinary form goes out straight from the slab (its
// header written before the output when the job is allocated); anything else is packed here.
import { Packr } from 'msgpackr/pack';
import { DTYPES } from '../../codec/dtype.js';
import { outputPrefix } from '../../codec/msgpack-prefix.js';
import { encodeTensor, type Encoding } from '../../codec/write-tensor.js';
import type { AnswerPart } from '../../jobs/answer-text.js';
import type { CheckedRequest } from '../../jobs/checked-request.js';
import { directBytes, type Job } from '../../jobs/job.js';
import type { AnswerFormat } from '../../jobs/pipeline.js';

// byte views of shared memory pack as bin; records off so any msgpack reader decodes plain maps
const packr = new Packr({ useRecords: false });

export function v1Answer(encoding: Encoding, batch: boolean): AnswerFormat {
  return { prefix: (req) => directPrefix(req, encoding, batch), encode: (jobs) => encodeResponse(jobs, encoding, batch) };
}

/** the msgpack bytes before the output when the answer can be sent straight from memory, else null */
function directPrefix(req: CheckedRequest, encoding: Encoding, batch: boolean): Buffer | null {
  if (batch || encoding !== 'msgpack' || req.numpyForm || req.stats.length > 0) return null;
  if (req.layout === 'rows' ? req.residual !== null : req.training && req.runningMean !== null) return null;
  return outputPrefix(req.outDtype, req.input.shape, req.input.size * DTYPES[req.outDtype].itemsize);
}

/** one body for the jobs: `{results: […]}` for a batch, else the one job's fields */
function encodeResponse(jobs: Job[], encoding: Encoding, batch: boolean): Buffer | AnswerPart[] {
  if (!batch && jobs[0].direct !== null) return directBytes(jobs[0]);
  if (encoding === 'json') return jsonParts(jobs, batch);
  const results = jobs.map((job) => Object.fromEntries(job.outputs.map(([name, t]) => [name, encodeTensor(t, job.request.numpyForm)])));
  return packr.pack(batch ? { results } : results[0]);
}

/** the JSON.stringify of the same body, its numbers left for writeAnswerText (non-finite ones as strings) */
function jsonParts(jobs: Job[], batch: boolean): AnswerPart[] {
  const parts: AnswerPart[] = [batch ? '{"results":[' : ''];
  jobs.forEach((job, j) => {
    parts.push(j > 0 ? ',{' : '{');
    job.outputs.forEach(([name, t], i) => {
      const head = JSON.stringify({ dtype: t.dtype, shape: t.shape });
      parts.push(`${i > 0 ? ',' : ''}${JSON.stringify(name)}:${head.slice(0, -1)},"data":[`, { numbers: t, nonFinite: 'quoted' }, ']}');
    });
    parts.push('}');
  });
  if (batch) parts.push(']}');
  return parts;
}
