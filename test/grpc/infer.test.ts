// OIP.md "Inference (ModelInfer)" over gRPC: every model and datatype against the float64 references
// within API.md's tolerances, raw and typed contents, parameters as tritonclient types them, requested
// outputs, the answer's form and server-timing trailer; then every INVALID_ARGUMENT with its message.
import { status as Status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { expectClose, reference, roundTo } from '../helpers/reference.js';
import { product, randomValues } from '../helpers/tensors.js';
import { referenceBatchnorm, referenceGroupnorm } from '../reference/channel-norm-reference.js';
import { DTYPE_OF, inferRequest, outputsOf, param, rawInput, useGrpcServer } from './client.js';

const server = useGrpcServer();
const call = (request: object) => server.current.client.call('ModelInfer', request);

async function answer(request: object) {
  const res = await call(request);
  if (!res.ok) throw new Error(`${Status[res.code]}: ${res.details}`);
  return res;
}

const rounded = (datatype: string, values: number[]) => values.map((v) => roundTo(DTYPE_OF[datatype], v));

describe('rmsnorm and layernorm, every datatype, against the float64 reference', () => {
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    for (const datatype of ['FP32', 'FP64', 'FP16', 'BF16']) {
      it(`${op} ${datatype}: weight, bias, residual, stats; raw contents`, async () => {
        const shape = [3, 16];
        const x = randomValues(11, 48, 2, 0.5);
        const w = randomValues(12, 16, 1, 1);
        const b = randomValues(13, 16, 0.5);
        const r = randomValues(14, 48);
        const res = await answer(inferRequest(op, [
          rawInput('input', datatype, shape, x), rawInput('weight', datatype, [16], w), rawInput('bias', datatype, [16], b), rawInput('residual', datatype, shape, r),
        ], { id: 'req-7', parameters: { return_stats: param(true), eps: param(1e-5) } }));
        const ref = reference({
          op, dtype: DTYPE_OF[datatype], shape, values: x, weight: { dtype: DTYPE_OF[datatype], values: w }, bias: { dtype: DTYPE_OF[datatype], values: b },
          residual: r, eps: 1e-5,
        });
        const { value } = res;
        expect([value.model_name, value.model_version, value.id, value.parameters]).toEqual([op, '1', 'req-7', {}]);
        const names = ['output', 'residual', ...(op === 'layernorm' ? ['mean', 'rstd'] : ['rstd'])];
        expect(value.outputs.map((o: any) => [o.name, o.contents, o.parameters])).toEqual(names.map((n) => [n, null, {}]));
        const outputs = outputsOf(value);
        const output = outputs.get('output')!;
        expect([output.datatype, output.shape]).toEqual([datatype, shape]);
        expectClose(output.values, ref.output, DTYPE_OF[datatype], ref.largeMean);
        expect(outputs.get('residual')!.values).toEqual(ref.residual);
        expect(outputs.get('rstd')!.shape).toEqual([3]);
        expectClose(outputs.get('rstd')!.values, ref.rstd, 'float32');
        if (op === 'layernorm') expectClose(outputs.get('mean')!.values, ref.mean, 'float32');
        // the trailer carries REST's Server-Timing value
        expect(String(res.trailers['server-timing'])).toMatch(/^decode;dur=\d+\.\d{3}, queue;dur=\d+\.\d{3}, compute;dur=\d+\.\d{3}, encode;dur=\d+\.\d{3}$/);
      });
    }
  }

  it('typed contents: fp32_contents for FP32, fp64_contents for FP64; parameters as int64, uint64 and double', async () => {
    const x = randomValues(21, 24, 3);
    for (const [datatype, field] of [['FP32', 'fp32_contents'], ['FP64', 'fp64_contents']]) {
      const res = await answer({
        model_name: 'rmsnorm', model_version: '1',
        inputs: [{ name: 'input', datatype, shape: [2, 3, 4], contents: { [field]: datatype === 'FP32' ? x.map(Math.fround) : x } }],
        parameters: { axis: param(-2), eps: param(0, 'int64'), weight_offset: param(1, 'uint64'), partial: param(0.5), output_dtype: param('FP64') },
      });
      const ref = reference({ op: 'rmsnorm', dtype: DTYPE_OF[datatype], shape: [2, 3, 4], values: x, axis: -2, eps: 0, weightOffset: 1, partial: 0.5, outputDtype: 'float64' });
      const output = outputsOf(res.value).get('output')!;
      expect([output.datatype, output.shape]).toEqual(['FP64', [2, 3, 4]]);
      expectClose(output.values, ref.output, 'float64', ref.largeMean);
    }
  });

  it('axis as a whole double_param, eps_placement as a string; requested outputs in their order', async () => {
    const x = randomValues(31, 12);
    const res = await answer(inferRequest('layernorm', [rawInput('input', 'FP32', [3, 4], x)], {
      parameters: { axis: param(-1.0, 'double'), eps_placement: param('outside'), return_stats: param(true), binary_data_output: param(false) },
      outputs: [{ name: 'rstd' }, { name: 'output' }],
    }));
    expect(res.value.outputs.map((o: any) => o.name)).toEqual(['rstd', 'output']);
    const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [3, 4], values: x, epsPlacement: 'outside' });
    expectClose(outputsOf(res.value).get('output')!.values, ref.output, 'float32', ref.largeMean);
    expect(res.value.raw_output_contents.length).toBe(2);
  });

  it('an empty tensor has an empty raw entry both ways', async () => {
    const res = await answer(inferRequest('rmsnorm', [rawInput('input', 'FP32', [0, 8], [])]));
    expect(res.value.outputs[0].shape).toEqual([0, 8]);
    expect(res.value.raw_output_contents.map((b: Buffer) => b.length)).toEqual([0]);
  });
});

