// pto_bench_serving: the demo's transformer block served over the whole of wide declared ranges
// (batch 1-64 x seq 1-2048) with the default max_shape_classes, as a server meets requests: a
// random (batch, seq) per call (seeded), one Runtime, calls back to back. --sizes log (the
// default) draws each dim log-uniformly (every power-of-two bucket about as likely: short
// requests are common, and the classes are met evenly), --sizes uniform uniformly (most calls
// are then large: 250 to 300 calls meet more than 32 classes). Past the cap, calls
// that no compiled class takes run the Function's generic class (docs/architecture.md, "Shape
// classes"), so no call fails. Prints the calls, errors, compilations and classes, the time per
// call (percentiles, over all calls and over the calls that compiled nothing), and checks every
// Nth call's output against the ops/ reference (not timed). See docs/performance.md.
//
//   pto_bench_serving [--calls 500] [--seed 1] [--sizes log|uniform] [--check-every 50]
//       [--threads 0] [--max-batch 64] [--max-seq 2048] [--max-shape-classes 32]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jit/function_impl.h"
#include "jit/reference_runner.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"
#include "tools/pto/transformer_block.h"

namespace pto::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int64_t calls = 500;
  int64_t seed = 1;
  bool log_sizes = true;     // --sizes log; false: uniform
  int64_t check_every = 50;  // 0: no reference checks
  int64_t threads = 0;       // RuntimeOptions::intra_op_threads
  int64_t max_batch = 64, max_seq = 2048;
  int64_t max_shape_classes = FunctionOptions().max_shape_classes;
};

bool ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string value = i + 1 < argc ? argv[++i] : "";
    if (arg == "--sizes") {
      if (value != "log" && value != "uniform") return false;
      f.log_sizes = value == "log";
      continue;
    }
    int64_t* target = arg == "--calls"               ? &f.calls
                      : arg == "--seed"              ? &f.seed
                      : arg == "--check-every"       ? &f.check_every
                      : arg == "--threads"           ? &f.threads
                      : arg == "--max-batch"         ? &f.max_batch
                      : arg == "--max-seq"           ? &f.max_seq
                      : arg == "--max-shape-classes" ? &f.max_shape_classes
                                                     : nullptr;
    if (target == nullptr || !absl::SimpleAtoi(value, target) || *target < 0) return false;
  }
  return f.calls >= 1 && f.max_batch >= 1 && f.max_seq >= 1 && f.max_shape_classes >= 1;
}

// A size in [1, max]: log-uniform (floor of e^u, u uniform in [0, ln(max + 1))) or uniform.
int64_t DrawSize(std::mt19937_64& random, int64_t max, bool log_sizes) {
  if (!log_sizes) return std::uniform_int_distribution<int64_t>(1, max)(random);
  const double u = std::uniform_real_distribution<double>(0, std::log(max + 1.0))(random);
  return std::clamp<int64_t>(static_cast<int64_t>(std::exp(u)), 1, max);
}

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Nearest-rank quantile q of `v` (sorted here).
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

void PrintTimes(const char* what, const std::vector<double>& ms) {
  if (ms.empty()) {
    std::printf("  %-26s: none\n", what);
    return;
  }
  std::printf("  %-26s: p50 %.2f, p90 %.2f, p99 %.2f, max %.2f ms (%zu calls)\n", what,
              Quantile(ms, 0.5), Quantile(ms, 0.9), Quantile(ms, 0.99), Quantile(ms, 1.0),
              ms.size());
}

struct Tally {
  int64_t errors = 0, checked = 0, check_failures = 0;
  double worst_error_ratio = 0;  // |error| / tolerance, the worst seen
  std::vector<double> all_ms, warm_ms;
  std::string first_error;
  // The call that compiled the generic class: its index (-1: none), time and kernels compiled.
  int64_t generic_call = -1, generic_kernels = 0;
  double generic_ms = 0;
};

