// a request's cancellation: it fires once — at the request's deadline, when its client goes away, or
// when the front end gives up on it — and the request's queued work is then dropped (jobs/run.ts).
// One per request, so it is a flag and one listener rather than an AbortController (whose event
// machinery cost about 4 % of the server's time on small requests). The deadline is read from the
// clock when asked; a timer runs only while someone waits for it (work queued on the pool), so a
// request computed inline, the common small one, arms none.
export class Cancellation {
  private fired = false;
  private listener: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly admittedAt = performance.now();
  private deadlineAt: number;

  /** `timeoutMs`: the deadline, from now */
  constructor(timeoutMs: number) {
    this.deadlineAt = this.admittedAt + timeoutMs;
  }

  /** fired, or past the deadline (then it fires now) */
  get cancelled(): boolean {
    return this.cancelledAt(performance.now());
  }

  /** as `cancelled`, with the clock (performance.now()) read by the caller for its own use too */
  cancelledAt(now: number): boolean {
    if (!this.fired && now >= this.deadlineAt) this.cancel();
    return this.fired;
  }

  cancel(): void {
    if (this.fired) return;
    this.fired = true;
    this.dispose();
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }

  /** brings the deadline forward to `timeoutMs` after the request was admitted, if that is sooner */
  shortenTo(timeoutMs: number): void {
    if (this.fired || this.admittedAt + timeoutMs >= this.deadlineAt) return;
    this.deadlineAt = this.admittedAt + timeoutMs;
    if (this.timer !== null) this.arm();
  }

  /** the request is over: its timer goes */
  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** sets the one listener (null removes it); it is called at once if the request was already
   *  cancelled, else at the deadline if nothing cancels it sooner */
  onCancel(listener: (() => void) | null): void {
    if (this.cancelled) {
      listener?.();
      return;
    }
    this.listener = listener;
    if (listener === null) this.dispose();
    else this.arm();
  }

  private arm(): void {
    this.dispose();
    // a deadline alone keeps no process alive
    this.timer = setTimeout(() => this.cancel(), Math.max(0, this.deadlineAt - performance.now())).unref();
  }
}
