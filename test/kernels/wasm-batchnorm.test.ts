// the BatchNorm SIMD kernels (tileStatsF32, batchnormF32 in src/kernels/wasm/channels.wat) with
// channel-stats.ts's merge, against the float64 reference within the contract's float32 tolerance
// (API.md §2 Accuracy, §8), and bit for bit the same however the tiles are spread.
import { describe, expect, it } from 'vitest';
import { tileGeometry } from '../../src/kernels/channel-tiles.js';
import { random } from './harness.js';
import { channelValues, checkBatchnorm, runBatchnorm, type BatchCase } from './channel-harness.js';

const uniform = (seed: number, count: number, lo: number, hi: number): number[] => {
  const next = random(seed);
  return Array.from({ length: count }, () => Math.fround(lo + (hi - lo) * next()));
};

function trainingCase(outer: number, channels: number, inner: number, seed: number, extra: Partial<BatchCase> = {}): BatchCase {
  const next = random(seed);
  const centers = uniform(seed + 1, channels, -3, 3);
  return {
    outer, channels, inner, x: channelValues(outer, channels, inner, next, (c) => centers[c], 1.5), training: true, eps: 1e-5,
    weight: uniform(seed + 2, channels, 0.5, 1.5), bias: uniform(seed + 3, channels, -1, 1), ...extra,
  };
}

// [outer, C, inner]: channels last (inner 1) with 8-channel sweeps and their remainders, runs of
// every length mod 8, channels split over tiles (C·inner > 2^16), a run longer than a tile
const SHAPES: [string, number, number, number][] = [
  ['[N, C] channels last', 37, 5, 1],
  ['[N, C] channels last, 8 + 1 channels', 50, 9, 1],
  ['[N, H, W, C] channels last, C 64', 300, 64, 1],
  ['[N, C, L], L 2', 40, 6, 2],
  ['[N, C, L], L 5', 33, 7, 5],
  ['[N, C, L], L 17', 12, 4, 17],
  ['[N, C, H, W], 56×56', 2, 24, 3136],
  ['[N, C] with C 70,000 (two channel tiles)', 3, 70000, 1],
  ['[N, C, L], a run of 100,000 (longer than a tile)', 2, 3, 100000],
];

describe('batchnorm wasm float32 against the reference', () => {
  for (const [name, outer, channels, inner] of SHAPES) {
    it(`batchnorm training ${name} [${outer}, ${channels}, ${inner}] float32, weight, bias, eps 1e-5`, () => {
      expect(checkBatchnorm(trainingCase(outer, channels, inner, outer + channels))).toEqual([]);
    });
    it(`batchnorm inference ${name} [${outer}, ${channels}, ${inner}] float32, running statistics`, () => {
      const c = trainingCase(outer, channels, inner, 3 * outer + channels, { training: false });
      expect(checkBatchnorm({ ...c, runningMean: uniform(7, channels, -3, 3), runningVar: uniform(8, channels, 0.5, 4) })).toEqual([]);
    });
  }

  for (const [outer, inner] of [[64, 1], [4, 300]]) {
    for (const center of [1e6, -3e7]) {
      it(`batchnorm training [${outer}, 9, ${inner}] float32, means ${center}·(c + 1) with std 1 (1e6 × and more) but every third 0: summed again about μ`, () => {
        const next = random(11);
        const x = channelValues(outer, 9, inner, next, (c) => (c % 3 === 0 ? 0 : center * (c + 1)), 1);
        expect(checkBatchnorm({ ...trainingCase(outer, 9, inner, 12), x })).toEqual([]);
      });
    }
  }

  for (const [outer, inner] of [[2000, 1], [2, 3000]]) {
    it(`batchnorm training [${outer}, 3, ${inner}] float32, each tile's first value an outlier (1e4, -3e5): summed again about μ`, () => {
      const c = trainingCase(outer, 3, inner, 13);
      const x = [...c.x];
      x[0] = 1e4;
      x[inner] = -3e5;
      expect(checkBatchnorm({ ...c, x })).toEqual([]);
    });
  }

  for (const scale of [1e30, 1e-30, 1e-36]) {
    for (const inner of [1, 64]) {
      it(`batchnorm training [16, 5, ${inner}] float32, eps 0, values near ±${scale} (squares leave float32's range)`, () => {
        const c = trainingCase(16, 5, inner, 14, { eps: 0 });
        expect(checkBatchnorm({ ...c, x: c.x.map((v) => Math.fround(v * scale)) })).toEqual([]);
      });
    }
  }

  it('batchnorm training [32, 8, 1] and [4, 8, 9] float32: channels past the float32 output (|β| 100, γ 0, γ 1e35) take the float64 one', () => {
    for (const [outer, inner] of [[32, 1], [4, 9]]) {
      const c = trainingCase(outer, 8, inner, 15);
      const weight = [...c.weight!];
      const bias = [...c.bias!];
      bias[1] = 100;
      weight[2] = 0;
      weight[5] = 1e35;
      bias[6] = -1e6;
      expect(checkBatchnorm({ ...c, weight, bias })).toEqual([]);
    }
  });

  for (const inner of [1, 6]) {
    it(`batchnorm inference [8, 4, ${inner}] float32: x − μ past float32's largest (3.4e38 against a mean of −1e36) comes out in float64`, () => {
      const c = trainingCase(8, 4, inner, 16, { training: false });
      const x = c.x.map((v, i) => (i % 5 === 0 ? 3.4e38 : v));
      expect(checkBatchnorm({ ...c, x, runningMean: [-1e36, 0, 1, -1], runningVar: [1, 1, 2, 3], weight: [0.5, 1, 1, 1] })).toEqual([]);
    });

    it(`batchnorm training [64, 4, ${inner}] float32: β ≈ 1000 cancelling (x − μ)·r·γ to 0.005 (the float32 output would miss by 6e-5)`, () => {
      // x = μ ± 1 exactly, so r = 1/sqrt(1 + eps) and y is about 0.005 or 2000 in channels 0 and 3
      const x = Array.from({ length: 64 * 4 * inner }, (_, i) => (Math.floor(i / inner) % 4) + ((Math.floor(i / (4 * inner)) + i) % 2 === 0 ? -1 : 1));
      const c = trainingCase(64, 4, inner, 20, { x, weight: [1037, 1, 1, -1111], bias: [1037, 0, 0, 1111] });
      expect(checkBatchnorm(c)).toEqual([]);
    });
  }

  it('batchnorm training [2^24, 1, 1] and [16, 1, 2^20] float32: M = 2^24 around a mean of 1e6, exact mean and variance known', () => {
    const steps = [-1.5, -0.5, 0.5, 1.5]; // mean 0, variance 1.25, each 1e6 + step exact in float32
    for (const [outer, inner] of [[2 ** 24, 1], [16, 2 ** 20]]) {
      const x = Array.from({ length: 2 ** 24 }, (_, i) => 1e6 + steps[i & 3]);
      const run = runBatchnorm({ outer, channels: 1, inner, x, training: true, eps: 0 });
      expect(run.mean[0]).toBe(1e6);
      expect(Math.abs(run.rstd[0] * Math.sqrt(1.25) - 1)).toBeLessThan(1e-9);
      const bad = run.y.findIndex((y, i) => !(Math.abs(y - steps[i & 3] / Math.sqrt(1.25)) <= 1e-5 * (1 + Math.abs(y))));
      expect(bad).toBe(-1);
    }
  }, 60_000);
});

