// the WebAssembly float32 kernels (src/kernels/wasm/norm.wat) against the float64
// reference within the contract's float32 tolerance, on buffers carved out of one
// shared WebAssembly.Memory as the service will. Needs the build (dist/kernels/norm.wasm).
import { describe, expect, it } from 'vitest';
import { loadWasmKernels, preparedBytes } from '../../src/kernels/wasm-kernels.js';
import {
  mismatch, normals, paramsOf, random, referenceInput, referenceRows, tolerance, type NormCase, type Op,
} from './harness.js';

const OPS: Op[] = ['rmsnorm', 'layernorm'];
const memory = new WebAssembly.Memory({ initial: 1024, maximum: 4096, shared: true }); // 64 MiB, at most 256 MiB
const kernels = loadWasmKernels(memory);

interface Layout { x: number; y: number; scale: number; bias: number; prepared: number; mean: number; rstd: number }
interface WasmRun { y: Float32Array; mean: Float32Array | null; rstd: Float32Array | null }
interface RunOptions {
  /** bytes past a 16-byte boundary for x and y: 0, 4, 8 or 12 */
  misalign?: number;
  /** y = x, normalized in place */
  inPlace?: boolean;
  /** row boundaries of the calls, e.g. [0, 3, 4, rows]; one call by default */
  cuts?: number[];
}

/** offset 0 is "absent", so buffers start at 64; 16-byte aligned unless misaligned */
function layoutOf(c: NormCase, misalign: number, inPlace: boolean): Layout {
  let at = 64;
  const take = (bytes: number, skew = 0): number => {
    const start = at + skew;
    at = Math.ceil((start + bytes) / 64) * 64 + 64;
    return start;
  };
  const rowBytes = 4 * c.rows * c.n;
  const x = take(rowBytes, misalign);
  const y = inPlace ? x : take(rowBytes, misalign);
  const layout = {
    x, y, scale: take(8 * c.n), bias: c.bias ? take(8 * c.n) : 0, prepared: take(preparedBytes(c.n)),
    mean: take(4 * c.rows), rstd: take(4 * c.rows),
  };
  if (at > memory.buffer.byteLength) memory.grow(Math.ceil((at - memory.buffer.byteLength) / 65536));
  return layout;
}

function runWasm(c: NormCase, { misalign = 0, inPlace = false, cuts = [0, c.rows] }: RunOptions = {}): WasmRun {
  const L = layoutOf(c, misalign, inPlace);
  const buf = memory.buffer;
  const p = paramsOf(c);
  new Float32Array(buf, L.x, c.rows * c.n).set(c.data);
  if (!inPlace) new Float32Array(buf, L.y, c.rows * c.n).fill(7);
  new Float64Array(buf, L.scale, c.n).set(p.scale);
  if (p.bias) new Float64Array(buf, L.bias, c.n).set(p.bias);
  new Float32Array(buf, L.mean, c.rows).fill(7);
  new Float32Array(buf, L.rstd, c.rows).fill(7);
  const stats = c.stats ?? false;
  kernels.prepareF32(L.scale, p.bias ? L.bias : null, c.n, L.prepared);
  for (let k = 0; k + 1 < cuts.length; k++) {
    if (c.op === 'rmsnorm') {
      kernels.rmsnormF32(L.x, L.y, L.scale, p.bias ? L.bias : null, L.prepared, stats ? L.rstd : null,
        c.n, cuts[k], cuts[k + 1], c.eps, p.epsOutside);
    } else {
      kernels.layernormF32(L.x, L.y, L.scale, p.bias ? L.bias : null, L.prepared, stats ? L.mean : null, stats ? L.rstd : null,
        c.n, cuts[k], cuts[k + 1], c.eps, p.epsOutside);
    }
  }
  return {
    y: new Float32Array(buf.slice(L.y, L.y + 4 * c.rows * c.n)),
    mean: stats && c.op === 'layernorm' ? new Float32Array(buf.slice(L.mean, L.mean + 4 * c.rows)) : null,
    rstd: stats ? new Float32Array(buf.slice(L.rstd, L.rstd + 4 * c.rows)) : null,
  };
}

