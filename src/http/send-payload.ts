// an answer's payload onto the reply: pieces (a long JSON answer's text, written by the workers into
// shared memory) go out one after the other, never joined into one buffer on the main thread.
import type { FastifyReply } from 'fastify';
import { Readable } from 'node:stream';
import type { Payload } from '../jobs/answer-text.js';

export function payloadBytes(payload: Payload): number {
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  if (Buffer.isBuffer(payload)) return payload.length;
  return payload.reduce((sum, piece) => sum + piece.length, 0);
}

export function sendPayload(reply: FastifyReply, payload: Payload): FastifyReply {
  if (!Array.isArray(payload)) return reply.send(payload);
  return reply.header('content-length', payloadBytes(payload)).send(Readable.from(payload));
}
