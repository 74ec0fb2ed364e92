#!/usr/bin/env python3
"""PyTorch's loss and gradients of the programs tests/training/torch_comparison_test.cc
compiles with pto, for comparison.

Reads the weights and inputs of one program as float32 .npy files named after them from
--inputs (integer labels are stored as float32 too, and cast here), runs forward and backward
in float32 on one thread, and writes loss.npy (shape []) and grad_<name>.npy for every
differentiated tensor to --outputs.

Programs:
  mlp:   x [N, 64] -> linear 64->128 -> gelu (erf) -> linear 128->10 -> cross_entropy(labels).
  block: the pre-norm transformer block of tools/pto/transformer_block.cc (layer_norm, QKV
         projection, multi-head attention with a causal mask, output projection, residual,
         layer_norm, MLP with gelu (erf), residual), then the mean over the sequence ->
         linear to the classes -> cross_entropy(labels).
"""
import argparse
import math
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.stderr.write(f"torch_reference.py: cannot import {e.name} ({e}): run tools/setup.sh, "
                     "which installs Debian's python3-torch (and python3-numpy), and run this "
                     "with /usr/bin/python3\n")
    sys.exit(2)

PROGRAMS = {
    "mlp": {
        "inputs": ["x", "w1", "b1", "w2", "b2", "labels"],
        "wrt": ["x", "w1", "b1", "w2", "b2"],
    },
    "block": {
        "inputs": ["x", "ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b", "ln2_w",
                   "ln2_b", "up_w", "up_b", "down_w", "down_b", "head_w", "head_b", "labels"],
        "wrt": ["x", "ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b", "ln2_w", "ln2_b",
                "up_w", "up_b", "down_w", "down_b", "head_w", "head_b"],
    },
}


def mlp(t, heads):
    del heads
    h = F.gelu(F.linear(t["x"], t["w1"], t["b1"]))
    logits = F.linear(h, t["w2"], t["b2"])
    return F.cross_entropy(logits, t["labels"])


def block(t, heads):
    x = t["x"]
    batch, seq, model = x.shape
    dh = model // heads
    h = F.layer_norm(x, (model,), t["ln1_w"], t["ln1_b"], eps=1e-5)
    qkv = F.linear(h, t["qkv_w"], t["qkv_b"])

    def head_split(part):
        cols = qkv[..., part * model:(part + 1) * model]
        return cols.reshape(batch, seq, heads, dh).permute(0, 2, 1, 3)  # [b, h, s, dh]

    q, k, v = head_split(0), head_split(1), head_split(2)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(dh))
    rows = torch.arange(seq).reshape(seq, 1)
    cols = torch.arange(seq).reshape(1, seq)
    scores = torch.where(rows >= cols, scores, torch.tensor(-1e9, dtype=torch.float32))
    attention = torch.matmul(torch.softmax(scores, dim=-1), v)
    merged = attention.permute(0, 2, 1, 3).reshape(batch, seq, model)
    x2 = x + F.linear(merged, t["proj_w"], t["proj_b"])
    up = F.gelu(F.linear(F.layer_norm(x2, (model,), t["ln2_w"], t["ln2_b"], eps=1e-5),
                         t["up_w"], t["up_b"]))
    out = x2 + F.linear(up, t["down_w"], t["down_b"])
    logits = F.linear(out.mean(dim=1), t["head_w"], t["head_b"])
    return F.cross_entropy(logits, t["labels"])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", choices=sorted(PROGRAMS), required=True)
    parser.add_argument("--inputs", required=True, help="directory of <name>.npy inputs")
    parser.add_argument("--outputs", required=True, help="directory for loss.npy, grad_*.npy")
    parser.add_argument("--heads", type=int, default=4, help="attention heads (block)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    spec = PROGRAMS[args.program]
    t = {}
    for name in spec["inputs"]:
        a = np.load(os.path.join(args.inputs, name + ".npy"))
        if a.dtype != np.float32:
            sys.exit(f"torch_reference.py: {name}.npy is {a.dtype}, expected float32")
        if name == "labels":
            t[name] = torch.from_numpy(a.astype(np.int64))
        else:
            t[name] = torch.from_numpy(a).requires_grad_(name in spec["wrt"])
    loss = {"mlp": mlp, "block": block}[args.program](t, args.heads)
    loss.backward()
    os.makedirs(args.outputs, exist_ok=True)
    np.save(os.path.join(args.outputs, "loss.npy"), loss.detach().numpy().astype(np.float32))
    for name in spec["wrt"]:
        grad = np.ascontiguousarray(t[name].grad.numpy().astype(np.float32))
        np.save(os.path.join(args.outputs, "grad_" + name + ".npy"), grad)
    print(f"torch {torch.__version__}: {args.program} loss {loss.item():.9g}")


if __name__ == "__main__":
    main()
