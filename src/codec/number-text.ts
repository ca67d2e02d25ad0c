// a tensor's values as the text of a JSON list's items ("1.5,-0.25,…"): on the main thread for a
// few values, by the workers (TextTask) for many, so no answer holds the event loop while it is written.
// Each number is JavaScript's shortest round-trip form, as JSON.stringify writes it (float32 values
// widened exactly to float64 first).
import type { NonFinite, NumberSource, TextTask } from '../pool/protocol.js';
import { numberFromBfloat16Bits, numberFromFloat16Bits } from './half.js';

/** the most bytes one value's text can take, its comma included: "-2.2250738585072014e-308," */
export const MAX_NUMBER_CHARS = 25;

const NON_FINITE_TEXT: Record<NonFinite, { nan: string; inf: string; negInf: string }> = {
  quoted: { nan: '"NaN"', inf: '"Infinity"', negInf: '"-Infinity"' },
  bare: { nan: 'NaN', inf: 'Infinity', negInf: '-Infinity' },
};

/** values [start, end) as list items, each after a comma but the first (after one too when `leadingComma`) */
export function numberText(source: NumberSource, start: number, end: number, nonFinite: NonFinite, leadingComma = false): string {
  if (source.storage !== 'bits' && end > start) {
    // a typed array's join writes each value as String(v), the same text, into one string: about half
    // the garbage of joining the values' strings one by one (~35 KB against ~63 KB for 768 values,
    // measured), which the GC threads paid for. Its non-finite values are the bare words; quoted
    // ones are written below. A finite value's text holds no N nor I.
    const text = (source.storage === 'float64'
      ? new Float64Array(source.memory, source.byteOffset + 8 * start, end - start)
      : new Float32Array(source.memory, source.byteOffset + 4 * start, end - start)).join(',');
    if (nonFinite === 'bare' || (text.indexOf('N') < 0 && text.indexOf('I') < 0)) return leadingComma ? `,${text}` : text;
  }
  const words = NON_FINITE_TEXT[nonFinite];
  let text = '';
  let comma = leadingComma ? ',' : '';
  if (source.storage === 'bits') {
    const bits = new Uint16Array(source.memory, source.byteOffset, source.length);
    const widen = source.dtype === 'float16' ? numberFromFloat16Bits : numberFromBfloat16Bits;
    for (let i = start; i < end; i++) {
      const v = widen(bits[i]);
      text += comma + (v - v === 0 ? v : v !== v ? words.nan : v > 0 ? words.inf : words.negInf);
      comma = ',';
    }
    return text;
  }
  const values = source.storage === 'float64'
    ? new Float64Array(source.memory, source.byteOffset, source.length)
    : new Float32Array(source.memory, source.byteOffset, source.length);
  for (let i = start; i < end; i++) {
    const v = values[i];
    // v − v is 0 exactly when v is finite
    text += comma + (v - v === 0 ? v : v !== v ? words.nan : v > 0 ? words.inf : words.negInf);
    comma = ',';
  }
  return text;
}

/** a worker's share of a TextTask: its blocks one after another from its first block's offset */
export function writeNumberText(task: TextTask): void {
  const { blockValues, values } = task;
  const out = Buffer.from(task.text.memory, task.text.byteOffset, task.text.length);
  const spans = new Uint32Array(task.spans.memory, task.spans.byteOffset, task.spans.length);
  let at = task.blockStart * blockValues * MAX_NUMBER_CHARS;
  for (let b = task.blockStart; b < task.blockEnd; b++) {
    const text = numberText(values, b * blockValues, Math.min(values.length, (b + 1) * blockValues), task.nonFinite, b > 0);
    spans[2 * b] = at;
    at += out.write(text, at, 'latin1');
    spans[2 * b + 1] = at;
  }
}
