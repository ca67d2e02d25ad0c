// the baseline: what a naive service that computes nothing costs. Fastify + msgpackr decode
// the same bodies as the service and answer with the input tensor itself as the output,
// in the request's encoding. Env: PORT, HOST (127.0.0.1), MAX_BODY_BYTES.
import Fastify from 'fastify';
import { Packr, Unpackr } from 'msgpackr';

const MSGPACK_TYPES = ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'];
const bodyLimit = Number(process.env.MAX_BODY_BYTES ?? 64 * 1024 * 1024); // 64 MiB, the service's default

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
const packr = new Packr({ useRecords: false });

interface Tensor { dtype?: string; shape: number[]; data: unknown }
interface Item { input: Tensor }

const app = Fastify({ logger: false, bodyLimit });
app.addContentTypeParser(MSGPACK_TYPES, { parseAs: 'buffer', bodyLimit }, (_request, body, done) => {
  try {
    done(null, unpackr.unpack(body as Buffer));
  } catch (err) {
    done(err as Error, undefined);
  }
});

const echo = (item: Item) => ({ output: { dtype: item.input.dtype ?? 'float32', shape: item.input.shape, data: item.input.data } });

for (const path of ['/v1/rmsnorm', '/v1/layernorm', '/v1/batchnorm', '/v1/groupnorm', '/v1/batch']) {
  app.post(path, async (request, reply) => {
    const body = request.body as Item & { requests: Item[] };
    const answer = path === '/v1/batch' ? { results: body.requests.map(echo) } : echo(body);
    const type = request.headers['content-type'] ?? 'application/json';
    if (type.startsWith('application/json')) return answer;
    return reply.type(type).send(packr.pack(answer));
  });
}
// /v2 binary (the Open Inference Protocol): the JSON header, then the input's bytes as the output's
app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
app.post('/v2/models/:model/infer', async (request, reply) => {
  const body = request.body as Buffer;
  const length = Number(request.headers['inference-header-content-length']);
  const input = JSON.parse(body.subarray(0, length).toString('utf8')).inputs[0];
  const output = { name: 'output', datatype: input.datatype, shape: input.shape, parameters: { binary_data_size: input.parameters.binary_data_size } };
  const header = Buffer.from(JSON.stringify({ model_name: (request.params as { model: string }).model, model_version: '1', outputs: [output] }));
  return reply.type('application/octet-stream').header('inference-header-content-length', header.length).send(Buffer.concat([header, body.subarray(length)]));
});
app.get('/healthz', async () => ({ ok: true }));
app.get('/readyz', async () => ({ ok: true }));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => app.close().then(() => process.exit(0), () => process.exit(1)));
}

await app.listen({ port: Number(process.env.PORT ?? 8081), host: process.env.HOST ?? '127.0.0.1' });
