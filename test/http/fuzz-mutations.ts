// fuzz.test.ts's one-field mutations of a valid body (every field of §2 and §3, every tensor part):
// each value is wrong for its place by construction, so the answer must be a 400.
import fc from 'fast-check';
import { DTYPES } from '../helpers/tensors.js';

export interface Mutation { path: string[]; value: unknown }

const KNOWN = new Set(['partial', 'channel_axis', 'training', 'running_mean', 'running_var', 'momentum', 'num_groups', 'input', 'axis', 'weight', 'bias', 'eps', 'eps_placement', 'weight_offset', 'residual', 'return_stats', 'output_dtype', 'op', 'requests', 'dtype', 'shape', 'data']);
const notObjectOrArray = fc.oneof(fc.constant(null), fc.boolean(), fc.double(), fc.string({ maxLength: 8 }));
const anyWrongScalar = fc.oneof(fc.constant(null), fc.boolean(), fc.string({ maxLength: 8 }), fc.constant([]), fc.constant({}), fc.constant([1, 2]));
const badDtype = fc.oneof(fc.string({ maxLength: 10 }).filter((s) => !(DTYPES as readonly string[]).includes(s)), fc.integer(), fc.constant(null), fc.boolean(), fc.constant(['float32']));

/** shapes that cannot go with 8 float32 values, rows of 4 and a residual of [2, 4] */
const badShape = fc.oneof(
  fc.constantFrom<unknown>(
    [], [1, 1, 1, 1, 1, 1, 1, 1, 1], [-1], [2, -4], [1e15, 1e15], [2 ** 53], [2 ** 64], [1.5, 4], ['2', 4], [true], [null], [[2], [4]],
    [8, 0], [0], [0, 1e15], [1e300, 1e300, 0], [3, 3], [8], [4, 2], [1, 2, 4], [2, 4, 1], 'shape', 8, null, {},
  ),
  fc.array(fc.integer({ min: 0, max: 2 ** 31 }), { minLength: 1, maxLength: 8 }).filter((s) => !(s.length === 2 && s[0] === 2 && s[1] === 4) && !(s.length === 1 && s[0] === 4)),
);

/** data that cannot be 8 float32 values (nor 4) */
const badData = fc.oneof(
  notObjectOrArray,
  fc.constant({}),
  fc.constant({ 0: 1 }),
  fc.array(fc.double(), { minLength: 0, maxLength: 12 }).filter((xs) => xs.length !== 8 && xs.length !== 4),
  fc.constantFrom<unknown>([1, 2, 3, 'x', 5, 6, 7, 8], [1, 2, 3, null, 5, 6, 7, 8], [1, 2, 3, [4], 5, 6, 7, 8], [1, 2, 3, {}, 5, 6, 7, 8], [true, 2, 3, 4, 5, 6, 7, 8]),
  fc.constantFrom<unknown>(Buffer.alloc(31), Buffer.alloc(0), Buffer.alloc(64), new Int32Array(8), new Int16Array(16), new Uint32Array(8), new BigInt64Array(4), new Uint8ClampedArray(32), new Float64Array(8), new Float32Array(3)),
);

const badTensor = fc.oneof(
  notObjectOrArray,
  fc.constant([]),
  fc.constant({}),
  fc.constant({ shape: [2, 4] }),
  fc.constant({ data: [1, 2, 3, 4, 5, 6, 7, 8] }),
  fc.constant({ dtype: 'float32', shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8], extra: 1 }),
  // msgpack-numpy shaped maps with a bad descriptor
  fc.constant(new Map<unknown, unknown>([[Buffer.from('nd'), true], [Buffer.from('type'), '<i8'], [Buffer.from('shape'), [2, 4]], [Buffer.from('data'), Buffer.alloc(64)]])),
  fc.constant(new Map<unknown, unknown>([[Buffer.from('nd'), true], [Buffer.from('type'), '<f4'], [Buffer.from('shape'), [2, 4]]])),
  fc.constant(new Map<unknown, unknown>([[Buffer.from('nd'), true], [Buffer.from('type'), '<f4'], [Buffer.from('kind'), 'V'], [Buffer.from('shape'), [2, 4]], [Buffer.from('data'), Buffer.alloc(32)]])),
);

