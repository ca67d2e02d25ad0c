// POST /v2/models/{model}[/versions/1]/infer (OIP.md): the body is read into shared memory whatever
// its Content-Type (the Python client sends none), the JSON header parsed, binary inputs viewed where
// they lie; then the same checks, pipeline and kernels as /v1, and the answer in OIP's form.
import { payloadBytes, sendPayload } from '../send-payload.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Readable } from 'node:stream';
import type { Engine } from '../../engine/engine.js';
import type { PipelineResult } from '../../jobs/pipeline.js';
import { isServiceError, serviceError, type ServiceError } from '../../errors.js';
import type { AdmissionHooks } from '../admission-hook.js';
import { readBodyIntoSlab, type BodyDone } from '../body-reader.js';
import { guarded } from '../body-parsers.js';
import { validationError, type AjvError } from '../error-handler.js';
import { serverTiming, testFault } from '../request-context.js';
import { compileOpValidators } from '../v1/schemas.js';
import { oipMessage } from './datatypes.js';
import { oipAnswer } from './infer-answer.js';
import { readInferRequest } from './infer-request.js';
import { modelFor, type Model } from './models.js';
import { oipJsonError } from '../../codec/oip-json.js';
import { parseJsonBody, type JsonBodyResult } from '../parse-json-body.js';
import { inferRequestDoc } from './openapi-routes.js';
import { KeptHeader } from './kept-header.js';

interface ModelParams { model: string; version?: string }

const EMPTY = new Uint8Array(0);

/** the JSON header's length: a whole number in 1 … the body's length, else a 400 naming the header */
function headerLength(value: string | string[] | undefined, bodyLength: number): number | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= bodyLength)) throw serviceError('fieldInvalid', 'Inference-Header-Content-Length', `"${text.slice(0, 20)}" must be a whole number from 1 to the body's ${bodyLength} bytes`);
  return n;
}

/** Content-Encoding other than identity is a 415 (OIP.md); Content-Type is not consulted at all, so it
 *  is dropped before fastify would judge it (a malformed one would be its 415) */
function checkEncoding(request: FastifyRequest): ServiceError | null {
  // undefined rather than deleted: a delete would turn the headers object into a slow dictionary
  if (request.raw.headers['content-type'] !== undefined) request.raw.headers['content-type'] = undefined;
  const encoding = request.headers['content-encoding'];
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return null;
  return serviceError('contentEncoding', encoding.slice(0, 32));
}

/** `schemaOf`: the route's schema (params and answers) for its path under /v2 */
export async function registerInferRoutes(app: FastifyInstance, engine: Engine, { admit, startWork }: AdmissionHooks, schemaOf: (path: string) => object): Promise<void> {
  const { config } = engine;
  const validators = compileOpValidators();
  // a client's repeated JSON header, parsed once (kept-header.ts)
  const keptHeader = new KeptHeader();

  await app.register(async (scope) => {
    // any Content-Type, or none: the body goes into shared memory as it arrives
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (request: FastifyRequest, payload: Readable, done: BodyDone<unknown>) => {
      readBodyIntoSlab(payload, request.headers['content-length'], config, engine.slabs, guarded(done, ({ slab, length }) => {
        request.lease.add(slab);
        done(null, Buffer.from(slab.memory, slab.offset, length));
      }));
    });

    /** the answer sent at once when the header was parsed and the pipeline ran here and now (then
     *  nothing is returned, as fastify wants of a handler that has sent), else the promise of it */
    const handler = (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | undefined => {
      startWork(request);
      const { model: name, version } = request.params as ModelParams;
      const model = modelFor(name, version);
      const started = performance.now();
      const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
      const length = headerLength(request.headers['inference-header-content-length'], body.length);
      const binary = length === null ? EMPTY : body.subarray(length);
      const headerBytes = body.subarray(0, length ?? body.length);
      const kept = keptHeader.lookup(headerBytes);
      if (kept !== null) return infer(request, reply, name, model, kept, length, binary, started);
      const header = parseJsonBody(engine.pool, headerBytes, 'oip');
      // the reply itself when sent inline: a promise that resolved to nothing would be sent again
      if (header instanceof Promise) return header.then((parsed) => infer(request, reply, name, model, parsed, length, binary, started) ?? reply);
      return infer(request, reply, name, model, keptHeader.keep(headerBytes, header), length, binary, started);
    };

    function infer(
      request: FastifyRequest, reply: FastifyReply, name: string, model: Model, parsed: JsonBodyResult, length: number | null, binary: Uint8Array, started: number,
    ): Promise<FastifyReply> | undefined {
      if (!parsed.ok) throw oipJsonError(parsed.message, length);
      const infer = readInferRequest(name, model, parsed.body, binary);
      // the /v1 checks name fields as /v1 does: say it in OIP's words
      const inOipWords = (err: unknown) => {
        if (isServiceError(err) && err.statusCode === 400) err.message = oipMessage(err.message, infer.shapes);
        return err;
      };
      try {
        const validate = validators[model.op];
        if (!validate(infer.body)) throw validationError(validate.errors as AjvError[]);
        // OIP's timeout parameter can only bring the request's deadline forward
        if (infer.timeoutMs !== null) request.cancellation.shortenTo(infer.timeoutMs);
        const answer = oipAnswer(name, infer);
        const parsedMs = performance.now() - started;
        const result = engine.run({
          items: [{ op: model.op, body: infer.body, path: '' }],
          fromJson: true,
          answer: answer.format,
          lease: request.lease,
          cancellation: request.cancellation,
          fault: config.faultInjection ? testFault(request) : null,
        });
        const send = ({ payload, timings }: PipelineResult) => {
          reply.header('server-timing', serverTiming(timings, parsedMs));
          if (answer.binaryBytes === null) return sendPayload(reply.type('application/json'), payload);
          const header = payloadBytes(payload) - answer.binaryBytes;
          return sendPayload(reply.type('application/octet-stream').header('inference-header-content-length', String(header)), payload);
        };
        if (result instanceof Promise) return result.then(send, (err: unknown) => { throw inOipWords(err); });
        send(result);
        return undefined;
      } catch (err) {
        throw inOipWords(err);
      }
    }

    // the schema has params and answers only: the body is documented by the OpenAPI transform
    // (openapi/document.ts), never validated by fastify (the handler reads and checks it)
    // the infer body is documented through the route's `openapi` config, never in its schema, where
    // fastify would compile and run a validator for it: the body is read raw into shared memory
    // whatever its Content-Type, and the handler checks it in OIP's words (bare NaN tokens, binary blocks)
    /** the encoding, then admission: one hook */
    const encodingAndAdmission = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      const refused = checkEncoding(request);
      if (refused !== null) return done(refused);
      admit(request, reply, done);
    };
    const options = {
      onRequest: encodingAndAdmission,
      config: { openapi: (schema: FastifySchema) => ({ ...schema, ...inferRequestDoc }) as FastifySchema },
    };
    for (const prefix of ['/models/:model', '/models/:model/versions/:version']) {
      scope.post(`${prefix}/infer`, { ...options, schema: schemaOf(`${prefix}/infer`) }, handler);
    }
  });
}
