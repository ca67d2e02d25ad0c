// a request's deadline: it fires once, when the deadline passes or the client goes away, and its
// queued work is then dropped (src/jobs/run.ts). One per request, so it is a flag and one
// listener rather than an AbortController (whose event machinery cost about 4 % of the server's
// time on small requests).
export class Deadline {
  aborted = false;
  private listener: (() => void) | null = null;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }

  /** sets the one listener (null removes it); it is called at once if the deadline already fired */
  onAbort(listener: (() => void) | null): void {
    if (this.aborted) listener?.();
    else this.listener = listener;
  }
}
