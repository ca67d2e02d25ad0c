// the row-wise kernels, one entry each (as tfjs-backend-cpu lists its kernels): the request names
// one by its parameter record's `kernel`, and allocate and execute-task look it up here. Adding a
// kernel is its file and one line in each of the two lists below.
import { groupnormKernel, type GroupnormParams } from './groupnorm.js';
import { layernormKernel, type LayernormParams } from './layernorm.js';
import { rmsnormKernel, type RmsnormParams } from './rmsnorm.js';
import type { RowKernelConfig } from './types.js';

/** a row-wise operation's own parameters, as its kernel defines them */
export type RowParams = RmsnormParams | LayernormParams | GroupnormParams;

const ROW_KERNELS: { readonly [P in RowParams as P['kernel']]: RowKernelConfig<P> } = {
  rmsnorm: rmsnormKernel,
  layernorm: layernormKernel,
  groupnorm: groupnormKernel,
};

/** the kernel params names, once per job or task; the cast is sound as params.kernel picked the
 *  entry that reads only params of its kind */
export function rowKernel(params: RowParams): RowKernelConfig<RowParams> {
  return ROW_KERNELS[params.kernel] as RowKernelConfig<RowParams>;
}
