// OIP.md "Inference" over JSON: every model and datatype against the float64 references within API.md's
// tolerances, the options as parameters, non-finite values, requested outputs, id and model checks,
// Server-Timing. One ctx.app serves the file (each boots in ~0.4 s; these are ~70 requests).
import { describe, expect, it } from 'vitest';
import { useFreshApp, expectServerTiming } from '../helpers/http.js';
import { expectClose, reference, roundTo, type NormCase } from '../helpers/reference.js';
import { product, randomValues } from '../helpers/tensors.js';
import { referenceBatchnorm, referenceGroupnorm } from '../reference/channel-norm-reference.js';
import { DATATYPES, DTYPE_OF, GN, infer, JSON_TYPE, jsonInput, nest, readAnswer, X, type Datatype } from './oip.js';

const ctx = useFreshApp({}, 'file');

const post = (model: string, body: unknown, headers: Record<string, string> = JSON_TYPE) => infer(ctx.app, model, body, headers);

interface RowTensor { datatype: Datatype; values: number[] }
interface RowCase {
  op: 'rmsnorm' | 'layernorm';
  datatype: Datatype;
  shape: number[];
  values: number[];
  weight?: RowTensor;
  bias?: RowTensor;
  residual?: number[];
  parameters?: Record<string, unknown>;
  nested?: boolean;
}

/** one row-op request through /v2, every output checked against test/reference */
async function checkRowCase(c: RowCase): Promise<void> {
  const p = c.parameters ?? {};
  const rowShape = c.shape.slice(0, ((p.axis as number | undefined) ?? -1) < 0 ? c.shape.length + ((p.axis as number | undefined) ?? -1) : (p.axis as number));
  const normShape = c.shape.slice(rowShape.length);
  const data = (values: number[], shape: number[]) => (c.nested ? nest(values, shape) : values);
  const inputs: unknown[] = [{ name: 'input', datatype: c.datatype, shape: c.shape, data: data(c.values, c.shape) }];
  if (c.weight) inputs.push({ name: 'weight', datatype: c.weight.datatype, shape: normShape, data: data(c.weight.values, normShape) });
  if (c.bias) inputs.push({ name: 'bias', datatype: c.bias.datatype, shape: normShape, data: data(c.bias.values, normShape) });
  if (c.residual) inputs.push({ name: 'residual', datatype: c.datatype, shape: c.shape, data: data(c.residual, c.shape) });
  const res = await post(c.op, { id: 'case', inputs, parameters: p });
  expectServerTiming(res);
  const { json, outputs } = readAnswer(res);

  const outDatatype = (p.output_dtype as Datatype | undefined) ?? c.datatype;
  const ref = reference({
    op: c.op, dtype: DTYPE_OF[c.datatype], shape: c.shape, values: c.values,
    axis: p.axis as number | undefined,
    weight: c.weight && { dtype: DTYPE_OF[c.weight.datatype], values: c.weight.values },
    bias: c.bias && { dtype: DTYPE_OF[c.bias.datatype], values: c.bias.values },
    eps: p.eps as number | undefined, epsPlacement: p.eps_placement as NormCase['epsPlacement'],
    weightOffset: p.weight_offset as number | undefined, residual: c.residual, partial: p.partial as number | undefined,
  });
  const names = ['output', ...(c.residual ? ['residual'] : []), ...(p.return_stats ? (c.op === 'layernorm' ? ['mean', 'rstd'] : ['rstd']) : [])];
  expect(Object.keys(json)).toEqual(['model_name', 'model_version', 'id', 'outputs']);
  expect([json.model_name, json.model_version, json.id]).toEqual([c.op, '1', 'case']);
  expect([...outputs.keys()]).toEqual(names);

  const output = outputs.get('output')!;
  expect([output.datatype, output.shape]).toEqual([outDatatype, c.shape]);
  expectClose(output.values, ref.output, DTYPE_OF[outDatatype], ref.largeMean);
  if (c.residual) {
    const residual = outputs.get('residual')!;
    expect([residual.datatype, residual.shape]).toEqual([c.datatype, c.shape]);
    expect(residual.values).toEqual(ref.residual);
  }
  const statShape = rowShape.length === 0 ? [1] : rowShape;
  for (const stat of ['mean', 'rstd'] as const) {
    if (!outputs.has(stat)) continue;
    const t = outputs.get(stat)!;
    expect([t.datatype, t.shape]).toEqual(['FP32', statShape]);
    expectClose(t.values, ref[stat], 'float32');
  }
}

