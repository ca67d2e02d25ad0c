// the slabs one request holds: its body and its jobs' memory, given back together. The answer may be
// a view of them, so they go back when it has been written or its client has gone; and while a task
// on the pool may still touch them (the client gone, a 504 or 500 answered first), only once every
// such task has settled.
import type { Slab, TensorMemory } from './tensor-memory.js';

export class Lease {
  private held: Slab[] = [];
  /** while tasks may still read or write the held slabs: settles once none can */
  private busy: Promise<void> | null = null;

  constructor(private readonly slabs: TensorMemory) {}

  private ended = false;

  /** a slab added once the lease has ended (work that went on after its client left) goes back as it
   *  comes, or once the lease's tasks have settled */
  add(slab: Slab): void {
    this.held.push(slab);
    if (this.ended) this.release();
  }

  /** tasks on the pool may read or write the held slabs until `settled`, whatever becomes of the
   *  request meanwhile (its client gone, a 504 or 500 answered first) */
  holdUntil(settled: Promise<void>): void {
    this.busy = this.busy === null ? settled : Promise.all([this.busy, settled]).then(() => undefined);
  }

  /** the request is over: its slabs go back now, or once its tasks have settled */
  release(): void {
    this.ended = true;
    if (this.busy === null) {
      // emptied by pop, not by `length = 0`: that is a call into V8's runtime (~0.2 µs a request, perf)
      const held = this.held;
      while (held.length > 0) this.slabs.release(held.pop()!);
      return;
    }
    const held = this.held;
    this.held = [];
    void this.busy.then(() => held.forEach((slab) => this.slabs.release(slab)));
  }
}
