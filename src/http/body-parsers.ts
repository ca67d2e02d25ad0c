// request bodies: msgpack (three media types) read straight into a shared slab and decoded there;
// JSON stays fastify's strict parser.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
// the subpath skips msgpackr's native string extractor: on bodies that live in shared memory it
// costs more than it saves (a tenth of the server's time on small requests, measured)
import { Unpackr } from 'msgpackr/unpack';
import { normalizeMsgpackBody } from '../codec/wire-body.js';
import { isServiceError, serviceError } from '../errors.js';
import type { SlabPool } from '../memory/slab-pool.js';
import { readBodyIntoSlab } from './body-reader.js';
import { MSGPACK_TYPES } from './media-types.js';

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

export function registerBodyParsers(app: FastifyInstance, bodyLimit: number, slabs: SlabPool): void {
  app.decorateRequest('parseMs', 0);

  app.addContentTypeParser([...MSGPACK_TYPES], { bodyLimit }, async (request: FastifyRequest, payload: Readable) => {
    const { slab, length } = await readBodyIntoSlab(payload, request.headers['content-length'], bodyLimit, slabs);
    request.lease.hold(slab);
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