describe('batchnorm wasm float32 special values', () => {
  for (const [name, value] of [['NaN', NaN], ['+Inf', Infinity], ['-Inf', -Infinity]] as const) {
    for (const inner of [1, 16]) {
      it(`batchnorm training [12, 5, ${inner}] float32, ${name} in channel 2: NaN or the IEEE formula there, other channels unaffected`, () => {
        const c = trainingCase(12, 5, inner, 17);
        const x = [...c.x];
        x[(3 * 5 + 2) * inner] = value;
        expect(checkBatchnorm({ ...c, x }, {}, true)).toEqual([]);
        const run = runBatchnorm({ ...c, x });
        run.y.forEach((y, i) => {
          if (Math.floor(i / inner) % 5 !== 2) expect(Number.isFinite(y)).toBe(true);
        });
      });
    }
  }

  it('batchnorm training [6, 3, 4] float32, eps 0, a constant channel: σ² = 0, r = Inf, y NaN there only', () => {
    const c = trainingCase(6, 3, 4, 18, { eps: 0, bias: undefined, weight: undefined });
    const x = c.x.map((v, i) => (Math.floor(i / 4) % 3 === 1 ? 2.5 : v));
    const run = runBatchnorm({ ...c, x });
    expect(run.rstd[1]).toBe(Infinity);
    run.y.forEach((y, i) => expect(Number.isNaN(y)).toBe(Math.floor(i / 4) % 3 === 1));
  });
});

describe('batchnorm wasm float32 determinism', () => {
  // tiles of 2^16 values: [300, 64, 1] is 1 tile, [2000, 64, 1] several, [3, 70000, 1] two per outer index
  for (const [outer, channels, inner] of [[2000, 64, 1], [3, 70000, 1], [9, 24, 3136], [700, 5, 33]]) {
    it(`batchnorm training [${outer}, ${channels}, ${inner}] float32, misaligned by 0-3 bytes, tiles in any order: identical bytes`, () => {
      const c = trainingCase(outer, channels, inner, 19);
      expect(tileGeometry(outer, channels, inner).tiles).toBeGreaterThan(1);
      const first = runBatchnorm(c);
      const orders: ((n: number) => number[])[] = [
        (n) => [...Array(n).keys()].reverse(),
        (n) => [...Array(n).keys()].sort((a, b) => (a % 3) - (b % 3) || a - b),
      ];
      for (const [k, order] of orders.entries()) {
        const other = runBatchnorm(c, { order, misalign: k + 1 });
        expect(Buffer.from(other.partials.buffer).equals(Buffer.from(first.partials.buffer))).toBe(true);
        expect(Buffer.from(other.y.buffer).equals(Buffer.from(first.y.buffer))).toBe(true);
      }
      expect(Buffer.from(runBatchnorm(c, { misalign: 3 }).y.buffer).equals(Buffer.from(first.y.buffer))).toBe(true);
    });
  }
});
