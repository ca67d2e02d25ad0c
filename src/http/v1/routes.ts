// POST /v1/rmsnorm, /v1/layernorm and /v1/batch.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Packr } from 'msgpackr/pack';
import type { Config } from '../../config.js';
import { DTYPES } from '../../codec/dtype.js';
import type { Encoding } from '../../codec/write-tensor.js';
import { serviceError } from '../../errors.js';
import type { Metrics } from '../../metrics.js';
import { allocateJob, type Job } from '../../jobs/allocate.js';
import { checkRequest, type CheckedRequest, type NormBody } from '../../jobs/check.js';
import { jobResponse, packedResponse } from '../../jobs/response.js';
import { runJobs, type RunContext } from '../../jobs/run.js';
import { TaskAborted, type NormPool } from '../../pool/pool.js';
import type { NormOp, TaskFault } from '../../pool/protocol.js';
import type { SlabPool } from '../../memory/slab-pool.js';
import type { WasmKernels } from '../../kernels/wasm-kernels.js';
import { createAdmissionHook, type ServiceState } from '../guards.js';
import { encodingOf, essence, negotiate } from '../media-types.js';
import { batchRouteDoc, normRouteDoc } from '../openapi/response-schemas.js';
import { batchBodySchema, normBodySchema } from './schemas.js';

// byte views of shared memory pack as bin; records off so any msgpack reader decodes plain maps
const packr = new Packr({ useRecords: false });

interface Negotiated { requestEncoding: Encoding; responseType: string; responseEncoding: Encoding }

declare module 'fastify' {
  interface FastifyRequest {
    negotiated: Negotiated;
  }
}

/** 415 and 406 come from the headers alone, before the body is read */
function checkMediaTypes(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const requestType = essence(request.headers['content-type']);
  const requestEncoding = encodingOf(requestType);
  if (requestType === undefined || requestEncoding === undefined) {
    return done(serviceError('NORM_ERR_MEDIA_TYPE', `Content-Type: ${requestType ?? 'missing'}; send application/json or application/msgpack`));
  }
  const responseType = negotiate(request.headers.accept, requestType);
  if (responseType === undefined) {
    return done(serviceError('NORM_ERR_NOT_ACCEPTABLE', 'Accept: allows neither application/json nor application/msgpack'));
  }
  request.negotiated = { requestEncoding, responseType, responseEncoding: encodingOf(responseType)! };
  done();
}

function checkTimeoutHeader(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  done(request.timeoutHeaderError ?? undefined);
}

interface Timings { decode: number; queue: number; compute: number; encode: number }

function serverTiming(t: Timings): string {
  return `decode;dur=${t.decode.toFixed(3)}, queue;dur=${t.queue.toFixed(3)}, compute;dur=${t.compute.toFixed(3)}, encode;dur=${t.encode.toFixed(3)}`;
}

function testFault(request: FastifyRequest): TaskFault | null {
  const header = request.headers['x-test-fault'];
  if (header === 'crash-worker') return { kind: 'crash' };
  const sleep = typeof header === 'string' ? /^sleep-(\d+)$/.exec(header) : null;
  return sleep ? { kind: 'sleep', ms: Number(sleep[1]) } : null;
}

function encodeBody(jobs: Job[], encoding: Encoding, batch: boolean): Buffer | string {
  const results = jobs.map((job) => jobResponse(job, encoding));
  const body = batch ? { results } : results[0];
  return encoding === 'msgpack' ? packr.pack(body) : JSON.stringify(body);
}

export interface RouteDeps {
  pool: NormPool;
  config: Readonly<Config>;
  metrics: Metrics;
  state: ServiceState;
  slabs: SlabPool;
  wasm: WasmKernels;
}

export function registerRoutes(app: FastifyInstance, { pool, config, metrics, state, slabs, wasm }: RouteDeps): void {
  app.decorateRequest('negotiated', null as unknown as Negotiated);
  app.decorateRequest('deadline', null as unknown as FastifyRequest['deadline']);
  app.decorateRequest('timeoutHeaderError', null);
  const admit = createAdmissionHook(config, state);

  /** checks every item, then allocates and computes them all, then encodes one body */
  async function respond(request: FastifyRequest, reply: FastifyReply, items: [NormOp, NormBody, string][], batch: boolean) {
    const started = performance.now();
    const { requestEncoding, responseType, responseEncoding } = request.negotiated;
    const checked: CheckedRequest[] = items.map(([op, body, prefix]) => checkRequest(op, body, prefix, requestEncoding === 'json'));
    const jobs: Job[] = checked.map((req) => allocateJob(req, slabs, pool.workers, wasm));
    const ctx: RunContext = {
      pool, metrics, wasm, limits: config, deadline: request.deadline,
      fault: config.faultInjection ? testFault(request) : null,
    };
    const runStarted = performance.now();
    // given back once the response is written (it may be a view of them)
    request.slabs.push(...jobs.map((job) => job.slab));
    const run = runJobs(jobs, ctx);
    let timings;
    try {
      timings = await run.result;
    } catch (err) {
      if (!(err instanceof TaskAborted)) throw err;
      // answered now, but a task may still be reading or writing these slabs (body included):
      // they go back only when every task has settled
      const held = request.slabs.splice(0);
      void run.settled.then(() => held.forEach((slab) => slabs.release(slab)));
      throw serviceError('NORM_ERR_DEADLINE', 'the request deadline passed before its result was ready');
    }
    const runMs = performance.now() - runStarted;
    for (const req of checked) {
      metrics.rows.inc({ op: req.op, dtype: req.input.dtype }, req.rows);
      metrics.bytes.inc({ op: req.op, dtype: req.input.dtype }, req.input.size * DTYPES[req.input.dtype].itemsize);
    }
    const queue = Math.max(0, ...timings.map((t) => t.queueMs));
    const encodeStarted = performance.now();
    const packed = !batch && responseEncoding === 'msgpack' ? packedResponse(jobs[0]) : null;
    const payload = packed ?? encodeBody(jobs, responseEncoding, batch);
    const encode = performance.now() - encodeStarted;
    reply.header('server-timing', serverTiming({
      decode: request.parseMs + (runStarted - started),
      queue,
      compute: Math.max(0, runMs - queue),
      encode,
    }));
    return reply.type(responseType).send(payload);
  }

  const hooks = { onRequest: [checkMediaTypes, admit], preValidation: checkTimeoutHeader };
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    app.post(`/v1/${op}`, { schema: { ...normRouteDoc(op), body: normBodySchema(op) }, ...hooks }, (request, reply) =>
      respond(request, reply, [[op, request.body as NormBody, '']], false));
  }

  app.post('/v1/batch', { schema: { ...batchRouteDoc(), body: batchBodySchema() }, ...hooks }, (request, reply) => {
    const { requests } = request.body as { requests: (NormBody & { op: NormOp })[] };
    return respond(request, reply, requests.map(({ op, ...body }, i) => [op, body, `requests[${i}].`]), true);
  });
}
