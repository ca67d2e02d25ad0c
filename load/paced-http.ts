// the equal-rate rows' HTTP/1.1 load: requests spread evenly over the second, as load/grpc-load.ts
// spreads gRPC ones: every millisecond the requests due by then are sent, over `connections`
// keep-alive connections of an undici Pool (it holds a request until a connection is free, so a
// server that falls behind sees a queue, not fewer arrivals). autocannon paces by the second instead:
// each connection sends its share of a second back to back from the second's start, so within that
// burst a server is driven in a closed loop, at its own pace. Measured here (load/RESULTS.md,
// 2026-11-28, small `/v1` service ÷ echo at 3,000 req/s): 1.28–1.41 sent this way (7 runs, mean
// 1.34), 1.18–1.49 in autocannon's bursts (12 runs, mean 1.38), with pair-to-pair spreads about
// two thirds as wide. undici, not node:http: a heavier client leaves the servers less of this
// 2-CPU machine (node:http read 1.36–1.43).
// A run sliced beside other servers' keeps its connections from slice to slice (`keptPool`), as a
// client of the service keeps its own: with 16 new connections a slice, each slice's start and end
// also set up and tore down connections, and Node's stream code deoptimized at every slice's end
// (`--trace-deopt`: `wrong map` in `Readable.read`, `emit`, `destroy` … as sockets closed) and ran
// unoptimized into the next. Measured 2026-11-28 (small `/v1` msgpack at 2,000 req/s, 12 slices of
// 1 s each, service and echo in turn, main + other threads µs an answer): new connections each
// slice, the service 40–56 (first slice 56 + 20 on the JIT's threads), the echo 30–61; kept, the
// service 39–44, the echo 30–35, the first slices like the rest.
import { Pool } from 'undici';
import type { Cannon } from './measure.js';

const TIMEOUT_MS = 60_000; // as autocannon's: a request unanswered this long counts as a timeout
/** a paced run's answers are counted in slices of this length (ms): how evenly they came (this
 *  client's and load/grpc-load.ts's) */
export const SLICE_MS = 10;

export interface PacedHttpRun {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  connections: number;
  /** offered requests per second over all connections */
  rate: number;
  /** seconds to send for (rate × duration requests); or `amount` requests in all. The run ends once
   *  each is answered */
  duration?: number;
  amount?: number;
  /** the connections to send on, left open after the run (`keptPool`); by default a pool of
   *  `connections` made for this run and closed after it */
  pool?: Pool;
}

/** `connections` keep-alive connections to `url`'s origin, for runs that follow one another on the
 *  same connections (pass it as `pool`; the caller closes it) */
export function keptPool(url: string, connections: number): Pool {
  return new Pool(new URL(url).origin, { connections, pipelining: 1, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function pacedHttp(run: PacedHttpRun): Promise<Cannon> {
  const target = new URL(run.url);
  const pool = run.pool ?? keptPool(run.url, run.connections);
  const path = target.pathname + target.search;
  const total = run.amount ?? Math.round((run.duration ?? 0) * run.rate);
  const c: Cannon = { ok: 0, responses: 0, non2xx: 0, errors: 0, timeouts: 0, seconds: 0, latencies: [], busySlices: 0 };
  const slices = new Set<number>();
  const started = performance.now();
  let sent = 0;
  let open = 0;
  let sending = true;
  return new Promise((resolve) => {
    const finish = () => {
      if (sending || open > 0) return;
      // a duration run's window is the T s it offered requests over, as load/grpc-load.ts's, unless its
      // answers ran past it: ended at the last answer, a slice of 5 large requests a second (sent at
      // 0, 0.2, …, 0.8 s) read as 5.9 req/s achieved, and its row judged nothing
      const elapsed = (performance.now() - started) / 1000;
      c.seconds = run.duration === undefined ? elapsed : Math.max(run.duration, elapsed);
      c.busySlices = slices.size;
      if (run.pool !== undefined) resolve(c);
      else pool.destroy().then(() => resolve(c), () => resolve(c));
    };
    /** one request's end: its status, or null when it failed */
    const ended = (status: number | null, sentAt: number) => {
      const now = performance.now();
      open--;
      if (status === null) c.errors++;
      else {
        c.responses++;
        slices.add(Math.floor((now - started) / SLICE_MS));
        if (status >= 200 && status < 300) {
          c.ok++;
          c.latencies.push(now - sentAt);
        } else c.non2xx++;
      }
      finish();
    };
    const failed = (err: { code?: string }, sentAt: number) => {
      if (err.code !== undefined && TIMEOUT_CODES.has(err.code)) c.timeouts++;
      ended(null, sentAt);
    };
    const send = () => {
      const sentAt = performance.now();
      open++;
      pool.request({ path, method: 'POST', headers: run.headers, body: run.body }).then((res) => {
        res.body.on('end', () => ended(res.statusCode, sentAt));
        res.body.on('error', (err) => failed(err as { code?: string }, sentAt));
        res.body.resume();
      }, (err: { code?: string }) => failed(err, sentAt));
    };
    // each millisecond, the requests due by now: the k-th at k / rate s, the first at once (as
    // load/grpc-load.ts), so a window of T s offers T × rate
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) * run.rate) / 1000) + 1);
      while (sent < due) {
        sent++;
        send();
      }
      if (sent >= total) {
        clearInterval(tick);
        sending = false;
        finish();
      }
    }, 1);
  });
}
