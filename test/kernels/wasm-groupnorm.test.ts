// the GroupNorm SIMD kernel (groupnormF32 in src/kernels/wasm/channels.wat) against the float64
// reference within the contract's float32 tolerance (API.md §2 Accuracy, §9); a row's bytes depend
// on that row alone, however the rows are split.
import { describe, expect, it } from 'vitest';
import { random } from './harness.js';
import { channelValues, checkGroupnorm, runGroupnorm, type GroupCase } from './channel-harness.js';

const uniform = (seed: number, count: number, lo: number, hi: number): number[] => {
  const next = random(seed);
  return Array.from({ length: count }, () => Math.fround(lo + (hi - lo) * next()));
};

function groupCase(samples: number, channels: number, spatial: number, groups: number, seed: number, extra: Partial<GroupCase> = {}): GroupCase {
  const next = random(seed);
  const centers = uniform(seed + 1, channels, -2, 2);
  return {
    samples, channels, spatial, groups, x: channelValues(samples, channels, spatial, next, (c) => centers[c], 1.5), eps: 1e-5,
    weight: uniform(seed + 2, channels, 0.5, 1.5), bias: uniform(seed + 3, channels, -1, 1), ...extra,
  };
}

// [N, C, spatial], G: runs of every length mod 8, InstanceNorm, a LayerNorm over [C, …], rows of 65,536
const SHAPES: [number, number, number, number][] = [
  [2, 6, 5, 3], [3, 8, 16, 2], [2, 4, 1, 4], [2, 12, 7, 12], [1, 32, 1024, 32], [2, 64, 1024, 1], [3, 9, 33, 3],
];

describe('groupnorm wasm float32 against the reference', () => {
  for (const [N, C, spatial, G] of SHAPES) {
    for (const withBias of [false, true]) {
      it(`groupnorm [${N}, ${C}, ${spatial}] float32, ${G} groups, weight${withBias ? ' and bias' : ''}, eps 1e-5, stats`, () => {
        const c = groupCase(N, C, spatial, G, N + C + spatial);
        expect(checkGroupnorm(withBias ? c : { ...c, bias: undefined })).toEqual([]);
      });
    }
  }

  for (const center of [1e6, -3e7]) {
    it(`groupnorm [2, 4, 300] float32, 2 groups, means ${center} with std 1 (1e6 × and more)`, () => {
      const c = groupCase(2, 4, 300, 2, 30);
      expect(checkGroupnorm({ ...c, x: channelValues(2, 4, 300, random(31), () => center, 1) })).toEqual([]);
    });
  }

  it('groupnorm [3, 4, 600] float32, 1 group, each row\'s first value an outlier (1e4 · std): summed again about μ', () => {
    const c = groupCase(3, 4, 600, 1, 32);
    const x = [...c.x];
    x[0] = 1e4;
    x[2400] = -1e5;
    x[4800] = 3e7;
    expect(checkGroupnorm({ ...c, x })).toEqual([]);
  });

  for (const scale of [1e30, 1e-30, 1e-36]) {
    it(`groupnorm [2, 6, 50] float32, 3 groups, eps 0, values near ±${scale} (squares leave float32's range)`, () => {
      const c = groupCase(2, 6, 50, 3, 33, { eps: 0 });
      expect(checkGroupnorm({ ...c, x: c.x.map((v) => Math.fround(v * scale)) })).toEqual([]);
    });
  }

  it('groupnorm [2, 4, 64] float32, 2 groups: β ≈ 1000 cancelling (x − μ)·r·γ to 0.005 (float64 output for those runs; float32 would miss by 6e-5)', () => {
    // every row is ±1 about 0 exactly, so r = 1/sqrt(1 + eps) and y is about 0.005 or 2000 in channels 0 and 3
    const x = Array.from({ length: 2 * 4 * 64 }, (_, i) => (i % 2 === 0 ? -1 : 1));
    const c = groupCase(2, 4, 64, 2, 34, { x, weight: [1037, 1, 1, -1111], bias: [1037, 0, 0, 1111] });
    expect(checkGroupnorm(c)).toEqual([]);
  });

  it('groupnorm [2, 2, 40] float32, 1 group, values ±3.4e38 and 0: r·γ past float32 (γ 0.5) or not (γ 1e9)', () => {
    const x = Array.from({ length: 160 }, (_, i) => (i % 4 === 0 ? 3.4e38 : i % 4 === 2 ? -3.4e38 : 0));
    expect(checkGroupnorm(groupCase(2, 2, 40, 1, 35, { x, weight: [0.5, 1e9], bias: [0.25, -0.25] }))).toEqual([]);
  });
});

describe('groupnorm wasm float32 special values', () => {
  for (const [name, value] of [['NaN', NaN], ['+Inf', Infinity], ['-Inf', -Infinity]] as const) {
    it(`groupnorm [2, 4, 9] float32, 2 groups, ${name} in row 1: NaN or the IEEE formula there, other rows unaffected`, () => {
      const c = groupCase(2, 4, 9, 2, 36);
      const x = [...c.x];
      x[18 + 5] = value;
      expect(checkGroupnorm({ ...c, x }, {}, true)).toEqual([]);
      const run = runGroupnorm({ ...c, x });
      run.y.forEach((y, i) => {
        if (Math.floor(i / 18) !== 1) expect(Number.isFinite(y)).toBe(true);
      });
    });
  }

  it('groupnorm [2, 2, 8] float32, 2 groups, eps 0, an all-zero row: NaN there only, rstd Inf', () => {
    const c = groupCase(2, 2, 8, 2, 37, { eps: 0 });
    const x = c.x.map((v, i) => (i >= 8 && i < 16 ? 0 : v));
    const run = runGroupnorm({ ...c, x });
    expect(run.rstd[1]).toBe(Infinity);
    run.y.forEach((y, i) => expect(Number.isNaN(y)).toBe(i >= 8 && i < 16));
  });
});

describe('groupnorm wasm float32 row ranges', () => {
  it('groupnorm [4, 6, 37] float32, 3 groups: any split into row ranges, misaligned by 0-3 bytes, gives identical bytes', () => {
    const c = groupCase(4, 6, 37, 3, 38);
    const x = [...c.x];
    x[3 * 74] = 1e4; // a row summed again
    for (let i = 5 * 74; i < 6 * 74; i++) x[i] *= 1e30;
    const whole = runGroupnorm({ ...c, x });
    for (const [k, cuts] of [[0, 1, 12], [0, 5, 6, 7, 12], [...Array(13).keys()]].entries()) {
      const split = runGroupnorm({ ...c, x }, { cuts, misalign: k + 1 });
      expect(Buffer.from(split.y.buffer).equals(Buffer.from(whole.y.buffer))).toBe(true);
      expect(Buffer.from(split.mean.buffer).equals(Buffer.from(whole.mean.buffer))).toBe(true);
      expect(Buffer.from(split.rstd.buffer).equals(Buffer.from(whole.rstd.buffer))).toBe(true);
    }
  });

  it('groupnorm [5, 2, 4] float32, 1 group, rows [1, 3) touch only rows 1 and 2', () => {
    const c = groupCase(5, 2, 4, 1, 39);
    const part = runGroupnorm(c, { cuts: [1, 3] });
    const whole = runGroupnorm(c);
    expect(Array.from(part.y.slice(8, 24))).toEqual(Array.from(whole.y.slice(8, 24)));
    expect([...part.y.slice(0, 8), ...part.y.slice(24)].every(Number.isNaN)).toBe(true); // the 0xff fill
  });
});
