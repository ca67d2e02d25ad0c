// BatchNorm's float32 output parameters for the SIMD kernel, channels last: μ, a = r·γ and β of
// each channel as wasm/channels.wat reads them, in groups of four channels [μhi ×4][μlo ×4][a ×4]
// [β ×4] (μhi = μ rounded to float32, μlo the rest). A channel outside that output's conditions
// ($fits there; its top says why) gets a = NaN, so every row through it takes the float64 output.

const MAX_MEAN = 2 ** 120;
const MIN_FACTOR = 2 ** -100;
const MAX_FACTOR = 2 ** 100;
const MAX_BIAS = 16;

/** bytes of the groups for C channels */
export function preparedChannelBytes(channels: number): number {
  return 64 * Math.ceil(channels / 4);
}

/** out: preparedChannelBytes(C) / 4 float32 */
export function prepareChannelsF32(shift: Float64Array, factor: Float64Array, bias: Float64Array, out: Float32Array): void {
  for (let c = 0; c < shift.length; c++) {
    const at = 16 * (c >> 2) + (c & 3);
    const mu = shift[c];
    const a = factor[c];
    const b = bias[c];
    // NaN fails every comparison, as in $fits
    const fits = Math.abs(mu) <= MAX_MEAN && Math.abs(b) <= MAX_BIAS && Math.abs(a) >= MIN_FACTOR && Math.abs(a) <= MAX_FACTOR;
    out[at] = mu;
    out[at + 4] = mu - Math.fround(mu);
    out[at + 8] = fits ? a : NaN;
    out[at + 12] = b;
  }
}
