// `pto demo`: a transformer block on random weights, called in a loop over varying batch sizes
// and sequence lengths; prints compilations, the first call's time, the median time per
// iteration after it, a checksum of every output, and checks outputs against the ops/
// reference. `--kernel-times` adds a table of every kernel's cold compile or warm load time
// and the runtime's and the cache's counters. `--record-workload FILE` writes the shape classes
// called, with their call counts and times, as a workload file for `pto tune --workload`.
// `--profile BxS` (e.g. 4x128) adds where a call's time goes at batch B, sequence S: each kernel
// of the plan with its median time over 50 calls (Function::Profile). `--checked-kernels`
// runs bounds-checked kernels (RuntimeOptions::checked_kernels). `--check-numerics` fails at
// the first NaN or infinity a call computes (RuntimeOptions::check_numerics). `--trace FILE`
// writes a Chrome trace of the run (Runtime::StartTrace).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jit/reference_runner.h"
#include "ops/tolerance.h"
#include "pto/pto.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/trace_file.h"
#include "tools/pto/transformer_block.h"

namespace pto::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// FNV-1a over the bytes of `data`, continuing from `h`.
uint64_t Fnv1a(const std::vector<float>& data, uint64_t h) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  for (size_t i = 0; i < data.size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

// "median m ms, max x ms" of `ms` (sorted here), or "-" when empty.
std::string MedianMax(std::vector<double> ms) {
  if (ms.empty()) return "-";
  std::sort(ms.begin(), ms.end());
  char text[96];
  std::snprintf(text, sizeof text, "median %.3f ms, max %.3f ms", ms[ms.size() / 2], ms.back());
  return text;
}

// Profiles `fn` on [batch, seq, model] inputs (then `weights`) and prints the kernel table.
bool PrintProfile(Function& fn, int64_t b, int64_t s, int64_t model,
                  const std::vector<ops::HostTensor>& weights) {
  ops::HostTensor x = ops::HostTensor::Random({b, s, model}, 7);
  std::vector<TensorView> views = {TensorView::Dense(x.data.data(), x.shape)};
  for (const ops::HostTensor& w : weights)
    views.push_back(TensorView::Dense(w.data.data(), w.shape));
  std::vector<float> out(b * s * model);
  const TensorView out_view = TensorView::Dense(out.data(), {b, s, model});
  absl::StatusOr<std::vector<KernelProfile>> profile = fn.Profile(views, {&out_view, 1}, 50);
  if (!profile.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(profile.status().message()).c_str());
    return false;
  }
  std::printf("profile at batch %lld, seq %lld (median of 50 calls per kernel):\n",
              static_cast<long long>(b), static_cast<long long>(s));
  std::printf("  %-56s %10s %7s %8s %7s %6s %s\n", "kernel", "us", "share", "GFLOP/s", "GB/s",
              "%roof", "bound");
  double total = 0;
  for (const KernelProfile& k : *profile) {
    std::printf("  %-56s %10.1f %6.1f%% %8.1f %7.1f %5.0f%% %s\n", k.kernel.c_str(),
                k.seconds * 1e6, k.share * 100, k.gflops, k.gbs, k.roofline_share * 100,
                k.memory_bound ? "memory" : "compute");
    total += k.seconds;
  }
  std::printf("  %-56s %10.1f\n", "total", total * 1e6);
  std::printf(
      "  (%%roof: the roofline's time, max(flops / peak, bytes / bandwidth), over the kernel's; "
      "bound: which of the two is larger)\n");
  return true;
}

