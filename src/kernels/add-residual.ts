// h = x + residual, rounded once to the input dtype, written over residual.
import { roundToBfloat16, roundToFloat16 } from '../codec/half.js';
import type { Dtype } from '../codec/dtype.js';
import type { ValueArray } from './types.js';

/**
 * elements of rows [rowStart, rowEnd); float16/bfloat16 arrays hold the widened values.
 * The float64 sum of two such values is exact for float16, and for float32/bfloat16 it
 * has more than twice their precision, so rounding it once more gives the correctly
 * rounded sum.
 */
export function addResidualRows(
  x: ValueArray, residual: ValueArray, inputDtype: Dtype, n: number, rowStart: number, rowEnd: number,
): void {
  const start = rowStart * n;
  const end = rowEnd * n;
  switch (inputDtype) {
    case 'float32':
      for (let i = start; i < end; i++) residual[i] = Math.fround(x[i] + residual[i]);
      break;
    case 'float64':
      for (let i = start; i < end; i++) residual[i] = x[i] + residual[i];
      break;
    case 'float16':
      for (let i = start; i < end; i++) residual[i] = roundToFloat16(x[i] + residual[i]);
      break;
    case 'bfloat16':
      for (let i = start; i < end; i++) residual[i] = roundToBfloat16(x[i] + residual[i]);
      break;
  }
}