describe('batchnorm and groupnorm against the float64 reference', () => {
  it('batchnorm training with running statistics: output, updated running_*, mean and rstd', async () => {
    const shape = [4, 3, 5];
    const x = randomValues(41, product(shape), 2, 1);
    const rm = [0.1, -0.2, 0.3];
    const rv = [1, 2, 0.5];
    const res = await answer(inferRequest('batchnorm', [
      rawInput('input', 'FP32', shape, x), rawInput('running_mean', 'FP64', [3], rm), rawInput('running_var', 'FP64', [3], rv),
    ], { parameters: { training: param(true), momentum: param(0.25), return_stats: param(true) } }));
    const ref = referenceBatchnorm({ x: rounded('FP32', x), shape, channelAxis: 1, training: true, runningMean: rm, runningVar: rv, momentum: 0.25, weight: null, bias: null, eps: 1e-5 });
    const outputs = outputsOf(res.value);
    expect([...outputs.keys()]).toEqual(['output', 'running_mean', 'running_var', 'mean', 'rstd']);
    expectClose(outputs.get('output')!.values, ref.output, 'float32', ref.largeMean);
    expectClose(outputs.get('running_mean')!.values, ref.runningMean!, 'float64');
    expectClose(outputs.get('running_var')!.values, ref.runningVar!, 'float64');
    expectClose(outputs.get('rstd')!.values, ref.rstd, 'float32');
  });

  it('groupnorm with weight and bias', async () => {
    const shape = [2, 4, 6];
    const x = randomValues(51, product(shape), 3);
    const w = randomValues(52, 4, 1, 1);
    const b = randomValues(53, 4);
    const res = await answer(inferRequest('groupnorm', [rawInput('input', 'BF16', shape, x), rawInput('weight', 'FP32', [4], w), rawInput('bias', 'FP32', [4], b)], {
      parameters: { num_groups: param(2), eps: param(1e-3) },
    }));
    const ref = referenceGroupnorm({ x: rounded('BF16', x), shape, numGroups: 2, weight: rounded('FP32', w), bias: rounded('FP32', b), eps: 1e-3 });
    const output = outputsOf(res.value).get('output')!;
    expect([output.datatype, output.shape]).toEqual(['BF16', shape]);
    expectClose(output.values, ref.output, 'bfloat16', ref.largeMean);
  });
});

