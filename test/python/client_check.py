"""msgpack-numpy client against a live server: ndarrays in, ndarrays out, values within API.md's tolerances.

usage: /usr/bin/python3 client_check.py http://127.0.0.1:PORT
"""
import sys
import urllib.error
import urllib.request

import msgpack
import msgpack_numpy
import numpy as np

from contract import bound

BASE = sys.argv[1].rstrip("/")
rng = np.random.default_rng(7)
checked = 0


def post(path, body):
    data = msgpack.packb(body, default=msgpack_numpy.encode)
    request = urllib.request.Request(BASE + path, data=data, headers={"content-type": "application/msgpack"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            content_type = response.headers.get("content-type", "")
            raw = response.read()
    except urllib.error.HTTPError as err:
        raise AssertionError(f"POST {path}: {err.code} {err.read().decode(errors='replace')}") from None
    assert content_type.startswith("application/msgpack"), f"POST {path}: content-type {content_type!r}"
    return msgpack.unpackb(raw, object_hook=msgpack_numpy.decode)


def reference(op, x, axis, weight=None, bias=None, eps=0.0, weight_offset=0.0):
    """the contract's math in float64: (y, mean, rstd), mean/rstd of shape x.shape[:axis]"""
    dims = tuple(range(axis % x.ndim, x.ndim))
    x = x.astype(np.float64)
    g = weight_offset + (np.ones(x.shape[axis:]) if weight is None else weight.astype(np.float64))
    b = 0.0 if bias is None else bias.astype(np.float64)
    mean = x.mean(axis=dims, keepdims=True) if op == "layernorm" else np.zeros(1)
    centred = x - mean
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=dims, keepdims=True) + eps)
    y = centred * rstd * g + b
    if op == "layernorm":
        return y, mean, rstd, np.abs(mean) * rstd * np.abs(g)
    return y, mean, rstd, np.zeros_like(y)



def expect_ndarray(name, got, dtype, shape):
    assert isinstance(got, np.ndarray), f"{name}: expected an ndarray (msgpack-numpy form), got {type(got).__name__} {got!r:.200}"
    assert got.dtype == np.dtype(dtype), f"{name}: dtype {got.dtype}, expected {dtype}"
    assert got.shape == tuple(shape), f"{name}: shape {got.shape}, expected {tuple(shape)}"
    return got


def bfloat16_values(name, got, shape):
    """bfloat16 has no numpy name: it comes back as the ordinary {dtype, shape, data} map"""
    assert isinstance(got, dict), f"{name}: bfloat16 should stay an ordinary tensor map, got {type(got).__name__}"
    assert got.get("dtype") == "bfloat16", f"{name}: dtype {got.get('dtype')!r}, expected 'bfloat16'"
    assert list(got.get("shape", [])) == list(shape), f"{name}: shape {got.get('shape')}, expected {list(shape)}"
    data = got.get("data")
    assert isinstance(data, bytes) and len(data) == 2 * int(np.prod(shape)), f"{name}: data should be {2 * int(np.prod(shape))} bytes"
    bits = np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16
    return bits.view(np.float32).reshape(shape)


def expect_close(name, got, ref, dtype, wide=0.0):
    global checked
    got64 = np.asarray(got, dtype=np.float64)
    ref = np.broadcast_to(ref, got64.shape)
    err = np.abs(got64 - ref)
    tol = bound(dtype, ref, wide)
    assert np.all(np.isfinite(got64)), f"{name}: non-finite values in output"
    worst = np.unravel_index(np.argmax(err - tol), err.shape) if err.size else ()
    assert np.all(err <= tol), f"{name}: {got64[worst]!r} vs ref {ref[worst]!r} at {worst}, error {err[worst]:.3g} > {tol[worst]:.3g}"
    checked += err.size


def check_result(name, result, op, x, axis=-1, weight=None, bias=None, eps=0.0, residual=None,
                 stats=False, output_dtype=None):
    """one §2 response for these inputs: output, residual, mean, rstd"""
    in_dtype = x.dtype.name
    out_dtype = output_dtype or in_dtype
    h = x
    if residual is not None:
        # rounded once from the exact float64 sum
        h = (x.astype(np.float64) + residual.astype(np.float64)).astype(x.dtype)
        got_h = expect_ndarray(f"{name}.residual", result["residual"], in_dtype, x.shape)
        assert np.array_equal(got_h, h), f"{name}.residual: not input + residual rounded to {in_dtype}"
    else:
        assert "residual" not in result, f"{name}: unexpected residual in response"
    y, mean, rstd, wide = reference(op, h, axis, weight, bias, eps)
    if out_dtype == "bfloat16":
        got = bfloat16_values(f"{name}.output", result["output"], x.shape)
    else:
        got = expect_ndarray(f"{name}.output", result["output"], out_dtype, x.shape)
    expect_close(f"{name}.output", got, y, out_dtype, wide)
    stats_shape = x.shape[:axis % x.ndim] or (1,)
    if stats:
        rstd_got = expect_ndarray(f"{name}.rstd", result["rstd"], "float32", stats_shape)
        expect_close(f"{name}.rstd", rstd_got, rstd.reshape(stats_shape), "float32")
    if stats and op == "layernorm":
        mean_got = expect_ndarray(f"{name}.mean", result["mean"], "float32", stats_shape)
        expect_close(f"{name}.mean", mean_got, mean.reshape(stats_shape), "float32")
    else:
        assert "mean" not in result, f"{name}: unexpected mean in response"
    if not stats:
        assert "rstd" not in result, f"{name}: unexpected rstd in response"


