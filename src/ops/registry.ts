// the table of operations: every /v1/<name> route, batch item op and /v2 model is one entry.
import { batchnorm, type BatchNormBody } from './batchnorm.js';
import { groupnorm, type GroupNormBody } from './groupnorm.js';
import { layernorm, type LayerNormBody } from './layernorm.js';
import type { Operation } from './operation.js';
import { rmsnorm, type RmsNormBody } from './rmsnorm.js';

export const OPERATIONS = { rmsnorm, layernorm, batchnorm, groupnorm } as const satisfies Record<string, Operation>;

export type OpName = keyof typeof OPERATIONS;

export const OP_NAMES = Object.keys(OPERATIONS) as OpName[];

/** each operation's body as its schema admits it, by the body's field names: the typed client's
 *  options are checked against these (src/client.ts imports them as types only) */
export interface OpBodies {
  rmsnorm: RmsNormBody;
  layernorm: LayerNormBody;
  batchnorm: BatchNormBody;
  groupnorm: GroupNormBody;
}

/** true when A and B are the same type, optional and readonly modifiers included */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
/** fails the build where T is not true */
export type Assert<T extends true> = T;

// one body per operation, no more, no fewer
type BodyPerOperation = Assert<Same<keyof OpBodies, OpName>>;
