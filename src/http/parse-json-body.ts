// a JSON body in shared memory → its value: parsed here when short, on a worker when long (its long
// `data` lists then come back as ParsedNumbers, codec/json-body.ts), so no body holds the event loop.
import { PARSE_INLINE_BYTES, parseBodyText, putBackLists } from '../codec/json-body.js';
import type { ParseTask } from '../pool/protocol.js';
import type { WorkerPool } from '../pool/worker-pool.js';

export type JsonBodyResult = { ok: true; body: unknown } | { ok: false; message: string };

/** a short body's result at once (no promise), a long one's when the worker has parsed it */
export function parseJsonBody(pool: WorkerPool, bytes: Buffer, dialect: ParseTask['dialect']): JsonBodyResult | Promise<JsonBodyResult> {
  if (bytes.length <= PARSE_INLINE_BYTES || !(bytes.buffer instanceof SharedArrayBuffer)) return parseBodyText(bytes.toString('utf8'), dialect);
  return pool.parse({ kind: 'parseJson', text: { memory: bytes.buffer, byteOffset: bytes.byteOffset, length: bytes.length }, dialect })
    .then((result): JsonBodyResult => (result.ok ? { ok: true, body: putBackLists(result.body, result.lists) } : result));
}
