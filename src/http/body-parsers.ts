// request bodies: msgpack (three media types) read into a shared slab and decoded there; JSON read
// the same way (byte and idle limits, counted in the memory budget) and parsed with fastify's strict
// settings, on a worker when long (parse-json-body.ts).
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
// the subpath skips msgpackr's native string extractor: on bodies that live in shared memory it
// costs more than it saves (a tenth of the server's time on small requests, measured)
import { Unpackr } from 'msgpackr/unpack';
import { KeptMsgpackBody } from '../codec/kept-msgpack-body.js';
import { normalizeMsgpackBody } from '../codec/wire-body.js';
import { isServiceError, serviceError } from '../errors.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import { bytesView } from '../memory/whole-views.js';
import type { WorkerPool } from '../pool/worker-pool.js';
import { readBodyIntoSlab, type BodyDone, type BodyLimits } from './body-reader.js';
import { JSON_TYPE, MSGPACK_TYPES } from './media-types.js';
import { parseJsonBody, type JsonBodyResult } from './parse-json-body.js';

// maps decode as Map so bin keys (msgpack-numpy) survive; bin data stays a view of the body slab.
// structuredClone off: its id/pointer extensions let a few hundred bytes decode to a DAG whose
// walk (normalize, validation) is exponential in its depth; no client of ours sends them
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, structuredClone: false });
const EMPTY = Buffer.alloc(0);
const keptBody = new KeptMsgpackBody();

declare module 'fastify' {
  interface FastifyRequest {
    /** ms spent decoding the body, for Server-Timing */
    parseMs: number;
  }
}

export function registerBodyParsers(app: FastifyInstance, limits: BodyLimits, slabs: TensorMemory, pool: WorkerPool): void {
  app.decorateRequest('parseMs', 0);
  // the reader enforces the limits (fastify reads a parser's own bodyLimit only for parseAs parsers)

  // fastify's own errors for a JSON body that is empty or not JSON (poisoned ones included).
  // Callback parsers: a small body is read, decoded and handed on with no promise
  app.removeContentTypeParser(JSON_TYPE);
  app.addContentTypeParser(JSON_TYPE, (request: FastifyRequest, payload: Readable, done: BodyDone<unknown>) => {
    readBodyIntoSlab(payload, request.headers['content-length'], limits, slabs, guarded(done, (body) => {
      const { slab, length } = body;
      request.lease.add(slab);
      if (length === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      const started = performance.now();
      const parsed = (result: JsonBodyResult) => {
        request.parseMs = performance.now() - started;
        if (!result.ok) return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
        done(null, result.body);
      };
      const result = parseJsonBody(pool, Buffer.from(slab.memory, slab.offset, length), 'json');
      if (result instanceof Promise) result.then(parsed, (parseErr: Error) => done(parseErr, undefined));
      else parsed(result);
    }));
  });

  app.addContentTypeParser([...MSGPACK_TYPES], (request: FastifyRequest, payload: Readable, done: BodyDone<unknown>) => {
    readBodyIntoSlab(payload, request.headers['content-length'], limits, slabs, guarded(done, ({ slab, length }) => {
      request.lease.add(slab);
      const started = performance.now();
      let value: unknown;
      try {
        // decoded where it lies, from the memory's one Buffer; msgpackr reads a 0 end as "to the end".
        // A repeat of the last body's shape is not decoded again (codec/kept-msgpack-body.ts)
        const memory = bytesView(slab.memory);
        value = keptBody.lookup(memory, slab.offset, length);
        if (value === undefined) {
          const decoded = length === 0 ? unpackr.unpack(EMPTY) : unpackr.unpack(memory, { start: slab.offset, end: slab.offset + length });
          value = keptBody.keep(normalizeMsgpackBody(decoded), memory, slab.offset, length);
        }
      } catch (decodeErr) {
        return done(isServiceError(decodeErr) ? decodeErr : serviceError('bodyNotMsgpack', decodeErr instanceof Error ? decodeErr.message : String(decodeErr)), undefined);
      }
      request.parseMs = performance.now() - started;
      done(null, value);
    }));
  });
}

/** a body's handler run from the stream's own events: an error reaches fastify's `done` (a 500), never
 *  the stream (an uncaught exception) */
export function guarded<T>(done: BodyDone<unknown>, handle: (body: T) => void): BodyDone<T> {
  return (err, body) => {
    if (err !== null) return done(err, undefined);
    try {
      handle(body!);
    } catch (handleErr) {
      done(handleErr as Error, undefined);
    }
  };
}
