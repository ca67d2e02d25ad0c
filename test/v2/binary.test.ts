// OIP.md "Binary tensor data" through ctx.app.inject: Inference-Header-Content-Length and the blocks after
// the JSON, sizes, binary and JSON outputs, the answer's layout, and Content-Type not consulted.
// One ctx.app serves the file (each boots in ~0.4 s).
import { describe, expect, it } from 'vitest';
import { useFreshApp, expectServerTiming } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes } from '../helpers/tensors.js';
import { referenceBatchnorm } from '../reference/channel-norm-reference.js';
import { firstMismatch, referenceRows } from '../reference/contract.mjs';
import { bf16Truncated, binaryBody, binaryInput, expectOipError, infer, jsonInput, parseAnswerJson, readAnswer } from './oip.js';

const ctx = useFreshApp({}, 'file');

type Headers = Record<string, string>;
/** a binary request as the Python client sends it: no Content-Type, the header's length */
const send = (model: string, body: { payload: Buffer; headerLength: number }, headers: Headers = {}) =>
  infer(ctx.app, model, body.payload, { 'inference-header-content-length': String(body.headerLength), ...headers });

const VALUES = [1, 2, 3, 4, -5, 6, -7, 8];
const simple = () => binaryBody({}, [binaryInput('input', 'FP32', [2, 4], VALUES)]);
const simpleRef = () => reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values: VALUES }).output;

describe('Inference-Header-Content-Length', () => {
  it('the JSON length exactly: 200, the same answer as the request in JSON', async () => {
    const body = simple();
    const { outputs } = readAnswer(await send('rmsnorm', body));
    expectClose(outputs.get('output')!.values, simpleRef(), 'float32');
    const json = await infer(ctx.app, 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [2, 4], VALUES)] });
    expect(readAnswer(json).outputs.get('output')!.values).toEqual(outputs.get('output')!.values);
  });

  it.each([
    ['0', '0'], ['not a number', 'abc'], ['negative', '-5'], ['fractional', '95.5'], ['an exponent', '1e1'],
    ['with a space', ' 95'], ['hexadecimal', '0x10'], ['empty', ''],
  ])('%s (%j) → 400 naming the header', async (_title, value) => {
    const { payload } = simple();
    const res = await infer(ctx.app, 'rmsnorm', payload, { 'inference-header-content-length': value });
    expectOipError(res, 400, `Inference-Header-Content-Length: "${value}" must be a whole number from 1 to the body's ${payload.length} bytes`);
  });

  it('larger than the body → 400 naming the header', async () => {
    const { payload } = simple();
    const res = await infer(ctx.app, 'rmsnorm', payload, { 'inference-header-content-length': String(payload.length + 1) });
    expectOipError(res, 400, `Inference-Header-Content-Length: "${payload.length + 1}" must be a whole number from 1 to the body's ${payload.length} bytes`);
  });

  // the JSON is then cut short or takes a byte of the block: a 400, but its message is the JSON
  // parser's "body: …", which does not name the header (reported)
  it.each([[-1], [1]])('off by %i → 400', async (delta) => {
    const body = simple();
    const res = await send('rmsnorm', { ...body, headerLength: body.headerLength + delta });
    expectOipError(res, 400, new RegExp(`^Inference-Header-Content-Length ${body.headerLength + delta}: the body's first [0-9]+ bytes are not one JSON object`));
  });

  it('the whole body as the header with JSON-only inputs: 200', async () => {
    const json = Buffer.from(JSON.stringify({ inputs: [jsonInput('input', 'FP32', [2, 4], VALUES)] }));
    expectClose(readAnswer(await send('rmsnorm', { payload: json, headerLength: json.length })).outputs.get('output')!.values, simpleRef(), 'float32');
  });
});

