// the /v1 dialect (API.md §2–§4): POST /v1/<op> for every operation of the table, and /v1/batch.
// A thin adapter: media types and Accept from the headers, the body's items into the pipeline,
// its answer out with Server-Timing.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Encoding } from '../../codec/write-tensor.js';
import { serviceError } from '../../errors.js';
import { runPipeline, v1Answer, type Engine, type PipelineItem } from '../../jobs/pipeline.js';
import { checkTimeoutHeader, serverTiming, testFault } from '../request-context.js';
import { OP_NAMES, type OpName } from '../../ops/registry.js';
import { createAdmissionHook, type ServiceState } from '../guards.js';
import { encodingOf, essence, negotiate } from '../media-types.js';
import { batchRouteDoc, opRouteDoc } from '../openapi/response-schemas.js';
import { batchBodySchema, opBodySchema } from './schemas.js';

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
    return done(serviceError('mediaType', requestType ?? 'missing'));
  }
  const responseType = negotiate(request.headers.accept, requestType);
  if (responseType === undefined) {
    return done(serviceError('notAcceptable'));
  }
  request.negotiated = { requestEncoding, responseType, responseEncoding: encodingOf(responseType)! };
  done();
}


export function registerV1Routes(app: FastifyInstance, engine: Engine, config: Readonly<Config>, state: ServiceState): void {
  app.decorateRequest('negotiated', null as unknown as Negotiated);
  app.decorateRequest('deadline', null as unknown as FastifyRequest['deadline']);
  app.decorateRequest('timeoutHeaderError', null);
  const admit = createAdmissionHook(config, state);

  async function respond(request: FastifyRequest, reply: FastifyReply, items: PipelineItem[], batch: boolean) {
    const { requestEncoding, responseType, responseEncoding } = request.negotiated;
    const { payload, timings } = await runPipeline(engine, {
      items,
      fromJson: requestEncoding === 'json',
      answer: v1Answer(responseEncoding, batch),
      lease: request.lease,
      deadline: request.deadline,
      fault: config.faultInjection ? testFault(request) : null,
    });
    reply.header('server-timing', serverTiming({ ...timings, decode: request.parseMs + timings.decode }));
    return reply.type(responseType).send(payload);
  }

  const hooks = { onRequest: [checkMediaTypes, admit], preValidation: checkTimeoutHeader };
  for (const op of OP_NAMES) {
    app.post(`/v1/${op}`, { schema: { ...opRouteDoc(op), body: opBodySchema(op) }, ...hooks }, (request, reply) =>
      respond(request, reply, [{ op, body: request.body as Record<string, unknown>, path: '' }], false));
  }

  app.post('/v1/batch', { schema: { ...batchRouteDoc(), body: batchBodySchema() }, ...hooks }, (request, reply) => {
    const { requests } = request.body as { requests: ({ op: OpName } & Record<string, unknown>)[] };
    return respond(request, reply, requests.map(({ op, ...body }, i) => ({ op, body, path: `requests[${i}].` })), true);
  });
}
