// one Int32Array over a whole shared memory buffer, made again only when the buffer changes (the
// memory grew, or a worker received it in another message): the cancel flags of every job and task
// are read and written through it, where a view made per job slab and per task cost ~0.1 µs each
// on the shared memory (npm run ab:path --case batch).
let lastMemory: SharedArrayBuffer | null = null;
let lastView: Int32Array<ArrayBufferLike> = new Int32Array(0);

/** Int32Array over `memory` from byte 0; index a 4-aligned byte offset b as b / 4 */
export function int32View(memory: SharedArrayBuffer): Int32Array<ArrayBufferLike> {
  if (memory !== lastMemory) {
    lastView = new Int32Array(memory, 0, Math.floor(memory.byteLength / 4));
    lastMemory = memory;
  }
  return lastView;
}