describe('INVALID_ARGUMENT, each naming the field', () => {
  const X = rawInput('input', 'FP32', [2, 4], [1, 2, 3, 4, 5, 6, 7, 8]);
  const ok = (rest: Record<string, unknown> = {}) => inferRequest('rmsnorm', [X], rest);
  const cases: [string, object, string | RegExp][] = [
    ['no inputs', { model_name: 'rmsnorm' }, 'inputs: required field is missing'],
    ['an unknown input', inferRequest('rmsnorm', [rawInput('gamma', 'FP32', [4], [1, 1, 1, 1])]), /^inputs\[0\]\.name: "gamma" is not an input of this model/],
    ['an input twice', inferRequest('rmsnorm', [X, X]), 'inputs[1].name: input input is given twice'],
    ['datatype fp32', inferRequest('rmsnorm', [{ ...X, tensor: { ...X.tensor, datatype: 'fp32' } }]), 'input datatype fp32: must be one of FP32, FP64, FP16, BF16'],
    ['datatype INT8', inferRequest('rmsnorm', [{ ...X, tensor: { ...X.tensor, datatype: 'INT8' } }]), 'input datatype INT8: must be one of FP32, FP64, FP16, BF16'],
    ['rank 0', inferRequest('rmsnorm', [{ ...X, tensor: { ...X.tensor, shape: [] } }]), 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['rank 9', inferRequest('rmsnorm', [{ ...X, tensor: { ...X.tensor, shape: [1, 1, 1, 1, 1, 1, 1, 2, 4] } }]), 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['a negative dimension', inferRequest('rmsnorm', [{ ...X, tensor: { ...X.tensor, shape: [-2, 4] } }]), 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['an input parameter', inferRequest('rmsnorm', [{ ...X, tensor: { ...X.tensor, parameters: { shared_memory_region: param('r') } } }]), 'input parameters.shared_memory_region: unknown field'],
    ['too few raw bytes', inferRequest('rmsnorm', [{ ...X, bytes: X.bytes.subarray(4) }]), 'input raw_input_contents: 28 bytes, but shape [2, 4] of FP32 needs 32'],
    ['a raw entry too many', { ...ok(), raw_input_contents: [X.bytes, X.bytes] }, 'raw_input_contents: 2 entries for 1 inputs; send one per input, in the order of inputs'],
    ['contents beside raw contents', { ...ok(), inputs: [{ ...X.tensor, contents: { fp32_contents: [1] } }] }, 'input contents: an input takes no contents in a request with raw_input_contents'],
    ['neither', { model_name: 'rmsnorm', inputs: [X.tensor] }, 'input data (raw_input_contents or contents): required field is missing'],
    ['int_contents for FP32', { model_name: 'rmsnorm', inputs: [{ ...X.tensor, contents: { int_contents: [1, 2, 3, 4, 5, 6, 7, 8] } }] }, 'input contents.int_contents: a FP32 input\'s values go in fp32_contents'],
    ['FP16 contents', { model_name: 'rmsnorm', inputs: [{ ...X.tensor, datatype: 'FP16', contents: { fp32_contents: [1] } }] }, 'input contents: FP16 has no typed contents; send its bytes in raw_input_contents'],
    ['too few typed values', { model_name: 'rmsnorm', inputs: [{ ...X.tensor, contents: { fp32_contents: [1, 2, 3] } }] }, 'input data: 3 values, but shape [2, 4] needs 8'],
    // parameters: the choice must fit the option's type
    ['return_stats as int64', ok({ parameters: { return_stats: param(1) } }), /^parameters\.return_stats: must be a boolean/],
    ['eps as a string', ok({ parameters: { eps: param('0.1') } }), /^parameters\.eps: must be a number/],
    ['eps as a bool', ok({ parameters: { eps: param(true) } }), /^parameters\.eps: must be a number/],
    ['eps NaN', ok({ parameters: { eps: { double_param: NaN } } }), /^parameters\.eps: must be a number/],
    ['axis 1.5', ok({ parameters: { axis: param(1.5) } }), /^parameters\.axis: must be an integer/],
    ['a parameter with no choice', ok({ parameters: { eps: {} } }), /^parameters\.eps: must be a number/],
    ['timeout 0', ok({ parameters: { timeout: param(0) } }), 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    ['output_dtype float32', ok({ parameters: { output_dtype: param('float32') } }), 'parameters.output_dtype: must be one of FP32, FP64, FP16, BF16'],
    ['eps_placement sideways', ok({ parameters: { eps_placement: param('sideways') } }), /^parameters\.eps_placement: must be one of/],
    ['eps negative', ok({ parameters: { eps: param(-1) } }), 'parameters.eps: must be >= 0'],
    ['priority (uint64)', ok({ parameters: { priority: param(1, 'uint64') } }), 'parameters.priority: unknown field'],
    ['sequence_id', ok({ parameters: { sequence_id: param(7) } }), 'parameters.sequence_id: unknown field'],
    ['triton_enable_empty_final_response', ok({ parameters: { triton_enable_empty_final_response: param(true) } }), 'parameters.triton_enable_empty_final_response: unknown field'],
    ['num_groups on rmsnorm', ok({ parameters: { num_groups: param(2) } }), 'parameters.num_groups: unknown field'],
    // outputs
    ['an unknown output', ok({ outputs: [{ name: 'mean' }] }), /^outputs\[0\]\.name: "mean" is not an output of this model/],
    ['an output not produced', ok({ outputs: [{ name: 'rstd' }] }), 'outputs[0].name: this request produces no rstd (it produces output)'],
    ['an output twice', ok({ outputs: [{ name: 'output' }, { name: 'output' }] }), 'outputs[1].name: output output is asked for twice'],
    ['classification on an output', ok({ outputs: [{ name: 'output', parameters: { classification: param(3) } }] }), 'output parameters.classification: unknown field'],
    // the operation's own checks, in OIP's words
    ['a weight of the wrong shape', inferRequest('rmsnorm', [X, rawInput('weight', 'FP32', [3], [1, 1, 1])]), /^weight shape \[3\]: \[3\] must be \[4\]/],
    ['axis out of range', ok({ parameters: { axis: param(2) } }), /^parameters\.axis: 2 is out of range for an input of rank 2/],
  ];
  for (const [name, request, message] of cases) {
    it(name, async () => {
      const res = await call(request);
      expect(res.ok, name).toBe(false);
      if (res.ok) return;
      expect([Status[res.code], res.details]).toEqual(['INVALID_ARGUMENT', typeof message === 'string' ? message : expect.stringMatching(message)]);
    });
  }
});

describe('answers sent straight from shared memory', () => {
  it('many at once, unary and on streams, each its own (the memory is reused only once grpc-js has the bytes), and none held after', async () => {
    const { client, app } = server.current;
    const cases = Array.from({ length: 24 }, (_, i) => {
      const shape = i % 3 === 0 ? [32, 1024] : [2, 64];
      return { i, shape, x: randomValues(100 + i, product(shape), 2) };
    });
    const unary = cases.map(async ({ i, shape, x }) => {
      const res = await answer(inferRequest('rmsnorm', [rawInput('input', 'FP32', shape, x)], { id: `u${i}` }));
      return [i, res.value] as const;
    });
    const stream = client.raw.ModelStreamInfer();
    const streamed = new Promise<any[]>((resolve) => {
      const got: any[] = [];
      stream.on('data', (a: any) => got.push(a.infer_response));
      stream.on('end', () => resolve(got));
    });
    for (const { i, shape, x } of cases) stream.write(inferRequest('rmsnorm', [rawInput('input', 'FP32', shape, x)], { id: `s${i}` }));
    stream.end();
    const check = (i: number, response: any, id: string) => {
      const { shape, x } = cases[i];
      expect(response.id).toBe(id);
      const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape, values: x });
      expectClose(outputsOf(response).get('output')!.values, ref.output, 'float32', ref.largeMean);
    };
    for (const [i, response] of await Promise.all(unary)) check(i, response, `u${i}`);
    (await streamed).forEach((response, i) => check(i, response, `s${i}`));
    expect(app.engine.slabs.inUseBytes).toBe(0);
  });
});

describe('one-output answers laid out for grpc-js (the output at any byte offset)', () => {
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    it(`${op} FP32: rows the SIMD kernels compute in float64 (tiny, huge, a bias of 100) against the reference`, async () => {
      const n = 13; // an odd row length: rows end at every phase
      const x = [...randomValues(40, n, 2, 0.5), ...randomValues(41, n).map((v) => v * 1e-30), ...randomValues(42, n).map((v) => v * 1e30), ...randomValues(43, n)];
      const bias = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 100 : -3));
      const shape = [4, n];
      for (const withBias of [false, true]) {
        const inputs = [rawInput('input', 'FP32', shape, x), ...(withBias ? [rawInput('bias', 'FP32', [n], bias)] : [])];
        const { value } = await answer(inferRequest(op, inputs));
        const output = outputsOf(value).get('output')!;
        expect([output.datatype, output.shape]).toEqual(['FP32', shape]);
        const ref = reference({ op, dtype: 'float32', shape, values: x, ...(withBias ? { bias: { dtype: 'float32' as const, values: bias } } : {}) });
        expectClose(output.values, ref.output, 'float32', ref.largeMean);
      }
    });
  }
});

