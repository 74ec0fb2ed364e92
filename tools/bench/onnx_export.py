#!/usr/bin/python3
"""Exports one kernel-bench case to ONNX for the ONNX Runtime baseline (tools/bench/ort_child.js).

  /usr/bin/python3 tools/bench/onnx_export.py --dir DIR

DIR/case.json names the graph ("block", "bias_gelu_residual", "layernorm_scale_shift" or
"softmax_scale_mask"), its params, its inputs (DIR/<file>, float32 .npy, in order) and outputs.
The graph is built as a torch module (for "block", nn.TransformerEncoderLayer with pre-norm,
exact GELU and the given weights) whose constant inputs are parameters or buffers, so they become
initializers, and whose other inputs are graph inputs; inputs and outputs are named as in
case.json, shapes are fixed. Before DIR/model.onnx is written, the module's output on the given
inputs is checked against a float64 NumPy evaluation of pto's definition of the graph.

Also writes DIR/overhead.onnx (a one-element Add, input "x", output "y", for the child to time
the binding's fixed per-call cost) and DIR/model_info.json (torch version, opset, variant).

stdout: `EXPORTED torch <version> opset <n> <variant>` and exit 0; `MISSING <reason>` and exit 3
when torch or numpy cannot be imported; otherwise a message on stderr and exit 1.
"""
import argparse
import json
import math
import os
import sys

OPSET = 17  # Torch 1.13's highest; the first with LayerNormalization.
MAX_REL_ERR = 1e-4


