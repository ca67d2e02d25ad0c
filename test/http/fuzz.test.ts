// hostile and broken bodies on every route in both encodings: each answer is a coded 4xx in JSON
// (bit-flipped bodies may also still be valid: a 200), never a 5xx, and the server keeps working.
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/errors.js';
import { okBody, pack, packTyped, STATUS_TEXT, useFreshApp, clientErrorBody, type Response } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { bytesOf, valuesOf } from '../helpers/tensors.js';
import { referenceBatchnorm, referenceGroupnorm } from '../reference/channel-norm-reference.js';
import { applyMutation, jsonable, mutation } from './fuzz-mutations.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_251_121);
const OPS = ['rmsnorm', 'layernorm', 'batchnorm', 'groupnorm'] as const;
type Op = (typeof OPS)[number];
const ROUTES = ['/v1/rmsnorm', '/v1/layernorm', '/v1/batchnorm', '/v1/groupnorm', '/v1/batch'] as const;
type Route = (typeof ROUTES)[number];
type Encoding = 'json' | 'msgpack';
const CODES = new Set(Object.keys(errorCodes));
const CONTENT_TYPE: Record<Encoding, string> = { json: 'application/json', msgpack: 'application/msgpack' };

const ctx = useFreshApp();

interface Sent { route: Route; encoding: Encoding; payload: Buffer | string; mayBeValid?: boolean }

function send(app: FastifyInstance, { route, encoding, payload }: Sent): Promise<Response> {
  return app.inject({ method: 'POST', url: route, headers: { 'content-type': CONTENT_TYPE[encoding] }, payload });
}

/** a coded 4xx in JSON with exactly the four fields; a 200 only where the body may still be valid */
function checkAnswer(res: Response, mayBeValid = false): void {
  if (mayBeValid && res.statusCode === 200) return;
  const body = clientErrorBody(res);
  expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
  expect(body.statusCode).toBe(res.statusCode);
  expect(CODES.has(body.code as string), `code ${String(body.code)}`).toBe(true);
  expect(body.error).toBe(STATUS_TEXT[res.statusCode]);
  expect(typeof body.message === 'string' && body.message.length > 0).toBe(true);
}

/** then the same app still answers a valid request of every route and encoding, with the right values */
async function runAll(cases: fc.Arbitrary<Sent>, numRuns: number): Promise<void> {
  await fc.assert(fc.asyncProperty(cases, async (c) => checkAnswer(await send(ctx.app, c), c.mayBeValid)), { numRuns, seed: SEED });
  await expectStillServing(ctx.app);
}

const VALUES = [0.5, -1.25, 2, 3.5, -4, 5.25, 6, -7.5];

const WEIGHT = [1, 0.5, 2, 1];
const BIAS = [0, 0.25, 0, -1];
const RUNNING = { mean: [0.5, 0, -1, 2], var: [1, 2, 0.5, 4] };

/** a valid request using every field of its op, so that every field can be broken */
function validBody(route: Route, encoding: Encoding): Record<string, unknown> {
  const tensor = (shape: number[], values: number[]) =>
    ({ dtype: 'float32', shape, data: encoding === 'json' ? values : Buffer.from(bytesOf('float32', values)) });
  const common = () => ({ input: tensor([2, 4], VALUES), weight: tensor([4], WEIGHT), bias: tensor([4], BIAS), eps: 1e-5, return_stats: true, output_dtype: 'float16' });
  const fields = (op: Op): Record<string, unknown> => {
    switch (op) {
      case 'batchnorm':
        return { ...common(), channel_axis: 1, training: true, momentum: 0.25, running_mean: tensor([4], RUNNING.mean), running_var: tensor([4], RUNNING.var) };
      case 'groupnorm':
        return { ...common(), num_groups: 2 };
      default:
        return {
          ...common(), residual: tensor([2, 4], VALUES.map((v) => v / 2)), axis: -1, eps_placement: 'outside', weight_offset: 0.5,
          ...(op === 'rmsnorm' ? { partial: 0.75 } : {}),
        };
    }
  };
  if (route === '/v1/batch') return { requests: OPS.map((op) => ({ op, ...fields(op) })) };
  return fields(route.slice(4) as Op);
}

