// checks shared by the operations: optional tensors of an expected shape, shape arithmetic.
import { readTensor, type TensorIn, type WireTensor } from '../codec/read-tensor.js';
import { NUMPY_FORM } from '../codec/wire-body.js';
import { serviceError } from '../errors.js';

/** null when absent; else read and checked to have exactly `expected` as its shape */
export function optionalTensor(wire: WireTensor | undefined, path: string, expected: number[], fromJson: boolean): TensorIn | null {
  if (wire === undefined) return null;
  const tensor = readTensor(wire, path, fromJson);
  if (!sameShape(tensor.shape, expected)) {
    throw serviceError('shapeMismatch', path, tensor.shape.join(', '), expected.join(', '));
  }
  return tensor;
}

export function product(dims: readonly number[]): number {
  let p = 1;
  for (const d of dims) p *= d;
  return p;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** the tensor arrived as a msgpack-numpy ndarray: its answer goes back in kind */
export function isNumpyForm(wire: WireTensor): boolean {
  return (wire as { [NUMPY_FORM]?: boolean })[NUMPY_FORM] === true;
}
