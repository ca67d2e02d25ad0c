// every input dtype × output dtype × op, each over a set of parameter combinations
import { describe, expect, it } from 'vitest';
import { checkCase, DTYPES, normals, random, type NormCase, type Op } from './harness.js';

const ROWS = 3;
const N = 37; // odd, so the kernels' unrolled loops run their tails too

interface Variant {
  name: string;
  weight?: 'random' | 'centred';
  weightOffset?: number;
  bias?: boolean;
  eps: number;
  epsOutside?: boolean;
  residual?: boolean;
  stats?: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'weight ones, eps 1e-5 inside', eps: 1e-5 },
  { name: 'weight, bias, eps 1e-5 outside, stats', weight: 'random', bias: true, eps: 1e-5, epsOutside: true, stats: true },
  { name: 'weight offset 1 (zero-centred weight), eps 0', weight: 'centred', weightOffset: 1, eps: 0 },
  { name: 'no weight, offset 0.5, bias, eps 0 outside', weightOffset: 0.5, bias: true, eps: 0, epsOutside: true },
  { name: 'residual, stats, eps 1e-6', residual: true, stats: true, eps: 1e-6 },
  { name: 'weight, bias, offset 1, residual, stats, eps 1e-2 outside', weight: 'centred', weightOffset: 1, bias: true, residual: true, stats: true, eps: 1e-2, epsOutside: true },
];

function caseOf(op: Op, inDtype: NormCase['inDtype'], outDtype: NormCase['outDtype'], v: Variant, seed: number): NormCase {
  const rand = random(seed);
  const weight = v.weight === 'random' ? Array.from({ length: N }, () => 0.25 + 2 * rand())
    : v.weight === 'centred' ? Array.from({ length: N }, () => 0.2 * (rand() - 0.5)) : undefined;
  return {
    op, rows: ROWS, n: N, inDtype, outDtype, eps: v.eps, epsOutside: v.epsOutside, weight, weightOffset: v.weightOffset,
    data: normals(seed, ROWS * N, op === 'layernorm' ? 1.5 : 0, 2),
    bias: v.bias ? Array.from({ length: N }, () => rand() - 0.5) : undefined,
    residual: v.residual ? normals(seed + 1, ROWS * N, 0, 0.5) : undefined,
    stats: v.stats,
  };
}

describe.each(['rmsnorm', 'layernorm'] as const)('%s across dtypes', (op) => {
  let seed = op === 'rmsnorm' ? 100 : 200;
  for (const inDtype of DTYPES) {
    for (const outDtype of DTYPES) {
      for (const v of VARIANTS) {
        const c = caseOf(op, inDtype, outDtype, v, seed++);
        it(`${op} ${inDtype}→${outDtype} ${ROWS}x${N}, ${v.name}`, () => {
          expect(checkCase(c)).toEqual([]);
        });
      }
    }
  }
});
