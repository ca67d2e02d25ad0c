// the slabs one request holds: its body and its jobs' memory, given back together. The answer may be
// a view of them, so they go back when it has been written; when a task may still be running (a 504
// answered before its work settled), only once that work has settled.
import type { Slab, TensorMemory } from './tensor-memory.js';

export class Lease {
  private held: Slab[] = [];

  constructor(private readonly slabs: TensorMemory) {}

  add(slab: Slab): void {
    this.held.push(slab);
  }

  /** nothing (no task, no socket write) can touch the held slabs any more */
  release(): void {
    for (const slab of this.held) this.slabs.release(slab);
    this.held.length = 0;
  }

  /** a task may read or write the held slabs until `settled` */
  releaseAfter(settled: Promise<void>): void {
    const held = this.held;
    this.held = [];
    void settled.then(() => held.forEach((slab) => this.slabs.release(slab)));
  }
}