describe('rmsnorm and layernorm: each datatype in, each as output_dtype', () => {
  const shape = [3, 8];
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    for (const [i, datatype] of DATATYPES.entries()) {
      for (const output of DATATYPES) {
        it(`${op} 3x8 ${datatype} → ${output}, weight ${DATATYPES[(i + 1) % 4]}, bias ${DATATYPES[(i + 2) % 4]}, residual, return_stats`, async () => {
          await checkRowCase({
            op, datatype, shape,
            values: randomValues(11 + i, 24, 2, op === 'layernorm' ? 10 : 0),
            weight: { datatype: DATATYPES[(i + 1) % 4], values: randomValues(21 + i, 8, 0.5, 1) },
            bias: { datatype: DATATYPES[(i + 2) % 4], values: randomValues(31 + i, 8, 0.5) },
            residual: randomValues(41 + i, 24, 0.5),
            parameters: { return_stats: true, output_dtype: output },
          });
        });
      }
    }
  }
});

describe('options as parameters', () => {
  it('rmsnorm 2x3x4 FP32, axis 1, eps 1e-3, nested data, weight of shape [3, 4]', async () => {
    await checkRowCase({
      op: 'rmsnorm', datatype: 'FP32', shape: [2, 3, 4], values: randomValues(50, 24, 3), nested: true,
      weight: { datatype: 'FP32', values: randomValues(51, 12, 0.5, 1) }, parameters: { axis: 1, eps: 1e-3, return_stats: true },
    });
  });

  it('layernorm 2x3x4 FP64, axis -2, eps 0, eps_placement outside, weight_offset 1: stats of shape [2]', async () => {
    await checkRowCase({
      op: 'layernorm', datatype: 'FP64', shape: [2, 3, 4], values: randomValues(52, 24, 3, 1000),
      weight: { datatype: 'FP64', values: randomValues(53, 12, 0.1) },
      parameters: { axis: -2, eps: 0, eps_placement: 'outside', weight_offset: 1, return_stats: true },
    });
  });

  it('layernorm 6x5 FP32, axis 0: one row, stats of shape [1]', async () => {
    await checkRowCase({ op: 'layernorm', datatype: 'FP32', shape: [6, 5], values: randomValues(54, 30, 2), parameters: { axis: 0, return_stats: true } });
  });

  it('rmsnorm 4x8 FP16, weight_offset 1 (Gemma), eps_placement outside, eps 1e-2', async () => {
    await checkRowCase({
      op: 'rmsnorm', datatype: 'FP16', shape: [4, 8], values: randomValues(55, 32, 2),
      weight: { datatype: 'BF16', values: randomValues(56, 8, 0.2) }, parameters: { weight_offset: 1, eps_placement: 'outside', eps: 1e-2 },
    });
  });

  it('rmsnorm 4x10 partial 0.5 (k = 5) and FP64 partial 0.3 (k = ⌊10 × 0.3⌋ = 3), return_stats', async () => {
    await checkRowCase({ op: 'rmsnorm', datatype: 'FP32', shape: [4, 10], values: randomValues(57, 40, 2), parameters: { partial: 0.5, return_stats: true } });
    await checkRowCase({ op: 'rmsnorm', datatype: 'FP64', shape: [2, 10], values: randomValues(58, 20, 2), parameters: { partial: 0.3, return_stats: true } });
  });

  it('nested and flat data give the same answer: layernorm 2x2x4', async () => {
    const values = randomValues(59, 16, 2);
    const answers = [];
    for (const data of [values, nest(values, [2, 2, 4])]) {
      answers.push((await post('layernorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 2, 4], data }] })).body);
    }
    expect(answers[1]).toBe(answers[0]);
    await checkRowCase({ op: 'layernorm', datatype: 'FP32', shape: [2, 2, 4], values, nested: true });
  });
});

const rounded = (datatype: Datatype, values: readonly number[]) => values.map((v) => roundTo(DTYPE_OF[datatype], v));

describe('batchnorm', () => {
  interface BnCase {
    title: string;
    datatype: Datatype;
    shape: number[];
    channelAxis?: number;
    training: boolean;
    running?: [Datatype, Datatype];
    affine?: Datatype;
    parameters: Record<string, unknown>;
  }
  const cases: BnCase[] = [
    { title: '4x3x5 FP32 training, running stats FP32/FP64, momentum 0.2, weight and bias FP16, return_stats', datatype: 'FP32', shape: [4, 3, 5], training: true, running: ['FP32', 'FP64'], affine: 'FP16', parameters: { training: true, momentum: 0.2, return_stats: true } },
    { title: '5x2x3 FP64 training, channel_axis -1, no running stats, output_dtype FP16', datatype: 'FP64', shape: [5, 2, 3], channelAxis: -1, training: true, parameters: { training: true, channel_axis: -1, output_dtype: 'FP16', eps: 1e-3 } },
    { title: '3x4x2 BF16 inference, running stats FP16, output_dtype FP32, eps 1e-3, return_stats', datatype: 'BF16', shape: [3, 4, 2], training: false, running: ['FP16', 'FP16'], affine: 'FP64', parameters: { eps: 1e-3, output_dtype: 'FP32', return_stats: true } },
    { title: '6x3 FP16 training with running stats BF16, channel_axis 1 given', datatype: 'FP16', shape: [6, 3], training: true, running: ['BF16', 'BF16'], parameters: { training: true, channel_axis: 1 } },
  ];
  for (const c of cases) {
    it(c.title, async () => {
      const axis = (c.channelAxis ?? 1) < 0 ? c.shape.length + (c.channelAxis ?? 1) : (c.channelAxis ?? 1);
      const C = c.shape[axis];
      const x = randomValues(60, product(c.shape), 2, 3);
      const w = randomValues(61, C, 0.5, 1);
      const b = randomValues(62, C, 0.5);
      const rm = randomValues(63, C, 1);
      const rv = randomValues(64, C, 0.5, 1);
      const inputs: unknown[] = [jsonInput('input', c.datatype, c.shape, x)];
      if (c.affine) inputs.push(jsonInput('weight', c.affine, [C], w), jsonInput('bias', c.affine, [C], b));
      if (c.running) inputs.push(jsonInput('running_mean', c.running[0], [C], rm), jsonInput('running_var', c.running[1], [C], rv));
      const { outputs } = readAnswer(await post('batchnorm', { inputs, parameters: c.parameters }));
      const ref = referenceBatchnorm({
        x: rounded(c.datatype, x), shape: c.shape, channelAxis: c.channelAxis ?? 1, training: c.training,
        runningMean: c.running ? rounded(c.running[0], rm) : null, runningVar: c.running ? rounded(c.running[1], rv) : null,
        momentum: (c.parameters.momentum as number | undefined) ?? 0.1,
        weight: c.affine ? rounded(c.affine, w) : null, bias: c.affine ? rounded(c.affine, b) : null,
        eps: (c.parameters.eps as number | undefined) ?? 1e-5,
      });
      const stats = c.parameters.return_stats ? ['mean', 'rstd'] : [];
      expect([...outputs.keys()]).toEqual(['output', ...(c.training && c.running ? ['running_mean', 'running_var'] : []), ...stats]);
      const outDatatype = (c.parameters.output_dtype as Datatype | undefined) ?? c.datatype;
      const output = outputs.get('output')!;
      expect([output.datatype, output.shape]).toEqual([outDatatype, c.shape]);
      expectClose(output.values, ref.output, DTYPE_OF[outDatatype], ref.largeMean);
      if (c.training && c.running) {
        for (const [name, datatype, expected] of [['running_mean', c.running[0], ref.runningMean!], ['running_var', c.running[1], ref.runningVar!]] as const) {
          const t = outputs.get(name)!;
          expect([t.datatype, t.shape]).toEqual([datatype, [C]]);
          expectClose(t.values, expected, DTYPE_OF[datatype]);
        }
      }
      for (const stat of stats as ('mean' | 'rstd')[]) {
        const t = outputs.get(stat)!;
        expect([t.datatype, t.shape]).toEqual(['FP32', [C]]);
        expectClose(t.values, ref[stat], 'float32');
      }
    });
  }
});

describe('groupnorm', () => {
  const cases: { title: string; datatype: Datatype; shape: number[]; groups: number; affine?: Datatype; parameters: Record<string, unknown> }[] = [
    { title: '2x6x4 FP32, num_groups 3, weight and bias FP32, return_stats of shape [2, 3]', datatype: 'FP32', shape: [2, 6, 4], groups: 3, affine: 'FP32', parameters: { num_groups: 3, return_stats: true } },
    { title: '3x4x2x2 FP16, num_groups 4 (InstanceNorm), output_dtype BF16', datatype: 'FP16', shape: [3, 4, 2, 2], groups: 4, affine: 'FP64', parameters: { num_groups: 4, output_dtype: 'BF16' } },
    { title: '2x4 BF16, num_groups 1, eps 0.1, output_dtype FP64', datatype: 'BF16', shape: [2, 4], groups: 1, parameters: { num_groups: 1, eps: 0.1, output_dtype: 'FP64' } },
    { title: '2x2x3 FP64, num_groups 2.0 sent as 2', datatype: 'FP64', shape: [2, 2, 3], groups: 2, parameters: { num_groups: 2, return_stats: true } },
  ];
  for (const c of cases) {
    it(c.title, async () => {
      const C = c.shape[1];
      const x = randomValues(70, product(c.shape), 2, 5);
      const w = randomValues(71, C, 0.5, 1);
      const b = randomValues(72, C, 0.5);
      const inputs: unknown[] = [jsonInput('input', c.datatype, c.shape, x)];
      if (c.affine) inputs.push(jsonInput('weight', c.affine, [C], w), jsonInput('bias', c.affine, [C], b));
      const { outputs } = readAnswer(await post('groupnorm', { inputs, parameters: c.parameters }));
      const ref = referenceGroupnorm({
        x: rounded(c.datatype, x), shape: c.shape, numGroups: c.groups,
        weight: c.affine ? rounded(c.affine, w) : null, bias: c.affine ? rounded(c.affine, b) : null,
        eps: (c.parameters.eps as number | undefined) ?? 1e-5,
      });
      const stats = c.parameters.return_stats ? ['mean', 'rstd'] : [];
      expect([...outputs.keys()]).toEqual(['output', ...stats]);
      const outDatatype = (c.parameters.output_dtype as Datatype | undefined) ?? c.datatype;
      const output = outputs.get('output')!;
      expect([output.datatype, output.shape]).toEqual([outDatatype, c.shape]);
      expectClose(output.values, ref.output, DTYPE_OF[outDatatype], ref.largeMean);
      for (const stat of stats as ('mean' | 'rstd')[]) {
        const t = outputs.get(stat)!;
        expect([t.datatype, t.shape]).toEqual(['FP32', [c.shape[0], c.groups]]);
        expectClose(t.values, ref[stat], 'float32');
      }
    });
  }
});

describe('non-finite values: bare tokens and strings in, bare tokens out', () => {
  const body = (a: string, b: string, c: string) =>
    `{"inputs":[{"name":"input","datatype":"FP32","shape":[3,4],"data":[[1,2,3,4],[5,${a},7,8],[${b},1,2,${c}]]}]}`;

  it('rmsnorm 3x4 with bare NaN, -Infinity, Infinity: those rows NaN or the IEEE formula, the other exact', async () => {
    const res = await post('rmsnorm', body('NaN', '-Infinity', 'Infinity'));
    const { outputs } = readAnswer(res);
    const out = outputs.get('output')!.values;
    expectClose(out.slice(0, 4), reference({ op: 'rmsnorm', dtype: 'float32', shape: [1, 4], values: [1, 2, 3, 4] }).output, 'float32');
    expect(out.slice(4, 8)).toEqual([NaN, NaN, NaN, NaN]);
    // s = ∞, r = 0: finite xᵢ give 0, infinite ones ∞·0 = NaN
    expect(out.slice(8).map((v, i) => Number.isNaN(v) || ((i === 1 || i === 2) && v === 0))).toEqual([true, true, true, true]);
    expect(res.body).toMatch(/"data":\[[^\]]*,NaN,NaN,NaN,NaN,/);
    expect(res.body).not.toContain('"NaN"');
  });

  it('the strings "NaN", "-Infinity", "Infinity" give the same answer as the bare tokens', async () => {
    const bare = await post('rmsnorm', body('NaN', '-Infinity', 'Infinity'));
    const strings = await post('rmsnorm', body('"NaN"', '"-Infinity"', '"Infinity"'));
    expect(strings.statusCode).toBe(200);
    expect(strings.body).toBe(bare.body);
  });

  it('bare tokens inside strings stay strings: an id "NaN, Infinity" is echoed as it is', async () => {
    const res = await post('rmsnorm', '{"id":"NaN, Infinity [-Infinity]","inputs":[{"name":"input","datatype":"FP32","shape":[2],"data":[NaN,1]}]}');
    const { json } = readAnswer(res);
    expect(json.id).toBe('NaN, Infinity [-Infinity]');
    expect(res.body).toContain('"id":"NaN, Infinity [-Infinity]"');
  });

  it('Infinity and -Infinity out as bare tokens: rmsnorm 2x4 with an infinite bias; FP16 output overflow', async () => {
    const res = await post('rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[2,4],"data":[1,2,3,4,5,6,7,8]},{"name":"bias","datatype":"FP32","shape":[4],"data":[Infinity,0,0,"-Infinity"]}]}');
    const out = readAnswer(res).outputs.get('output')!.values;
    expect([out[0], out[3], out[4], out[7]]).toEqual([Infinity, -Infinity, Infinity, -Infinity]);
    expect(res.body).toMatch(/"data":\[Infinity,[^,]+,[^,]+,-Infinity,Infinity,/);
    const overflow = await post('rmsnorm', { inputs: [jsonInput('input', 'FP32', [1, 4], [1, 1, -1, 1e-3])], parameters: { weight_offset: 1e5, output_dtype: 'FP16' } });
    expect(readAnswer(overflow).outputs.get('output')!.values.slice(0, 3)).toEqual([Infinity, Infinity, -Infinity]);
    expect(overflow.body).toContain('"data":[Infinity,Infinity,-Infinity,');
  });

  it('eps 0 on an all-zero row gives bare NaN: rmsnorm 2x4', async () => {
    const res = await post('rmsnorm', { inputs: [jsonInput('input', 'FP64', [2, 4], [0, 0, 0, 0, 1, 2, 3, 4])], parameters: { eps: 0 } });
    expect(res.body).toContain('"data":[NaN,NaN,NaN,NaN,');
    expectClose(readAnswer(res).outputs.get('output')!.values.slice(4), reference({ op: 'rmsnorm', dtype: 'float64', shape: [1, 4], values: [1, 2, 3, 4], eps: 0 }).output, 'float64');
  });
});

describe('requested outputs', () => {
  const ln = [jsonInput('input', 'FP32', [2, 4], randomValues(80, 8)), jsonInput('residual', 'FP32', [2, 4], randomValues(81, 8))];

  it('layernorm with residual and return_stats, outputs [rstd, output]: just those, in that order', async () => {
    const all = readAnswer(await post('layernorm', { inputs: ln, parameters: { return_stats: true } })).outputs;
    expect([...all.keys()]).toEqual(['output', 'residual', 'mean', 'rstd']);
    const { outputs } = readAnswer(await post('layernorm', { inputs: ln, parameters: { return_stats: true }, outputs: [{ name: 'rstd' }, { name: 'output' }] }));
    expect([...outputs.keys()]).toEqual(['rstd', 'output']);
    expect(outputs.get('rstd')!.values).toEqual(all.get('rstd')!.values);
    expect(outputs.get('output')!.values).toEqual(all.get('output')!.values);
  });

  it('a subset: outputs [mean], and [residual] with binary_data false', async () => {
    expect([...readAnswer(await post('layernorm', { inputs: ln, parameters: { return_stats: true }, outputs: [{ name: 'mean' }] })).outputs.keys()]).toEqual(['mean']);
    const only = readAnswer(await post('layernorm', { inputs: ln, outputs: [{ name: 'residual', parameters: { binary_data: false } }] })).outputs;
    expect([...only.keys()]).toEqual(['residual']);
    expect(only.get('residual')!.binary).toBe(false);
  });

  it('batchnorm training with running stats, outputs [running_var, mean]', async () => {
    const inputs = [jsonInput('input', 'FP32', [4, 2], randomValues(82, 8)), jsonInput('running_mean', 'FP32', [2], [0, 0]), jsonInput('running_var', 'FP32', [2], [1, 1])];
    const { outputs } = readAnswer(await post('batchnorm', { inputs, parameters: { training: true, return_stats: true }, outputs: [{ name: 'running_var' }, { name: 'mean' }] }));
    expect([...outputs.keys()]).toEqual(['running_var', 'mean']);
  });
});

describe('id, model_name, model_version, Server-Timing', () => {
  it('id is echoed, after model_version; without id there is no id; "" is echoed too', async () => {
    const res = await post('rmsnorm', { id: 'req-7', inputs: X });
    expect(res.body.startsWith('{"model_name":"rmsnorm","model_version":"1","id":"req-7","outputs":[')).toBe(true);
    expectServerTiming(res);
    expect(Object.keys(readAnswer(await post('rmsnorm', { inputs: X })).json)).toEqual(['model_name', 'model_version', 'outputs']);
    expect(readAnswer(await post('rmsnorm', { id: '', inputs: X })).json.id).toBe('');
  });

  it('model_name equal to the path model and model_version "1" are allowed; /versions/1 in the path too', async () => {
    const plain = await post('groupnorm', { inputs: GN, parameters: { num_groups: 2 } });
    const named = await post('groupnorm', { model_name: 'groupnorm', model_version: '1', inputs: GN, parameters: { num_groups: 2 } });
    const versioned = await infer(ctx.app, 'groupnorm', { model_version: '1', inputs: GN, parameters: { num_groups: 2 } }, JSON_TYPE, '/v2/models/groupnorm/versions/1/infer');
    expect(readAnswer(named).json.model_name).toBe('groupnorm');
    expect(named.body).toBe(plain.body);
    expect(versioned.body).toBe(plain.body);
  });

  it('Server-Timing on every successful answer: decode, queue, compute, encode', async () => {
    for (const model of ['rmsnorm', 'layernorm']) expectServerTiming(await post(model, { inputs: X }));
    expectServerTiming(await post('groupnorm', { inputs: GN, parameters: { num_groups: 4 } }));
  });
});
