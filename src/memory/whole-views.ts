// views over a whole shared memory buffer, each made again only when the buffer changes (the memory
// grew, or a worker received it in another message), where a view made per use costs every request:
//  - Int32Array: the cancel flags of every job and task are read and written through it (a view per
//    job slab and per task cost ~0.1 µs each on the shared memory: npm run ab:path --case batch);
//  - Buffer: a body is decoded from it between two offsets and an answer's framing written into it
//    (a Buffer made over each body cost ~0.85 µs of a small request in place, and msgpackr a DataView
//    more for each new buffer it reads).
let int32Memory: SharedArrayBuffer | null = null;
let int32: Int32Array<ArrayBufferLike> = new Int32Array(0);
let bytesMemory: SharedArrayBuffer | null = null;
let bytes: Buffer = Buffer.alloc(0);

/** Int32Array over `memory` from byte 0; index a 4-aligned byte offset b as b / 4 */
export function int32View(memory: SharedArrayBuffer): Int32Array<ArrayBufferLike> {
  if (memory !== int32Memory) {
    int32 = new Int32Array(memory, 0, Math.floor(memory.byteLength / 4));
    int32Memory = memory;
  }
  return int32;
}

/** a Buffer over all of `memory`: byte offsets in the memory are indices in it */
export function bytesView(memory: SharedArrayBuffer): Buffer {
  if (memory !== bytesMemory) {
    bytes = Buffer.from(memory);
    bytesMemory = memory;
  }
  return bytes;
}
