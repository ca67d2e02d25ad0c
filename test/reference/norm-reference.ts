// an independent float64 reference for API.md §2, written apart from src/kernels: exact
// sums (Shewchuk's algorithm, as Python's math.fsum) and exact squares, so that its
// only roundings are the final divisions, the square root and the output formula.

/** the correctly rounded sum of xs; any non-finite term makes it the IEEE sum of those */
export function fsum(xs: readonly number[]): number {
  const partials: number[] = [];
  let special = 0;
  for (let k = 0; k < xs.length; k++) {
    let x = xs[k];
    if (!Number.isFinite(x)) {
      special += x;
      continue;
    }
    let used = 0;
    for (let j = 0; j < partials.length; j++) {
      let y = partials[j];
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[used++] = lo;
      x = hi;
    }
    partials.length = used;
    partials.push(x);
  }
  if (special !== 0) return special;
  // add the partials from the largest down, then fix a half-way case as fsum does
  let k = partials.length;
  if (k === 0) return 0;
  let hi = partials[--k];
  let lo = 0;
  while (k > 0) {
    const x = hi;
    const y = partials[--k];
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  if (k > 0 && ((lo < 0 && partials[k - 1] < 0) || (lo > 0 && partials[k - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/** Dekker's product: a·b = hi + lo exactly (barring overflow) */
function twoProduct(a: number, b: number): [number, number] {
  const hi = a * b;
  if (!Number.isFinite(hi)) return [hi, 0];
  const split = (v: number): [number, number] => {
    const c = 134217729 * v;
    const big = c - (c - v);
    return [big, v - big];
  };
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  const lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl;
  return [hi, lo];
}

/** Σ v² correctly rounded */
export function sumOfSquares(values: readonly number[]): number {
  const terms: number[] = [];
  for (const v of values) terms.push(...twoProduct(v, v));
  return fsum(terms);
}

export interface ReferenceOptions {
  eps: number;
  epsOutside: boolean;
  /** g = weight_offset + γ, one per element of a row */
  scale: readonly number[];
  bias: readonly number[] | null;
}

export interface ReferenceRow {
  y: number[];
  mean: number;
  rstd: number;
}

function finish(row: readonly number[], mean: number, s: number, o: ReferenceOptions): ReferenceRow {
  const r = o.epsOutside ? 1 / (Math.sqrt(s) + o.eps) : 1 / Math.sqrt(s + o.eps);
  const y: number[] = [];
  for (let j = 0; j < row.length; j++) {
    y.push((row[j] - mean) * r * o.scale[j] + (o.bias === null ? 0 : o.bias[j]));
  }
  return { y, mean, rstd: r };
}

/** `k`: s over the first k elements only (pRMSNorm) */
export function referenceRmsnorm(row: readonly number[], o: ReferenceOptions, k = row.length): ReferenceRow {
  const s = sumOfSquares(row.slice(0, k)) / k;
  return finish(row, 0, s, o);
}

export function referenceLayernorm(row: readonly number[], o: ReferenceOptions): ReferenceRow {
  const mean = fsum(row) / row.length;
  const deviations = row.map((v) => v - mean);
  const s = sumOfSquares(deviations) / row.length;
  return finish(row, mean, s, o);
}
