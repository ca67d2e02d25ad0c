// the table of operations: every /v1/<name> route, batch item op and (later) /v2 model is one entry.
import { batchnorm } from './batchnorm.js';
import { groupnorm } from './groupnorm.js';
import { layernorm } from './layernorm.js';
import type { Operation } from './operation.js';
import { rmsnorm } from './rmsnorm.js';

export const OPERATIONS = { rmsnorm, layernorm, batchnorm, groupnorm } as const satisfies Record<string, Operation>;

export type OpName = keyof typeof OPERATIONS;

export const OP_NAMES = Object.keys(OPERATIONS) as OpName[];