# rmsnorm float32, 64x1024 (large enough for the worker pool), float32 weight, float64 bias, residual,
# stats, and eps as a numpy scalar (msgpack-numpy sends {nd: false})
x = rng.standard_normal((64, 1024)).astype(np.float32)
res = rng.standard_normal((64, 1024)).astype(np.float32)
w = rng.uniform(0.5, 1.5, 1024).astype(np.float32)
b = rng.standard_normal(1024)
eps = np.float32(1e-5)
reply = post("/v1/rmsnorm", {"input": x, "weight": w, "bias": b, "residual": res, "eps": eps, "return_stats": True})
check_result("rmsnorm float32", reply, "rmsnorm", x, weight=w, bias=b, eps=float(eps), residual=res, stats=True)

# layernorm float64 over the last two dims (axis 1), offset mean, float64 weight, float16 bias, stats
x = rng.standard_normal((4, 3, 2, 6)) * 3.0 + 100.0
w = rng.standard_normal((2, 6))
b = rng.standard_normal((2, 6)).astype(np.float16)
reply = post("/v1/layernorm", {"input": x, "axis": 2, "weight": w, "bias": b, "return_stats": True})
check_result("layernorm float64", reply, "layernorm", x, axis=2, weight=w, bias=b, eps=1e-5, stats=True)

# rmsnorm float16, 16x4096, float16 weight and residual
x = rng.standard_normal((16, 4096)).astype(np.float16)
res = (rng.standard_normal((16, 4096)) * 0.5).astype(np.float16)
w = rng.uniform(0.5, 1.5, 4096).astype(np.float16)
reply = post("/v1/rmsnorm", {"input": x, "weight": w, "residual": res})
check_result("rmsnorm float16", reply, "rmsnorm", x, weight=w, eps=1e-6, residual=res)

# layernorm float32 → bfloat16 output: output stays an ordinary map, stats still come back as ndarrays
x = rng.standard_normal((5, 96)).astype(np.float32)
reply = post("/v1/layernorm", {"input": x, "output_dtype": "bfloat16", "return_stats": True})
check_result("layernorm float32→bfloat16", reply, "layernorm", x, eps=1e-5, stats=True, output_dtype="bfloat16")

# batch: numpy-form items of each dtype, one ordinary-form item (answered in ordinary form), bfloat16 output
items = [
    dict(op="rmsnorm", input=rng.standard_normal((3, 32)).astype(np.float32), eps=np.float32(1e-5), return_stats=True),
    dict(op="layernorm", input=rng.standard_normal((2, 4, 16)).astype(np.float16),
         weight=rng.uniform(0.5, 1.5, 16).astype(np.float32), bias=rng.standard_normal(16).astype(np.float16),
         residual=rng.standard_normal((2, 4, 16)).astype(np.float16), return_stats=True),
    dict(op="layernorm", input=rng.standard_normal((6, 10)), axis=0, weight=rng.standard_normal((6, 10)), eps=0.0),
    dict(op="rmsnorm", input=rng.standard_normal((2, 8)), output_dtype="bfloat16"),
]
plain = rng.standard_normal((3, 8))
body = {"requests": items + [{"op": "rmsnorm", "input": {"dtype": "float64", "shape": [3, 8], "data": plain.tobytes()}}]}
reply = post("/v1/batch", body)
results = reply["results"]
assert len(results) == len(body["requests"]), f"batch: {len(results)} results for {len(body['requests'])} requests"
default_eps = {"rmsnorm": 1e-6, "layernorm": 1e-5}
for i, item in enumerate(items):
    check_result(f"batch[{i}] {item['op']} {item['input'].dtype}", results[i], item["op"], item["input"],
                 axis=item.get("axis", -1), weight=item.get("weight"), bias=item.get("bias"),
                 eps=float(item.get("eps", default_eps[item["op"]])), residual=item.get("residual"),
                 stats=item.get("return_stats", False), output_dtype=item.get("output_dtype"))
out = results[-1]["output"]
assert isinstance(out, dict) and out.get("dtype") == "float64" and list(out.get("shape", [])) == [3, 8], \
    f"batch[4]: an ordinary-form request should get an ordinary-form answer, got {out!r:.200}"
expect_close("batch[4].output", np.frombuffer(out["data"], dtype="<f8").reshape(3, 8), reference("rmsnorm", plain, -1, eps=1e-6)[0], "float64")

print(f"python client: 5 requests, {checked} values within tolerance")
