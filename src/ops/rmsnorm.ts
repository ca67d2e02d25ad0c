// RMSNorm (API.md §2): s = (1/n) Σ xᵢ², yᵢ = xᵢ · r · gᵢ + βᵢ; pRMSNorm takes s over a row's first
// ⌊n·partial⌋ elements.
import { serviceError } from '../errors.js';
import { example2x4, rowNormOperation, type RowNormBody } from './row-norm.js';

export interface RmsNormBody extends RowNormBody {
  partial?: number;
}

// float32 results, as the server writes them
const ROW = [0.3651483654975891, 0.7302967309951782, 1.095445156097412, 1.4605934619903564];
const RSTD = 0.3651483654975891;
const EXAMPLES = example2x4('rmsnorm', 'RMSNorm', 'rows ±[0.3651, 0.7303, 1.0954, 1.4606]; rstd 1/sqrt(7.5)', ROW, { rstd: [RSTD, RSTD] });

export const rmsnorm = rowNormOperation<RmsNormBody>({
  name: 'rmsnorm',
  defaultEps: 1e-6,
  stats: ['rstd'],
  ownFields: {
    partial: {
      type: 'number', exclusiveMinimum: 0, maximum: 1, default: 1,
      description: 'pRMSNorm: p in (0, 1]; s is taken over the first k = ⌊n·p⌋ elements of each row (n·p in float64, as Python\'s int(n * p)) and every element is scaled by the resulting r. k = 0 is a 400',
    },
  },
  params: (body, n, prefix) => {
    const partial = body.partial ?? 1;
    const sumLength = Math.floor(n * partial);
    if (sumLength === 0) throw serviceError('partialEmpty', `${prefix}partial`, n, String(partial));
    return { kernel: 'rmsnorm', sumLength };
  },
  summary: 'RMSNorm of every row',
  description: 'For each row x of n elements (n = the product of the dimensions axis … rank-1), with g = weight_offset + γ: s = (1/n) Σ xᵢ², yᵢ = xᵢ · r · gᵢ + βᵢ, where r = 1/sqrt(s + eps) ("inside") or 1/(sqrt(s) + eps) ("outside"). Computed in float64, rounded once to output_dtype. A row with NaN or ±Infinity gives NaN or the IEEE result at each position; zero rows give an empty output; n = 0 is a 400.',
  examples: EXAMPLES,
});