/** every y, mean and rstd outside the float32 tolerance, as readable lines (at most limit) */
function checkWasm(c: NormCase, options: RunOptions = {}, allowNaN = false, limit = 5): string[] {
  const run = runWasm(c, options);
  const problems: string[] = [];
  const note = (s: string): void => void (problems.length < limit && problems.push(s));
  referenceRows(c, referenceInput(c)).forEach((ref, row) => {
    for (let j = 0; j < c.n; j++) {
      const bad = mismatch(run.y[row * c.n + j], ref.y[j], tolerance('float32', ref.y[j]), allowNaN);
      if (bad) note(`y[${row}][${j}]: ${bad}`);
    }
    if (run.mean) {
      const bad = mismatch(run.mean[row], ref.mean, tolerance('float32', ref.mean), allowNaN);
      if (bad) note(`mean[${row}]: ${bad}`);
    }
    if (run.rstd) {
      const bad = mismatch(run.rstd[row], ref.rstd, tolerance('float32', ref.rstd), allowNaN);
      if (bad) note(`rstd[${row}]: ${bad}`);
    }
  });
  return problems;
}

function f32Case(op: Op, rows: number, n: number, data: number[], extra: Partial<NormCase> = {}): NormCase {
  return { op, rows, n, data, inDtype: 'float32', outDtype: 'float32', eps: 1e-5, stats: true, ...extra };
}

const uniform = (seed: number, count: number, lo: number, hi: number): number[] => {
  const rand = random(seed);
  return Array.from({ length: count }, () => lo + (hi - lo) * rand());
};

describe('prepareF32', () => {
  for (const n of [1, 7, 8, 13]) {
    it(`prepareF32 n=${n}: max|g| and max|β| as float64, then g and β as float32 (zeros without β)`, () => {
      const g = uniform(n, n, -3, 2);
      const b = uniform(n + 1, n, -20, 5);
      const [G, B, P] = [64, 64 + 8 * n + 64, 64 + 16 * n + 128];
      new Float64Array(memory.buffer, G, n).set(g);
      new Float64Array(memory.buffer, B, n).set(b);
      kernels.prepareF32(G, B, n, P);
      const max = (v: number[]): number => Math.max(...v.map(Math.abs));
      expect(Array.from(new Float64Array(memory.buffer, P, 2))).toEqual([max(g), max(b)]);
      expect(Array.from(new Float32Array(memory.buffer, P + 16, 2 * n))).toEqual([...g, ...b].map(Math.fround));
      kernels.prepareF32(G, null, n, P);
      expect(Array.from(new Float64Array(memory.buffer, P, 2))).toEqual([max(g), 0]);
      expect(Array.from(new Float32Array(memory.buffer, P + 16 + 4 * n, n))).toEqual(Array(n).fill(0));
      new Float64Array(memory.buffer, G, n)[n - 1] = NaN;
      kernels.prepareF32(G, null, n, P);
      expect(new Float64Array(memory.buffer, P, 1)[0]).toBeNaN();
    });
  }
});

