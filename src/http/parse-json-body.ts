// a JSON body in shared memory → its value: parsed here when short, on a worker when long (its long
// `data` lists then come back as ParsedNumbers, codec/json-body.ts), so no body holds the event loop.
import { PARSE_INLINE_BYTES, parseBodyText, putBackLists } from '../codec/json-body.js';
import type { ParseTask } from '../pool/protocol.js';
import type { WorkerPool } from '../pool/worker-pool.js';

export async function parseJsonBody(pool: WorkerPool, bytes: Buffer, dialect: ParseTask['dialect']): Promise<{ ok: true; body: unknown } | { ok: false; message: string }> {
  if (bytes.length <= PARSE_INLINE_BYTES || !(bytes.buffer instanceof SharedArrayBuffer)) return parseBodyText(bytes.toString('utf8'), dialect);
  const result = await pool.parse({ kind: 'parseJson', text: { memory: bytes.buffer, byteOffset: bytes.byteOffset, length: bytes.length }, dialect });
  return result.ok ? { ok: true, body: putBackLists(result.body, result.lists) } : result;
}