// Compares `out` with the reference's output of the block on `inputs`.
void Check(const TraceFn& block, const tools::BlockDims& dims,
           const std::vector<ops::HostTensor>& inputs, const ops::HostTensor& out, Tally& tally) {
  ++tally.checked;
  absl::StatusOr<std::vector<ops::HostTensor>> want = jit::RunReferenceOf(block, inputs);
  if (!want.ok()) {
    ++tally.check_failures;
    std::fprintf(stderr, "reference: %s\n", std::string(want.status().message()).c_str());
    return;
  }
  // The longest reductions: the MLP's and attention's over seq.
  const int64_t seq = inputs[0].shape[1];
  const ops::Tolerance tol =
      ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, std::max(dims.ff, seq)),
                   ops::OpTolerance(ir::OpKind::kLayerNorm, dims.model));
  std::string mismatch;
  if (!ops::AllClose(out, (*want)[0], tol, &mismatch)) {
    ++tally.check_failures;
    std::fprintf(stderr, "batch %lld seq %lld: %s\n", static_cast<long long>(out.shape[0]),
                 static_cast<long long>(seq), mismatch.c_str());
  }
  for (size_t i = 0; i < out.data.size(); ++i) {
    const double bound = tol.abs + tol.rel * std::abs((*want)[0].data[i]);
    tally.worst_error_ratio =
        std::max(tally.worst_error_ratio, std::abs(out.data[i] - (*want)[0].data[i]) / bound);
  }
}

// The block served: its Runtime, Function, weights and what it computes.
struct Served {
  tools::BlockDims dims;
  TraceFn block;
  std::vector<ops::HostTensor> weights;
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Function> fn;
};

absl::Status OpenServed(const Flags& flags, Served& served) {
  RuntimeOptions options;
  options.intra_op_threads = static_cast<int>(flags.threads);
  options.record_workload = true;  // calls per shape class
  options.log_sink = [](LogLevel, std::string_view m) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(m.size()), m.data());
  };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) return rt.status();
  served.rt = *std::move(rt);
  served.block = tools::TransformerBlock(served.dims);
  const std::vector<std::vector<int64_t>> weight_shapes = tools::WeightShapes(served.dims);
  for (size_t i = 0; i < weight_shapes.size(); ++i) {
    const bool norm_weight = i == 0 || i == 6;  // as pto demo draws them
    served.weights.push_back(norm_weight
                                 ? ops::HostTensor::Random(weight_shapes[i], 100 + i, 0.9f, 1.1f)
                                 : ops::HostTensor::Random(weight_shapes[i], 100 + i, -0.1f, 0.1f));
  }
  FunctionOptions fopts;
  fopts.dynamic = {{0, 0, Dim("batch", 1, flags.max_batch)}, {0, 1, Dim("seq", 1, flags.max_seq)}};
  for (size_t i = 1; i <= served.weights.size(); ++i)
    fopts.constant_inputs.push_back(static_cast<int>(i));
  fopts.max_shape_classes = static_cast<int>(flags.max_shape_classes);
  absl::StatusOr<std::unique_ptr<Function>> fn = served.rt->JitTraced(
      "transformer_block", static_cast<int>(1 + served.weights.size()), served.block, fopts);
  if (!fn.ok()) return fn.status();
  served.fn = *std::move(fn);
  return absl::OkStatus();
}

// Call `call` at a random (batch, seq): timed, its compilations noted, checked when due.
void ServeCall(const Flags& flags, Served& served, int64_t call, std::mt19937_64& random,
               Tally& tally) {
  const int64_t b = DrawSize(random, flags.max_batch, flags.log_sizes);
  const int64_t s = DrawSize(random, flags.max_seq, flags.log_sizes);
  std::vector<ops::HostTensor> inputs = {ops::HostTensor::Random({b, s, served.dims.model}, call)};
  inputs.insert(inputs.end(), served.weights.begin(), served.weights.end());
  std::vector<TensorView> views;
  for (const ops::HostTensor& t : inputs)
    views.push_back(TensorView::Dense(t.data.data(), t.shape));
  ops::HostTensor out = ops::HostTensor::Filled({b, s, served.dims.model}, 0);
  const TensorView out_view = TensorView::Dense(out.data.data(), out.shape);
  const FunctionStats before = served.fn->stats();
  const auto start = Clock::now();
  const absl::Status status = (*served.fn)(views, {&out_view, 1});
  const double ms = Millis(Clock::now() - start);
  if (!status.ok()) {
    if (tally.errors++ == 0) tally.first_error = std::string(status.message());
    return;
  }
  tally.all_ms.push_back(ms);
  const FunctionStats after = served.fn->stats();
  if (after.compiles == before.compiles) tally.warm_ms.push_back(ms);
  if (after.generic_classes > before.generic_classes) {
    tally.generic_call = call;
    tally.generic_ms = ms;
    tally.generic_kernels = after.kernels_compiled - before.kernels_compiled;
  }
  if (flags.check_every > 0 && call % flags.check_every == 0) {
    Check(served.block, served.dims, inputs, out, tally);
  }
}

