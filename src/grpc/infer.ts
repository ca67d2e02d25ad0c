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
import { placeInputs, readGrpcInferRequest, type ModelInferRequest, type ReadInfer } from './infer-request.js';
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
  const call = new InferCall(ctx, message);
  try {
    return call.run();
  } catch (err) {
    return call.fail(err);
  }
}

/**
 * one request's way through the engine, its answer's format (the pipeline's AnswerFormat) and, once
 * answered, the answer itself: one object a request, not a closure for each step (a unary call's
 * allocations are what its garbage collection costs)
 */
class InferCall implements AnswerFormat, InferAnswer {
  // grpc-js copies each message after its 5-byte frame header
  readonly answerPhase = 5;
  response: Buffer = EMPTY;
  timings: Timings = NO_TIMINGS;
  private readonly lease: Lease;
  private shapes: Readonly<Record<string, number[]>> = NO_SHAPES;
  private options: readonly string[] = NO_NAMES;
  private admitted: Admitted | null = null;
  private read: ReadInfer | null = null;
  private chosen: readonly string[] = NO_NAMES;
  private decodeMs = 0;
  private released = false;

  constructor(private readonly ctx: InferContext, private readonly message: ModelInferRequest) {
    this.lease = new Lease(ctx.engine.slabs);
  }

  run(): InferAnswer | Promise<InferAnswer> {
    const { ctx, message } = this;
    const { engine } = ctx;
    const started = performance.now();
    if (message.malformed !== undefined) throw serviceError('bodyInvalid', `not a ModelInferRequest (${message.malformed})`);
    const model = modelFor(message.model_name, message.model_version === '' ? undefined : message.model_version);
    this.options = model.parameters;
    const read = readGrpcInferRequest(model, message);
    this.read = read;
    this.shapes = read.infer.shapes;
    const validate = ctx.validators[model.op];
    if (!validate(read.infer.body)) throw validationError(validate.errors as AjvError[]);
    const admitted = engine.admission.admit(ctx.timeoutMs);
    this.admitted = admitted;
    admitted.startWork();
    if (read.infer.timeoutMs !== null) admitted.cancellation.shortenTo(read.infer.timeoutMs);
    placeInputs(read, engine.slabs, this.lease);
    this.decodeMs = performance.now() - started;
    const result = engine.run({
      items: [{ op: model.op, body: read.infer.body, path: '' }],
      fromJson: false,
      answer: this,
      lease: this.lease,
      cancellation: admitted.cancellation,
      fault: ctx.fault,
    });
    if (!(result instanceof Promise)) return this.answered(result);
    ctx.admitted(admitted);
    return result.then((done) => this.answered(done), (err) => this.fail(err));
  }

  prefix(req: CheckedRequest): Buffer | null {
    this.chosen = chooseOutputs(this.read!.infer, producedOutputs(req)).map(({ name }) => name);
    if (this.chosen.length !== 1 || this.chosen[0] !== 'output') return null;
    // the one output's bytes are the end of the message: its fields go right before them. Kept per
    // model, dtype, shape and framing (not with an id: the answer repeats it)
    const { message, ctx } = this;
    if (message.id !== '') return responsePrefix(message, req, ctx.stream);
    return keptPrefixes[ctx.stream ? 'stream' : 'unary'].getShaped(message.model_name, req.outDtype, req.input.shape, () => responsePrefix(message, req, ctx.stream));
  }

  // the message straight from the slab when it is laid out there, else written whole
  encode(jobs: Job[]): Buffer {
    return jobs[0].direct !== null ? directBytes(jobs[0]) : encodeAnswer(this.message, jobs[0], this.chosen, this.ctx.stream);
  }

  /** the request's memory and work slot go back, once (a stream may call this again as it stops) */
  readonly release = (): void => {
    if (this.released) return;
    this.released = true;
    this.admitted!.end(true);
    this.lease.release();
  };

  private answered({ payload, timings }: PipelineResult): InferAnswer {
    timings.decode += this.decodeMs; // the message's decode counts too (the pipeline made this object)
    this.response = payload as Buffer;
    this.timings = timings;
    return this;
  }

  fail(err: unknown): never {
    this.admitted?.end(false);
    this.lease.release();
    throw failure(err, this.shapes, this.options, this.message.id);
  }
}

// what a call holds until its request has been read: shared, never written
const EMPTY = Buffer.alloc(0);
const NO_TIMINGS: Timings = Object.freeze({ decode: 0, queue: 0, compute: 0, encode: 0 });
const NO_SHAPES: Readonly<Record<string, number[]>> = Object.freeze({});
const NO_NAMES: readonly string[] = Object.freeze([]);

function responsePrefix(message: ModelInferRequest, req: CheckedRequest, stream: boolean): Buffer {
  const output = { name: 'output', datatype: DATATYPE_OF[req.outDtype], shape: req.input.shape, byteLength: req.input.size * DTYPES[req.outDtype].itemsize };
  return encodeResponsePrefix(message.model_name, MODEL_VERSION, message.id, output, stream);
}

function encodeAnswer(message: ModelInferRequest, job: Job, chosen: readonly string[], stream: boolean): Buffer {
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

function failure(err: unknown, shapes: Readonly<Record<string, number[]>>, options: readonly string[], id: string): InferFailure {
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
