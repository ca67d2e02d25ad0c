// one ModelInferRequest through the engine (OIP.md "Inference (ModelInfer)"), for a unary call and for
// each request of a stream alike: model → the message's checks → admission → its inputs into shared
// memory → the pipeline → the answer encoded as a ModelInferResponse while its slabs are still held.
import type { ValidateFunction } from 'ajv';
import type { Admitted } from '../engine/admission.js';
import type { Engine } from '../engine/engine.js';
import { isServiceError, serviceError } from '../errors.js';
import { validationError, type AjvError } from '../http/error-handler.js';
import { DATATYPE_OF } from '../http/v2/datatypes.js';
import { chooseOutputs } from '../http/v2/infer-answer.js';
import { MODEL_VERSION, modelFor } from '../http/v2/models.js';
import { DTYPES } from '../codec/dtype.js';
import { KeptHeaders } from '../codec/kept-headers.js';
import { tensorBytes } from '../codec/write-tensor.js';
import { producedOutputs, type CheckedRequest } from '../jobs/checked-request.js';
import { directBytes, type Job } from '../jobs/job.js';
import type { AnswerFormat, PipelineResult, Timings } from '../jobs/pipeline.js';
import { Lease } from '../memory/lease.js';
import type { OpName } from '../ops/registry.js';
import type { TaskFault } from '../pool/protocol.js';
import { encodeInferResponse, encodeResponsePrefix } from './infer-codec.js';
import { placeInputs, readGrpcInferRequest, type ModelInferRequest } from './infer-request.js';
import { grpcStatus, type GrpcStatus } from './status.js';

/** answers' protobuf prefixes, unary and stream-framed: the same few shapes come again and again */
const keptPrefixes = { unary: new KeptHeaders(), stream: new KeptHeaders() };

export interface InferAnswer {
  /** the encoded ModelInferResponse (framed as a ModelStreamInferResponse on a stream); often a view
   *  of the request's shared memory, valid until `release` */
  response: Buffer;
  /** for REST's Server-Timing value, sent as a unary call's `server-timing` trailer */
  timings: Timings;
  /** once grpc-js has the bytes (it copies them into its frame as it sends): the request's memory and
   *  work slot are given back */
  release(): void;
}

/** a failed request: its gRPC status, and its id (a stream answers failures in place, with the id) */
export class InferFailure extends Error {
  constructor(readonly status: GrpcStatus, readonly id: string) {
    super(status.details);
  }
}

export interface InferContext {
  engine: Engine;
  validators: Record<OpName, ValidateFunction>;
  /** the deadline's timeout in ms from now: the call's or stream request's, at most REQUEST_TIMEOUT_MS */
  timeoutMs: number;
  fault: TaskFault | null;
  /** the answer goes on a stream: framed as a ModelStreamInferResponse */
  stream: boolean;
  /** called with the request's admission when its answer is to come later (its work waits for the pool):
   *  the caller ends it if the call goes away. An answer computed inline has nothing left to drop, and
   *  a listener for that costs: grpc-js emits 'cancelled' at the end of every unary call */
  admitted(admitted: Admitted): void;
}

/** `message`'s answer: at once when the pipeline ran here and now (no promise, no microtask), else a
 *  promise of it; throws (or rejects with) an InferFailure. A failure gives everything back at once, an
 *  answer when the caller calls its `release`. */
