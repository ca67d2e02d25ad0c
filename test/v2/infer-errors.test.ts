// OIP.md "Inference": every 400, 404 and 415 of a JSON request with its whole {"error"} body, and the
// timeout parameter against X-Request-Timeout-Ms and REQUEST_TIMEOUT_MS. One ctx.app serves the error table.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import { createApp, useFreshApp, type Response } from '../helpers/http.js';
import { randomValues } from '../helpers/tensors.js';
import { readInferRequest } from '../../src/http/v2/infer-request.js';
import { modelFor } from '../../src/http/v2/models.js';
import { expectOipError, GN, infer, JSON_TYPE, jsonInput, readAnswer, X, type Datatype } from './oip.js';

const ctx = useFreshApp({}, 'file');

const post = (model: string, body: unknown, headers: Record<string, string> = JSON_TYPE) => infer(ctx.app, model, body, headers);

describe('errors: whole {"error"} bodies', () => {
  const MODELS = 'rmsnorm, layernorm, batchnorm, groupnorm';
  const cases: [string, string, unknown, number, string | RegExp][] = [
    // top level
    ['an unknown top-level key', 'rmsnorm', { inputs: X, foo: 1 }, 400, 'foo: unknown field'],
    ['model_name of another model', 'rmsnorm', { model_name: 'layernorm', inputs: X }, 400, 'model_name: must be "rmsnorm", the model of the path'],
    ['model_version "2"', 'rmsnorm', { model_version: '2', inputs: X }, 400, 'model_version: must be "1"'],
    ['model_version 1 as a number', 'rmsnorm', { model_version: 1, inputs: X }, 400, 'model_version: must be "1"'],
    ['id a number', 'rmsnorm', { id: 5, inputs: X }, 400, 'id: must be string'],
    ['id null', 'rmsnorm', { id: null, inputs: X }, 400, 'id: must be string'],
    ['a body that is a list', 'rmsnorm', [], 400, 'body: must be a JSON object'],
    ['inputs missing', 'rmsnorm', {}, 400, 'inputs: required field is missing'],
    ['inputs not a list', 'rmsnorm', { inputs: {} }, 400, 'inputs: must be array'],
    ['parameters not an object', 'rmsnorm', { inputs: X, parameters: [] }, 400, 'parameters: must be object'],
    ['outputs not a list', 'rmsnorm', { inputs: X, outputs: {} }, 400, 'outputs: must be array'],
    // parameters the model does not take
    ['num_groups on rmsnorm', 'rmsnorm', { inputs: X, parameters: { num_groups: 2 } }, 400, 'parameters.num_groups: unknown field'],
    ['momentum on layernorm', 'layernorm', { inputs: X, parameters: { momentum: 0.1 } }, 400, 'parameters.momentum: unknown field'],
    ['partial on layernorm', 'layernorm', { inputs: X, parameters: { partial: 1 } }, 400, 'parameters.partial: unknown field'],
    ['channel_axis on groupnorm', 'groupnorm', { inputs: GN, parameters: { num_groups: 2, channel_axis: 1 } }, 400, 'parameters.channel_axis: unknown field'],
    ['axis on batchnorm', 'batchnorm', { inputs: X, parameters: { training: true, axis: 1 } }, 400, 'parameters.axis: unknown field'],
    ['training on rmsnorm', 'rmsnorm', { inputs: X, parameters: { training: true } }, 400, 'parameters.training: unknown field'],
    ["Triton's sequence_id", 'rmsnorm', { inputs: X, parameters: { sequence_id: 7, sequence_start: true, sequence_end: false } }, 400, 'parameters.sequence_id: unknown field'],
    ["Triton's priority", 'rmsnorm', { inputs: X, parameters: { priority: 1 } }, 400, 'parameters.priority: unknown field'],
    ["Triton's headers", 'rmsnorm', { inputs: X, parameters: { headers: { a: 'b' } } }, 400, 'parameters.headers: unknown field'],
    ["Triton's triton_enable_empty_final_response", 'rmsnorm', { inputs: X, parameters: { triton_enable_empty_final_response: true } }, 400, 'parameters.triton_enable_empty_final_response: unknown field'],
    ['a misspelled epsilon', 'rmsnorm', { inputs: X, parameters: { epsilon: 1e-5 } }, 400, 'parameters.epsilon: unknown field'],
    // parameter values: nothing is coerced
    ['eps a string', 'rmsnorm', { inputs: X, parameters: { eps: '1' } }, 400, 'eps: must be number'],
    ['eps null', 'rmsnorm', { inputs: X, parameters: { eps: null } }, 400, 'eps: must be number'],
    ['return_stats "true"', 'rmsnorm', { inputs: X, parameters: { return_stats: 'true' } }, 400, 'return_stats: must be boolean'],
    ['axis out of range', 'rmsnorm', { inputs: X, parameters: { axis: 5 } }, 400, 'axis: 5 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)'],
    ['eps_placement "middle"', 'rmsnorm', { inputs: X, parameters: { eps_placement: 'middle' } }, 400, 'eps_placement: must be one of "inside", "outside"'],
    ['partial keeping no element', 'rmsnorm', { inputs: X, parameters: { partial: 0.1 } }, 400, 'partial: keeps ⌊4 × 0.1⌋ = 0 elements of each row; needs at least 1'],
    ['output_dtype as a /v1 dtype name', 'rmsnorm', { inputs: X, parameters: { output_dtype: 'float16' } }, 400, 'parameters.output_dtype: must be one of FP32, FP64, FP16, BF16'],
    ['output_dtype null', 'rmsnorm', { inputs: X, parameters: { output_dtype: null } }, 400, 'parameters.output_dtype: must be one of FP32, FP64, FP16, BF16'],
    ['momentum above 1', 'batchnorm', { inputs: X, parameters: { training: true, momentum: 2 } }, 400, 'momentum: must be <= 1'],
    ['batchnorm inference without running stats', 'batchnorm', { inputs: X }, 400, 'running_mean: required when training is false'],
    ['batchnorm training with one value per channel', 'batchnorm', { inputs: [jsonInput('input', 'FP32', [1, 2], [1, 2])], parameters: { training: true } }, 400, 'input shape [1, 2]: [1, 2] gives 1 value(s) per channel; training needs at least 2'],
    ['groupnorm without num_groups', 'groupnorm', { inputs: GN }, 400, 'num_groups: required field is missing'],
    // this /v1 message still says input.shape[1] inside: matched on its OIP part only (reported)
    ['num_groups not dividing C', 'groupnorm', { inputs: GN, parameters: { num_groups: 3 } }, 400, /^num_groups: 3 does not divide the 4 channels of input/],
    ['binary_data_output not a boolean', 'rmsnorm', { inputs: X, parameters: { binary_data_output: 'yes' } }, 400, 'parameters.binary_data_output: must be boolean'],
    // timeout: whole microseconds ≥ 1
    ['timeout 0', 'rmsnorm', { inputs: X, parameters: { timeout: 0 } }, 400, 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    ['timeout -5', 'rmsnorm', { inputs: X, parameters: { timeout: -5 } }, 400, 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    ['timeout 1.5', 'rmsnorm', { inputs: X, parameters: { timeout: 1.5 } }, 400, 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    ['timeout "1000"', 'rmsnorm', { inputs: X, parameters: { timeout: '1000' } }, 400, 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    ['timeout true', 'rmsnorm', { inputs: X, parameters: { timeout: true } }, 400, 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    ['timeout 1e400', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[2],"data":[1,2]}],"parameters":{"timeout":1e400}}', 400, 'parameters.timeout: must be a whole number of microseconds ≥ 1'],
    // inputs
    ['an input not an object', 'rmsnorm', { inputs: [5] }, 400, 'inputs[0]: must be object'],
    ['an input without a name', 'rmsnorm', { inputs: [{ datatype: 'FP32', shape: [2], data: [1, 2] }] }, 400, 'inputs[0].name: must be string'],
    ['an unknown input name', 'rmsnorm', { inputs: [jsonInput('gamma', 'FP32', [2], [1, 2])] }, 400, 'inputs[0].name: "gamma" is not an input of this model (input, weight, bias, residual)'],
    ['residual on groupnorm', 'groupnorm', { inputs: [...GN, jsonInput('residual', 'FP32', [2, 4, 2], randomValues(3, 16))], parameters: { num_groups: 2 } }, 400, 'inputs[1].name: "residual" is not an input of this model (input, weight, bias)'],
    ['an input given twice', 'rmsnorm', { inputs: [...X, ...X] }, 400, 'inputs[1].name: input input is given twice'],
    ['no input tensor, only weight', 'rmsnorm', { inputs: [jsonInput('weight', 'FP32', [2], [1, 2])] }, 400, 'input: required field is missing'],
    ['an unknown key in an input', 'rmsnorm', { inputs: [{ ...X[0], strides: [4, 1] }] }, 400, 'inputs[0].strides: unknown field'],
    ['datatype INT8', 'rmsnorm', { inputs: [jsonInput('input', 'INT8' as Datatype, [2], [1, 2])] }, 400, 'input datatype INT8: must be one of FP32, FP64, FP16, BF16'],
    ['datatype fp32 in lower case', 'rmsnorm', { inputs: [jsonInput('input', 'fp32' as Datatype, [2], [1, 2])] }, 400, 'input datatype fp32: must be one of FP32, FP64, FP16, BF16'],
    // the message says "input datatype undefined: …"; matched on its OIP part only (reported)
    ['datatype missing', 'rmsnorm', { inputs: [{ name: 'input', shape: [2], data: [1, 2] }] }, 400, /^input datatype\b/],
    ['weight datatype BF9', 'rmsnorm', { inputs: [...X, jsonInput('weight', 'BF9' as Datatype, [4], [1, 2, 3, 4])] }, 400, 'weight datatype BF9: must be one of FP32, FP64, FP16, BF16'],
    ['shape []', 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [], [])] }, 400, 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['shape of rank 9', 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [1, 1, 1, 1, 1, 1, 1, 1, 1], [1])] }, 400, 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['shape [2, -1]', 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [2, -1], [])] }, 400, 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['shape [2.5]', 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [2.5], [])] }, 400, 'input shape: must be a list of 1 to 8 integers ≥ 0'],
    ['shape [3, 0]: n = 0', 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [3, 0], [])] }, 400, 'input shape [3, 0]: the normalized dimensions [0] hold no elements'],
    ['weight of the wrong shape', 'rmsnorm', { inputs: [...X, jsonInput('weight', 'FP32', [3], [1, 2, 3])] }, 400, 'weight shape [3]: [3] must be [4]'],
    // this /v1 message still says input.dtype inside: matched on its OIP part only (reported)
    ['residual of another datatype', 'rmsnorm', { inputs: [...X, jsonInput('residual', 'FP64', [2, 4], randomValues(1, 8))] }, 400, /^residual datatype: FP64 must match input/],
    ['data missing', 'rmsnorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [2] }] }, 400, 'input data: required field is missing'],
    ['data a number', 'rmsnorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [2], data: 5 }] }, 400, 'input data: must be a list of numbers (flat or nested)'],
    ['data too short', 'rmsnorm', { inputs: [jsonInput('input', 'FP32', [2, 2], [1, 2, 3])] }, 400, 'input data: 3 numbers, but shape [2, 2] needs 4'],
    ['nested data too short', 'rmsnorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 2], data: [[1, 2], [3]] }] }, 400, 'input data: 3 numbers, but shape [2, 2] needs 4'],
    ['data nested 9 deep', 'rmsnorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [1], data: [[[[[[[[[1]]]]]]]]] }] }, 400, 'input data: nested deeper than 8 levels'],
    ['a string in data', 'rmsnorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 2], data: [1, 2, 'x', 4] }] }, 400, 'input data[2]: must be a number or one of "NaN", "Infinity", "-Infinity"'],
    ['null in data', 'rmsnorm', { inputs: [{ name: 'input', datatype: 'FP32', shape: [2], data: [1, null] }] }, 400, 'input data[1]: must be a number or one of "NaN", "Infinity", "-Infinity"'],
    ['an input parameter other than binary_data_size', 'rmsnorm', { inputs: [{ ...X[0], parameters: { shared_memory_region: 'r' } }] }, 400, 'input parameters.shared_memory_region: unknown field'],
    ['input parameters not an object', 'rmsnorm', { inputs: [{ ...X[0], parameters: 1 }] }, 400, 'input parameters: must be object'],
    // 1e400 overflows float64
    ['1e400 in input data', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[2],"data":[1,1e400]}]}', 400, 'input data[1]: number overflows FP64'],
    ['-1e400 in FP16 weight data', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[2],"data":[1,2]},{"name":"weight","datatype":"FP16","shape":[2],"data":[1,-1e400]}]}', 400, 'weight data[1]: number overflows FP64'],
    ['1e400 as eps', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[2],"data":[1,2]}],"parameters":{"eps":1e400}}', 400, 'eps: must be number'],
    ['bare NaN as eps', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[2],"data":[1,2]}],"parameters":{"eps":NaN}}', 400, 'eps: must be number'],
    // requested outputs
    ['an unknown output', 'layernorm', { inputs: X, outputs: [{ name: 'variance' }] }, 400, 'outputs[0].name: "variance" is not an output of this model (output, residual, mean, rstd)'],
    ['mean on rmsnorm', 'rmsnorm', { inputs: X, outputs: [{ name: 'mean' }] }, 400, 'outputs[0].name: "mean" is not an output of this model (output, residual, rstd)'],
    ['rstd without return_stats', 'rmsnorm', { inputs: X, outputs: [{ name: 'output' }, { name: 'rstd' }] }, 400, 'outputs[1].name: this request produces no rstd (it produces output)'],
    ['residual without a residual input', 'layernorm', { inputs: X, parameters: { return_stats: true }, outputs: [{ name: 'residual' }] }, 400, 'outputs[0].name: this request produces no residual (it produces output, mean, rstd)'],
    ['running_mean in batchnorm training without running stats', 'batchnorm', { inputs: X, parameters: { training: true }, outputs: [{ name: 'running_mean' }] }, 400, 'outputs[0].name: this request produces no running_mean (it produces output)'],
    ['an output asked for twice', 'rmsnorm', { inputs: X, parameters: { return_stats: true }, outputs: [{ name: 'rstd' }, { name: 'output' }, { name: 'rstd' }] }, 400, 'outputs[2].name: output rstd is asked for twice'],
    ['an output without a name', 'rmsnorm', { inputs: X, outputs: [{ parameters: {} }] }, 400, 'outputs[0].name: must be string'],
    ['an unknown key in an output', 'rmsnorm', { inputs: X, outputs: [{ name: 'output', datatype: 'FP32' }] }, 400, 'outputs[0].datatype: unknown field'],
    ["an output parameter other than binary_data (Triton's classification)", 'rmsnorm', { inputs: X, outputs: [{ name: 'output', parameters: { classification: 1 } }] }, 400, 'output parameters.classification: unknown field'],
    ['binary_data not a boolean', 'rmsnorm', { inputs: X, outputs: [{ name: 'output', parameters: { binary_data: 1 } }] }, 400, 'output parameters.binary_data: must be boolean'],
    // malformed JSON
    ['an empty body', 'rmsnorm', '', 400, 'body: Unexpected end of JSON input'],
    ['a bare token that is not one of the three', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[1],"data":[nan]}]}', 400, /^body: /],
    // bare tokens are numbers only: as a key the text is not JSON
    ['a bare NaN as a key', 'rmsnorm', '{"inputs":[{"name":"input","datatype":"FP32","shape":[1],"data":[1]}],NaN:1}', 400, /^body: /],
    // the path
    ['an unknown model', 'softmax', { inputs: X }, 404, `model softmax: unknown; the models are ${MODELS}`],
  ];

  it.each(cases.map(([title, model, body, status, message]) => ({ title, model, body, status, message })))('$title → $status', async ({ model, body, status, message }) => {
    expectOipError(await post(model, body), status, message);
  });

  it.each([
    ['/v2/models/rmsnorm/versions/2/infer', 'model rmsnorm version 2: unknown; the one version is 1'],
    ['/v2/models/layernorm/versions/01/infer', 'model layernorm version 01: unknown; the one version is 1'],
    ['/v2/models/softmax/versions/1/infer', `model softmax: unknown; the models are ${MODELS}`],
  ])('POST %s → 404 naming it', async (url, message) => {
    expectOipError(await infer(ctx.app, '', { inputs: X }, JSON_TYPE, url), 404, message);
  });

  it('Content-Encoding gzip or deflate → 415; identity is fine', async () => {
    for (const encoding of ['gzip', 'deflate']) {
      expectOipError(await post('rmsnorm', { inputs: X }, { ...JSON_TYPE, 'content-encoding': encoding }), 415, `Content-Encoding: ${encoding} is not supported; send the body as it is (identity)`);
    }
    readAnswer(await post('rmsnorm', { inputs: X }, { ...JSON_TYPE, 'content-encoding': 'identity' }));
  });
});

