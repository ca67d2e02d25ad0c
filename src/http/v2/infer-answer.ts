// an OIP inference answer (OIP.md): JSON with flat data lists (bare NaN / Infinity tokens), or, when
// any output is binary, the JSON header then those outputs' bytes. When the one output is `output`
// and binary, the header is written into the slab right before it and the answer goes out from there.
import { DTYPES, type Dtype } from '../../codec/dtype.js';
import { KeptHeaders } from '../../codec/kept-headers.js';
import { tensorBytes, type TensorOut } from '../../codec/write-tensor.js';
import type { AnswerPart } from '../../jobs/answer-text.js';
import { serviceError } from '../../errors.js';
import { producedOutputs, type CheckedRequest } from '../../jobs/checked-request.js';
import { directBytes, type Job } from '../../jobs/job.js';
import { product } from '../../ops/tensor-checks.js';
import type { AnswerFormat } from '../../jobs/pipeline.js';
import { DATATYPE_OF } from './datatypes.js';
import type { InferRequest } from './infer-request.js';
import { MODEL_VERSION } from './models.js';

export interface OipAnswer {
  format: AnswerFormat;
  /** once encoded: how many bytes of binary outputs end the answer (what precedes them is its JSON
   *  header), or null when the answer is JSON alone */
  binaryBytes: number | null;
}

interface Chosen { name: string; binary: boolean }

/** the outputs to answer with: those asked for (each must be produced), else all produced */
export function chooseOutputs(request: InferRequest, produced: string[]): Chosen[] {
  if (request.outputs === null) return produced.map((name) => ({ name, binary: request.binaryDefault }));
  return request.outputs.map(({ name, binary }, i) => {
    if (!produced.includes(name)) throw serviceError('fieldInvalid', `outputs[${i}].name`, `this request produces no ${name} (it produces ${produced.join(', ')})`);
    return { name, binary: binary ?? request.binaryDefault };
  });
}

/** the answer's JSON up to its first output */
function envelopeHead(modelName: string, request: InferRequest): string {
  const head = JSON.stringify({ model_name: modelName, model_version: MODEL_VERSION, ...(request.id === undefined ? {} : { id: request.id }) });
  return `${head.slice(0, -1)},"outputs":[`;
}

/** a binary output's JSON: where its bytes are, not what they are */
function binaryOutputJson(name: string, dtype: Dtype, shape: number[]): string {
  const bytes = product(shape) * DTYPES[dtype].itemsize;
  return JSON.stringify({ name, datatype: DATATYPE_OF[dtype], shape, parameters: { binary_data_size: bytes } });
}

/** one output's JSON: its data inline (bare NaN / Infinity / -Infinity, as OIP writes them) or its binary size */
function outputParts(name: string, t: TensorOut, binary: boolean): AnswerPart[] {
  if (binary) return [binaryOutputJson(name, t.dtype, t.shape)];
  const meta = JSON.stringify({ name, datatype: DATATYPE_OF[t.dtype], shape: t.shape });
  return [`${meta.slice(0, -1)},"data":[`, { numbers: t, nonFinite: 'bare' }, ']}'];
}

// the header of an answer whose one binary output goes out from the slab, per model, dtype and shape
// (not kept when the request has an id: the answer repeats it)
const directHeaders = new KeptHeaders();

function directHeader(modelName: string, request: InferRequest, dtype: Dtype, shape: number[]): Buffer {
  const make = () => Buffer.from(`${envelopeHead(modelName, request)}${binaryOutputJson('output', dtype, shape)}]}`);
  return request.id === undefined ? directHeaders.getShaped(modelName, dtype, shape, make) : make();
}

export function oipAnswer(modelName: string, request: InferRequest): OipAnswer {
  let chosen: Chosen[] = [];
  const answer: OipAnswer = {
    binaryBytes: null,
    format: {
      prefix(req: CheckedRequest) {
        chosen = chooseOutputs(request, producedOutputs(req));
        if (chosen.length !== 1 || chosen[0].name !== 'output' || !chosen[0].binary) return null;
        answer.binaryBytes = req.input.size * DTYPES[req.outDtype].itemsize;
        return directHeader(modelName, request, req.outDtype, req.input.shape);
      },
      encode(jobs: Job[]) {
        const job = jobs[0];
        if (job.direct !== null) return directBytes(job);
        const tensors = new Map(job.outputs);
        const parts: AnswerPart[] = [envelopeHead(modelName, request)];
        chosen.forEach(({ name, binary }, i) => parts.push(...(i > 0 ? [','] : []), ...outputParts(name, tensors.get(name)!, binary)));
        parts.push(']}');
        const binary = chosen.filter((c) => c.binary).map(({ name }) => tensorBytes(tensors.get(name)!));
        answer.binaryBytes = binary.length === 0 ? null : binary.reduce((sum, bytes) => sum + bytes.length, 0);
        return [...parts, ...binary];
      },
    },
  };
  return answer;
}