const badAxis = fc.oneof(
  fc.constantFrom<unknown>(2, 3, -3, 100, -100, 2 ** 31, -(2 ** 31), 2 ** 53, -(2 ** 53), 1e300, -1e300, 1.5, -0.5, NaN, Infinity, -Infinity, 2n ** 60n),
  fc.integer().filter((a) => a >= 2 || a < -2),
  anyWrongScalar,
);
const badEps = fc.oneof(fc.double({ max: -Number.MIN_VALUE, noNaN: true }), fc.constantFrom<unknown>(NaN, Infinity, -Infinity), anyWrongScalar);
const badNumber = fc.oneof(fc.constantFrom<unknown>(NaN, Infinity, -Infinity, 2n ** 70n), anyWrongScalar);
const badBoolean = fc.oneof(fc.constantFrom<unknown>(0, 1, 'true', 'false', null, [], {}), fc.double());
const badPlacement = fc.oneof(fc.string({ maxLength: 10 }).filter((s) => s !== 'inside' && s !== 'outside'), fc.integer(), fc.constant(null), fc.boolean());
const OPS = ['rmsnorm', 'layernorm', 'batchnorm', 'groupnorm'];
const badOp = fc.oneof(fc.string({ maxLength: 10 }).filter((s) => !OPS.includes(s)), fc.integer(), fc.constant(null), fc.boolean());
/** (0, 1] only */
const badPartial = fc.oneof(fc.constantFrom<unknown>(0, -0.5, 1.0000001, 2, 0.1), fc.double({ min: 1, noNaN: true, minExcluded: true }), badNumber);
const badMomentum = fc.oneof(fc.constantFrom<unknown>(-0.1, 1.5), fc.double({ max: -Number.MIN_VALUE, noNaN: true }), badNumber);
/** groups of 4 channels: 3 does not divide them */
const badGroups = fc.oneof(fc.constantFrom<unknown>(0, -1, 3, 5, 1.5, 2 ** 53), badNumber);

const fieldMutation: fc.Arbitrary<Mutation> = fc.oneof(
  badTensor.map((value) => ({ path: ['input'], value })),
  badTensor.map((value) => ({ path: ['weight'], value })),
  badTensor.map((value) => ({ path: ['bias'], value })),
  badTensor.map((value) => ({ path: ['residual'], value })),
  badDtype.map((value) => ({ path: ['input', 'dtype'], value })),
  badDtype.map((value) => ({ path: ['weight', 'dtype'], value })),
  fc.constantFrom('float64', 'float16', 'bfloat16').map((value) => ({ path: ['residual', 'dtype'], value })),
  badShape.map((value) => ({ path: ['input', 'shape'], value })),
  badShape.map((value) => ({ path: ['weight', 'shape'], value })),
  badShape.map((value) => ({ path: ['bias', 'shape'], value })),
  badShape.map((value) => ({ path: ['residual', 'shape'], value })),
  badData.map((value) => ({ path: ['input', 'data'], value })),
  badData.map((value) => ({ path: ['weight', 'data'], value })),
  badData.map((value) => ({ path: ['residual', 'data'], value })),
  badAxis.map((value) => ({ path: ['axis'], value })),
  badEps.map((value) => ({ path: ['eps'], value })),
  badPlacement.map((value) => ({ path: ['eps_placement'], value })),
  badNumber.map((value) => ({ path: ['weight_offset'], value })),
  badBoolean.map((value) => ({ path: ['return_stats'], value })),
  badDtype.map((value) => ({ path: ['output_dtype'], value })),
  badPartial.map((value) => ({ path: ['partial'], value })),
  badAxis.map((value) => ({ path: ['channel_axis'], value })),
  badBoolean.map((value) => ({ path: ['training'], value })),
  badTensor.map((value) => ({ path: ['running_mean'], value })),
  badShape.map((value) => ({ path: ['running_var', 'shape'], value })),
  badMomentum.map((value) => ({ path: ['momentum'], value })),
  badGroups.map((value) => ({ path: ['num_groups'], value })),
  fc.record({ key: fc.string({ maxLength: 12 }).filter((k) => !KNOWN.has(k)), value: fc.jsonValue({ maxDepth: 2 }) }).map(({ key, value }) => ({ path: [key], value })),
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'epsilon', 'Eps', 'axes').map((key) => ({ path: [key], value: 1 })),
);

/** one field (or the whole body, op, requests) set to a value that no valid request has there */
export function mutation(): fc.Arbitrary<Mutation> {
  return fc.oneof(
    { weight: 4, arbitrary: fieldMutation },
    { weight: 1, arbitrary: fc.oneof(notObjectOrArray, fc.constant([])).map((value) => ({ path: [] as string[], value })) },
    { weight: 1, arbitrary: badOp.map((value) => ({ path: ['op'], value })) },
    { weight: 1, arbitrary: fc.oneof(notObjectOrArray, fc.constant([]), fc.constant({}), fc.constant([1, 2])).map((value) => ({ path: ['requests'], value })) },
  );
}

/** JSON cannot carry BigInt, typed arrays or Maps: such mutations are for msgpack only */
export function jsonable(value: unknown): boolean {
  if (typeof value === 'bigint' || ArrayBuffer.isView(value) || value instanceof Map) return false;
  if (Array.isArray(value)) return value.every(jsonable);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(jsonable);
  return true;
}

/**
 * sets one field. On a single-op route, `op` and `requests` are unknown fields (also invalid);
 * in a batch, field paths land in requests[1], and [] replaces the whole body.
 */
export function applyMutation(body: Record<string, unknown>, route: string, { path, value }: Mutation): unknown {
  if (path.length === 0) return value;
  let target: Record<string, unknown> = body;
  if (route === '/v1/batch' && path[0] !== 'requests') target = (body.requests as Record<string, unknown>[])[1];
  // a part of a field this op lacks (residual.dtype on a batchnorm) makes that field: unknown, so a 400 too
  for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
  // defineProperty: "__proto__" must become a real key, not a prototype
  Object.defineProperty(target, path[path.length - 1], { value, enumerable: true, writable: true, configurable: true });
  return body;
}
