// request bodies: msgpack (three media types) read into a shared slab and decoded there; JSON read
// the same way (byte and idle limits, counted in the memory budget) and parsed with fastify's strict
// settings, on a worker when long (parse-json-body.ts).
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
// the subpath skips msgpackr's native string extractor: on bodies that live in shared memory it
// costs more than it saves (a tenth of the server's time on small requests, measured)
import { Unpackr } from 'msgpackr/unpack';
import { normalizeMsgpackBody } from '../codec/wire-body.js';
import { isServiceError, serviceError } from '../errors.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import type { WorkerPool } from '../pool/worker-pool.js';
import { readBodyIntoSlab, type BodyLimits } from './body-reader.js';
import { JSON_TYPE, MSGPACK_TYPES } from './media-types.js';
import { parseJsonBody } from './parse-json-body.js';

// maps decode as Map so bin keys (msgpack-numpy) survive; bin data stays a view of the body slab.
// structuredClone off: its id/pointer extensions let a few hundred bytes decode to a DAG whose
// walk (normalize, validation) is exponential in its depth; no client of ours sends them
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, structuredClone: false });

declare module 'fastify' {
  interface FastifyRequest {
    /** ms spent decoding the body, for Server-Timing */
    parseMs: number;
  }
}

export function registerBodyParsers(app: FastifyInstance, limits: BodyLimits, slabs: TensorMemory, pool: WorkerPool): void {
  app.decorateRequest('parseMs', 0);
  // the reader enforces the limits (fastify reads a parser's own bodyLimit only for parseAs parsers)

  // fastify's own errors for a JSON body that is empty or not JSON (poisoned ones included)
  app.removeContentTypeParser(JSON_TYPE);
  app.addContentTypeParser(JSON_TYPE, async (request: FastifyRequest, payload: Readable) => {
    const { slab, length } = await readBodyIntoSlab(payload, request.headers['content-length'], limits, slabs);
    request.lease.add(slab);
    if (length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
    const started = performance.now();
    const parsed = await parseJsonBody(pool, Buffer.from(slab.memory, slab.offset, length), 'json');
    request.parseMs = performance.now() - started;
    if (!parsed.ok) throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
    return parsed.body;
  });

  app.addContentTypeParser([...MSGPACK_TYPES], async (request: FastifyRequest, payload: Readable) => {
    const { slab, length } = await readBodyIntoSlab(payload, request.headers['content-length'], limits, slabs);
    request.lease.add(slab);
    const started = performance.now();
    try {
      const value = normalizeMsgpackBody(unpackr.unpack(Buffer.from(slab.memory, slab.offset, length)));
      request.parseMs = performance.now() - started;
      return value;
    } catch (err) {
      throw isServiceError(err) ? err : serviceError('bodyNotMsgpack', err instanceof Error ? err.message : String(err));
    }
  });
}
