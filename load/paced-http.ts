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
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function pacedHttp(run: PacedHttpRun): Promise<Cannon> {
  const target = new URL(run.url);
  const pool = new Pool(target.origin, { connections: run.connections, pipelining: 1, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
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
      pool.destroy().then(() => resolve(c), () => resolve(c));
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