void PrintKernelTimes(const Runtime& rt, double first_ms) {
  const std::vector<KernelEvent> events = rt.kernel_events();
  std::printf("kernel times (the one-time LLVM/JIT set-up excluded):\n");
  std::printf("  %-48s %-14s %10s  %s\n", "kernel", "how", "ms", "shape class");
  std::vector<double> cold, warm;
  for (const KernelEvent& e : events) {
    const double ms = e.seconds * 1000;
    (e.loaded_from_cache ? warm : cold).push_back(ms);
    std::printf("  %-48s %-14s %10.3f  %s\n", e.kernel.c_str(),
                e.loaded_from_cache ? "warm load" : "cold compile", ms, e.shape_class.c_str());
  }
  std::printf("  kernels compiled (cold) : %zu (%s)\n", cold.size(), MedianMax(cold).c_str());
  std::printf("  kernels loaded (warm)   : %zu (%s)\n", warm.size(), MedianMax(warm).c_str());
  std::printf("  first call              : %.1f ms (%s)\n", first_ms,
              cold.empty() && !warm.empty() ? "warm" : "cold");
  const RuntimeStats st = rt.stats();
  std::printf(
      "  runtime                 : llvm_codegen_runs %lld, kernels_loaded %lld, "
      "one-time LLVM set-up %.1f ms\n",
      static_cast<long long>(st.llvm_codegen_runs), static_cast<long long>(st.kernels_loaded),
      st.llvm_setup_seconds * 1000);
  std::printf("  cache                   : %s, role %s, %s%s\n", st.cache.description.c_str(),
              st.cache.role.c_str(), st.cache.persistent ? "persistent" : "not persistent",
              st.cache.code_trusted ? "" : ", code not trusted");
  std::printf(
      "  cache counts            : hits %lld, misses %lld, corrupt %lld, puts %lld, "
      "evictions %lld, entries %lld, bytes %lld\n",
      static_cast<long long>(st.cache.hits), static_cast<long long>(st.cache.misses),
      static_cast<long long>(st.cache.corrupt), static_cast<long long>(st.cache.puts),
      static_cast<long long>(st.cache.evictions), static_cast<long long>(st.cache.entries),
      static_cast<long long>(st.cache.bytes));
}

struct DemoOptions {
  int iterations = 60;
  std::string workload_path;                   // --record-workload
  std::string profile_shape;                   // --profile BxS
  std::string trace_path;                      // --trace FILE
  int64_t profile_batch = 0, profile_seq = 0;  // parsed from profile_shape
  bool kernel_times = false;
  RuntimeOptions runtime;
};

// --profile BATCHxSEQ (e.g. 4x128) into o.profile_batch and o.profile_seq; false if malformed.
bool ParseProfileShape(DemoOptions& o) {
  long long b = 0, s = 0;
  char end = 0;
  if (std::sscanf(o.profile_shape.c_str(), "%lldx%lld%c", &b, &s, &end) != 2 || b < 1 || s < 1) {
    return false;
  }
  o.profile_batch = b;
  o.profile_seq = s;
  return true;
}

// The block as a Function: batch and seq dynamic, the weights constant inputs.
absl::StatusOr<std::unique_ptr<Function>> JitBlock(Runtime& rt, const TraceFn& block,
                                                   int num_weights) {
  FunctionOptions fopts;
  fopts.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, 1024)}};
  for (int i = 1; i <= num_weights; ++i) fopts.constant_inputs.push_back(i);
  return rt.JitTraced("transformer_block", 1 + num_weights, block, fopts);
}

std::vector<ops::HostTensor> RandomWeights(const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<ops::HostTensor> weights;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const bool norm_weight = i == 0 || i == 6;
    weights.push_back(norm_weight ? ops::HostTensor::Random(shapes[i], 100 + i, 0.9f, 1.1f)
                                  : ops::HostTensor::Random(shapes[i], 100 + i, -0.1f, 0.1f));
  }
  return weights;
}

// What the loop measured and checked.
struct DemoTally {
  std::vector<double> times;  // per call after the first, ms
  double first_ms = 0;
  double max_error_ratio = 0;  // the worst |error| / tolerance seen
  int checked = 0, failed = 0;
  uint64_t checksum = 0xcbf29ce484222325ull;
  std::map<std::pair<int64_t, int64_t>, bool> seen;  // (batch, seq) checked already
};

// Compares `out` with the reference's output of the block on `inputs`; false when the
// reference itself failed (printed).
bool CheckAgainstReference(const TraceFn& block, const BlockDims& dims,
                           const std::vector<ops::HostTensor>& inputs, const ops::HostTensor& out,
                           DemoTally& tally) {
  absl::StatusOr<std::vector<ops::HostTensor>> want = jit::RunReferenceOf(block, inputs);
  if (!want.ok()) {
    std::fprintf(stderr, "pto demo: reference failed: %s\n",
                 std::string(want.status().message()).c_str());
    return false;
  }
  const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, dims.ff),
                                          ops::OpTolerance(ir::OpKind::kLayerNorm, dims.model));
  std::string mismatch;
  ++tally.checked;
  if (!ops::AllClose(out, (*want)[0], tol, &mismatch)) {
    ++tally.failed;
    std::fprintf(stderr, "pto demo: batch %lld seq %lld: %s\n",
                 static_cast<long long>(out.shape[0]), static_cast<long long>(out.shape[1]),
                 mismatch.c_str());
  }
  for (size_t i = 0; i < out.data.size(); ++i) {
    const double err = std::abs(out.data[i] - (*want)[0].data[i]);
    const double bound = tol.abs + tol.rel * std::abs((*want)[0].data[i]);
    tally.max_error_ratio = std::max(tally.max_error_ratio, err / bound);
  }
  return true;
}

