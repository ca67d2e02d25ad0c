"""What tritonclient.http's InferenceServerClient.infer puts on the wire, against a live server (OIP.md).

Only http.client, json, struct and numpy: the request is built as tritonclient/http/_utils.py's
_get_inference_request builds it (compact JSON header, binary inputs with parameters.binary_data_size
after it, Inference-Header-Content-Length, no Content-Type; requested outputs with
parameters.binary_data, else parameters.binary_data_output true), BF16 made as the client's
serialize_bf16_tensor makes it (float32 truncated to its upper half), and the answer read as
_infer_result.py reads it. Values are checked against numpy float64 within API.md's tolerances.

usage: /usr/bin/python3 oip_client_check.py http://127.0.0.1:PORT
"""
import http.client
import json
import struct
import sys
from urllib.parse import quote, urlsplit

import numpy as np

from contract import bound

URL = urlsplit(sys.argv[1])
conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=30)
rng = np.random.default_rng(13)
requests = 0
checked = 0

NP_DTYPE = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16}
ITEMSIZE = {"FP32": 4, "FP64": 8, "FP16": 2, "BF16": 2}
DTYPE_OF = {"FP32": "float32", "FP64": "float64", "FP16": "float16", "BF16": "bfloat16"}


class InferInput:
    """tritonclient.http.InferInput with set_data_from_numpy(binary_data=...)"""

    def __init__(self, name, array, datatype, binary_data=True):
        self.name, self.shape, self.datatype = name, list(array.shape), datatype
        self.parameters, self.data, self.raw = {}, None, None
        if binary_data:
            if datatype == "BF16":
                # serialize_bf16_tensor: the float32 pattern & 0xFFFF0000, its upper two bytes (truncation)
                bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
                self.raw = (bits >> np.uint32(16)).astype("<u2").tobytes()
            else:
                self.raw = np.ascontiguousarray(array).tobytes()
            self.parameters["binary_data_size"] = len(self.raw)
        else:
            assert datatype != "BF16", "the client sends BF16 only as binary data"
            self.data = [v.item() for v in array.flatten()]

    def tensor(self):
        t = {"name": self.name, "shape": self.shape, "datatype": self.datatype}
        if self.parameters:
            t["parameters"] = self.parameters
        if self.raw is None and self.data is not None:
            t["data"] = self.data
        return t


