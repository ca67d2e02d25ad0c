// the part of autocannon 8's API these tests use (the package ships no types)
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Client extends EventEmitter {
      on(event: 'headers', listener: (info: { statusCode: number; headers: string[] }) => void): this;
    }
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      connections?: number;
      duration?: number;
      maxOverallRequests?: number;
      timeout?: number;
      setupClient?: (client: Client) => void;
    }
    interface Histogram { p50: number; p99: number; max: number; average: number }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      resets?: number;
      non2xx: number;
      requests: Histogram & { total: number };
      latency: Histogram;
      statusCodeStats: Record<string, { count: number }>;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}
