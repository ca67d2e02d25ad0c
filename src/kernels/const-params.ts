// a row norm without weight and bias scales every element by the same g = weight_offset + 1, so its
// prepared parameters (kernels/wasm-kernels.ts: 8 bytes of float64 scale and 8 of float32 copies
// per element of a row) are the same for every such request of one row length. They are made once,
// into the tensor memory's kept area (memory/tensor-memory.ts), and read there by every later request
// and every worker; nothing writes them again. A small request's slab then holds only its own
// tensors: for a 1×768 float32 rmsnorm 12 KiB fewer bytes written per request.
import type { Region } from '../pool/protocol.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import { preparedBytes, type WasmKernels } from './wasm-kernels.js';

export interface ConstParams {
  /** paramLength float64 copies of g */
  scale: Region;
  /** wasm-kernels' prepared block for them */
  prepared: number;
}

const ALIGN = 64;
const alignUp = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

class ConstParamsArea {
  /** g → row length → its parameters */
  private readonly made = new Map<number, Map<number, ConstParams>>();
  private next: number;
  private readonly end: number;

  constructor(private readonly area: TensorMemory['keptArea'], private readonly wasm: WasmKernels) {
    this.next = alignUp(area.offset);
    this.end = area.offset + area.size;
  }

  /** the parameters for g over rows of length n, made now if they fit; null when the area is full */
  get(g: number, n: number): ConstParams | null {
    const byLength = this.made.get(g);
    const found = byLength?.get(n);
    if (found !== undefined) return found;
    const scaleAt = this.next;
    const preparedAt = alignUp(scaleAt + 8 * n);
    const end = alignUp(preparedAt + preparedBytes(n));
    if (end > this.end) return null; // full: such requests prepare their own, as before
    this.wasm.prepareConstF32(g, scaleAt, null, n, preparedAt);
    this.next = end;
    const params: ConstParams = { scale: { memory: this.area.memory, byteOffset: scaleAt, length: n }, prepared: preparedAt };
    if (byLength === undefined) this.made.set(g, new Map([[n, params]]));
    else byLength.set(n, params);
    return params;
  }
}

const areas = new WeakMap<TensorMemory, ConstParamsArea>();

/**
 * the kept parameters for g (weight_offset + 1) and row length n in `slabs`' kept area, made with this
 * thread's kernels the first time; null when they cannot be kept: g is -0 (its zeros' sign would be
 * another request's) or the area is full
 */
export function constParams(slabs: TensorMemory, wasm: WasmKernels, g: number, n: number): ConstParams | null {
  if (Object.is(g, -0)) return null;
  let area = areas.get(slabs);
  if (area === undefined) areas.set(slabs, (area = new ConstParamsArea(slabs.keptArea, wasm)));
  return area.get(g, n);
}
