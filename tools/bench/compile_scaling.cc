// pto_bench_compile_scaling: how compile time and memory grow with the size of a program.
//
// Compiles (Function::Precompile: trace, passes, code generation, plan) each case in a fresh
// child process, so that every case starts from an empty kernel memo and its peak RSS is its
// own, after LLVM's one-time set-up (an untimed compile of x + 1), and prints one table: nodes,
// kernels in the plan, kernels LLVM compiled, compile seconds (median over repetitions), the ratio
// to the 1,000-node exp chain and peak RSS.
//
//   exp chain N        x -> exp -> exp -> ... (N exps): split into kernels of at most the
//                      fusion cap; the middle kernels are identical, so LLVM compiles few.
//   mixed chain N      N unary ops drawn at random: every kernel differs, so LLVM compiles
//                      each one (the cost of code generation itself).
//   concat N           concat of N copies of x along axis 0 (one run: one kernel).
//   concat computed N  concat of x * c for N different constants c: kernels of several
//                      copies each, every kernel different.
//   deep graph N       N nodes alternating exp and a transpose on a square input.
//
// Usage: pto_bench_compile_scaling [--repetitions N] [--quick]
//   --repetitions  runs per case (default 3); a case whose first run takes over 20 s runs once.
//   --quick        the small cases only (exp chains of 1,000 and 2,000).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pto/pto.h"

namespace {

using pto::Value;

enum class Kind { kExpChain, kMixedChain, kConcat, kConcatComputed, kDeepGraph };

struct Case {
  std::string name;
  Kind kind;
  int n;
};

// What a child reports about one compile.
struct Result {
  bool ok = false;
  int64_t nodes = 0;
  int64_t kernels = 0;
  int64_t compiled = 0;
  double seconds = 0;
  int64_t peak_rss_kb = 0;
  char error[256] = {};
};

constexpr int64_t kSide = 64;  // inputs are kSide x kSide

pto::TraceFn MakeTrace(const Case& c) {
  switch (c.kind) {
    case Kind::kExpChain:
      return [n = c.n](std::span<const Value> in) {
        Value y = in[0];
        for (int i = 0; i < n; ++i) y = pto::exp(y);
        return std::vector<Value>{y};
      };
    case Kind::kMixedChain:
      return [n = c.n](std::span<const Value> in) {
        Value (*const ops[])(Value) = {pto::exp,  pto::tanh, pto::sigmoid, pto::silu,
                                       pto::relu, pto::abs,  pto::sqrt};
        std::mt19937 random(1);
        std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(ops)) - 1);
        Value y = in[0];
        for (int i = 0; i < n; ++i) y = ops[pick(random)](y);
        return std::vector<Value>{y};
      };
    case Kind::kConcat:
      return [n = c.n](std::span<const Value> in) {
        return std::vector<Value>{pto::concat(std::vector<Value>(n, in[0]), 0)};
      };
    case Kind::kConcatComputed:
      return [n = c.n](std::span<const Value> in) {
        std::vector<Value> parts;
        for (int i = 0; i < n; ++i) parts.push_back(in[0] * (0.5f + i));
        return std::vector<Value>{pto::concat(parts, 0)};
      };
    case Kind::kDeepGraph:
      return [n = c.n](std::span<const Value> in) {
        Value y = in[0];
        for (int i = 0; i < n / 2; ++i) y = pto::transpose(pto::exp(y), 0, 1);
        return std::vector<Value>{y};
      };
  }
  return nullptr;
}

int64_t NodeCount(const Case& c) {
  switch (c.kind) {
    case Kind::kConcat:
      return 2;  // the input and the concat
    case Kind::kConcatComputed:
      return 2 + 2 * int64_t{c.n};  // and a constant and a mul per part
    case Kind::kDeepGraph:
      return 1 + c.n / 2 * 2;
    default:
      return 1 + c.n;
  }
}