describe.each(OPS)('%s wasm float32 against the reference', (op) => {
  for (const n of [1, 3, 4, 5, 8, 9, 15, 64, 100, 4096]) {
    for (const withBias of [false, true]) {
      it(`${op} 3x${n} float32, eps 1e-5, weight${withBias ? ' and bias' : ''}, stats`, () => {
        const c = f32Case(op, 3, n, normals(n, 3 * n, 0.3), {
          weight: uniform(n + 1, n, 0.5, 1.5), ...(withBias ? { bias: uniform(n + 2, n, -0.5, 0.5) } : {}),
        });
        expect(checkWasm(c)).toEqual([]);
      });
    }
  }

  it(`${op} 2x65536 float32, eps 1e-6, weight and bias`, () => {
    const n = 65536;
    const c = f32Case(op, 2, n, normals(3, 2 * n, 0.3), { eps: 1e-6, weight: uniform(4, n, 0.5, 1.5), bias: uniform(5, n, -0.5, 0.5) });
    expect(checkWasm(c)).toEqual([]);
  });

  it(`${op} 2x65536 float32, eps 0, one spike of 256 in a row of ones`, () => {
    // the largest |x|·r a row of 65,536 allows: 255.99…, so the bias bound is tight
    const n = 65536;
    const data = Array(2 * n).fill(1);
    data[5] = 256;
    data[n + 77] = -256;
    const c = f32Case(op, 2, n, data, { eps: 0, bias: uniform(6, n, -1, 1) });
    expect(checkWasm(c)).toEqual([]);
  });

  for (const magnitude of [1e30, 1e-30, 1e-40]) {
    it(`${op} 3x4096 float32, eps 0, values near ±${magnitude} (squares leave float32's range)`, () => {
      // rows of 1e-40 have rstd ≈ 1e40, past float32 itself: y only
      const c = f32Case(op, 3, 4096, normals(7, 3 * 4096, 0.2).map((v) => v * magnitude), {
        eps: 0, weight: uniform(8, 4096, 0.5, 1.5), stats: magnitude > 1e-38,
      });
      expect(checkWasm(c)).toEqual([]);
    });
  }

  it(`${op} 3x4096 float32, eps 0, values up to ±3e38 (near float32's largest)`, () => {
    const c = f32Case(op, 3, 4096, uniform(9, 3 * 4096, -3e38, 3e38), { eps: 0, bias: uniform(8, 4096, -1, 1) });
    expect(checkWasm(c)).toEqual([]);
  });

  it(`${op} 2x64 float32, eps 0, rows of 3e38 but one -3e38 (x - μ past float32's largest)`, () => {
    const data = Array(128).fill(3e38);
    data[7] = -3e38;
    data[64 + 63] = -3e38;
    expect(checkWasm(f32Case(op, 2, 64, data, { eps: 0 }))).toEqual([]);
  });

  it(`${op} 4x9 float32, eps 0, rows of 1e30, 1e-30, 1 and 1e-38 side by side`, () => {
    const data = [1e30, 1e-30, 1, 1e-38].flatMap((scale, k) => normals(9 + k, 9, 0.1).map((v) => v * scale));
    expect(checkWasm(f32Case(op, 4, 9, data, { eps: 0, bias: uniform(10, 9, -1, 1) }))).toEqual([]);
  });

  it(`${op} 2x17 float32, eps outside, weight offset 1`, () => {
    const c = f32Case(op, 2, 17, normals(11, 34, 0.5), { epsOutside: true, eps: 0.01, weight: uniform(12, 17, -0.2, 0.2), weightOffset: 1 });
    expect(checkWasm(c)).toEqual([]);
  });

  it(`${op} 8x37 float32 at every 4-byte misalignment, in place and not`, () => {
    const c = f32Case(op, 8, 37, normals(13, 8 * 37, -0.4), { bias: uniform(14, 37, -1, 1) });
    for (const misalign of [0, 4, 8, 12]) {
      for (const inPlace of [false, true]) expect(checkWasm(c, { misalign, inPlace })).toEqual([]);
    }
  });

  it(`${op} 4x4096 float32, bias cancelling x·r·g = ±1000s to near 0: within tolerance (float64 output for those rows)`, () => {
    // float32 products carry 5·2^-24·|x·r·g| ≈ 3e-4 of error here, far over 1e-5 near y = 0
    const n = 4096;
    const data = normals(15, 4 * n, 0.1);
    const weight = Array(n).fill(2000);
    const c0 = f32Case(op, 4, n, data, { weight });
    const ref = referenceRows(c0, referenceInput(c0));
    const bias = ref[0].y.map((v, j) => -v + (j % 3) * 1e-4);
    expect(checkWasm({ ...c0, bias })).toEqual([]);
  });

  it(`${op} 3x64 float32, a scale of 1e39 (past float32) on a column of zeros`, () => {
    // rows [a, -a]: the mean is exactly 0, so x - μ = 0 there and y = 0·r·1e39 = 0
    const data = [0, 1, 2].flatMap((row) => {
      const half = normals(23 + row, 32, 0.5).map((v) => Math.fround(v));
      half[9] = 0;
      return [...half, ...half.map((v) => -v)];
    });
    const weight = uniform(24, 64, 0.5, 1.5);
    weight[9] = 1e39;
    expect(checkWasm(f32Case(op, 3, 64, data, { weight }))).toEqual([]);
  });

  it(`${op} 3x4096 float32, scale 3e37 and bias 1e37 (past the float32 output's bounds)`, () => {
    const c = f32Case(op, 3, 4096, normals(16, 3 * 4096), { weight: Array(4096).fill(3e37), bias: Array(4096).fill(1e37) });
    expect(checkWasm(c)).toEqual([]);
  });
});

