// where the service's log lines go: gathered here as bytes, in a batch of BATCH_BYTES, and written a
// batch at a time (when full, or at most FLUSH_MS after a line came: a timer armed by the first line
// into an empty destination, so an idle one wakes for nothing). To a file or /dev/null a batch is
// written at once, on the event loop (`direct`); to a pipe, a socket or a terminal, whose reader may
// lag, it goes through pino's asynchronous destination (sonic-boom, a write on libuv's thread pool), as
// does what a direct write leaves (a short write, an error, which sonic-boom then reports). To
// /dev/null the thread pool's round trip cost 4-5 % of a small request at info (a batch every ~200
// access lines; the same process with and without it, 2026-11-29) and the write on the event loop
// nothing measurable; to a pipe the two cost the same (the reader's wake-up). sonic-boom takes the
// batches as bytes (its buffer mode): given text, it measured the UTF-8 length of all it held on
// every write (~3 µs a line, load/RESULTS.md) and encoded each batch twice. The access line is written
// straight into the batch as bytes (`room`, http/access-line.ts), with next to nothing made on the JS
// heap for it. A batch handed to sonic-boom is gathered into again once sonic-boom has written it out.
// sonic-boom holds at most MAX_HELD_BYTES: past that (a reader that stopped), lines are dropped and
// counted, where the held lines grew the heap without bound.
// Lines gathered and not yet written are written when the process exits, as pino does for its own
// destination.
import { fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { pino } from 'pino';

const BATCH_BYTES = 65536;
const FLUSH_MS = 200;
const MAX_UTF8_PER_UNIT = 3; // a UTF-16 code unit is at most 3 bytes of UTF-8 (a pair, 4 for 2)
const SPARE_BATCHES = 2;
/** the most bytes sonic-boom holds unwritten (a pipe whose reader stopped): lines past it are dropped,
 *  counted, and reported once the reader is back (`onDropped`), where they grew the heap without bound */
const MAX_HELD_BYTES = 16 * 1024 * 1024;
const NEWLINE = 0x0a;
const EXIT_RETRIES = 100;
const EXIT_RETRY_MS = 10;

/** sonic-boom in its buffer mode takes Buffers (its types know only text); `fd` is what it writes to */
type SonicBoom = Omit<ReturnType<typeof pino.destination>, 'write'> & { write(data: Buffer): boolean; readonly fd: number };

/** destinations still gathering: at exit, each writes what it holds */
const gathering = new Set<LogDestination>();
let exitHookSet = false;

/** whether `fd` is a file or a device other than a terminal: writes to it take no reader's pace */
function writesDirectly(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return (stat.isFile() || stat.isCharacterDevice()) && !isatty(fd);
  } catch {
    return false;
  }
}

/** a batch handed over to sonic-boom: free again once it has written `end` bytes in all */
interface Handed {
  batch: Buffer;
  end: number;
}

export class LogDestination {
  private readonly boom = pino.destination({ sync: false, minLength: 0, contentMode: 'buffer', maxLength: MAX_HELD_BYTES }) as unknown as SonicBoom;
  /** the batch being gathered: bytes [0, used) */
  private batch: Buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private used = 0;
  /** batches written out, to gather into again */
  private readonly spare: Buffer[] = [];
  private readonly handed: Handed[] = [];
  /** bytes given to sonic-boom, and written out by it: while they differ, it holds some, and
   *  batches go through it too, in turn */
  private givenBytes = 0;
  private writtenBytes = 0;
  /** lines sonic-boom dropped (it held MAX_HELD_BYTES), and how many of them were reported */
  private droppedLines = 0;
  private reportedLines = 0;
  private reportDue = false;
  /** told how many lines were dropped since the last report, once sonic-boom writes again (app.ts
   *  logs it, a line that then has room) */
  onDropped: (lines: number) => void = () => {};
  /** batches written at once (writesDirectly) */
  private readonly direct = writesDirectly(this.boom.fd);
  /** gathering lines; once closed, each line goes straight to sonic-boom */
  private open = true;
  /** hands over what is gathered FLUSH_MS after the first line into an empty destination; null while
   *  nothing waits (a timer every FLUSH_MS woke an idle service five times a second) */
  private timer: NodeJS.Timeout | null = null;
  private readonly flushDue = () => {
    this.timer = null;
    this.handOver();
  };

  constructor() {
    gathering.add(this);
    if (!exitHookSet) {
      exitHookSet = true;
      process.on('exit', () => gathering.forEach((destination) => destination.writeNow()));
    }
    this.boom.on('write', (n: number) => this.writtenOut(n));
    this.boom.on('drop', (bytes: Buffer) => this.dropped(bytes));
  }