describe('request blocks', () => {
  it('rmsnorm 3x4: blocks in JSON order (residual, input, bias) with a JSON-only weight between them, FP32/FP16/FP64', async () => {
    const x = randomValues(1, 12, 2);
    const r = randomValues(2, 12, 0.5);
    const w = randomValues(3, 4, 0.5, 1);
    const b = randomValues(4, 4, 0.5);
    const body = binaryBody({ parameters: { return_stats: true } }, [
      binaryInput('residual', 'FP32', [3, 4], r),
      jsonInput('weight', 'FP64', [4], w),
      binaryInput('input', 'FP32', [3, 4], x),
      binaryInput('bias', 'FP16', [4], b),
    ]);
    const { outputs } = readAnswer(await send('rmsnorm', body));
    const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape: [3, 4], values: x, residual: r, weight: { dtype: 'float64', values: w }, bias: { dtype: 'float16', values: b } });
    expect([...outputs.keys()]).toEqual(['output', 'residual', 'rstd']);
    expectClose(outputs.get('output')!.values, ref.output, 'float32');
    expect(outputs.get('residual')!.values).toEqual(ref.residual);
    expectClose(outputs.get('rstd')!.values, ref.rstd, 'float32');
  });

  it('batchnorm 4x3 FP64 training: running_var, input, running_mean as blocks, in that JSON order, at each byte offset mod 8', async () => {
    const x = randomValues(5, 12, 2, 1);
    const ref = referenceBatchnorm({
      x, shape: [4, 3], channelAxis: 1, training: true, runningMean: [0.5, 0, -0.5], runningVar: [1, 2, 3], momentum: 0.1, weight: null, bias: null, eps: 1e-5,
    });
    // the id's length moves the blocks across every alignment
    for (let pad = 0; pad < 8; pad++) {
      const body = binaryBody({ id: 'x'.repeat(pad), parameters: { training: true } }, [
        binaryInput('running_var', 'FP64', [3], [1, 2, 3]),
        binaryInput('input', 'FP64', [4, 3], x),
        binaryInput('running_mean', 'FP64', [3], [0.5, 0, -0.5]),
      ]);
      const { outputs } = readAnswer(await send('batchnorm', body));
      const at = `input block at byte ${body.headerLength + 24} of the body`;
      expect([...outputs.keys()], at).toEqual(['output', 'running_mean', 'running_var']);
      expect(firstMismatch(outputs.get('output')!.values, ref.output, 'float64'), at).toBe(-1);
      expect(firstMismatch(outputs.get('running_mean')!.values, ref.runningMean!, 'float64'), at).toBe(-1);
      expect(firstMismatch(outputs.get('running_var')!.values, ref.runningVar!, 'float64'), at).toBe(-1);
    }
  });

  it('empty tensors: input [0, 4] with binary_data_size 0, then a weight block; output [0, 4], binary and JSON', async () => {
    for (const binary of [false, true]) {
      const body = binaryBody({ parameters: { binary_data_output: binary } }, [binaryInput('input', 'FP32', [0, 4], []), binaryInput('weight', 'BF16', [4], [1, 2, 3, 4])]);
      const res = await send('rmsnorm', body);
      const { json, outputs } = readAnswer(res);
      expect(outputs.get('output')).toMatchObject({ datatype: 'FP32', shape: [0, 4], values: [], binary });
      expect(json.outputs[0][binary ? 'parameters' : 'data']).toEqual(binary ? { binary_data_size: 0 } : []);
    }
  });

  it('FP16 bytes are IEEE binary16 and BF16 bytes the upper half of float32: 1.0 as 0x3c00 and 0x3f80', async () => {
    const fp16 = { name: 'input', datatype: 'FP16', shape: [2], bytes: new Uint8Array([0x00, 0x3c, 0x00, 0xc0]) } as const;
    const bf16 = { name: 'weight', datatype: 'BF16', shape: [2], bytes: new Uint8Array([0x80, 0x3f, 0x00, 0x40]) } as const;
    // x = [1, -2], rms = sqrt(2.5); weight [1, 2]
    const { outputs } = readAnswer(await send('rmsnorm', binaryBody({ parameters: { output_dtype: 'FP64', eps: 0 } }, [fp16, bf16])));
    expectClose(outputs.get('output')!.values, [1 / Math.sqrt(2.5), -4 / Math.sqrt(2.5)], 'float64');
  });

  it('layernorm 4x64 BF16 made as clients make it (float32 truncated), BF16 binary out: within the BF16 bound', async () => {
    const x = bf16Truncated(randomValues(6, 256, 3, 1));
    const body = binaryBody({ parameters: { binary_data_output: true } }, [{ name: 'input', datatype: 'BF16', shape: [4, 64], bytes: x.bytes }]);
    const res = await send('layernorm', body);
    const out = readAnswer(res).outputs.get('output')!;
    expect([out.datatype, out.binary]).toEqual(['BF16', true]);
    // the answer's bytes, read here as the upper halves of float32 patterns
    const raw = res.rawPayload.subarray(Number(res.headers['inference-header-content-length']));
    const upper = Array.from({ length: 256 }, (_, i) => new Float32Array(new Uint32Array([raw.readUInt16LE(i * 2) << 16]).buffer)[0]);
    expect(upper).toEqual(out.values);
    const ref = reference({ op: 'layernorm', dtype: 'bfloat16', shape: [4, 64], values: x.values });
    expectClose(out.values, ref.output, 'bfloat16', ref.largeMean);
  });

  it('a large request in binary: rmsnorm 64x4096 FP32 (split over the pool), output binary', async () => {
    const x = randomValues(7, 64 * 4096, 2);
    const w = randomValues(8, 4096, 0.5, 1);
    const body = binaryBody({ outputs: [{ name: 'output', parameters: { binary_data: true } }] }, [binaryInput('input', 'FP32', [64, 4096], x), binaryInput('weight', 'FP32', [4096], w)]);
    const res = await send('rmsnorm', body);
    expectServerTiming(res);
    const out = readAnswer(res).outputs.get('output')!;
    expect(out.shape).toEqual([64, 4096]);
    const ref = referenceRows('rmsnorm', new Float32Array(x), 4096, { weight: new Float32Array(w) });
    expect(firstMismatch(out.values, ref, 'float32')).toBe(-1);
  });
});