describe('layernorm wasm float32, large means', () => {
  for (const n of [5, 4096, 65536]) {
    for (const center of [1e6, -1e6, 3e7]) {
      it(`layernorm 2x${n} float32, mean ${center} with std 1${center === 3e7 ? ' (float32 spacing 2 there)' : ''}, weight and bias`, () => {
        const c = f32Case('layernorm', 2, n, normals(17, 2 * n, center, 1), { weight: uniform(18, n, 0.5, 1.5), bias: uniform(19, n, -0.5, 0.5) });
        expect(checkWasm(c)).toEqual([]);
      });
    }
  }

  it('layernorm 2x4096 float32, mean 1e9 with std 300, weight 1000 (x - μ still relative to its size)', () => {
    const c = f32Case('layernorm', 2, 4096, normals(25, 2 * 4096, 1e9, 300), { weight: Array(4096).fill(1000) });
    expect(checkWasm(c)).toEqual([]);
  });

  it('layernorm 3x4096 float32, first element an outlier (1e4 · std): the shifted sums are redone about μ', () => {
    const data = normals(20, 3 * 4096, 50, 1);
    data[0] = 1e4;
    data[4096] = -1e5;
    data[8192] = 3e7;
    expect(checkWasm(f32Case('layernorm', 3, 4096, data, { bias: uniform(21, 4096, -1, 1) }))).toEqual([]);
  });

  it('layernorm 2x8 float32, constant rows: s = 0, y = β', () => {
    const data = [...Array(8).fill(3.25), ...Array(8).fill(-1e6)];
    const run = runWasm(f32Case('layernorm', 2, 8, data, { bias: uniform(22, 8, -1, 1) }));
    const bias = Float32Array.from(uniform(22, 8, -1, 1));
    expect(Array.from(run.y)).toEqual([...bias, ...bias]);
    expect(Array.from(run.mean!)).toEqual([3.25, -1e6]);
  });
});

