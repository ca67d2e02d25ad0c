// request bodies: msgpack (three media types) → plain objects; JSON stays fastify's strict parser.
import type { FastifyInstance } from 'fastify';
import { Unpackr } from 'msgpackr';
import { normalizeMsgpackBody } from '../codec/wire-body.js';
import { isServiceError, serviceError } from '../errors.js';
import { MSGPACK_TYPES } from './media-types.js';

// maps decode as Map so bin keys (msgpack-numpy) survive; bin data stays a view of the body
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });

export function registerBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser([...MSGPACK_TYPES], { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const started = performance.now();
    let value: unknown;
    try {
      value = normalizeMsgpackBody(unpackr.unpack(body as Buffer));
    } catch (err) {
      done(isServiceError(err) ? err : serviceError('NORM_ERR_BODY_MALFORMED', `body: not valid msgpack (${err instanceof Error ? err.message : String(err)})`), undefined);
      return;
    }
    request.parseMs = performance.now() - started;
    done(null, value);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** ms spent decoding the body, for Server-Timing */
    parseMs: number;
  }
}