  /** pino's stream: one line (or more) of text */
  write(text: string): void {
    const most = text.length * MAX_UTF8_PER_UNIT;
    // a line longer than a whole batch, or any once closed, goes on its own (after what is gathered)
    if (this.room(most) === null) {
      this.handOver();
      this.give(Buffer.from(text, 'utf8'));
      return;
    }
    this.used += this.batch.write(text, this.used, 'utf8');
    this.flushLater();
  }

  /** the batch to write a line of at most `bytes` bytes into, from `gathered` on, then to call
   *  `gatheredTo` with where it ends; null once closed, or for a line longer than a batch (then
   *  `write` it as text) */
  room(bytes: number): Buffer | null {
    if (!this.open || bytes > BATCH_BYTES) return null;
    if (bytes > BATCH_BYTES - this.used) this.handOver();
    return this.batch;
  }

  /** where the next line goes in the batch `room` gave */
  get gathered(): number {
    return this.used;
  }

  /** a line was written into the batch, up to `end` */
  gatheredTo(end: number): void {
    this.used = end;
    this.flushLater();
  }

  /** what was just gathered is handed over within FLUSH_MS */
  private flushLater(): void {
    if (this.timer === null) this.timer = setTimeout(this.flushDue, FLUSH_MS).unref();
  }

  /** stops gathering: what is held goes to sonic-boom now, later lines straight to it (pino flushes
   *  its destination at exit) */
  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.handOver();
    this.open = false;
    gathering.delete(this);
  }

  /** the batch written out: at once (direct) while sonic-boom holds nothing, else (or what a direct
   *  write left) to sonic-boom, which keeps it until it is written out, and another is gathered */
  private handOver(): void {
    if (this.used === 0) return;
    const from = this.direct && this.givenBytes === this.writtenBytes ? this.writeDirect() : 0;
    // a batch sonic-boom dropped is gathered into again at once
    if (from < this.used && this.give(this.batch.subarray(from, this.used))) {
      this.handed.push({ batch: this.batch, end: this.givenBytes });
      this.batch = this.spare.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
    }
    this.used = 0;
  }

  /** the batch written straight out; how many bytes went (after a short write or an error, the rest
   *  goes to sonic-boom, which retries or reports it as for any write) */
  private writeDirect(): number {
    let at = 0;
    try {
      while (at < this.used) {
        const n = writeSync(this.boom.fd, this.batch, at, this.used - at);
        if (n <= 0) break;
        at += n;
      }
    } catch {
      // the rest to sonic-boom
    }
    return at;
  }

  /** bytes to sonic-boom, counted: its 'write' events then say which batches it has written whole;
   *  false when it dropped them (it held too much) */
  private give(bytes: Buffer): boolean {
    const before = this.droppedLines;
    this.boom.write(bytes);
    if (this.droppedLines !== before) return false;
    this.givenBytes += bytes.length;
    return true;
  }

  /** sonic-boom dropped `bytes` (whole lines: batches and long lines end with one) */
  private dropped(bytes: Buffer): void {
    let lines = 0;
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) lines++;
    this.droppedLines += Math.max(1, lines);
  }

  /** sonic-boom wrote `n` more bytes out: the batches it has written whole are free again */
  private writtenOut(n: number): void {
    this.writtenBytes += n;
    // the reader is back: the drops are told once this write's callbacks are over
    if (this.droppedLines !== this.reportedLines && !this.reportDue) {
      this.reportDue = true;
      setImmediate(() => {
        this.reportDue = false;
        const lines = this.droppedLines - this.reportedLines;
        this.reportedLines = this.droppedLines;
        this.onDropped(lines);
      });
    }
    while (this.handed.length > 0 && this.handed[0].end <= this.writtenBytes) {
      const { batch } = this.handed.shift()!;
      if (this.spare.length < SPARE_BATCHES) this.spare.push(batch);
    }
  }

  /** at exit, no event loop left: everything out, synchronously. What is gathered is written here,
   *  not handed over: sonic-boom would give it to the thread pool, whose write races the exit */
  private writeNow(): void {
    try {
      this.boom.flushSync();
    } catch {
      // not open yet (nothing was written to it), or already closed
    }
    for (let at = 0, full = 0; at < this.used;) {
      try {
        at += writeSync(this.boom.fd, this.batch, at, this.used - at);
      } catch (err) {
        // a non-blocking pipe that is full: again after a pause, as sonic-boom does, for a second at
        // most (a reader that stopped would hold the exit forever); anything else: given up
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++full > EXIT_RETRIES) break;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, EXIT_RETRY_MS);
      }
    }
    this.used = 0;
  }
}