describe.each(OPS)('%s wasm float32 special values', (op) => {
  const specials: [string, number[]][] = [
    ['NaN', [NaN]], ['+Inf', [Infinity]], ['-Inf', [-Infinity]], ['+Inf and -Inf', [Infinity, -Infinity]], ['NaN and Inf', [NaN, Infinity]],
  ];
  for (const [name, values] of specials) {
    for (const n of [8, 13, 4096]) {
      it(`${op} 3x${n} float32, ${name} in row 1: NaN or the IEEE formula there, other rows unaffected`, () => {
        const data = normals(31, 3 * n, 0.5);
        values.forEach((v, k) => { data[n + 2 * k + 1] = v; });
        const c = f32Case(op, 3, n, data, { bias: uniform(32, n, -1, 1) });
        expect(checkWasm(c, {}, true)).toEqual([]);
        const run = runWasm(c);
        for (const i of [...Array(n).keys(), ...Array.from({ length: n }, (_, j) => 2 * n + j)]) {
          expect(Number.isFinite(run.y[i])).toBe(true);
        }
        // the rows around it are what they are without it
        expect(checkWasm({ ...c, rows: 2, data: [...data.slice(0, n), ...data.slice(2 * n)] })).toEqual([]);
      });
    }
  }

  for (const epsOutside of [false, true]) {
    it(`${op} 2x5 float32, eps 0 ${epsOutside ? 'outside' : 'inside'}: an all-zero row gives NaN, rstd Inf`, () => {
      const run = runWasm(f32Case(op, 2, 5, [0, 0, 0, 0, 0, 1, 2, 3, 4, 6], { eps: 0, epsOutside }));
      run.y.slice(0, 5).forEach((v) => expect(v).toBeNaN());
      run.y.slice(5).forEach((v) => expect(Number.isFinite(v)).toBe(true));
      expect(run.rstd![0]).toBe(Infinity);
    });
  }

  it(`${op} 4x4096 float32, eps 0, all-zero row 2: NaN there only`, () => {
    const data = normals(33, 4 * 4096);
    data.fill(0, 2 * 4096, 3 * 4096);
    const run = runWasm(f32Case(op, 4, 4096, data, { eps: 0 }));
    expect(run.y.slice(2 * 4096, 3 * 4096).every(Number.isNaN)).toBe(true);
    expect(run.y.slice(0, 2 * 4096).every(Number.isFinite)).toBe(true);
    expect(run.y.slice(3 * 4096).every(Number.isFinite)).toBe(true);
  });
});

describe.each(OPS)('%s wasm float32 row ranges', (op) => {
  for (const n of [1, 7, 64, 4096]) {
    it(`${op} 12x${n} float32: any split into row ranges, and in place, gives identical bytes`, () => {
      const data = normals(40 + n, 12 * n, 0.25);
      data[3 * n] = 1e4; // a row that redoes its sums (layernorm)
      for (let j = 0; j < n; j++) data[5 * n + j] *= 1e30; // a row past the float32 bounds
      const c = f32Case(op, 12, n, data, { bias: uniform(41, n, -1, 1), weight: uniform(42, n, 0.5, 1.5) });
      const whole = runWasm(c);
      for (const cuts of [[0, 1, 12], [0, 3, 4, 5, 6, 12], [0, 11, 12], [0, 2, 4, 6, 8, 10, 12], [...Array(13).keys()]]) {
        const split = runWasm(c, { cuts });
        expect(Buffer.from(split.y.buffer).equals(Buffer.from(whole.y.buffer))).toBe(true);
        expect(Buffer.from(split.rstd!.buffer).equals(Buffer.from(whole.rstd!.buffer))).toBe(true);
        if (op === 'layernorm') expect(Buffer.from(split.mean!.buffer).equals(Buffer.from(whole.mean!.buffer))).toBe(true);
      }
      const inPlace = runWasm(c, { inPlace: true, cuts: [0, 5, 12] });
      expect(Buffer.from(inPlace.y.buffer).equals(Buffer.from(whole.y.buffer))).toBe(true);
    });
  }

  it(`${op} 5x4 float32, rows [1, 3) touches only rows 1 and 2`, () => {
    const c = f32Case(op, 5, 4, normals(43, 20));
    const part = runWasm(c, { cuts: [1, 3] });
    const whole = runWasm(c);
    expect(Array.from(part.y.slice(0, 4))).toEqual([7, 7, 7, 7]);
    expect(Array.from(part.y.slice(4, 12))).toEqual(Array.from(whole.y.slice(4, 12)));
    expect(Array.from(part.y.slice(12))).toEqual(Array(8).fill(7));
    expect(Array.from(part.rstd!)).toEqual([7, ...whole.rstd!.slice(1, 3), 7, 7]);
  });

  it(`${op} 4x6 float32, rowStart = rowEnd writes nothing`, () => {
    const run = runWasm(f32Case(op, 4, 6, normals(44, 24)), { cuts: [2, 2] });
    expect(Array.from(run.y).every((v) => v === 7)).toBe(true);
    expect(Array.from(run.rstd!)).toEqual([7, 7, 7, 7]);
  });
});