describe('kept answer prefixes', () => {
  it('the same shape again, unary and on a stream, as another output dtype or model: each answer its own form', async () => {
    const { client } = server.current;
    const x = randomValues(300, 24);
    const cases: [string, Record<string, unknown>, string][] = [
      ['rmsnorm', {}, 'FP32'], ['rmsnorm', {}, 'FP32'], ['rmsnorm', { output_dtype: param('FP64') }, 'FP64'],
      ['layernorm', {}, 'FP32'], ['rmsnorm', { output_dtype: param('BF16') }, 'BF16'],
    ];
    for (const [op, parameters, datatype] of cases) {
      const request = inferRequest(op, [rawInput('input', 'FP32', [3, 8], x)], { parameters });
      const unary = await answer(request);
      const stream = client.raw.ModelStreamInfer();
      const streamed = new Promise<any>((resolve, reject) => {
        let got: any;
        stream.on('data', (a: any) => { got = a.infer_response; });
        stream.on('error', reject);
        stream.on('end', () => resolve(got));
      });
      stream.write(request);
      stream.end();
      for (const response of [unary.value, await streamed]) {
        expect([response.model_name, response.id]).toEqual([op, '']);
        const output = outputsOf(response).get('output')!;
        expect([output.datatype, output.shape]).toEqual([datatype, [3, 8]]);
        const ref = reference({ op: op as 'rmsnorm' | 'layernorm', dtype: 'float32', shape: [3, 8], values: x });
        expectClose(output.values, ref.output, DTYPE_OF[datatype], ref.largeMean);
      }
    }
  });
});
