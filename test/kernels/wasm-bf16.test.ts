// the SIMD bfloat16 conversions (widenBf16, narrowBf16 in src/kernels/wasm/norm.wat) against
// the independent rounding oracle, at unaligned offsets and with every tail length.
// Needs the build (dist/kernels/norm.wasm).
import { describe, expect, it } from 'vitest';
import { loadWasmKernels } from '../../src/kernels/wasm-kernels.js';
import { bfloat16Value, oracleBfloat16Bits } from '../reference/half-oracle.js';
import { random } from './harness.js';

const memory = new WebAssembly.Memory({ initial: 64, maximum: 64, shared: true }); // 4 MiB
const kernels = loadWasmKernels(memory);
const SRC = 64; // offset 0 means "absent" to the kernels
const bytes = () => new Uint8Array(memory.buffer);

/** the signed value of a bfloat16 pattern, NaN for the NaN patterns */
function valueOf(bits: number): number {
  const magnitude = bits & 0x7fff;
  const v = magnitude > 0x7f80 ? NaN : magnitude === 0x7f80 ? Infinity : bfloat16Value(magnitude);
  return bits & 0x8000 ? -v : v;
}

/** widens count patterns written at byte offset src; returns the float32 results */
function widen(patterns: Uint16Array, src: number): Float32Array {
  const dst = Math.ceil((src + 2 * patterns.length + 64) / 16) * 16;
  bytes().set(new Uint8Array(patterns.buffer, patterns.byteOffset, 2 * patterns.length), src);
  bytes().fill(0xee, dst - 16, dst + 4 * patterns.length + 16);
  kernels.widenBf16(src, dst, patterns.length);
  expect([bytes()[dst - 1], bytes()[dst + 4 * patterns.length]], 'the bytes either side of the output').toEqual([0xee, 0xee]);
  return new Float32Array(memory.buffer.slice(dst, dst + 4 * patterns.length));
}

/** narrows the float32 values (from 16-byte aligned src) to 2-byte aligned dst + skew */
function narrow(values: Float32Array, skew: number): Uint16Array {
  const dst = Math.ceil((SRC + 4 * values.length + 64) / 16) * 16 + skew;
  bytes().set(new Uint8Array(values.buffer, values.byteOffset, 4 * values.length), SRC);
  bytes().fill(0xee, dst - 16, dst + 2 * values.length + 16);
  kernels.narrowBf16(SRC, dst, values.length);
  expect([bytes()[dst - 1], bytes()[dst + 2 * values.length]], 'the bytes either side of the output').toEqual([0xee, 0xee]);
  return new Uint16Array(memory.buffer.slice(dst, dst + 2 * values.length));
}

/** inputs whose result differs from the oracle; a NaN must stay a NaN of the same sign, quiet */
function narrowMismatches(values: Float32Array, out: Uint16Array): string[] {
  const bad: string[] = [];
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  for (let i = 0; i < values.length && bad.length < 10; i++) {
    const v = values[i];
    const ok = Number.isNaN(v)
      ? (out[i] & 0x7fc0) === 0x7fc0 && out[i] >> 15 === bits[i] >>> 31
      : out[i] === oracleBfloat16Bits(v);
    if (!ok) bad.push(`0x${bits[i].toString(16)} (${v}) -> 0x${out[i].toString(16)}`);
  }
  return bad;
}

describe('widenBf16', () => {
  it('every bfloat16 pattern widens to its exact value, from any byte offset', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    for (const offset of [0, 1, 2, 3]) {
      const out = widen(all, SRC + offset);
      const bad: number[] = [];
      for (let bits = 0; bits < 65536; bits++) {
        if (!Object.is(out[bits], valueOf(bits)) && !(Number.isNaN(out[bits]) && Number.isNaN(valueOf(bits)))) bad.push(bits);
      }
      expect(bad, `offset ${offset}`).toEqual([]);
    }
  });

  it('every tail length, 0 to 20 elements', () => {
    for (let count = 0; count <= 20; count++) {
      const patterns = Uint16Array.from({ length: count }, (_, i) => 0x3f80 + 37 * i);
      expect(Array.from(widen(patterns, SRC + 1)), `count ${count}`).toEqual(Array.from(patterns, valueOf));
    }
  });
});

describe('narrowBf16', () => {
  it('every bfloat16 value, every midpoint between neighbours and the float32 values either side of it', () => {
    const values: number[] = [];
    for (let bits = 0; bits < 0x7f80; bits++) {
      const lo = bfloat16Value(bits);
      const mid = Math.fround((lo + (bits === 0x7f7f ? 2 ** 128 : bfloat16Value(bits + 1))) / 2);
      values.push(lo, -lo, mid, -mid);
    }
    const f = new Float32Array(values);
    const u = new Uint32Array(f.buffer);
    // each midpoint's float32 neighbours: one below and one above (bit patterns ±1)
    const around = new Uint32Array(2 * u.length);
    for (let i = 0; i < u.length; i++) {
      around[2 * i] = u[i] === 0 || u[i] === 0x80000000 ? u[i] : u[i] - 1;
      around[2 * i + 1] = u[i] + 1;
    }
    for (const input of [f, new Float32Array(around.buffer)]) {
      expect(narrowMismatches(input, narrow(input, 0))).toEqual([]);
    }
  });

  it('overflow to ±Inf, infinities, zeros, subnormals and NaNs of both signs, quiet and signalling', () => {
    const bits = [
      0x7f7fffff, 0xff7fffff, 0x7f7f7fff, 0x7f7f8000, 0x7f800000, 0xff800000, 0, 0x80000000,
      1, 0x80000001, 0x00008000, 0x00018000, 0x007fffff, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff,
    ];
    const f = new Float32Array(new Uint32Array(bits).buffer);
    expect(narrowMismatches(f, narrow(f, 2))).toEqual([]);
  });

  it('200,000 random float32 bit patterns, every tail length, unaligned output', () => {
    const next = random(0xbf16);
    const u = Uint32Array.from({ length: 200_000 }, () => Math.floor(next() * 2 ** 32));
    const f = new Float32Array(u.buffer);
    expect(narrowMismatches(f, narrow(f, 6))).toEqual([]);
    for (let count = 0; count <= 20; count++) {
      const part = f.slice(0, count);
      expect(narrowMismatches(part, narrow(part, 2)), `count ${count}`).toEqual([]);
    }
  });
});