describe('the timeout parameter', () => {
  // each request blocks its task at the gate, on a worker of its own, and is answered 504 when its
  // deadline fires while that task still holds the worker. No clock is read: the requests go in order
  // of falling deadline, each once the one before holds its worker, so the 504s must come in exactly
  // the reverse order. Neighbouring deadlines are ≥ 400 ms apart, far more than the time between two
  // sends; a deadline no shorter than its predecessor's (a parameter or header not applied) fires after it
  const DEADLINE = 'the request deadline passed before its result was ready';
  const HOUR_US = 3_600_000_000;
  // one row: one pool task whatever the pool's size
  const ROW = [jsonInput('input', 'FP32', [1, 4], [1, 2, 3, 4])];
  let slow: FastifyInstance;
  beforeAll(async () => {
    slow = await createApp({ workers: 4, faultInjection: true, inlineMaxElements: 0, requestTimeoutMs: 1_600 });
  });
  afterAll(async () => {
    await closeApp(slow);
  });

  it('µs rounded up to ms, capped at REQUEST_TIMEOUT_MS, the shorter of it and X-Request-Timeout-Ms wins: 504s in deadline order', async () => {
    // [the request, its timeout parameter in µs, its X-Request-Timeout-Ms]; the deadline it must get in the name
    const sends: [string, number, string | null][] = [
      ['timeout 1 h: REQUEST_TIMEOUT_MS, 1600 ms', HOUR_US, null],
      ['timeout 1 200 001 µs under X-Request-Timeout-Ms 60000: 1201 ms', 1_200_001, '60000'],
      ['X-Request-Timeout-Ms 800 under timeout 1 h: 800 ms', HOUR_US, '800'],
      ['timeout 1 µs: 1 ms', 1, null],
    ];
    const gate = faultGate(slow);
    const answered: string[] = [];
    const answers: Promise<Response>[] = [];
    try {
      for (const [i, [what, timeout, header]] of sends.entries()) {
        const headers: Record<string, string> = header === null ? { 'x-test-fault': 'hold' } : { 'x-test-fault': 'hold', 'x-request-timeout-ms': header };
        const answer = infer(slow, 'rmsnorm', { inputs: ROW, parameters: { timeout } }, headers).then((res) => {
          answered.push(what);
          return res;
        });
        answers.push(answer);
        // a task dropped at a deadline that came too early never blocks: its answer ends the wait, and the order below fails.
        // The last one (1 ms) may be dropped before it starts: nothing waits for it
        if (i < sends.length - 1) await Promise.race([gate.held(i + 1), answer]);
      }
      // all answered while the gate holds their tasks: a deadline not capped (1 h) would keep this test waiting until it times out
      for (const res of await Promise.all(answers)) expectOipError(res, 504, DEADLINE);
      expect(answered).toEqual(sends.map(([what]) => what).reverse());
    } finally {
      gate.open();
    }
  });

  // the order of 504s cannot tell 1 200 000 µs from 1 200 001 µs: the conversion the handler applies
  it.each([[1, 1], [999, 1], [1_000, 1], [1_001, 2], [1_200_001, 1_201]])('timeout %i µs → a %i ms deadline, rounded up', (us, ms) => {
    expect(readInferRequest('rmsnorm', modelFor('rmsnorm', undefined), { inputs: X, parameters: { timeout: us } }, new Uint8Array(0)).timeoutMs).toBe(ms);
  });

  it('a timeout that is not reached changes nothing: 5 s', async () => {
    const plain = await infer(slow, 'rmsnorm', { inputs: X });
    const timed = await infer(slow, 'rmsnorm', { inputs: X, parameters: { timeout: 5_000_000 } });
    readAnswer(plain);
    expect(timed.body).toBe(plain.body);
  });
});
