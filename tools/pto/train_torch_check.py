#!/usr/bin/env python3
"""The first steps of `pto train` in PyTorch 1.13, for comparison.

Reads the initial weights (<name>.npy) and the batches of the first --steps steps (x_<i>.npy,
labels_<i>.npy, labels as float32) from --dir, trains the causal demo block with its classifier
head (tests/training/torch_reference.py's `block`) with torch.optim.AdamW(foreach=True), and
writes torch_losses.npy ([steps], each loss before its update) to --dir.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "training"))
import torch_reference  # noqa: E402 (after the path is set)

np = torch_reference.np
torch = torch_reference.torch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--weight_decay", type=float, required=True)
    args = parser.parse_args()

    torch.set_num_threads(1)
    names = [n for n in torch_reference.PROGRAMS["block"]["inputs"] if n not in ("x", "labels")]
    t = {n: torch.from_numpy(np.load(os.path.join(args.dir, n + ".npy"))).requires_grad_(True)
         for n in names}
    opt = torch.optim.AdamW([t[n] for n in names], lr=args.lr, weight_decay=args.weight_decay,
                            foreach=True)
    losses = []
    for i in range(args.steps):
        t["x"] = torch.from_numpy(np.load(os.path.join(args.dir, f"x_{i}.npy")))
        labels = np.load(os.path.join(args.dir, f"labels_{i}.npy"))
        t["labels"] = torch.from_numpy(labels.astype(np.int64))
        opt.zero_grad(set_to_none=True)
        loss = torch_reference.block(t, args.heads)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.save(os.path.join(args.dir, "torch_losses.npy"), np.array(losses, dtype=np.float32))
    print(f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