def as_sent(array, datatype):
    """the values the server receives for an input: BF16 truncated as the client truncates"""
    if datatype == "BF16":
        bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def infer(model, inputs, outputs=None, request_id="", parameters=None, model_version="", timeout=None,
          sequence_id=0, priority=0, expect_status=200):
    """InferenceServerClient.infer: the body and headers of _get_inference_request, the answer of InferResult"""
    global requests
    request, params = {}, {}
    if request_id != "":
        request["id"] = request_id
    if sequence_id != 0:
        params.update(sequence_id=sequence_id, sequence_start=False, sequence_end=False)
    if priority != 0:
        params["priority"] = priority
    if timeout is not None:
        params["timeout"] = timeout
    request["inputs"] = [i.tensor() for i in inputs]
    if outputs:
        request["outputs"] = [{"name": name, "parameters": {"binary_data": binary}} for name, binary in outputs]
    else:
        params["binary_data_output"] = True
    params.update(parameters or {})
    if params:
        request["parameters"] = params
    header = json.dumps(request, separators=(",", ":"))  # rapidjson.dumps writes compact JSON
    blocks = [i.raw for i in inputs if i.raw is not None]
    headers = {}
    body = header.encode()
    if blocks:
        body = b"".join([body] + blocks)
        headers["Inference-Header-Content-Length"] = str(len(header))
    uri = f"/v2/models/{quote(model)}" + (f"/versions/{model_version}" if model_version else "") + "/infer"
    conn.request("POST", uri, body=body, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    requests += 1
    if response.status != expect_status:
        raise AssertionError(f"POST {uri}: {response.status} {raw[:300]!r}")
    if response.status != 200:
        # _get_error: the message is the "error" of a JSON body
        assert response.getheader("Content-Type", "").startswith("application/json"), response.getheader("Content-Type")
        return json.loads(raw)
    length = response.getheader("Inference-Header-Content-Length")
    if length is None:
        assert response.getheader("Content-Type", "").startswith("application/json")
        return Result(json.loads(raw), b"")
    assert response.getheader("Content-Type") == "application/octet-stream", response.getheader("Content-Type")
    return Result(json.loads(raw[: int(length)]), raw[int(length):])


class Result:
    """tritonclient.http.InferResult: binary outputs are laid out after the header in JSON order"""

    def __init__(self, result, buffer):
        self.result, self.buffer, self.offsets = result, buffer, {}
        at = 0
        for output in result["outputs"]:
            size = output.get("parameters", {}).get("binary_data_size")
            if size is not None:
                self.offsets[output["name"]] = at
                at += size
        assert at == len(buffer), f"{at} bytes of binary outputs listed, {len(buffer)} sent"

    def names(self):
        return [o["name"] for o in self.result["outputs"]]

    def output(self, name):
        return next(o for o in self.result["outputs"] if o["name"] == name)

    def as_numpy(self, name):
        o = self.output(name)
        size = o.get("parameters", {}).get("binary_data_size")
        if size is None:
            assert "data" in o, f"{name}: neither data nor binary_data_size"
            assert o["datatype"] != "BF16" or all(isinstance(v, (int, float)) for v in o["data"])
            return np.array(o["data"], dtype=NP_DTYPE.get(o["datatype"], np.float32)).reshape(o["shape"])
        assert size == ITEMSIZE[o["datatype"]] * int(np.prod(o["shape"])), f"{name}: binary_data_size {size}"
        raw = self.buffer[self.offsets[name]: self.offsets[name] + size]
        if o["datatype"] == "BF16":
            # deserialize_bf16_tensor: each 2 bytes are the upper half of a float32
            values = [struct.unpack("<f", b"\x00\x00" + raw[i: i + 2])[0] for i in range(0, len(raw), 2)]
            return np.array(values, dtype=np.float32).reshape(o["shape"])
        return np.frombuffer(raw, dtype=np.dtype(NP_DTYPE[o["datatype"]]).newbyteorder("<")).reshape(o["shape"])

    def is_binary(self, name):
        return "binary_data_size" in self.output(name).get("parameters", {})



def expect_close(label, result, name, ref, datatype, wide=0.0):
    global checked
    o = result.output(name)
    assert o["datatype"] == datatype, f"{label}.{name}: datatype {o['datatype']}, expected {datatype}"
    assert list(o["shape"]) == list(ref.shape), f"{label}.{name}: shape {o['shape']}, expected {list(ref.shape)}"
    got = result.as_numpy(name).astype(np.float64)
    err = np.abs(got - ref)
    tol = bound(DTYPE_OF[datatype], ref, wide)
    assert np.all(np.isfinite(got)), f"{label}.{name}: non-finite values"
    worst = np.unravel_index(np.argmax(err - tol), err.shape)
    assert np.all(err <= tol), f"{label}.{name}: {got[worst]!r} vs ref {ref[worst]!r} at {worst}, error {err[worst]:.3g} > {tol[worst]:.3g}"
    checked += err.size


def row_norm(op, x, weight=None, bias=None, eps=1e-5):
    """rmsnorm / layernorm over the last axis in float64: y, mean, rstd, |μ|·r·|g|"""
    g = np.ones(x.shape[-1]) if weight is None else weight
    b = 0.0 if bias is None else bias
    mean = x.mean(axis=-1, keepdims=True) if op == "layernorm" else np.zeros(x.shape[:-1] + (1,))
    centred = x - mean
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    return centred * rstd * g + b, mean[..., 0], rstd[..., 0], np.abs(mean) * rstd * np.abs(g)


# 1. rmsnorm FP32 16x512, FP32 weight, binary in; no outputs listed, so binary_data_output: every output binary
x = rng.standard_normal((16, 512)).astype(np.float32)
w = rng.uniform(0.5, 1.5, 512).astype(np.float32)
r = infer("rmsnorm", [InferInput("input", x, "FP32"), InferInput("weight", w, "FP32")], parameters={"eps": 1e-5},
          timeout=5_000_000)
assert r.names() == ["output"] and r.is_binary("output"), r.result
assert "id" not in r.result and r.result["model_name"] == "rmsnorm" and r.result["model_version"] == "1", r.result
y, _, _, _ = row_norm("rmsnorm", x.astype(np.float64), w.astype(np.float64), eps=1e-5)
expect_close("rmsnorm FP32", r, "output", y, "FP32")

# 2. layernorm BF16 8x96 (truncated as the client truncates), BF16 weight, FP32 bias in JSON, return_stats;
#    outputs: output binary, mean in JSON, rstd binary
x = (rng.standard_normal((8, 96)) * 2 + 3).astype(np.float32)
w = rng.uniform(0.5, 1.5, 96).astype(np.float32)
b = rng.standard_normal(96).astype(np.float32)
r = infer("layernorm", [InferInput("input", x, "BF16"), InferInput("weight", w, "BF16"), InferInput("bias", b, "FP32", binary_data=False)],
          outputs=[("output", True), ("mean", False), ("rstd", True)], request_id="bf16-1", parameters={"return_stats": True})
assert r.result["id"] == "bf16-1" and r.names() == ["output", "mean", "rstd"], r.result
assert r.is_binary("output") and not r.is_binary("mean") and r.is_binary("rstd"), r.result
y, mean, rstd, wide = row_norm("layernorm", as_sent(x, "BF16"), as_sent(w, "BF16"), b.astype(np.float64), eps=1e-5)
expect_close("layernorm BF16", r, "output", y, "BF16", wide)
expect_close("layernorm BF16", r, "mean", mean, "FP32")
expect_close("layernorm BF16", r, "rstd", rstd, "FP32")

# 3. batchnorm FP16 training, 6x4x5 with FP32 running statistics, model_version "1"; all outputs binary
x = rng.standard_normal((6, 4, 5)).astype(np.float16)
rm = rng.standard_normal(4).astype(np.float32)
rv = rng.uniform(0.5, 2, 4).astype(np.float32)
r = infer("batchnorm", [InferInput("input", x, "FP16"), InferInput("running_mean", rm, "FP32"), InferInput("running_var", rv, "FP32")],
          model_version="1", parameters={"training": True, "momentum": 0.25})
assert r.names() == ["output", "running_mean", "running_var"], r.result
xs = x.astype(np.float64)
mu = xs.mean(axis=(0, 2))
var = xs.var(axis=(0, 2))
y = (xs - mu[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
expect_close("batchnorm FP16", r, "output", y, "FP16")
expect_close("batchnorm FP16", r, "running_mean", 0.75 * rm.astype(np.float64) + 0.25 * mu, "FP32")
expect_close("batchnorm FP16", r, "running_var", 0.75 * rv.astype(np.float64) + 0.25 * var * 30 / 29, "FP32")

# 4. groupnorm FP64 2x6x8, num_groups 3, the output asked for in JSON: a JSON answer
x = rng.standard_normal((2, 6, 8)) * 4 + 1
r = infer("groupnorm", [InferInput("input", x, "FP64")], outputs=[("output", False)], parameters={"num_groups": 3})
assert not r.is_binary("output"), r.result
rows = x.reshape(2, 3, 16)
mu = rows.mean(axis=-1, keepdims=True)
rstd = 1 / np.sqrt(rows.var(axis=-1, keepdims=True) + 1e-5)
expect_close("groupnorm FP64", r, "output", ((rows - mu) * rstd).reshape(2, 6, 8), "FP64", np.broadcast_to(np.abs(mu) * rstd, rows.shape).reshape(2, 6, 8))

# 5. what the client sends that this service does not take: a 400 whose "error" names it
x = rng.standard_normal((2, 8)).astype(np.float32)
for kwargs, message in [
    (dict(parameters={"num_groups": 2}), "parameters.num_groups: unknown field"),
    (dict(sequence_id=42), "parameters.sequence_id: unknown field"),
    (dict(priority=1), "parameters.priority: unknown field"),
]:
    error = infer("rmsnorm", [InferInput("input", x, "FP32")], expect_status=400, **kwargs)
    assert error == {"error": message}, f"{kwargs}: {error}"
error = infer("softmax", [InferInput("input", x, "FP32")], expect_status=404)
assert error == {"error": "model softmax: unknown; the models are rmsnorm, layernorm, batchnorm, groupnorm"}, error

conn.close()
print(f"oip client: {requests} requests, {checked} values within tolerance")
