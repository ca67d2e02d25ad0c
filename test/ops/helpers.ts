// shared by the acceptance tests of pRMSNorm, BatchNorm and GroupNorm (API.md §2, §8, §9): wire tensors
// in either encoding, error checks in both encodings, and the float64 references fed with the values the
// service holds (each rounded once to its dtype), never anything from src/kernels or src/ops.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { expectError, postJson, postMsgpack, type Response } from '../helpers/http.js';
import { expectClose, reference, roundTo, type Expected, type NormCase, type Param } from '../helpers/reference.js';
import { bytesOf, jsonData, product, valuesOf, type Dtype, type WireTensor } from '../helpers/tensors.js';
import {
  referenceBatchnorm, referenceGroupnorm,
  type BatchnormExpected, type ChannelStats,
} from '../reference/channel-norm-reference.js';

export type Encoding = 'json' | 'msgpack';
export const ENCODINGS: readonly Encoding[] = ['json', 'msgpack'];

/** a wire tensor: JSON lists (non-finite values as strings) or msgpack bin */
export function wire(encoding: Encoding, dtype: Dtype, shape: readonly number[], values: readonly number[]): WireTensor {
  return { dtype, shape: [...shape], data: encoding === 'json' ? jsonData(values) : bytesOf(dtype, values) };
}

export function post(app: FastifyInstance, encoding: Encoding, url: string, body: unknown): Promise<Response> {
  return encoding === 'json' ? postJson(app, url, body) : postMsgpack(app, url, body);
}

function isListTensor(v: unknown): v is { dtype?: Dtype; shape: number[]; data: unknown[] } {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const t = v as { dtype?: unknown; shape?: unknown; data?: unknown };
  return Array.isArray(t.shape) && t.shape.every((d) => Number.isInteger(d) && d >= 0) && Array.isArray(t.data)
    && t.data.every((x) => typeof x === 'number') && t.data.length === product(t.shape as number[])
    && (t.dtype === undefined || ['float32', 'float64', 'float16', 'bfloat16'].includes(t.dtype as string));
}

/** the same body for msgpack: every well-formed list tensor becomes bin data of its dtype */
export function asMsgpack(body: unknown): unknown {
  if (isListTensor(body)) {
    const dtype = body.dtype ?? 'float32';
    return { ...body, dtype, data: bytesOf(dtype, body.data as number[]) };
  }
  if (Array.isArray(body)) return body.map(asMsgpack);
  if (body !== null && typeof body === 'object') return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, asMsgpack(v)]));
  return body;
}

/** the same 400 whether the body came as JSON or as msgpack */
export async function expectErrorBoth(app: FastifyInstance, url: string, body: unknown, code: string, message: string): Promise<void> {
  expectError(await postJson(app, url, body), 400, code, message);
  expectError(await postMsgpack(app, url, asMsgpack(body)), 400, code, message);
}

/** a response tensor of this dtype and shape; its values */
export function tensorValues(tensor: WireTensor, dtype: Dtype, shape: readonly number[]): number[] {
  expect(tensor.dtype).toBe(dtype);
  expect(tensor.shape).toEqual([...shape]);
  const values = valuesOf(tensor);
  expect(values).toHaveLength(product(shape));
  return values;
}

/** the raw bytes of every tensor of an answer, by field name, for bitwise comparisons */
export function tensorBytes(body: Record<string, unknown>): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(body).map(([name, t]) => [name, Buffer.from((t as { data: Uint8Array }).data)]));
}

/**
 * a group that holds NaN or ±Infinity: each position is NaN or within tolerance of the IEEE formula
 * (API.md §2, Special values)
 */
export function expectNanOrClose(actual: readonly number[], ref: readonly number[], dtype: Dtype, largeMean: readonly number[] = []): void {
  expect(actual.length).toBe(ref.length);
  const compared = [...actual.keys()].filter((i) => !Number.isNaN(actual[i]));
  expectClose(compared.map((i) => actual[i]), compared.map((i) => ref[i]), dtype, compared.map((i) => largeMean[i] ?? 0));
}

const rounded = (p: Param | undefined): number[] | null => (p === undefined ? null : p.values.map((v) => roundTo(p.dtype, v)));

// ---- pRMSNorm (API.md §2, `partial`)

/** a pRMSNorm request as the reference sees it: §2's case with `partial` */
export type PartialCase = Omit<NormCase, 'op'>;

export function partialReference(c: PartialCase): Expected {
  return reference({ op: 'rmsnorm', ...c });
}

// ---- BatchNorm (API.md §8)

export interface BatchnormCase {
  dtype: Dtype;
  shape: readonly number[];
  values: readonly number[];
  channelAxis?: number;
  training?: boolean;
  runningMean?: Param;
  runningVar?: Param;
  momentum?: number;
  weight?: Param;
  bias?: Param;
  eps?: number;
  returnStats?: boolean;
  outputDtype?: Dtype;
}

