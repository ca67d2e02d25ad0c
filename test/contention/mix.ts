// the load docker/load.mjs sends, for the contention test: small JSON RMSNorm and LayerNorm (2×4) and
// a 512 KiB msgpack RMSNorm (32×4096 float32) answered as JSON; each answer checked against the
// float64 reference; and a plain node:http client on 127.0.0.1 that keeps every error it meets.
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { firstMismatch, referenceRows } from '../reference/contract.mjs';
import { msgpackBody, MSGPACK, values } from '../service/helpers.js';

export interface MixRequest {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  shape: number[];
  /** the float64 reference of the output */
  expected: Float64Array;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const SMALL = [1, 2, 3, 4, -1, -2, -3, -5];
const MEDIUM_ROWS = 32;
const MEDIUM_N = 4096; // float32 32×4096: a 512 KiB tensor
const medium = values(MEDIUM_ROWS * MEDIUM_N, 11);

export const SMALL_RMSNORM: MixRequest = {
  name: 'rmsnorm 2x4 JSON, eps 0', path: '/v1/rmsnorm', headers: JSON_TYPE, shape: [2, 4],
  body: Buffer.from(JSON.stringify({ input: { shape: [2, 4], data: SMALL }, eps: 0 })),
  expected: referenceRows('rmsnorm', SMALL, 4, { eps: 0 }),
};
export const SMALL_LAYERNORM: MixRequest = {
  name: 'layernorm 2x4 JSON', path: '/v1/layernorm', headers: JSON_TYPE, shape: [2, 4],
  body: Buffer.from(JSON.stringify({ input: { shape: [2, 4], data: SMALL } })),
  expected: referenceRows('layernorm', SMALL, 4),
};
export const MEDIUM_RMSNORM: MixRequest = {
  name: 'rmsnorm 32x4096 float32 msgpack, answered as JSON', path: '/v1/rmsnorm',
  headers: { 'content-type': MSGPACK, accept: 'application/json' }, shape: [MEDIUM_ROWS, MEDIUM_N],
  body: msgpackBody(medium, [MEDIUM_ROWS, MEDIUM_N]),
  expected: referenceRows('rmsnorm', medium, MEDIUM_N),
};
export const MIX: readonly MixRequest[] = [SMALL_RMSNORM, SMALL_LAYERNORM, MEDIUM_RMSNORM];

/**
 * what is wrong with an answer to `req`, or null when it is a 200 whose output is within the
 * float32 tolerance of the reference. Answers are checked once per distinct text: a text already
 * found correct passes at once, so a run of thousands of answers parses only the few distinct ones.
 */
export function answerChecker(): (req: MixRequest, answer: Answer) => string | null {
  const correct = new Set<string>();
  return (req, { status, text }) => {
    if (status !== 200) return `${status} ${text.slice(0, 300)}`;
    if (correct.has(text)) return null;
    const { output } = JSON.parse(text) as { output: { dtype: string; shape: number[]; data: number[] } };
    if (output.dtype !== 'float32' || JSON.stringify(output.shape) !== JSON.stringify(req.shape)) {
      return `${req.name}: output ${output.dtype} ${JSON.stringify(output.shape)}`;
    }
    const i = firstMismatch(output.data, req.expected);
    if (i >= 0) return `${req.name}: element ${i} is ${output.data[i]}, expected ${req.expected[i]}`;
    correct.add(text);
    return null;
  };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** at most `connections` kept-alive connections to 127.0.0.1:`port`; every error, even one after
 *  its answer, is kept in `errors`, and every connection used in `sockets` */
export class Client {
  readonly errors: Error[] = [];
  readonly sockets = new Set<Socket>();
  private readonly agent: Agent;

  constructor(private readonly port: number, connections: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  send(req: MixRequest, headers: Record<string, string> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const outgoing = request({
        agent: this.agent, host: '127.0.0.1', port: this.port, method: 'POST', path: req.path,
        headers: { ...req.headers, ...headers, 'content-length': String(req.body.length) },
      });
      outgoing.on('socket', (socket) => this.sockets.add(socket));
      outgoing.on('error', (err) => {
        this.errors.push(err);
        reject(err);
      });
      outgoing.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err) => {
          this.errors.push(err);
          reject(err);
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      });
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