describe('request block errors', () => {
  it('an input with both data and binary_data_size → 400 naming it', async () => {
    const body = binaryBody({}, [{ ...jsonInput('input', 'FP32', [2], [1, 2]), parameters: { binary_data_size: 8 } }]);
    const payload = Buffer.concat([body.payload, bytesOf('float32', [1, 2])]);
    expectOipError(await send('rmsnorm', { payload, headerLength: body.headerLength }), 400, 'input data: an input with binary_data_size takes no data');
  });

  it.each([
    ['FP32 [2] with 4 bytes', 'input', 'FP32', [2], 4, 'input binary_data_size 4: shape [2] of FP32 needs 8 bytes'],
    ['FP16 [4] with 16 bytes', 'weight', 'FP16', [4], 16, 'weight binary_data_size 16: shape [4] of FP16 needs 8 bytes'],
    ['FP64 [2, 4] with 32 bytes', 'input', 'FP64', [2, 4], 32, 'input binary_data_size 32: shape [2, 4] of FP64 needs 64 bytes'],
  ])('binary_data_size not shape × itemsize: %s → 400', async (_title, name, datatype, shape, size, message) => {
    const inputs = name === 'input' ? [] : [binaryInput('input', 'FP32', [2, 4], VALUES)];
    const listed = { name, datatype, shape, parameters: { binary_data_size: size } };
    const json = Buffer.from(JSON.stringify({ inputs: [...inputs.map(({ bytes, ...t }) => ({ ...t, parameters: { binary_data_size: bytes.length } })), listed] }));
    const payload = Buffer.concat([json, ...inputs.map((t) => t.bytes), Buffer.alloc(size)]);
    expectOipError(await send('rmsnorm', { payload, headerLength: json.length }), 400, message);
  });

  it.each([[-8], [1.5], ['8'], [null]])('binary_data_size %j → 400 naming it', async (size) => {
    const json = Buffer.from(JSON.stringify({ inputs: [{ name: 'input', datatype: 'FP32', shape: [2], parameters: { binary_data_size: size } }] }));
    const payload = Buffer.concat([json, bytesOf('float32', [1, 2])]);
    expectOipError(await send('rmsnorm', { payload, headerLength: json.length }), 400, 'input parameters.binary_data_size: must be an integer ≥ 0');
  });

  it('a body longer than header + blocks → 400 naming the header', async () => {
    const body = simple();
    const res = await send('rmsnorm', { ...body, payload: Buffer.concat([body.payload, Buffer.from([0])]) });
    expectOipError(res, 400, "Inference-Header-Content-Length: 33 bytes follow the JSON header, but the inputs' binary_data_size add up to 32");
  });

  it('a body shorter than header + blocks → 400 naming the header and the input', async () => {
    const body = simple();
    const res = await send('rmsnorm', { ...body, payload: body.payload.subarray(0, body.payload.length - 1) });
    expectOipError(res, 400, "Inference-Header-Content-Length: the binary data ends before input input's 32 bytes");
  });

  it('bytes after the JSON when no input is binary → 400', async () => {
    const json = Buffer.from(JSON.stringify({ inputs: [jsonInput('input', 'FP32', [2, 4], VALUES)] }));
    const res = await send('rmsnorm', { payload: Buffer.concat([json, Buffer.alloc(4)]), headerLength: json.length });
    expectOipError(res, 400, "Inference-Header-Content-Length: 4 bytes follow the JSON header, but the inputs' binary_data_size add up to 0");
  });

  it('binary_data_size without Inference-Header-Content-Length → 400', async () => {
    const { payload } = simple();
    expectOipError(await infer(ctx.app, 'rmsnorm', payload), 400, /^body: .*JSON/);
    const json = Buffer.from(JSON.stringify({ inputs: [{ name: 'input', datatype: 'FP32', shape: [2], parameters: { binary_data_size: 8 } }] }));
    expectOipError(await infer(ctx.app, 'rmsnorm', json), 400, "Inference-Header-Content-Length: the binary data ends before input input's 8 bytes");
  });
});

