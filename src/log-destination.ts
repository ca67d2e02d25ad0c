// where the service's log lines go: pino's asynchronous destination (sonic-boom, a buffered write in
// batches, not a blocking write per line), with the lines gathered here first and handed over a
// batch at a time (BATCH_CHARS, or every FLUSH_MS). sonic-boom measures the UTF-8 length of all the
// text it holds on every write it takes, which with a line per request (the access log) cost ~3 µs a
// line (load/RESULTS.md); a batch is measured once. Each batch is a write on libuv's thread pool, a
// thread woken and waited for: 4 KiB batches, a write every dozen access lines, cost ~5 µs a request
// (perf at 2,000 small req/s: sonic-boom, the pool's write, futex), 64 KiB ones a write per 200 lines
// or per FLUSH_MS. Lines gathered and not yet handed over are written when the process exits, as pino
// does for its own destination.
import { pino } from 'pino';

const BATCH_CHARS = 65536;
const FLUSH_MS = 200;

type SonicBoom = ReturnType<typeof pino.destination>;

/** destinations still gathering: at exit, each writes what it holds */
const gathering = new Set<LogDestination>();
let exitHookSet = false;

export class LogDestination {
  private readonly boom: SonicBoom = pino.destination({ sync: false, minLength: 0 });
  private lines: string[] = [];
  private chars = 0;
  /** gathering lines; once closed, each line goes straight to sonic-boom */
  private open = true;
  private readonly timer = setInterval(() => this.handOver(), FLUSH_MS).unref();

  constructor() {
    gathering.add(this);
    if (!exitHookSet) {
      exitHookSet = true;
      process.on('exit', () => gathering.forEach((destination) => destination.writeNow()));
    }
  }

  /** pino's stream: one line (or more) of text */
  write(text: string): void {
    if (!this.open) {
      this.boom.write(text);
      return;
    }
    this.lines.push(text);
    this.chars += text.length;
    if (this.chars >= BATCH_CHARS) this.handOver();
  }

  /** stops gathering: what is held goes to sonic-boom now, later lines straight to it (pino flushes
   *  its destination at exit) */
  close(): void {
    clearInterval(this.timer);
    this.handOver();
    this.open = false;
    gathering.delete(this);
  }

  private handOver(): void {
    if (this.lines.length === 0) return;
    this.boom.write(this.lines.length === 1 ? this.lines[0] : this.lines.join(''));
    this.lines = [];
    this.chars = 0;
  }

  /** at exit, no event loop left: everything out, synchronously */
  private writeNow(): void {
    this.handOver();
    try {
      this.boom.flushSync();
    } catch {
      // not open yet (nothing was written to it), or already closed: nothing to write
    }
  }
}
