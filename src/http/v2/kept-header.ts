// the last short JSON header parsed, kept with its value. An OIP client sends the same JSON header,
// byte for byte, with every request of one shape (its inputs' names, datatypes, shapes and binary
// sizes; the tensor's bytes follow it), so a repeat is found by comparing bytes, not parsed again:
// JSON.parse of a 143-byte header costs ~0.6 µs warm and ~1.2 µs in a small request's path (a CPU
// profile of the service at saturation, 2026-11-28). The value is frozen through when kept, so that
// no reader can change what the next request is given.
import type { JsonBodyResult } from '../parse-json-body.js';

export class KeptHeader {
  private bytes: Buffer | null = null;
  private kept: { ok: true; body: unknown } | null = null;

  /** headers longer than `maxBytes` are parsed every time (JSON data lists are seldom sent twice) */
  constructor(private readonly maxBytes = 1024) {}

  /** the kept value when `bytes` are those kept, else null */
  lookup(bytes: Buffer): { ok: true; body: unknown } | null {
    return this.bytes !== null && bytes.length === this.bytes.length && bytes.equals(this.bytes) ? this.kept : null;
  }

  /** keeps a short header's successful parse (its bytes copied: they may live in memory given back) */
  keep(bytes: Buffer, result: JsonBodyResult): JsonBodyResult {
    if (!result.ok || bytes.length > this.maxBytes) return result;
    this.bytes = Buffer.from(bytes);
    this.kept = Object.freeze({ ok: true, body: deepFreeze(result.body) });
    return result;
  }
}

function deepFreeze(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