describe('binary outputs', () => {
  const x = randomValues(9, 12, 2, 3);
  const inputs = () => [binaryInput('input', 'FP32', [3, 4], x), binaryInput('residual', 'FP32', [3, 4], x.map((v) => v / 4))];
  const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [3, 4], values: x, residual: x.map((v) => v / 4) });

  it('binary_data_output true without outputs: every output binary, in answer order', async () => {
    const res = await send('layernorm', binaryBody({ id: 'all', parameters: { binary_data_output: true, return_stats: true } }, inputs()));
    const { json, outputs } = readAnswer(res);
    expect(json).toEqual({
      model_name: 'layernorm', model_version: '1', id: 'all',
      outputs: [
        { name: 'output', datatype: 'FP32', shape: [3, 4], parameters: { binary_data_size: 48 } },
        { name: 'residual', datatype: 'FP32', shape: [3, 4], parameters: { binary_data_size: 48 } },
        { name: 'mean', datatype: 'FP32', shape: [3], parameters: { binary_data_size: 12 } },
        { name: 'rstd', datatype: 'FP32', shape: [3], parameters: { binary_data_size: 12 } },
      ],
    });
    expectClose(outputs.get('output')!.values, ref.output, 'float32');
    expect(outputs.get('residual')!.values).toEqual(ref.residual);
    expectClose(outputs.get('mean')!.values, ref.mean, 'float32');
    expectClose(outputs.get('rstd')!.values, ref.rstd, 'float32');
  });

  it('mixed: outputs [mean JSON, output binary, rstd binary]; the JSON lists all three, the bytes are output then rstd', async () => {
    const res = await send('layernorm', binaryBody({ parameters: { return_stats: true }, outputs: [{ name: 'mean' }, { name: 'output', parameters: { binary_data: true } }, { name: 'rstd', parameters: { binary_data: true } }] }, inputs()));
    const { json, outputs } = readAnswer(res);
    expect(json.outputs.map((o: any) => [o.name, 'data' in o, o.parameters?.binary_data_size])).toEqual([['mean', true, undefined], ['output', false, 48], ['rstd', false, 12]]);
    const h = Number(res.headers['inference-header-content-length']);
    expect(res.rawPayload.length).toBe(h + 48 + 12);
    expect(valuesFromBytes('float32', res.rawPayload.subarray(h, h + 48))).toEqual(outputs.get('output')!.values);
    expect(valuesFromBytes('float32', res.rawPayload.subarray(h + 48))).toEqual(outputs.get('rstd')!.values);
    expectClose(outputs.get('mean')!.values, ref.mean, 'float32');
  });

  it('binary_data_output true with a per-output binary_data false: that one in JSON, the others binary', async () => {
    const res = await send('layernorm', binaryBody({ parameters: { binary_data_output: true, return_stats: true }, outputs: [{ name: 'rstd' }, { name: 'output', parameters: { binary_data: false } }, { name: 'residual' }] }, inputs()));
    const { outputs } = readAnswer(res);
    expect([...outputs.values()].map((o) => [o.name, o.binary])).toEqual([['rstd', true], ['output', false], ['residual', true]]);
    expectClose(outputs.get('output')!.values, ref.output, 'float32');
  });

  it('binary_data_output false with a per-output binary_data true: only that one binary', async () => {
    const res = await send('layernorm', binaryBody({ parameters: { binary_data_output: false }, outputs: [{ name: 'output' }, { name: 'residual', parameters: { binary_data: true } }] }, inputs()));
    const { outputs } = readAnswer(res);
    expect([...outputs.values()].map((o) => [o.name, o.binary])).toEqual([['output', false], ['residual', true]]);
    expect(outputs.get('residual')!.values).toEqual(ref.residual);
  });

  it('no binary output: application/json, no Inference-Header-Content-Length, even for a binary request', async () => {
    const res = await send('layernorm', binaryBody({}, inputs()));
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    readAnswer(res);
  });

  it('only output binary while a residual is produced: the answer holds output alone', async () => {
    const res = await send('layernorm', binaryBody({ outputs: [{ name: 'output', parameters: { binary_data: true } }] }, inputs()));
    const { json, outputs } = readAnswer(res);
    expect(json.outputs).toEqual([{ name: 'output', datatype: 'FP32', shape: [3, 4], parameters: { binary_data_size: 48 } }]);
    expectClose(outputs.get('output')!.values, ref.output, 'float32');
  });

  it.each(['FP16', 'BF16', 'FP64'] as const)('output_dtype %s binary: its itemsize and bytes', async (datatype) => {
    const res = await send('layernorm', binaryBody({ parameters: { binary_data_output: true, output_dtype: datatype } }, inputs()));
    const out = readAnswer(res).outputs.get('output')!;
    expect(out.datatype).toBe(datatype);
    expectClose(out.values, ref.output, datatype === 'FP16' ? 'float16' : datatype === 'BF16' ? 'bfloat16' : 'float64', ref.largeMean);
  });
});

