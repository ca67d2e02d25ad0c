"""API.md's accuracy bound, shared by the Python checks (the JavaScript tests' copy is test/reference/contract.mjs)"""
import numpy as np


def bound(dtype, ref, wide=0.0):
    """float32/float64 bounds; half types add one ulp of that type at ref; `wide`: LayerNorm's |mu|*r*|g| widening"""
    ref = np.abs(ref)
    if dtype == "float64":
        return 1e-12 + 1e-12 * ref + 2.0 ** -46 * wide
    f32 = 1e-5 + 1e-5 * ref
    if dtype == "float16":
        return f32 + np.abs(np.spacing(ref.astype(np.float16))).astype(np.float64)
    if dtype == "bfloat16":
        _, exponent = np.frexp(ref)
        return f32 + np.where(ref == 0, 0.0, np.ldexp(1.0, exponent - 8))
    return f32
