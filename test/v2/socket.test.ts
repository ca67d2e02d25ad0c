// OIP.md binary requests over a real socket, as the Python client sends them: no Content-Type,
// Content-Length (or chunked), Inference-Header-Content-Length; the answer read off the wire.
import { request as httpRequest, Agent, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { randomValues, valuesFromBytes } from '../helpers/tensors.js';
import { binaryBody, binaryInput, parseAnswerJson } from './oip.js';

let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  app = await createApp();
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
});

interface Reply { status: number; headers: IncomingHttpHeaders; body: Buffer; sentHeaders: string[] }

/** one POST; `chunked` sends the body in two writes without Content-Length */
function post(path: string, payload: Buffer, headers: Record<string, string>, { chunked = false, agent }: { chunked?: boolean; agent?: Agent } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port, method: 'POST', path, agent: agent ?? false,
      headers: chunked ? headers : { ...headers, 'content-length': String(payload.length) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), sentHeaders: req.getHeaderNames() }));
    });
    req.on('error', reject);
    if (chunked) {
      req.write(payload.subarray(0, 7));
      req.end(payload.subarray(7));
    } else {
      req.end(payload);
    }
  });
}

describe('binary inference over a socket, no Content-Type', () => {
  const x = randomValues(21, 4 * 16, 2, 1);
  const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [4, 16], values: x });

  const check = (reply: Reply, id: string) => {
    expect(reply.sentHeaders).not.toContain('content-type');
    expect(reply.status, reply.body.toString('utf8', 0, 300)).toBe(200);
    expect(reply.headers['content-type']).toBe('application/octet-stream');
    expect(reply.headers['server-timing']).toMatch(/decode;dur=/);
    const h = Number(reply.headers['inference-header-content-length']);
    expect(parseAnswerJson(reply.body.subarray(0, h).toString('utf8'))).toEqual({
      model_name: 'layernorm', model_version: '1', id,
      outputs: [
        { name: 'output', datatype: 'FP32', shape: [4, 16], parameters: { binary_data_size: 256 } },
        { name: 'rstd', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } },
      ],
    });
    expect(reply.body.length).toBe(h + 256 + 16);
    expectClose(valuesFromBytes('float32', reply.body.subarray(h, h + 256)), ref.output, 'float32');
    expectClose(valuesFromBytes('float32', reply.body.subarray(h + 256)), ref.rstd, 'float32');
  };

  const body = (id: string) => binaryBody({ id, parameters: { binary_data_output: true, return_stats: true }, outputs: [{ name: 'output' }, { name: 'rstd' }] }, [binaryInput('input', 'FP32', [4, 16], x)]);

  it('with Content-Length, then chunked, then twice on one kept-alive connection', async () => {
    const one = body('socket');
    check(await post('/v2/models/layernorm/infer', one.payload, { 'inference-header-content-length': String(one.headerLength) }), 'socket');
    const two = body('chunked');
    check(await post('/v2/models/layernorm/versions/1/infer', two.payload, { 'inference-header-content-length': String(two.headerLength) }, { chunked: true }), 'chunked');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const id of ['first', 'second']) {
        const b = body(id);
        check(await post('/v2/models/layernorm/infer', b.payload, { 'inference-header-content-length': String(b.headerLength) }, { agent }), id);
      }
    } finally {
      agent.destroy();
    }
  });

  it('a framing error over the socket is a JSON {"error"} 400', async () => {
    const b = body('bad');
    const reply = await post('/v2/models/layernorm/infer', b.payload.subarray(0, b.payload.length - 4), { 'inference-header-content-length': String(b.headerLength) });
    expect(reply.status).toBe(400);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(reply.body.toString('utf8'))).toEqual({ error: "Inference-Header-Content-Length: the binary data ends before input input's 256 bytes" });
  });
});