def layer_norm64(np, x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu64(np, torch, x):
    # NumPy has no erf; torch's float64 erf is exact to double precision.
    return 0.5 * x * (1.0 + torch.erf(torch.from_numpy(x / math.sqrt(2.0))).numpy())


def softmax64(np, x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def reference(np, torch, graph, p, a):
    """The graph's math in float64 on the list of input arrays `a`."""
    a = [v.astype(np.float64) for v in a]
    if graph == "bias_gelu_residual":
        x, v, res = a
        return gelu64(np, torch, x + v) + res
    if graph == "layernorm_scale_shift":
        x, w, b, scale, shift = a
        return layer_norm64(np, x, w, b, p["eps"]) * scale + shift
    if graph == "softmax_scale_mask":
        x, mask = a
        return softmax64(np, x * p["scale"] + mask)
    if graph == "block":
        x, ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, up_w, up_b, down_w, down_b = a
        bsz, s, m = x.shape
        heads = p["heads"]
        dh = m // heads
        qkv = layer_norm64(np, x, ln1_w, ln1_b, p["eps"]) @ qkv_w.T + qkv_b
        q, k, v = (qkv[..., i * m:(i + 1) * m].reshape(bsz, s, heads, dh).transpose(0, 2, 1, 3)
                   for i in range(3))
        attn = softmax64(np, (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(dh)) @ v
        x2 = x + attn.transpose(0, 2, 1, 3).reshape(bsz, s, m) @ proj_w.T + proj_b
        h = gelu64(np, torch, layer_norm64(np, x2, ln2_w, ln2_b, p["eps"]) @ up_w.T + up_b)
        return x2 + h @ down_w.T + down_b
    raise ValueError(f"unknown graph '{graph}'")


def build_module(torch, graph, p, inputs, arrays):
    """(module whose forward takes the non-constant inputs in order, variant name)."""
    nn, F = torch.nn, torch.nn.functional
    if graph == "block":
        # nn.TransformerEncoderLayer rather than the math written out with F.linear and
        # friends: ONNX Runtime ran its export as fast or slightly faster (one Transpose fewer,
        # transposes folded into its FusedMatMul), and it is what an inference user exports.
        if any(not s.get("constant") for s in inputs[1:]):
            raise ValueError("block: every input but x must be constant")
        layer = nn.TransformerEncoderLayer(
            p["model"], p["heads"], p["ff"], dropout=0.0, activation="gelu",
            layer_norm_eps=p["eps"], batch_first=True, norm_first=True)
        w = [torch.from_numpy(arr) for arr in arrays]
        params = [layer.norm1.weight, layer.norm1.bias, layer.self_attn.in_proj_weight,
                  layer.self_attn.in_proj_bias, layer.self_attn.out_proj.weight,
                  layer.self_attn.out_proj.bias, layer.norm2.weight, layer.norm2.bias,
                  layer.linear1.weight, layer.linear1.bias, layer.linear2.weight,
                  layer.linear2.bias]
        with torch.no_grad():
            for param, val in zip(params, w[1:]):
                if param.shape != val.shape:
                    raise ValueError(f"block: weight shape {list(val.shape)}, layer wants "
                                     f"{list(param.shape)}")
                param.copy_(val)
        return layer.eval(), "encoder_layer"

    class Chain(nn.Module):
        def __init__(self):
            super().__init__()
            # Constants as buffers: the exporter bakes them in as initializers.
            self.slots = []
            for i, (spec, arr) in enumerate(zip(inputs, arrays)):
                if spec.get("constant"):
                    self.register_buffer(f"c{i}", torch.from_numpy(arr))
                    self.slots.append(f"c{i}")
                else:
                    self.slots.append(None)

        def forward(self, *xs):
            it = iter(xs)
            a = [next(it) if s is None else getattr(self, s) for s in self.slots]
            if graph == "bias_gelu_residual":
                return F.gelu(a[0] + a[1]) + a[2]
            if graph == "layernorm_scale_shift":
                x, w, b, scale, shift = a
                return F.layer_norm(x, x.shape[-1:], w, b, p["eps"]) * scale + shift
            return torch.softmax(a[0] * p["scale"] + a[1], -1)  # softmax_scale_mask

    if graph not in ("bias_gelu_residual", "layernorm_scale_shift", "softmax_scale_mask"):
        raise ValueError(f"unknown graph '{graph}'")
    return Chain().eval(), "literal"


def export(torch, module, args, path, input_names, output_names):
    """Fixed shapes throughout: dynamic axes made nothing faster."""
    tmp = path + ".tmp"
    torch.onnx.export(module, tuple(args), tmp, input_names=input_names,
                      output_names=output_names, opset_version=OPSET, do_constant_folding=True)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    d = ap.parse_args().dir
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"MISSING {e}", flush=True)
        return 3
    try:
        with open(os.path.join(d, "case.json")) as f:
            case = json.load(f)
        graph, p, inputs = case["graph"], case.get("params", {}), case["inputs"]
        arrays = [np.load(os.path.join(d, s["file"])) for s in inputs]
        for s, arr in zip(inputs, arrays):
            if arr.dtype != np.float32:
                raise ValueError(f"{s['file']}: dtype {arr.dtype}, want float32")
        torch.set_num_threads(2)
        module, variant = build_module(torch, graph, p, inputs, arrays)
        args = [torch.from_numpy(arr) for s, arr in zip(inputs, arrays) if not s.get("constant")]
        names = [s["name"] for s in inputs if not s.get("constant")]
        out_names = [o["name"] for o in case["outputs"]]

        # With autograd on, as torch.onnx.export traces it: under no_grad the encoder layer
        # would take its fused fast path instead of the ops that get exported.
        got = module(*args).detach().numpy()
        want = reference(np, torch, graph, p, arrays)
        if list(got.shape) != list(case["outputs"][0]["shape"]):
            raise ValueError(f"output shape {list(got.shape)}, case.json says "
                             f"{case['outputs'][0]['shape']}")
        rel = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
        if not rel <= MAX_REL_ERR:
            raise ValueError(f"torch module differs from the float64 math: max rel err {rel:.3e}")

        export(torch, module, args, os.path.join(d, "model.onnx"), names, out_names)

        class AddOne(torch.nn.Module):
            def forward(self, x):
                return x + 1.0

        export(torch, AddOne(), [torch.zeros(1)], os.path.join(d, "overhead.onnx"), ["x"], ["y"])
        with open(os.path.join(d, "model_info.json"), "w") as f:
            json.dump({"torch": torch.__version__, "opset": OPSET, "variant": variant}, f)
    except Exception as e:  # noqa: BLE001 -- any failure is reported, with its type.
        print(f"onnx_export: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"EXPORTED torch {torch.__version__} opset {OPSET} {variant}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
