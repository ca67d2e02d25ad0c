// a request's cancellation: it fires once — at the request's deadline, when its client goes away, or
// when the front end gives up on it — and the request's queued work is then dropped (jobs/run.ts).
// One per request, so it is a flag, one listener and one timer rather than an AbortController (whose
// event machinery cost about 4 % of the server's time on small requests).
export class Cancellation {
  cancelled = false;
  private listener: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly startedAt = performance.now();
  private deadlineMs: number;

  /** `timeoutMs`: the deadline, from now */
  constructor(timeoutMs: number) {
    this.deadlineMs = timeoutMs;
    this.timer = setTimeout(() => this.cancel(), timeoutMs).unref(); // a deadline alone keeps no process alive
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.dispose();
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }

  /** brings the deadline forward to `timeoutMs` after the request was admitted, if that is sooner */
  shortenTo(timeoutMs: number): void {
    if (this.cancelled || timeoutMs >= this.deadlineMs) return;
    this.deadlineMs = timeoutMs;
    const left = timeoutMs - (performance.now() - this.startedAt);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.cancel(), Math.max(0, left)).unref();
  }

  /** the request is over: its timer goes */
  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** sets the one listener (null removes it); it is called at once if the request was already cancelled */
  onCancel(listener: (() => void) | null): void {
    if (this.cancelled) listener?.();
    else this.listener = listener;
  }
}