export function batchnormReference(c: BatchnormCase): BatchnormExpected {
  return referenceBatchnorm({
    x: c.values.map((v) => roundTo(c.dtype, v)), shape: c.shape, channelAxis: c.channelAxis ?? 1, training: c.training ?? false,
    runningMean: rounded(c.runningMean), runningVar: rounded(c.runningVar), momentum: c.momentum ?? 0.1,
    weight: rounded(c.weight), bias: rounded(c.bias), eps: c.eps ?? 1e-5,
  });
}

/** the request body of a case, its tensors in `encoding` */
export function batchnormBody(c: BatchnormCase, encoding: Encoding): Record<string, unknown> {
  const C = [c.shape[(c.channelAxis ?? 1) < 0 ? (c.channelAxis ?? 1) + c.shape.length : (c.channelAxis ?? 1)]];
  const param = (p: Param) => wire(encoding, p.dtype, C, p.values);
  const body: Record<string, unknown> = { input: wire(encoding, c.dtype, c.shape, c.values) };
  if (c.channelAxis !== undefined) body.channel_axis = c.channelAxis;
  if (c.training !== undefined) body.training = c.training;
  if (c.runningMean !== undefined) body.running_mean = param(c.runningMean);
  if (c.runningVar !== undefined) body.running_var = param(c.runningVar);
  if (c.momentum !== undefined) body.momentum = c.momentum;
  if (c.weight !== undefined) body.weight = param(c.weight);
  if (c.bias !== undefined) body.bias = param(c.bias);
  if (c.eps !== undefined) body.eps = c.eps;
  if (c.returnStats !== undefined) body.return_stats = c.returnStats;
  if (c.outputDtype !== undefined) body.output_dtype = c.outputDtype;
  return body;
}

/** every field of a batchnorm answer against the reference: which fields, their dtypes, shapes and values */
export function expectBatchnormAnswer(body: Record<string, WireTensor>, c: BatchnormCase, ref: BatchnormExpected = batchnormReference(c)): void {
  const withRunning = (c.training ?? false) && c.runningMean !== undefined;
  const fields = ['output', ...(withRunning ? ['running_mean', 'running_var'] : []), ...(c.returnStats ? ['mean', 'rstd'] : [])];
  expect(Object.keys(body).sort()).toEqual(fields.sort());
  const out = c.outputDtype ?? c.dtype;
  expectClose(tensorValues(body.output, out, c.shape), ref.output, out, ref.largeMean);
  if (withRunning) {
    expectClose(tensorValues(body.running_mean, c.runningMean!.dtype, [ref.channels]), ref.runningMean!, c.runningMean!.dtype);
    expectClose(tensorValues(body.running_var, c.runningVar!.dtype, [ref.channels]), ref.runningVar!, c.runningVar!.dtype);
  }
  if (c.returnStats) {
    expectClose(tensorValues(body.mean, 'float32', [ref.channels]), ref.mean, 'float32');
    expectClose(tensorValues(body.rstd, 'float32', [ref.channels]), ref.rstd, 'float32');
  }
}

// ---- GroupNorm (API.md §9)

export interface GroupnormCase {
  dtype: Dtype;
  shape: readonly number[];
  values: readonly number[];
  numGroups: number;
  weight?: Param;
  bias?: Param;
  eps?: number;
  returnStats?: boolean;
  outputDtype?: Dtype;
}

export function groupnormReference(c: GroupnormCase): ChannelStats {
  return referenceGroupnorm({
    x: c.values.map((v) => roundTo(c.dtype, v)), shape: c.shape, numGroups: c.numGroups,
    weight: rounded(c.weight), bias: rounded(c.bias), eps: c.eps ?? 1e-5,
  });
}

export function groupnormBody(c: GroupnormCase, encoding: Encoding): Record<string, unknown> {
  const C = [c.shape[1]];
  const body: Record<string, unknown> = { input: wire(encoding, c.dtype, c.shape, c.values), num_groups: c.numGroups };
  if (c.weight !== undefined) body.weight = wire(encoding, c.weight.dtype, C, c.weight.values);
  if (c.bias !== undefined) body.bias = wire(encoding, c.bias.dtype, C, c.bias.values);
  if (c.eps !== undefined) body.eps = c.eps;
  if (c.returnStats !== undefined) body.return_stats = c.returnStats;
  if (c.outputDtype !== undefined) body.output_dtype = c.outputDtype;
  return body;
}

export function expectGroupnormAnswer(body: Record<string, WireTensor>, c: GroupnormCase, ref: ChannelStats = groupnormReference(c)): void {
  expect(Object.keys(body).sort()).toEqual(c.returnStats ? ['mean', 'output', 'rstd'] : ['output']);
  const out = c.outputDtype ?? c.dtype;
  expectClose(tensorValues(body.output, out, c.shape), ref.output, out, ref.largeMean);
  if (c.returnStats) {
    expectClose(tensorValues(body.mean, 'float32', [c.shape[0], c.numGroups]), ref.mean, 'float32');
    expectClose(tensorValues(body.rstd, 'float32', [c.shape[0], c.numGroups]), ref.rstd, 'float32');
  }
}
