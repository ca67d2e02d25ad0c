export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16';

export interface DtypeInfo {
  itemsize: number;
  /** msgpack-numpy's `type` descriptor, or null where numpy has no name (bfloat16) */
  numpyType: string | null;
}

export const DTYPES: Readonly<Record<Dtype, DtypeInfo>> = Object.freeze({
  float32: { itemsize: 4, numpyType: '<f4' },
  float64: { itemsize: 8, numpyType: '<f8' },
  float16: { itemsize: 2, numpyType: '<f2' },
  bfloat16: { itemsize: 2, numpyType: null },
});

export const DTYPE_NAMES = Object.keys(DTYPES) as Dtype[];

const NUMPY_TO_DTYPE: Readonly<Record<string, Dtype>> = { '<f4': 'float32', '<f8': 'float64', '<f2': 'float16' };

/** the dtype named by a msgpack-numpy descriptor, or undefined */
export function dtypeFromNumpy(type: string): Dtype | undefined {
  return NUMPY_TO_DTYPE[type];
}

/** kernels read float16/bfloat16 values widened to float32 */
export function valueStorage(dtype: Dtype): 'float32' | 'float64' {
  return dtype === 'float64' ? 'float64' : 'float32';
}