describe('the answer layout', () => {
  it('application/octet-stream, Inference-Header-Content-Length in bytes (a non-ASCII id), the JSON, then the bytes', async () => {
    for (const outputs of [undefined, [{ name: 'output' }, { name: 'rstd' }]]) {
      const res = await send('rmsnorm', binaryBody({ id: 'é✓ ключ', parameters: { binary_data_output: true, return_stats: true }, ...(outputs ? { outputs } : {}) }, [binaryInput('input', 'FP32', [2, 4], VALUES)]));
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      const h = Number(res.headers['inference-header-content-length']);
      expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
      const head = res.rawPayload.subarray(0, h).toString('utf8');
      expect(head.endsWith('}')).toBe(true);
      expect(parseAnswerJson(head)).toEqual({
        model_name: 'rmsnorm', model_version: '1', id: 'é✓ ключ',
        outputs: [
          { name: 'output', datatype: 'FP32', shape: [2, 4], parameters: { binary_data_size: 32 } },
          { name: 'rstd', datatype: 'FP32', shape: [2], parameters: { binary_data_size: 8 } },
        ],
      });
      expect(res.rawPayload.length).toBe(h + 32 + 8);
      expectClose(valuesFromBytes('float32', res.rawPayload.subarray(h, h + 32)), simpleRef(), 'float32');
    }
  });

  it('the one binary output alone: header then its bytes, nothing else', async () => {
    const res = await send('rmsnorm', binaryBody({ id: 'ø', parameters: { binary_data_output: true } }, [binaryInput('input', 'FP64', [2, 4], VALUES)]));
    const h = Number(res.headers['inference-header-content-length']);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(JSON.parse(res.rawPayload.subarray(0, h).toString('utf8'))).toEqual({
      model_name: 'rmsnorm', model_version: '1', id: 'ø', outputs: [{ name: 'output', datatype: 'FP64', shape: [2, 4], parameters: { binary_data_size: 64 } }],
    });
    expect(res.rawPayload.length).toBe(h + 64);
    expectClose(valuesFromBytes('float64', res.rawPayload.subarray(h)), reference({ op: 'rmsnorm', dtype: 'float64', shape: [2, 4], values: VALUES }).output, 'float64');
  });

  it('errors on a binary request are JSON {"error"}', async () => {
    const res = await send('rmsnorm', binaryBody({ parameters: { binary_data_output: true, num_groups: 2 } }, [binaryInput('input', 'FP32', [2, 4], VALUES)]));
    expectOipError(res, 400, 'parameters.num_groups: unknown field');
  });
});