export function infer(ctx: InferContext, message: ModelInferRequest): InferAnswer | Promise<InferAnswer> {
  const { engine } = ctx;
  const lease = new Lease(engine.slabs);
  let shapes: Record<string, number[]> = {};
  let options: readonly string[] = [];
  let admitted: Admitted | null = null;
  const failed = (err: unknown): never => {
    admitted?.end(false);
    lease.release();
    throw failure(err, shapes, options, message.id);
  };
  try {
    const started = performance.now();
    if (message.malformed !== undefined) throw serviceError('bodyInvalid', `not a ModelInferRequest (${message.malformed})`);
    const model = modelFor(message.model_name, message.model_version === '' ? undefined : message.model_version);
    options = model.parameters;
    const read = readGrpcInferRequest(model, message);
    shapes = read.infer.shapes;
    const validate = ctx.validators[model.op];
    if (!validate(read.infer.body)) throw validationError(validate.errors as AjvError[]);
    admitted = engine.admission.admit(ctx.timeoutMs);
    admitted.startWork();
    if (read.infer.timeoutMs !== null) admitted.cancellation.shortenTo(read.infer.timeoutMs);
    placeInputs(read, engine.slabs, lease);
    let chosen: string[] = [];
    const format: AnswerFormat = {
      prefix(req: CheckedRequest) {
        chosen = chooseOutputs(read.infer, producedOutputs(req)).map(({ name }) => name);
        if (chosen.length !== 1 || chosen[0] !== 'output') return null;
        // the one output's bytes are the end of the message: its fields go right before them
        const make = () => {
          const output = { name: 'output', datatype: DATATYPE_OF[req.outDtype], shape: req.input.shape, byteLength: req.input.size * DTYPES[req.outDtype].itemsize };
          return encodeResponsePrefix(message.model_name, MODEL_VERSION, message.id, output, ctx.stream);
        };
        // kept per model, dtype, shape and framing (not with an id: the answer repeats it)
        if (message.id !== '') return make();
        return keptPrefixes[ctx.stream ? 'stream' : 'unary'].getShaped(message.model_name, req.outDtype, req.input.shape, make);
      },
      // grpc-js copies each message after its 5-byte frame header
      answerPhase: 5,
      // the message straight from the slab when it is laid out there, else written whole
      encode: (jobs: Job[]) => (jobs[0].direct !== null ? directBytes(jobs[0]) : encodeAnswer(message, jobs[0], chosen, ctx.stream)),
    };
    const decodeMs = performance.now() - started;
    const result = engine.run({
      items: [{ op: model.op, body: read.infer.body, path: '' }],
      fromJson: false,
      answer: format,
      lease,
      cancellation: admitted.cancellation,
      fault: ctx.fault,
    });
    const done = admitted;
    const answered = ({ payload, timings }: PipelineResult): InferAnswer => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        done.end(true);
        lease.release();
      };
      timings.decode += decodeMs; // the message's decode counts too (the pipeline made this object)
      return { response: payload as Buffer, timings, release };
    };
    if (!(result instanceof Promise)) return answered(result);
    ctx.admitted(done);
    return result.then(answered, failed);
  } catch (err) {
    return failed(err);
  }
}

function encodeAnswer(message: ModelInferRequest, job: Job, chosen: string[], stream: boolean): Buffer {
  const tensors = new Map(job.outputs);
  const outputs = chosen.map((name) => {
    const t = tensors.get(name)!;
    return { name, datatype: DATATYPE_OF[t.dtype], shape: t.shape, bytes: tensorBytes(t) };
  });
  return encodeInferResponse(message.model_name, MODEL_VERSION, message.id, outputs, stream);
}

/** the operation's checks name an option by itself (`eps: must be >= 0`); a gRPC request sent it as a
 *  parameter, so the message says `parameters.eps` */
const PARAMETER_AT_START = /^(\w+)(?=[:.])/;

function failure(err: unknown, shapes: Record<string, number[]>, options: readonly string[], id: string): InferFailure {
  if (isServiceError(err)) {
    const status = grpcStatus(err, shapes);
    const option = PARAMETER_AT_START.exec(status.details)?.[1];
    if (option !== undefined && options.includes(option)) status.details = `parameters.${status.details}`;
    return new InferFailure(status, id);
  }
  const failed = new InferFailure(grpcStatus(serviceError('internal')), id);
  failed.cause = err; // for the log
  return failed;
}
