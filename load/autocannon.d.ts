// the part of autocannon 8 (which ships no types) that the load suite uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    method?: 'GET' | 'POST' | 'PUT';
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    /** seconds */
    duration?: number;
    /** total requests; overrides duration */
    amount?: number;
    pipelining?: number;
    /** offered req/s over all connections */
    overallRate?: number;
    /** ms between samples; the result is emitted at the first tick after the run ends */
    sampleInt?: number;
    /** seconds per request */
    timeout?: number;
  }

  export interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    resets: number;
    /** seconds */
    duration: number;
    requests: { total: number; sent: number; average: number };
    latency: { p50: number; p99: number };
  }

  export interface Instance extends EventEmitter {
    stop(): void;
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
    /** a connection error, or a timeout ('request timed out') */
    on(event: 'reqError', listener: (error: Error) => void): this;
    on(event: 'done', listener: (result: Result) => void): this;
  }

  function autocannon(options: Options, callback: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
