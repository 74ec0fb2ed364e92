#!/usr/bin/env python3
"""PyTorch's training of the programs of torch_reference.py, for comparison with pto's
training step (tests/training/torch_comparison_test.cc).

Reads the program's tensors as float32 .npy files from --inputs (as torch_reference.py does),
trains every differentiated tensor but the input x with torch.optim (foreach=True) for --steps
steps on that one batch, and writes losses.npy ([steps], the loss before each update) and
param_<name>.npy (each parameter after the last step) to --outputs.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference  # noqa: E402 (after the path is set)

np = torch_reference.np
torch = torch_reference.torch


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", choices=sorted(torch_reference.PROGRAMS), required=True)
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--outputs", required=True)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--optimizer", choices=["sgd", "adam", "adamw"], required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--dampening", type=float, default=0.0)
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--beta1", type=float, default=0.9)
    parser.add_argument("--beta2", type=float, default=0.999)
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--max_grad_norm", type=float, default=0.0)
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    spec = torch_reference.PROGRAMS[args.program]
    t = {}
    for name in spec["inputs"]:
        a = np.load(os.path.join(args.inputs, name + ".npy"))
        if name == "labels":
            t[name] = torch.from_numpy(a.astype(np.int64))
        else:
            t[name] = torch.from_numpy(a.astype(np.float32))
    trained = [name for name in spec["wrt"] if name != "x"]
    for name in trained:
        t[name].requires_grad_(True)
    params = [t[name] for name in trained]
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum,
                              dampening=args.dampening, nesterov=args.nesterov,
                              weight_decay=args.weight_decay, foreach=True)
    else:
        cls = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
        opt = cls(params, lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps,
                  weight_decay=args.weight_decay, foreach=True)
    loss_fn = {"mlp": torch_reference.mlp, "block": torch_reference.block}[args.program]
    losses = []
    for _ in range(args.steps):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(t, args.heads)
        loss.backward()
        if args.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm)
        opt.step()
        losses.append(loss.item())
    os.makedirs(args.outputs, exist_ok=True)
    np.save(os.path.join(args.outputs, "losses.npy"), np.array(losses, dtype=np.float32))
    for name in trained:
        np.save(os.path.join(args.outputs, "param_" + name + ".npy"),
                np.ascontiguousarray(t[name].detach().numpy().astype(np.float32)))
    print(f"torch {torch.__version__}: {args.program} {args.optimizer} {args.steps} steps, "
          f"loss {losses[0]:.6g} -> {losses[-1]:.6g}")


if __name__ == "__main__":
    main()
