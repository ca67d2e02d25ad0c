// LayerNorm (API.md §2): μ = (1/n) Σ xᵢ, s = (1/n) Σ (xᵢ − μ)², yᵢ = (xᵢ − μ) · r · gᵢ + βᵢ.
import { example2x4, rowNormOperation, type RowNormBody } from './row-norm.js';

export type LayerNormBody = RowNormBody;

// float32 results, as the server writes them
const ROW = [-1.3416407108306885, -0.4472135901451111, 0.4472135901451111, 1.3416407108306885];
const RSTD = 0.8944271802902222;
const EXAMPLES = example2x4('layernorm', 'LayerNorm', 'mean ±2.5; rstd 1/sqrt(1.25)', ROW, { mean: [2.5, -2.5], rstd: [RSTD, RSTD] });

export const layernorm = rowNormOperation<LayerNormBody>({
  name: 'layernorm',
  defaultEps: 1e-5,
  stats: ['mean', 'rstd'],
  ownFields: {},
  params: () => ({ kernel: 'layernorm' }),
  summary: 'LayerNorm of every row',
  description: 'For each row x of n elements (n = the product of the dimensions axis … rank-1), with g = weight_offset + γ: μ = (1/n) Σ xᵢ, s = (1/n) Σ (xᵢ − μ)² (biased variance, two-pass), yᵢ = (xᵢ − μ) · r · gᵢ + βᵢ, where r = 1/sqrt(s + eps) ("inside") or 1/(sqrt(s) + eps) ("outside"). Computed in float64, rounded once to output_dtype. A row with NaN or ±Infinity gives NaN or the IEEE result at each position; zero rows give an empty output; n = 0 is a 400.',
  examples: EXAMPLES,
});
