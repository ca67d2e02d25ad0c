// the Open Inference Protocol's datatype names for the four dtypes (OIP.md: others are a 400)
import type { Dtype } from '../../codec/dtype.js';

export const DATATYPES: Readonly<Record<string, Dtype>> = Object.freeze({ FP32: 'float32', FP64: 'float64', FP16: 'float16', BF16: 'bfloat16' });

export const DATATYPE_OF: Readonly<Record<Dtype, string>> = Object.freeze({ float32: 'FP32', float64: 'FP64', float16: 'FP16', bfloat16: 'BF16' });

export const DATATYPE_NAMES = Object.keys(DATATYPES).join(', ');

/** a /v1 message in OIP's words: `input.shape: …` → `input shape [3, 0]: …`, dtypes by their OIP names */
export function oipMessage(message: string, shapes: Readonly<Record<string, number[]>>): string {
  const part = (name: string) => (name === 'dtype' ? 'datatype' : name);
  return message
    .replace(/^(\w+)\.(shape|dtype|data)\b/, (_, tensor: string, name: string) => {
      if (name === 'shape' && shapes[tensor] !== undefined) return `${tensor} shape [${shapes[tensor].join(', ')}]`;
      return `${tensor} ${part(name)}`;
    })
    .replace(/\b(input|weight|bias|residual|running_mean|running_var)\.(shape|dtype|data)\b/g, (_, tensor: string, name: string) => `${tensor} ${part(name)}`)
    .replace(/\b(float32|float64|float16|bfloat16)\b/g, (dtype) => DATATYPE_OF[dtype as Dtype]);
}