// Iteration `it`: a timed call on a random input whose batch and seq vary with `it`, its output
// added to the checksum, and each (batch, seq) checked once. False on a failure (printed).
bool RunIteration(Function& fn, const TraceFn& block, const BlockDims& dims,
                  const std::vector<ops::HostTensor>& weights, int it, DemoTally& tally) {
  static constexpr int64_t kBatches[] = {1, 2, 3, 4, 8};
  static constexpr int64_t kSeqs[] = {7, 16, 32, 50, 64, 100, 128};
  const int64_t b = kBatches[(it * 7 / 5) % 5], s = kSeqs[(it * 3) % 7];
  std::vector<ops::HostTensor> inputs = {ops::HostTensor::Random({b, s, dims.model}, it)};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  std::vector<TensorView> views;
  for (const ops::HostTensor& t : inputs)
    views.push_back(TensorView::Dense(t.data.data(), t.shape));
  ops::HostTensor out;
  out.shape = {b, s, dims.model};
  out.data.resize(b * s * dims.model);
  TensorView out_view = TensorView::Dense(out.data.data(), out.shape);
  const auto start = Clock::now();
  absl::Status status = fn(views, {&out_view, 1});
  const double ms = Millis(Clock::now() - start);
  if (!status.ok()) {
    std::fprintf(stderr, "pto demo: call %d failed: %s\n", it,
                 std::string(status.message()).c_str());
    return false;
  }
  tally.checksum = Fnv1a(out.data, tally.checksum);
  if (it == 0) {
    tally.first_ms = ms;
  } else {
    tally.times.push_back(ms);
  }
  if (tally.seen[{b, s}]) return true;
  tally.seen[{b, s}] = true;
  return CheckAgainstReference(block, dims, inputs, out, tally);
}

void PrintSummary(const FunctionStats& st, DemoTally& tally) {
  std::vector<double>& times = tally.times;
  std::sort(times.begin(), times.end());
  std::printf(
      "  shape classes compiled : %lld (kernels compiled: %lld, loaded from cache: %lld, %.0f "
      "ms)\n",
      static_cast<long long>(st.compiles), static_cast<long long>(st.kernels_compiled),
      static_cast<long long>(st.kernels_loaded), st.compile_seconds * 1000);
  std::printf("  first call (%s)      : %.1f ms\n",
              st.kernels_compiled == 0 && st.kernels_loaded > 0 ? "warm" : "cold", tally.first_ms);
  if (!times.empty()) {
    std::printf("  median per iteration   : %.3f ms over %zu iterations after the first\n",
                times[times.size() / 2], times.size());
  }
  std::printf("  output checksum        : %016llx\n",
              static_cast<unsigned long long>(tally.checksum));
  std::printf(
      "  reference check        : %d shapes checked, %d failed (worst error %.3g of the "
      "tolerance)\n",
      tally.checked, tally.failed, tally.max_error_ratio);
}

bool WriteWorkload(Runtime& rt, const std::string& path) {
  if (absl::Status s = rt.WriteWorkload(path); !s.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(s.message()).c_str());
    return false;
  }
  std::printf("  workload written to    : %s (pto tune --workload %s)\n", path.c_str(),
              path.c_str());
  return true;
}

