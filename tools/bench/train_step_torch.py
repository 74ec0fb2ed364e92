#!/usr/bin/python3
"""The PyTorch baseline of the training-step bench (docs/training.md, "Training-step bench:
baselines"): one training step (forward, backward, AdamW with foreach=True) of

  mlp:   x [64, 1024] -> x @ w1 + b1 (w1 [1024, 4096]) -> gelu (erf) -> @ w2 + b2
         (w2 [4096, 1024]) -> cross-entropy over 1024 classes, int labels [64];
  block: the demo's pre-norm transformer block with a causal mask (the model code of
         tests/training/torch_reference.py) on x [16, 128, 128], then the mean over the
         sequence -> linear 128 -> 10 -> cross-entropy, int labels [16];

in PyTorch eager, in a process of its own, with the same synthetic batch and initial parameters
as pto_bench_train_onednn (its FillUniform generator and seeds), so the first losses agree.

  /usr/bin/python3 tools/bench/train_step_torch.py --model mlp|block [--threads N]
      [--steps S] [--warmup W] [--check] [--turns]

--turns: for a driver that alternates programs step by step: after the warm-up the script prints
`READY`, before each timed step it waits for a line on stdin, after it prints
`STEP <index> <ms> <loss>` (flushed), and after the last one it waits for one more line (or the
end of input) before it goes on. End of input before the last step is an error.

Threads: torch.set_num_threads(N), and OMP_NUM_THREADS=N, OPENBLAS_NUM_THREADS=N and
OPENBLAS_CORETYPE set before torch is loaded: libgomp and OpenBLAS read them when they load, so
the script sets the ones missing and re-executes itself. Others the caller sets (such as
OMP_WAIT_POLICY or OPENBLAS_THREAD_TIMEOUT) pass through and are printed. Debian's torch calls the system
OpenBLAS, which falls back to its generic (Prescott) kernels on a CPU it does not know; the core
type is then pinned to the one that matches the CPU's vector ISA (SkylakeX with AVX-512, Haswell
with AVX2), as pto_bench_kernels does, and otherwise to the core OpenBLAS picked itself. Values
the caller set are kept.

Steps: W warm-up steps (at least 2) on one fixed synthetic batch, whose loss must fall (the
losses are printed), then S timed steps, each on a fresh synthetic batch copied into the input
tensors before the step (untimed), as pto_bench_train_onednn does (on the fixed batch the MLP's
loss collapses to 1e-11 and its gradients go subnormal). --check first compares each
parameter's gradient with a central finite difference of the loss along the gradient's
direction. Memory: VmRSS after the parameters, after the warm-up steps, and VmHWM during the
timed steps (reset first by writing "5" to /proc/self/clear_refs). The last line is
`RESULT {json}`.
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["mlp", "block"], required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--check", action="store_true")
    p.add_argument("--turns", action="store_true")
    args = p.parse_args()
    for name, least in (("threads", 1), ("steps", 1), ("warmup", 2)):
        if getattr(args, name) < least:
            p.error(f"--{name} must be at least {least}")
    return args


def openblas():
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
    except OSError:
        return None
    lib.openblas_get_corename.restype = ctypes.c_char_p
    lib.openblas_get_config.restype = ctypes.c_char_p
    return lib


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def pin_environment(threads):
    """Sets the thread and OpenBLAS variables the caller left unset and re-executes; returns
    only when nothing had to be set."""
    wanted = {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
    if "OPENBLAS_CORETYPE" not in os.environ:
        lib = openblas()  # loaded here only to ask; the re-executed process loads it afresh
        if lib is not None:
            core = lib.openblas_get_corename().decode()
            if core == "Prescott":
                flags = cpu_flags()
                core = "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else core
            wanted["OPENBLAS_CORETYPE"] = core
    missing = {k: v for k, v in wanted.items() if k not in os.environ}
    if not missing:
        return
    os.environ.update(missing)
    os.execv(sys.executable, [sys.executable] + sys.argv)


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                kib, unit = line.split()[1:3]
                return int(kib) * 1024 if unit == "kB" else -1
    return -1


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return ""
    except OSError as e:
        return f"cannot write /proc/self/clear_refs: {e}"


def fill_uniform(np, count, lo, hi, seed):
    """tools/bench/buffers.cc's FillUniform, element for element: a 64-bit LCG whose i-th state
    is A^(i+1) s0 + C (1 + A + ... + A^i) mod 2^64, its top 24 bits scaled into [lo, hi)."""
    mask = (1 << 64) - 1
    s0 = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & mask)
    a, c = np.uint64(6364136223846793005), np.uint64(1442695040888963407)
    powers = np.cumprod(np.full(count, a, dtype=np.uint64))  # A^1 .. A^count, wrapping
    sums = np.ones(count, dtype=np.uint64)
    sums[1:] += np.cumsum(powers)[:-1]
    state = powers * s0 + c * sums
    lo, hi = np.float32(lo), np.float32(hi)
    scale = (hi - lo) / np.float32(16777216.0)
    return lo + (state >> np.uint64(40)).astype(np.float32) * scale


class Model:
    """A program's parameters (by name, as tests/training/torch_reference.py names them), its
    loss on the current batch, and fill_batch(k), which writes batch k into the inputs in place
    (0: the fixed batch, x seed 1, labels seed 2; k >= 1: seeds 1000 + 2k and 1001 + 2k), all
    filled as pto_bench_train_onednn fills them."""

    def __init__(self, name, np, torch, F):
        import torch_reference  # the block's model code, shared with the gradient comparison

        self.np, self.torch = np, torch
        self.sqrt3 = np.sqrt(np.float32(3.0))
        self.params = {}
        if name == "mlp":
            self.x, self.classes = self.tensor((64, 1024), -self.sqrt3, self.sqrt3, 1), 1024
            self.linear("fc1", 1024, 4096, True, 3)
            self.linear("fc2", 4096, 1024, True, 5)
            p = self.params
            self.loss = lambda: F.cross_entropy(
                torch.addmm(p["fc2_b"], F.gelu(torch.addmm(p["fc1_b"], self.x, p["fc1_w"])),
                            p["fc2_w"]), self.y)
        else:
            self.x, self.classes = self.tensor((16, 128, 128), -self.sqrt3, self.sqrt3, 1), 10
            for layer in (("ln1",), ("qkv", 128, 384, 3), ("proj", 128, 128, 5), ("ln2",),
                          ("up", 128, 512, 7), ("down", 512, 128, 9), ("head", 128, 10, 11)):
                if len(layer) == 1:
                    self.norm(layer[0], 128)
                else:
                    self.linear(*layer[:3], False, layer[3])
            self.loss = lambda: torch_reference.block(
                {"x": self.x, "labels": self.y, **self.params}, 4)
        self.y = self.labels(self.x.shape[0], 2)
        for t in self.params.values():
            t.requires_grad_(True)

    def tensor(self, shape, lo, hi, seed):
        n = math.prod(shape)
        a = (self.np.full(n, self.np.float32(lo)) if lo == hi
             else fill_uniform(self.np, n, lo, hi, seed))
        return self.torch.from_numpy(a.reshape(shape).copy())

    def labels(self, count, seed):
        u = fill_uniform(self.np, count, 0.0, float(self.classes), seed)
        return self.torch.from_numpy(
            self.np.minimum(self.np.floor(u), self.classes - 1).astype(self.np.int64))

    def linear(self, name, fan_in, fan_out, in_out, seed):
        # torch.nn.Linear's default init range, computed in float32 as the C++ does.
        b = self.np.float32(1.0) / self.np.sqrt(self.np.float32(fan_in))
        shape = (fan_in, fan_out) if in_out else (fan_out, fan_in)
        self.params[name + "_w"] = self.tensor(shape, -b, b, seed)
        self.params[name + "_b"] = self.tensor((fan_out,), -b, b, seed + 1)

    def norm(self, name, width):
        self.params[name + "_w"] = self.tensor((width,), 1.0, 1.0, 0)
        self.params[name + "_b"] = self.tensor((width,), 0.0, 0.0, 0)

    def fill_batch(self, index):
        x_seed = 1 if index == 0 else 1000 + 2 * index
        self.x.copy_(self.tensor(tuple(self.x.shape), -self.sqrt3, self.sqrt3, x_seed))
        self.y.copy_(self.labels(self.y.shape[0], x_seed + 1))


def train_and_time(args, model, opt):
    """The warm-up steps on the fixed batch, then the timed steps on fresh batches, with the
    memory read around them."""
    def train_step(parts=None):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model.loss()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        value = loss.item()
        if parts is not None:  # forward (with zero_grad), backward, update
            parts.append(((t1 - t0) * 1e3, (t2 - t1) * 1e3, (time.perf_counter() - t2) * 1e3))
        return value

    run = {"warm_losses": [train_step() for _ in range(args.warmup)], "parts": []}
    run["resident_after_warm"] = status_bytes("VmRSS")
    run["reset_error"] = reset_peak()
    run["ms"], run["timed_losses"] = [], []
    if args.turns:
        print("READY", flush=True)
    for i in range(args.steps):
        model.fill_batch(i + 1)
        if args.turns and not sys.stdin.readline():
            sys.exit(f"train_step_torch.py: --turns: stdin ended before step {i}")
        start = time.perf_counter()
        run["timed_losses"].append(train_step(run["parts"]))
        run["ms"].append((time.perf_counter() - start) * 1e3)
        if args.turns:
            print(f"STEP {i} {run['ms'][-1]:.4f} {run['timed_losses'][-1]:.7f}", flush=True)
    run["hwm"] = status_bytes("VmHWM")
    if args.turns:
        sys.stdin.readline()  # the driver's go-ahead for the untimed rest (or the end of input)
    return run


def report(args, torch, model, run, resident_after_parameters, check):
    blas = openblas()
    core = blas.openblas_get_corename().decode() if blas else "(no libopenblas)"
    config = summarize_config(torch)
    env = {k: os.environ.get(k, "") for k in
           ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OMP_WAIT_POLICY",
            "OPENBLAS_THREAD_TIMEOUT")}
    warm, timed, ms, hwm = run["warm_losses"], run["timed_losses"], run["ms"], run["hwm"]
    after_warm = run["resident_after_warm"]
    param_bytes = sum(p.numel() * 4 for p in model.params.values())
    print(f"torch {torch.__version__}; model {args.model}; torch.get_num_threads() "
          f"{torch.get_num_threads()}; OpenBLAS core {core}; env {env}")
    print(f"config: {config}")
    print(f"parameters {param_bytes / 2**20:.2f} MiB")
    if run["reset_error"]:
        print("peak reset failed:", run["reset_error"])
    print("loss on the fixed batch, warm-up steps:", " ".join(f"{l:.6f}" for l in warm))
    print(f"loss on fresh batches, timed steps: first {timed[0]:.6f}, last {timed[-1]:.6f}")
    q = statistics.quantiles(ms, n=10, method="inclusive") if len(ms) > 1 else [ms[0]] * 9
    median = statistics.median(ms)
    forward, backward, update = (statistics.median(p[i] for p in run["parts"]) for i in range(3))
    print(f"step time over {args.steps} steps: median {median:.3f} ms (p10 {q[0]:.3f}, "
          f"p90 {q[8]:.3f}); medians of its parts: forward {forward:.3f}, backward "
          f"{backward:.3f} ({backward / forward:.2f}x forward), update {update:.3f} ms")
    print(f"memory: VmRSS after parameters {resident_after_parameters / 2**20:.1f} MiB, after the "
          f"warm-up {after_warm / 2**20:.1f} MiB; VmHWM during the timed steps "
          f"{hwm / 2**20:.1f} MiB: peak over the warm resident {(hwm - after_warm) / 2**20:.2f} "
          f"MiB, over the parameters' {(hwm - resident_after_parameters) / 2**20:.2f} MiB")
    result = {
        "baseline": "torch", "model": args.model, "threads": args.threads, "steps": args.steps,
        "median_ms": round(median, 4), "p10_ms": round(q[0], 4), "p90_ms": round(q[8], 4),
        "forward_ms": round(forward, 4), "backward_ms": round(backward, 4),
        "update_ms": round(update, 4),
        "peak_bytes": hwm - after_warm, "resident_after_warm_bytes": after_warm,
        "peak_over_parameters_bytes": hwm - resident_after_parameters,
        # AdamW's moments (two float32 tensors per parameter) appear at the first step in torch;
        # counted as allocated before it, as the other sides allocate them.
        "working_set_bytes": hwm - resident_after_parameters - 2 * param_bytes,
        "peak_reset": "failed" if run["reset_error"] else "ok",
        "loss_first": warm[0], "loss_last": warm[-1], "loss_timed_last": timed[-1],
        "check": check, "version": f"torch {torch.__version__}", "openblas_core": core,
        "env": env, "config": config,
    }
    print("RESULT " + json.dumps(result))


def main():
    args = parse_args()
    pin_environment(args.threads)
    try:
        import numpy as np
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"train_step_torch.py: cannot import {e.name}: install Debian's python3-torch "
                 "and python3-numpy (tools/setup.sh) and run this with /usr/bin/python3")
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "training"))
    torch.set_num_threads(args.threads)

    model = Model(args.model, np, torch, F)
    resident_after_parameters = status_bytes("VmRSS")
    opt = torch.optim.AdamW(model.params.values(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01, foreach=True)
    check = "not run"
    if args.check:
        check = "passed" if check_gradients(torch, model.params, model.loss) else "failed"
    run = train_and_time(args, model, opt)
    report(args, torch, model, run, resident_after_parameters, check)
    loss_fell = run["warm_losses"][-1] < run["warm_losses"][0]
    if not loss_fell:
        print("ERROR: the loss did not fall on the fixed batch")
    if check == "failed":
        print("ERROR: the gradient check failed")
    return 0 if loss_fell and check != "failed" else 1


def summarize_config(torch):
    """The lines of torch.__config__.show() that say which kernels run: compiler, oneDNN,
    OpenMP, CPU capability, and the BLAS/LAPACK/MKL build settings."""
    show = torch.__config__.show()
    keep = []
    for line in show.splitlines():
        line = line.strip(" -")
        if line.startswith(("GCC", "Intel(R) MKL-DNN", "OpenMP", "CPU capability")):
            keep.append(line)
        elif line.startswith("Build settings"):
            for item in line.split(":", 1)[1].split(", "):
                key = item.split("=")[0].strip()
                if key in ("BLAS_INFO", "LAPACK_INFO", "USE_MKLDNN", "USE_OPENMP", "TORCH_VERSION"):
                    keep.append(item.strip())
    return "; ".join(keep)


def check_gradients(torch, params, loss_fn):
    """For every parameter: the derivative of the loss along u = g / |g| by central differences
    (step 1e-2 of the parameter's norm, at least 1e-2) against the analytic |g|."""
    for p in params.values():
        p.grad = None
    loss_fn().backward()
    ok = True
    print("gradient check (central difference along each gradient's direction):")
    with torch.no_grad():
        for name, p in params.items():
            g = p.grad.clone()
            g_norm = g.double().norm().item()
            if not g_norm > 0:
                print(f"  {name:<8} gradient is zero or not finite ({g_norm}): FAIL")
                ok = False
                continue
            t = 1e-2 * max(1.0, p.double().norm().item())
            saved = p.clone()
            p.copy_((saved.double() + t * g.double() / g_norm).float())
            plus = loss_fn().double().item()
            p.copy_((saved.double() - t * g.double() / g_norm).float())
            minus = loss_fn().double().item()
            p.copy_(saved)
            fd = (plus - minus) / (2 * t)
            rel = abs(fd - g_norm) / g_norm
            ok = ok and rel <= 5e-3
            print(f"  {name:<8} |g| {g_norm:.6e}  finite difference {fd:.6e}  relative error "
                  f"{rel:.1e}  {'ok' if rel <= 5e-3 else 'FAIL'}")
    for p in params.values():
        p.grad = None
    return ok


if __name__ == "__main__":
    sys.exit(main())
