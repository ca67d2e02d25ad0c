// /v1's answers: finished jobs → the §2 response body, `{results: […]}` for a batch, in the negotiated encoding.
// An answer that is just `{output}` in msgpack's ordinary form goes out straight from the slab (its
// header written before the output when the job is allocated), and so does a batch of such answers
// whose outputs the SIMD kernels write (jobs/pipeline.ts lays them out one after the other); any
// other msgpack answer is its headers and the tensors' bytes, gathered into a slab (jobs/answer-bytes.ts).
import { DTYPES } from '../../codec/dtype.js';
import { arrayHeader, keyBytes, mapHeader, outputPrefix, tensorPrefix } from '../../codec/msgpack-prefix.js';
import { tensorPiece, type Encoding } from '../../codec/write-tensor.js';
import type { BytePiece, GatheredAnswer } from '../../jobs/answer-bytes.js';
import type { AnswerPart } from '../../jobs/answer-text.js';
import type { CheckedRequest } from '../../jobs/checked-request.js';
import { directBytes, type Job } from '../../jobs/job.js';
import type { AnswerFormat } from '../../jobs/pipeline.js';

const RESULTS = Buffer.concat([mapHeader(1), keyBytes('results')]);

/** one format per encoding, single and batch: made once, not per request */
const formats: Partial<Record<Encoding, [single: AnswerFormat, batch: AnswerFormat]>> = {};

export function v1Answer(encoding: Encoding, batch: boolean): AnswerFormat {
  const made = (formats[encoding] ??= [
    { prefix: (req) => directPrefix(req, encoding), encode: (jobs) => encodeResponse(jobs, encoding, false) },
    {
      prefix: (req) => directPrefix(req, encoding),
      batchHead: (count) => (encoding === 'msgpack' ? Buffer.concat([RESULTS, arrayHeader(count)]) : null),
      encode: (jobs) => encodeResponse(jobs, encoding, true),
    },
  ]);
  return made[batch ? 1 : 0];
}

/** the msgpack bytes before the output when the answer (a batch's item's, in a batch) can be sent
 *  straight from memory, else null */
function directPrefix(req: CheckedRequest, encoding: Encoding): Buffer | null {
  if (encoding !== 'msgpack' || req.numpyForm || req.stats.length > 0) return null;
  if (req.layout === 'rows' ? req.residual !== null : req.training && req.runningMean !== null) return null;
  return outputPrefix(req.outDtype, req.input.shape, req.input.size * DTYPES[req.outDtype].itemsize);
}

/** one body for the jobs: `{results: […]}` for a batch, else the one job's fields */
function encodeResponse(jobs: Job[], encoding: Encoding, batch: boolean): Buffer | GatheredAnswer | AnswerPart[] {
  if (!batch && jobs[0].direct !== null) return directBytes(jobs[0]);
  if (encoding === 'json') return jsonParts(jobs, batch);
  const pieces: BytePiece[] = batch ? [RESULTS, arrayHeader(jobs.length)] : [];
  for (const job of jobs) {
    pieces.push(mapHeader(job.outputs.length));
    for (const [name, t] of job.outputs) {
      const data = tensorPiece(t);
      pieces.push(keyBytes(name), tensorPrefix(t.dtype, t.shape, job.request.numpyForm, data.length), data);
    }
  }
  return { pieces };
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