int RunDemo(const CLI::App& command, DemoOptions& o) {
  if (!o.profile_shape.empty() && !ParseProfileShape(o)) {
    return UsageError(command,
                      "--profile expects BATCHxSEQ (e.g. 4x128), got '" + o.profile_shape + "'");
  }
  // PTO_CACHE_DIR, PTO_LOG and PTO_CHECK_NUMERICS as an embedder's users would set them; --cache
  // wins.
  absl::StatusOr<RuntimeOptions> env = RuntimeOptions::FromEnvironment();
  if (!env.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(env.status().message()).c_str());
    return 2;
  }
  if (o.runtime.cache_path.empty()) o.runtime.cache_path = env->cache_path;
  o.runtime.log_level = env->log_level;
  o.runtime.check_numerics |= env->check_numerics;
  o.runtime.record_workload = !o.workload_path.empty();
  o.runtime.log_sink = [](LogLevel level, std::string_view message) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(o.runtime);
  if (!rt.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  const BlockDims dims;
  const TraceFn block = TransformerBlock(dims);
  const std::vector<std::vector<int64_t>> weight_shapes = WeightShapes(dims);
  absl::StatusOr<std::unique_ptr<Function>> fn =
      JitBlock(**rt, block, static_cast<int>(weight_shapes.size()));
  if (!fn.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(fn.status().message()).c_str());
    return 1;
  }
  const std::vector<ops::HostTensor> weights = RandomWeights(weight_shapes);
  std::printf("pto demo: transformer block (model %lld, heads %lld, mlp %lld), %d iterations\n",
              static_cast<long long>(dims.model), static_cast<long long>(dims.heads),
              static_cast<long long>(dims.ff), o.iterations);
  if (!o.trace_path.empty()) {
    if (absl::Status s = (*rt)->StartTrace(o.trace_path); !s.ok()) {
      std::fprintf(stderr, "pto demo: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  DemoTally tally;
  for (int it = 0; it < o.iterations; ++it) {
    if (!RunIteration(**fn, block, dims, weights, it, tally)) return 1;
  }
  PrintSummary((*fn)->stats(), tally);
  if (o.kernel_times) PrintKernelTimes(**rt, tally.first_ms);
  if (!o.profile_shape.empty() &&
      !PrintProfile(**fn, o.profile_batch, o.profile_seq, dims.model, weights)) {
    return 1;
  }
  if (!o.trace_path.empty()) {
    if (absl::Status s = FinishTrace(**rt); !s.ok()) {
      std::fprintf(stderr, "pto demo: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  if (!o.workload_path.empty() && !WriteWorkload(**rt, o.workload_path)) return 1;
  std::printf("%s\n", tally.failed == 0 ? "PASS" : "FAIL");
  return tally.failed == 0 ? 0 : 1;
}

}  // namespace

void AddDemoCommand(CommandLine& cli) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* demo = cli.AddCommand(
      cli.root(), "demo", "a transformer block over varying shapes, checked against the reference",
      [o](const CLI::App& command) { return RunDemo(command, *o); });
  demo->footer(
      "Calls a transformer block on random weights over varying batch sizes and sequence\n"
      "lengths; prints compilations, the first call's time, the median time per iteration\n"
      "after it and a checksum of the outputs, and checks every distinct shape against the\n"
      "reference. Exit codes: 0 every shape matches, 1 a failure or a mismatch, 2 a usage error.");
  demo->add_option("--iterations", o->iterations, "calls of the block (default 60)")
      ->type_name("N");
  demo->add_option("--threads", o->runtime.intra_op_threads,
                   "threads a call runs on (default 0: all the process may use)")
      ->type_name("N");
  demo->add_option("--cache", o->runtime.cache_path,
                   "the kernel cache directory (default: memory only)")
      ->type_name("DIR");
  demo->add_option("--cache-base", o->runtime.cache_base_path,
                   "a read-only base cache under --cache")
      ->type_name("DIR");
  demo->add_flag("--kernel-times", o->kernel_times,
                 "each kernel's cold compile or warm load time, and the runtime's\n"
                 "and the cache's counters");
  demo->add_option("--record-workload", o->workload_path,
                   "write the shape classes called, with their call counts and times,\n"
                   "as a workload file for `pto tune --workload FILE`")
      ->type_name("FILE");
  demo->add_option("--profile", o->profile_shape,
                   "each kernel's median time over 50 calls at batch B, sequence S\n"
                   "(e.g. 4x128)")
      ->type_name("BxS");
  demo->add_flag("--checked-kernels", o->runtime.checked_kernels,
                 "bounds-checked kernels (RuntimeOptions::checked_kernels)");
  demo->add_option("--trace", o->trace_path,
                   "write a Chrome trace of the run (calls, kernels per thread, compiles);\n"
                   "open it at ui.perfetto.dev or chrome://tracing")
      ->type_name("FILE");
  demo->add_flag("--check-numerics", o->runtime.check_numerics,
                 "fail at the first NaN or infinity (RuntimeOptions::check_numerics)");
}

}  // namespace pto::tools
