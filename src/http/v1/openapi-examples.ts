// /v1's worked examples beyond each operation's own (ops/*.ts): test/openapi replays every request and
// checks the server answers exactly the documented response.
import type { Example } from '../../ops/operation.js';
import { OP_NAMES, OPERATIONS, type OpName } from '../../ops/registry.js';

const x4 = { dtype: 'float32', shape: [4], data: [1, 2, 3, 4] };

// float32 results, as the server writes them, with the default eps
const BATCH_RMS = [0.3651483356952667, 0.7302966713905334, 1.0954450368881226, 1.460593342781067];
const BATCH_LN = [-1.3416354656219482, -0.4472118020057678, 0.4472118020057678, 1.3416354656219482];

type Route = OpName | 'batch';
const byOp = (side: 'request' | 'response') => Object.fromEntries(OP_NAMES.map((op) => [op, OPERATIONS[op].examples[side]]));

export const requestExamples: Readonly<Record<Route, Record<string, Example>>> = {
  ...byOp('request') as Record<OpName, Record<string, Example>>,
  batch: {
    rmsnormAndLayernorm: {
      summary: 'RMSNorm and LayerNorm of [1, 2, 3, 4]',
      value: { requests: [{ op: 'rmsnorm', input: x4 }, { op: 'layernorm', input: x4 }] },
    },
  },
};

export const responseExamples: Readonly<Record<Route, Record<string, Example>>> = {
  ...byOp('response') as Record<OpName, Record<string, Example>>,
  batch: {
    rmsnormAndLayernorm: {
      summary: 'one result per request, in order',
      value: { results: [{ output: { dtype: 'float32', shape: [4], data: BATCH_RMS } }, { output: { dtype: 'float32', shape: [4], data: BATCH_LN } }] },
    },
  },
};