/** the float64 answer of validBody's request for `op` */
function expectedOutput(op: Op): number[] {
  const affine = { weight: WEIGHT, bias: BIAS, eps: 1e-5 };
  if (op === 'batchnorm') {
    return referenceBatchnorm({ x: VALUES, shape: [2, 4], channelAxis: 1, training: true, runningMean: RUNNING.mean, runningVar: RUNNING.var, momentum: 0.25, ...affine }).output;
  }
  if (op === 'groupnorm') return referenceGroupnorm({ x: VALUES, shape: [2, 4], numGroups: 2, ...affine }).output;
  return reference({
    op, dtype: 'float32', shape: [2, 4], values: VALUES, residual: VALUES.map((v) => v / 2), partial: op === 'rmsnorm' ? 0.75 : undefined,
    weight: { dtype: 'float32', values: WEIGHT }, bias: { dtype: 'float32', values: BIAS },
    eps: 1e-5, epsPlacement: 'outside', weightOffset: 0.5, outputDtype: 'float16',
  }).output;
}

function encode(body: unknown, encoding: Encoding): Buffer | string {
  return encoding === 'json' ? JSON.stringify(body) : packTyped(body);
}

const route = fc.constantFrom(...ROUTES);
const encoding = fc.constantFrom<Encoding>('json', 'msgpack');