// Runs in the child: compiles the case and fills `r`.
void CompileCase(const Case& c, Result& r) {
  auto fail = [&](const absl::Status& s) {
    std::snprintf(r.error, sizeof(r.error), "%s", std::string(s.message()).c_str());
  };
  absl::StatusOr<std::unique_ptr<pto::Runtime>> rt = pto::Runtime::Open();
  if (!rt.ok()) return fail(rt.status());
  const std::vector<std::vector<int64_t>> shapes = {{kSide, kSide}};
  // LLVM's one-time set-up (its first compile initializes parts of the optimizer and code
  // generator) is paid here, untimed: the timed compile is the program's own.
  absl::StatusOr<std::unique_ptr<pto::Function>> warm_up = (*rt)->JitTraced(
      "warm_up", 1, [](std::span<const Value> in) { return std::vector<Value>{in[0] + 1.0f}; }, {});
  if (!warm_up.ok()) return fail(warm_up.status());
  if (absl::Status s = (*warm_up)->Precompile(shapes); !s.ok()) return fail(s);
  absl::StatusOr<std::unique_ptr<pto::Function>> fn = (*rt)->JitTraced(c.name, 1, MakeTrace(c), {});
  if (!fn.ok()) return fail(fn.status());
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = (*fn)->Precompile(shapes); !s.ok()) return fail(s);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The plan's kernels, by running it once.
  std::vector<float> x(kSide * kSide, 0.5f);
  absl::StatusOr<std::vector<std::vector<int64_t>>> out_shapes = (*fn)->OutputShapes(shapes);
  if (!out_shapes.ok()) return fail(out_shapes.status());
  int64_t out_elements = 1;
  for (int64_t d : (*out_shapes)[0]) out_elements *= d;
  std::vector<float> y(out_elements);
  const pto::TensorView in = pto::TensorView::Dense(x.data(), {kSide, kSide});
  const pto::TensorView out = pto::TensorView::Dense(y.data(), (*out_shapes)[0]);
  absl::StatusOr<std::vector<pto::KernelProfile>> profile = (*fn)->Profile({in}, {out}, 1);
  if (!profile.ok()) return fail(profile.status());
  r.kernels = static_cast<int64_t>(profile->size());
  r.compiled = (*fn)->stats().kernels_compiled;
  r.nodes = NodeCount(c);
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_kb = usage.ru_maxrss;
  r.ok = true;
}

// Compiles the case in a child process and returns what it reported.
Result RunInChild(const Case& c) {
  Result r;
  int fds[2];
  if (pipe(fds) != 0) {
    std::snprintf(r.error, sizeof(r.error), "pipe: %s", std::strerror(errno));
    return r;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Result child;
    CompileCase(c, child);
    const ssize_t written = write(fds[1], &child, sizeof(child));
    _exit(written == static_cast<ssize_t>(sizeof(child)) ? 0 : 1);
  }
  close(fds[1]);
  const ssize_t got = pid > 0 ? read(fds[0], &r, sizeof(r)) : -1;
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof(r))) {
    r = Result();
    std::snprintf(r.error, sizeof(r.error), "the child %s",
                  pid < 0               ? "could not be started"
                  : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
                                        : "exited without a result");
  }
  return r;
}

std::string Thousands(int64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int repetitions = 3;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repetitions" && i + 1 < argc) {
      repetitions = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--repetitions N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Case> cases = {{"exp chain 1,000", Kind::kExpChain, 1000},
                             {"exp chain 2,000", Kind::kExpChain, 2000}};
  if (!quick) {
    cases.push_back({"exp chain 10,000", Kind::kExpChain, 10000});
    cases.push_back({"mixed chain 1,000", Kind::kMixedChain, 1000});
    cases.push_back({"mixed chain 10,000", Kind::kMixedChain, 10000});
    cases.push_back({"concat 5,000", Kind::kConcat, 5000});
    cases.push_back({"concat computed 5,000", Kind::kConcatComputed, 5000});
    cases.push_back({"deep graph 100,000", Kind::kDeepGraph, 100000});
  }
  std::printf("%-22s %9s %8s %9s %10s %8s %9s %5s\n", "case", "nodes", "kernels", "compiled",
              "compile s", "x 1,000", "peak MB", "runs");
  double base = 0;
  int failures = 0;
  for (const Case& c : cases) {
    std::vector<Result> runs;
    for (int r = 0; r < repetitions; ++r) {
      runs.push_back(RunInChild(c));
      if (!runs.back().ok || runs.back().seconds > 20) break;
    }
    if (!runs.back().ok) {
      std::printf("%-22s failed: %s\n", c.name.c_str(), runs.back().error);
      ++failures;
      continue;
    }
    std::sort(runs.begin(), runs.end(),
              [](const Result& a, const Result& b) { return a.seconds < b.seconds; });
    const Result& m = runs[runs.size() / 2];
    if (base == 0) base = m.seconds;
    int64_t peak = 0;
    for (const Result& r : runs) peak = std::max(peak, r.peak_rss_kb);
    std::printf("%-22s %9s %8s %9s %10.2f %8.2f %9.0f %5zu\n", c.name.c_str(),
                Thousands(m.nodes).c_str(), Thousands(m.kernels).c_str(),
                Thousands(m.compiled).c_str(), m.seconds, m.seconds / base, peak / 1024.0,
                runs.size());
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}
