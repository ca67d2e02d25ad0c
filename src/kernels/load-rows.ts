// raw little-endian bytes of a row range (straight from the request body, at any byte offset)
// → the values the kernels read. Runs where the rows are computed: on the workers for a large
// tensor, so this copy is spread over all of them, or inline on the main thread for a small one.
import { widenBfloat16, widenFloat16 } from '../codec/half.js';
import type { Dtype } from '../codec/dtype.js';
import type { ValueArray } from './types.js';
import type { WasmKernels } from './wasm-kernels.js';

let scratch = new Uint16Array(0); // for float16/bfloat16 rows at an odd byte offset

export function loadRows(
  memory: SharedArrayBuffer, byteOffset: number, dtype: Dtype, dst: ValueArray, n: number, rowStart: number, rowEnd: number,
  wasm: WasmKernels | null,
): void {
  const start = rowStart * n;
  const count = (rowEnd - rowStart) * n;
  if (dtype === 'bfloat16' && wasm !== null) {
    // SIMD, from any byte offset: memory must be the buffer of the WebAssembly.Memory the kernels
    // were instantiated on (every request region is carved from it)
    wasm.widenBf16(byteOffset + start * 2, dst.byteOffset + start * 4, count);
    return;
  }
  if (dtype === 'float32' || dtype === 'float64') {
    const size = dst.BYTES_PER_ELEMENT;
    // the source is out of phase with dst (else it is read in place): a JS copy would go byte by byte
    if (wasm !== null) return wasm.copyBytes(dst.byteOffset + start * size, byteOffset + start * size, count * size);
    new Uint8Array(dst.buffer, dst.byteOffset + start * size, count * size)
      .set(new Uint8Array(memory, byteOffset + start * size, count * size));
    return;
  }
  const at = byteOffset + start * 2;
  let bits: Uint16Array;
  if (at % 2 === 0) {
    bits = new Uint16Array(memory, at, count);
  } else {
    if (scratch.length < count) scratch = new Uint16Array(count);
    bits = scratch.subarray(0, count);
    new Uint8Array(bits.buffer, 0, count * 2).set(new Uint8Array(memory, at, count * 2));
  }
  const out = (dst as Float32Array).subarray(start, start + count);
  if (dtype === 'float16') widenFloat16(bits, out);
  else widenBfloat16(bits, out);
}