describe('fuzz: every answer is a coded 4xx, never a 5xx', () => {
  it('300 bodies of random bytes', async () => {
    const arb = fc.record({ route, encoding, bytes: fc.uint8Array({ maxLength: 300 }) })
      .map(({ route, encoding, bytes }): Sent => ({ route, encoding, payload: Buffer.from(bytes) }));
    await runAll(arb, 300);
  });

  it('300 valid msgpack bodies cut short or bit-flipped', async () => {
    const arb = fc.record({ route, cut: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), flips: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), truncate: fc.boolean() })
      .map(({ route, cut, flips, truncate }): Sent => {
        const valid = pack(validBody(route, 'msgpack'));
        if (truncate) return { route, encoding: 'msgpack', payload: valid.subarray(0, Math.floor(cut * valid.length)) };
        const flipped = Buffer.from(valid);
        for (const f of flips) flipped[f % flipped.length] ^= 1 << (f % 8);
        return { route, encoding: 'msgpack', payload: flipped, mayBeValid: true };
      });
    await runAll(arb, 300);
  });

  it('150 msgpack bodies declaring huge str/bin/array/map/ext lengths with few bytes after', async () => {
    const huge = fc.constantFrom(
      [0xdb, 0xff, 0xff, 0xff, 0xff], // str32 of 4 GiB
      [0xc6, 0xff, 0xff, 0xff, 0xff], // bin32
      [0xdd, 0x7f, 0xff, 0xff, 0xff], // array32 of 2^31 - 1 items
      [0xdf, 0x7f, 0xff, 0xff, 0xff], // map32
      [0xdd, 0xff, 0xff, 0xff, 0xff],
      [0xdf, 0xff, 0xff, 0xff, 0xff],
      [0xc9, 0xff, 0xff, 0xff, 0xff, 0x74], // ext32 typed array
      [0xdc, 0xff, 0xff], // array16
      [0xde, 0xff, 0xff], // map16
      [0xc5, 0xff, 0xff], // bin16
    );
    const arb = fc.record({ route, header: huge, tail: fc.uint8Array({ maxLength: 8 }), at: fc.nat(), where: fc.constantFrom('body', 'field', 'splice') })
      .map(({ route, header, tail, at, where }): Sent => {
        const hostile = Buffer.concat([Buffer.from(header), Buffer.from(tail)]);
        if (where === 'body') return { route, encoding: 'msgpack', payload: hostile };
        const valid = pack(validBody(route, 'msgpack'));
        if (where === 'field') {
          // { <a valid field>, eps: <hostile> } — the hostile value ends the body
          const key = route === '/v1/batch' ? 'requests' : 'eps';
          const rest = route === '/v1/batch' ? {} : { input: validBody(route, 'msgpack').input };
          const head = pack(rest);
          return { route, encoding: 'msgpack', payload: Buffer.concat([Buffer.from([0x80 | (Object.keys(rest).length + 1)]), head.subarray(head[0] === 0xde ? 3 : 1), pack(key), hostile]) };
        }
        const cut = at % valid.length;
        return { route, encoding: 'msgpack', payload: Buffer.concat([valid.subarray(0, cut), hostile]) };
      });
    await runAll(arb, 150);
  });

  it('400 valid bodies with one field of the wrong type or value', async () => {
    const arb = fc.record({ route, encoding, mutation: mutation() })
      .filter(({ encoding, mutation }) => encoding === 'msgpack' || jsonable(mutation.value))
      .map(({ route, encoding, mutation }): Sent => {
        const body = validBody(route, encoding);
        return { route, encoding, payload: encode(applyMutation(body, route, mutation), encoding) };
      });
    await runAll(arb, 400);
  });

  it('150 JSON garbage bodies, and valid JSON cut short', async () => {
    const garbage = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.constantFrom(
        '{"input":{"shape":[1],"data":[NaN]}}', '{"input":{"shape":[1],"data":[Infinity]}}', '{"input":{"shape":[1],"data":[-Infinity]}}',
        '{"input":{"shape":[1],"data":[1e400]}}', '{"input":{"shape":[1],"data":[-1e400]}}', '{"input":{"shape":[1e400],"data":[1]}}',
        '{"input":{"shape":[1],"data":[1]},"axis":1e400}', '{"input":{"shape":[1],"data":[1]},"weight_offset":1e999}',
        '{"input":{"shape":[1],"data":[1],}}', "{'input':{'shape':[1],'data':[1]}}", '{"input":{"shape":[1],"data":[1]}} // c',
        '{"input":{"shape":[1],"data":[1]},"__proto__":{"eps":1}}', '{"input":{"shape":[1],"data":[1]},"constructor":{"prototype":{}}}',
        '{"input":{"shape":[1],"data":[1]},"eps":0.5,"eps":-0.5}', '{"input":{"shape":[1],"data":["1"]}}', '{"input":{"shape":[1],"data":["nan"]}}',
        '{"input":{"shape":[1],"data":[0x10]}}', '{"input":{"shape":[01],"data":[1]}}', '{"input":{"shape":[1],"data":[.5]}}',
        '{"input":{"shape":[1],"data":[1]}}\u0000', '{"input":"\\ud800"}', 'null', 'true', '[]', '""', '0',
      ),
    );
    const arb = fc.record({ route, text: garbage, cut: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), truncate: fc.boolean() })
      .map(({ route, text, cut, truncate }): Sent => {
        if (!truncate) return { route, encoding: 'json', payload: text };
        const valid = JSON.stringify(validBody(route, 'json'));
        return { route, encoding: 'json', payload: valid.slice(0, Math.floor(cut * valid.length)) };
      });
    await runAll(arb, 150);
  });

  it('deeply nested arrays and maps (100,000 levels) in every position, both encodings', async () => {
    const DEPTH = 100_000;
    const msgpackArrays = Buffer.concat([Buffer.alloc(DEPTH, 0x91), Buffer.from([0x01])]);
    const msgpackMaps = Buffer.alloc(DEPTH * 3 + 1);
    for (let i = 0; i < DEPTH; i++) msgpackMaps.set([0x81, 0xa1, 0x61], i * 3);
    msgpackMaps[DEPTH * 3] = 0x01;
    const jsonArrays = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
    const jsonMaps = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
    const input = '{"dtype":"float32","shape":[1],"data":[1]}';
    const inputMsgpack = pack({ dtype: 'float32', shape: [1], data: [1] });
    const sent: Sent[] = [];
    for (const route of ROUTES) {
      for (const nested of [msgpackArrays, msgpackMaps]) {
        sent.push({ route, encoding: 'msgpack', payload: nested });
        // { input, eps: <nested> } and { input: { ..., data: <nested> } }
        sent.push({ route, encoding: 'msgpack', payload: Buffer.concat([Buffer.from([0x82]), pack('input'), inputMsgpack, pack(route === '/v1/batch' ? 'requests' : 'eps'), nested]) });
        sent.push({ route, encoding: 'msgpack', payload: Buffer.concat([Buffer.from([0x81]), pack('input'), Buffer.from([0x83]), pack('dtype'), pack('float32'), pack('shape'), pack([1]), pack('data'), nested]) });
      }
      for (const nested of [jsonArrays, jsonMaps]) {
        sent.push({ route, encoding: 'json', payload: nested });
        sent.push({ route, encoding: 'json', payload: `{"input":${input},"${route === '/v1/batch' ? 'requests' : 'eps'}":${nested}}` });
        sent.push({ route, encoding: 'json', payload: `{"input":{"shape":[1],"data":${nested}}}` });
        sent.push({ route, encoding: 'json', payload: `{"requests":[{"op":"rmsnorm","input":{"shape":[1],"data":[1]},"weight":${nested}}]}` });
      }
    }
    for (const c of sent) checkAnswer(await send(ctx.app, c));
    await expectStillServing(ctx.app);
  });

  it('msgpack structured-clone pointers (a 30-level DAG in 300 bytes) are refused, not walked', async () => {
    // each level is [x, x] with x the level below: the decoded value has 2^30 paths
    const ext = (type: number, id: number) => Buffer.from([0xd6, type, id >>> 24, (id >>> 16) & 255, (id >>> 8) & 255, id & 255]);
    let dag = Buffer.from([0x92, 0x01, 0x02]);
    for (let k = 1; k <= 30; k++) dag = Buffer.concat([Buffer.from([0x92]), ext(0x69, k), dag, ext(0x70, k)]);
    const payload = Buffer.concat([Buffer.from([0x82]), pack('input'), pack({ dtype: 'float32', shape: [1], data: [1] }), pack('eps'), dag]);
    // a walk of its 2^30 paths would not end within the test's timeout
    for (const r of ROUTES) checkAnswer(await send(ctx.app, { route: r, encoding: 'msgpack', payload }));
    await expectStillServing(ctx.app);
  });

  it('a valid request right after a hostile one on the same app gets 200 with the right values', async () => {
    checkAnswer(await send(ctx.app, { route: '/v1/rmsnorm', encoding: 'msgpack', payload: Buffer.concat([Buffer.alloc(100_000, 0x91), Buffer.from([1])]) }));
    checkAnswer(await send(ctx.app, { route: '/v1/rmsnorm', encoding: 'msgpack', payload: Buffer.from([0xdd, 0x7f, 0xff, 0xff, 0xff]) }));
    await expectStillServing(ctx.app);
  });
});

async function expectStillServing(app: FastifyInstance): Promise<void> {
  for (const r of ROUTES) {
    for (const enc of ['json', 'msgpack'] as Encoding[]) {
      const body = okBody(await send(app, { route: r, encoding: enc, payload: encode(validBody(r, enc), enc) }));
      const outputs = r === '/v1/batch' ? body.results.map((x: { output: unknown }) => x.output) : [body.output];
      const ops: readonly Op[] = r === '/v1/batch' ? OPS : [r.slice(4) as Op];
      ops.forEach((op, i) => expectClose(valuesOf(outputs[i]), expectedOutput(op), 'float16'));
    }
  }
}