describe('Content-Type is not consulted', () => {
  it('none at all (inject sends no Content-Type for a buffer)', async () => {
    const res = await send('rmsnorm', simple());
    expectClose(readAnswer(res).outputs.get('output')!.values, simpleRef(), 'float32');
  });

  it.each([
    'application/octet-stream', 'application/json', 'application/msgpack', 'text/plain; charset=utf-8',
    'image/png', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
  ])('%s: the same answer', async (type) => {
    const res = await send('rmsnorm', simple(), { 'content-type': type });
    expectClose(readAnswer(res).outputs.get('output')!.values, simpleRef(), 'float32');
  });

  // a Content-Type that is not even a media type is still not consulted (OIP.md)
  it.each(['a b c', ';;', 'json'])('a malformed %j: the same answer', async (type) => {
    const res = await send('rmsnorm', simple(), { 'content-type': type });
    expectClose(readAnswer(res).outputs.get('output')!.values, simpleRef(), 'float32');
  });
});

// the header of a binary answer is kept per model, dtype and shape (codec/kept-headers.ts): each
// answer still says its own model, id and shape, in any order of repeats
describe('answer headers kept across requests', () => {
  it('model, id and shape are each answer\'s own', async () => {
    const cases = [
      { model: 'rmsnorm', id: undefined, shape: [2, 4] },
      { model: 'rmsnorm', id: 'first', shape: [2, 4] },
      { model: 'rmsnorm', id: undefined, shape: [2, 4] },
      { model: 'layernorm', id: undefined, shape: [2, 4] },
      { model: 'rmsnorm', id: undefined, shape: [4, 2] },
      { model: 'rmsnorm', id: 'second', shape: [4, 2] },
      { model: 'rmsnorm', id: undefined, shape: [2, 4] },
    ];
    for (const { model, id, shape } of cases) {
      const body = binaryBody({ ...(id === undefined ? {} : { id }), parameters: { binary_data_output: true } }, [binaryInput('input', 'FP32', shape, VALUES)]);
      const res = await send(model, body);
      expect(res.statusCode, res.body).toBe(200);
      const headerLength = Number(res.headers['inference-header-content-length']);
      const header = JSON.parse(res.rawPayload.subarray(0, headerLength).toString());
      expect(header).toEqual({
        model_name: model, model_version: '1', ...(id === undefined ? {} : { id }),
        outputs: [{ name: 'output', datatype: 'FP32', shape, parameters: { binary_data_size: 32 } }],
      });
      const expected = reference({ op: model as 'rmsnorm' | 'layernorm', dtype: 'float32', shape, values: VALUES }).output;
      expectClose(readAnswer(res).outputs.get('output')!.values, expected, 'float32');
    }
  });
});
