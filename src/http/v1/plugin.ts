// the /v1 dialect (API.md §2–§4) as a Fastify plugin registered under /v1: POST /v1/<op> for every
// operation of the table, and /v1/batch; its API keys, admission, body parsers and not-found answer.
// A thin adapter: media types and Accept from the headers, the body's items into the engine's
// pipeline, its answer out with Server-Timing.
import { sendPayload } from '../send-payload.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Encoding } from '../../codec/write-tensor.js';
import type { Engine } from '../../engine/engine.js';
import { serviceError, type ServiceError } from '../../errors.js';
import type { PipelineItem, PipelineResult } from '../../jobs/pipeline.js';
import { OP_NAMES, type OpName } from '../../ops/registry.js';
import { admissionHooks } from '../admission-hook.js';
import { authHook } from '../auth-hook.js';
import { registerBodyParsers } from '../body-parsers.js';
import { registerErrorReplies, serviceErrorBody } from '../error-handler.js';
import { encodingOf, essence, negotiate } from '../media-types.js';
import { KeptHeaders } from '../../codec/kept-headers.js';
import { serverTiming, testFault } from '../request-context.js';
import { v1Answer } from './answer.js';
import { batchRouteDoc, documentRoute, opRouteDoc } from './openapi.js';
import { batchBodySchema, opBodySchema } from './schemas.js';

interface Negotiated { requestEncoding: Encoding; responseType: string; responseEncoding: Encoding }

declare module 'fastify' {
  interface FastifyRequest {
    negotiated: Negotiated;
  }
}

/** the media types of a Content-Type and Accept pair, or the error they earn */
function negotiated(contentType: string | undefined, accept: string | undefined): Negotiated | 'mediaType' | 'notAcceptable' {
  const requestType = essence(contentType);
  const requestEncoding = encodingOf(requestType);
  if (requestType === undefined || requestEncoding === undefined) return 'mediaType';
  const responseType = negotiate(accept, requestType);
  if (responseType === undefined) return 'notAcceptable';
  return { requestEncoding, responseType, responseEncoding: encodingOf(responseType)! };
}

// a client sends the same pair on every request: parsed once (no header value holds \n or \0), and
// a repeat of the last pair found by comparing the two strings, with no key built
const keptNegotiations = new KeptHeaders<ReturnType<typeof negotiated>>();
let last: { contentType: string | undefined; accept: string | undefined; result: ReturnType<typeof negotiated> } | null = null;

/** 415 and 406 come from the headers alone, before the body is read; null when they pass */
function checkMediaTypes(request: FastifyRequest): ServiceError | null {
  const contentType = request.headers['content-type'];
  const accept = request.headers.accept;
  let result: ReturnType<typeof negotiated>;
  if (last !== null && last.contentType === contentType && last.accept === accept) result = last.result;
  // kept only for headers of a sane length: a hostile client's megabyte of Accept is parsed, not kept
  else if ((contentType?.length ?? 0) + (accept?.length ?? 0) > 512) result = negotiated(contentType, accept);
  else {
    result = keptNegotiations.get(`${contentType ?? '\0'}\n${accept ?? '\0'}`, () => negotiated(contentType, accept));
    last = { contentType, accept, result };
  }
  if (result === 'mediaType') return serviceError('mediaType', essence(contentType) ?? 'missing');
  if (result === 'notAcceptable') return serviceError('notAcceptable');
  request.negotiated = result;
  return null;
}

/** registered with `{ prefix: '/v1' }` */
export async function v1Dialect(scope: FastifyInstance, { engine }: { engine: Engine }): Promise<void> {
  const { config } = engine;
  const authenticate = authHook(engine);
  if (authenticate !== null) scope.addHook('onRequest', authenticate);
  registerErrorReplies(scope, serviceErrorBody);
  registerBodyParsers(scope, config, engine.slabs, engine.pool);
  scope.decorateRequest('negotiated', null as unknown as Negotiated);
  const { admit, startWork } = admissionHooks(scope, engine);

  /** answers at once when the pipeline did (the handler then returns nothing, as fastify wants of a
   *  handler that has sent), else returns the promise of the answer */
  function respond(request: FastifyRequest, reply: FastifyReply, items: PipelineItem[], batch: boolean): Promise<FastifyReply> | undefined {
    startWork(request);
    const { requestEncoding, responseType, responseEncoding } = request.negotiated;
    const result = engine.run({
      items,
      fromJson: requestEncoding === 'json',
      answer: v1Answer(responseEncoding, batch),
      lease: request.lease,
      cancellation: request.cancellation,
      fault: config.faultInjection ? testFault(request) : null,
    });
    const send = ({ payload, timings }: PipelineResult) => {
      reply.header('server-timing', serverTiming(timings, request.parseMs));
      return sendPayload(reply.type(responseType), payload);
    };
    if (result instanceof Promise) return result.then(send);
    send(result);
    return undefined;
  }

  /** the media types, then admission: one hook */
  const mediaTypesAndAdmission = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const refused = checkMediaTypes(request);
    if (refused !== null) return done(refused);
    admit(request, reply, done);
  };
  const hooks = { onRequest: mediaTypesAndAdmission };
  for (const op of OP_NAMES) {
    scope.post(`/${op}`, { schema: { ...opRouteDoc(op), body: opBodySchema(op) }, config: { openapi: documentRoute(op) }, ...hooks }, (request, reply) =>
      respond(request, reply, [{ op, body: request.body as Record<string, unknown>, path: '' }], false));
  }

  scope.post('/batch', { schema: { ...batchRouteDoc(), body: batchBodySchema() }, config: { openapi: documentRoute('batch') }, ...hooks }, (request, reply) => {
    const { requests } = request.body as { requests: ({ op: OpName } & Record<string, unknown>)[] };
    return respond(request, reply, requests.map(({ op, ...body }, i) => ({ op, body, path: `requests[${i}].` })), true);
  });
}