// The calls the generic class ran: its key is the declared ranges (jit/trace_variants.h).
int64_t GenericClassCalls(const Flags& flags, Function& fn) {
  const std::string generic_key =
      absl::StrCat("in0.0=[1..", flags.max_batch, "],in0.1=[1..", flags.max_seq, "]");
  int64_t calls = 0;
  for (const proto::WorkloadEntry& e : fn.impl()->Workload()) {
    for (const proto::WorkloadShapeClass& c : e.shape_classes()) {
      if (c.shape_class() == generic_key) calls += c.calls();
    }
  }
  return calls;
}

// The report; true when it passed.
bool PrintReport(const Flags& flags, Function& fn, const Tally& tally, double loop_seconds) {
  const FunctionStats st = fn.stats();
  std::printf("  calls                     : %lld (%.1f s with the checks)\n",
              static_cast<long long>(st.calls), loop_seconds);
  std::printf("  errors                    : %lld%s%s\n", static_cast<long long>(tally.errors),
              tally.errors ? ", the first: " : "", tally.first_error.c_str());
  std::printf("  compilations              : %lld (%lld kernels compiled, %.1f s)\n",
              static_cast<long long>(st.compiles), static_cast<long long>(st.kernels_compiled),
              st.compile_seconds);
  std::printf("  shape classes             : %lld (%lld generic)\n",
              static_cast<long long>(st.shape_classes), static_cast<long long>(st.generic_classes));
  std::printf("  calls run by generic class: %lld\n",
              static_cast<long long>(GenericClassCalls(flags, fn)));
  if (tally.generic_call >= 0) {
    std::printf("  generic class compiled    : at call %lld, %.1f ms, %lld kernels compiled\n",
                static_cast<long long>(tally.generic_call), tally.generic_ms,
                static_cast<long long>(tally.generic_kernels));
  }
  PrintTimes("time per call", tally.all_ms);
  PrintTimes("  calls that compiled none", tally.warm_ms);
  std::printf(
      "  reference checks          : %lld calls (every %lld), %lld failed (worst error "
      "%.3g of the tolerance)\n",
      static_cast<long long>(tally.checked), static_cast<long long>(flags.check_every),
      static_cast<long long>(tally.check_failures), tally.worst_error_ratio);
  const bool ok = tally.errors == 0 && tally.check_failures == 0 &&
                  st.compiles <= flags.max_shape_classes + st.generic_classes;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) {
    std::fprintf(stderr,
                 "usage: pto_bench_serving [--calls 500] [--seed 1] [--sizes log|uniform] "
                 "[--check-every 50] [--threads 0] [--max-batch 64] [--max-seq 2048] "
                 "[--max-shape-classes 32]\n");
    return 2;
  }
  Served served;
  if (absl::Status s = OpenServed(flags, served); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  const tools::BlockDims& dims = served.dims;
  std::printf(
      "pto_bench_serving: transformer block (model %lld, heads %lld, mlp %lld), batch 1-%lld x "
      "seq 1-%lld (%s), max_shape_classes %lld, %lld calls, seed %lld\n",
      static_cast<long long>(dims.model), static_cast<long long>(dims.heads),
      static_cast<long long>(dims.ff), static_cast<long long>(flags.max_batch),
      static_cast<long long>(flags.max_seq), flags.log_sizes ? "log-uniform" : "uniform",
      static_cast<long long>(flags.max_shape_classes), static_cast<long long>(flags.calls),
      static_cast<long long>(flags.seed));
  std::mt19937_64 random(static_cast<uint64_t>(flags.seed));
  Tally tally;
  const auto loop_start = Clock::now();
  for (int64_t call = 0; call < flags.calls; ++call) ServeCall(flags, served, call, random, tally);
  const double loop_seconds = Millis(Clock::now() - loop_start) / 1000;
  return PrintReport(flags, *served.fn, tally, loop_seconds) ? 0 : 1;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) { return pto::bench::Main(argc, argv); }
