// `pto demo`: a transformer block on random weights, called in a loop over varying batch sizes
// and sequence lengths; prints compilations, the first call's time, the median time per
// iteration after it, a checksum of every output, and checks outputs against the ops/
// reference. `--kernel-times` adds a table of every kernel's cold compile or warm load time
// and the runtime's and the cache's counters. `--record-workload FILE` writes the shape classes
// called, with their call counts and times, as a workload file for `pto tune --workload`.
// `--profile BxS` (e.g. 4x128) adds where a call's time goes at batch B, sequence S: each kernel
// of the plan with its median time over 50 calls (Function::Profile). `--checked-kernels`
// runs bounds-checked kernels (RuntimeOptions::checked_kernels).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "jit/reference_runner.h"
#include "ops/tolerance.h"
#include "pto/pto.h"
#include "tools/pto/commands.h"
#include "tools/pto/flags.h"
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
bool PrintProfile(Function& fn, const std::string& shape, int64_t model,
                  const std::vector<ops::HostTensor>& weights) {
  long long b = 0, s = 0;
  char end = 0;
  if (std::sscanf(shape.c_str(), "%lldx%lld%c", &b, &s, &end) != 2 || b < 1 || s < 1) {
    std::fprintf(stderr, "pto demo: --profile expects BATCHxSEQ (e.g. 4x128), got '%s'\n",
                 shape.c_str());
    return false;
  }
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
  std::printf("profile at batch %lld, seq %lld (median of 50 calls per kernel):\n", b, s);
  std::printf("  %-56s %10s %7s\n", "kernel", "us", "share");
  double total = 0;
  for (const KernelProfile& k : *profile) {
    std::printf("  %-56s %10.1f %6.1f%%\n", k.kernel.c_str(), k.seconds * 1e6, k.share * 100);
    total += k.seconds;
  }
  std::printf("  %-56s %10.1f\n", "total", total * 1e6);
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

}  // namespace

int DemoCommand(const std::vector<std::string>& args) {
  Flags flags(args);
  const int iterations = static_cast<int>(flags.Int("iterations", 60));
  const int threads = static_cast<int>(flags.Int("threads", 0));
  const std::string cache = flags.String("cache");
  const std::string cache_base = flags.String("cache-base");
  const std::string workload_path = flags.String("record-workload");
  const std::string kernel_times_flag = flags.String("kernel-times");
  const std::string profile_shape = flags.String("profile");
  const bool kernel_times =
      !kernel_times_flag.empty() && kernel_times_flag != "false" && kernel_times_flag != "0";
  const std::string checked_flag = flags.String("checked-kernels");
  if (!flags.CheckAllUsed("demo") || !flags.ok()) return flags.Fail("demo");
  RuntimeOptions options;
  options.intra_op_threads = threads;
  options.checked_kernels = !checked_flag.empty() && checked_flag != "false" && checked_flag != "0";
  options.cache_path = cache;
  options.cache_base_path = cache_base;
  options.record_workload = !workload_path.empty();
  options.log_sink = [](LogLevel level, std::string_view message) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  const BlockDims dims;
  const TraceFn block = TransformerBlock(dims);
  const std::vector<std::vector<int64_t>> weight_shapes = WeightShapes(dims);
  FunctionOptions fopts;
  fopts.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, 1024)}};
  for (int i = 1; i <= static_cast<int>(weight_shapes.size()); ++i)
    fopts.constant_inputs.push_back(i);
  absl::StatusOr<std::unique_ptr<Function>> fn = (*rt)->JitTraced(
      "transformer_block", 1 + static_cast<int>(weight_shapes.size()), block, fopts);
  if (!fn.ok()) {
    std::fprintf(stderr, "pto demo: %s\n", std::string(fn.status().message()).c_str());
    return 1;
  }
  std::vector<ops::HostTensor> weights;
  for (size_t i = 0; i < weight_shapes.size(); ++i) {
    const bool norm_weight = i == 0 || i == 6;
    weights.push_back(norm_weight
                          ? ops::HostTensor::Random(weight_shapes[i], 100 + i, 0.9f, 1.1f)
                          : ops::HostTensor::Random(weight_shapes[i], 100 + i, -0.1f, 0.1f));
  }
  const int64_t batches[] = {1, 2, 3, 4, 8};
  const int64_t seqs[] = {7, 16, 32, 50, 64, 100, 128};
  std::printf("pto demo: transformer block (model %lld, heads %lld, mlp %lld), %d iterations\n",
              static_cast<long long>(dims.model), static_cast<long long>(dims.heads),
              static_cast<long long>(dims.ff), iterations);
  std::vector<double> times;
  double first_ms = 0, max_error_ratio = 0;
  int checked = 0, failed = 0;
  uint64_t checksum = 0xcbf29ce484222325ull;
  std::map<std::pair<int64_t, int64_t>, bool> seen;
  for (int it = 0; it < iterations; ++it) {
    const int64_t b = batches[(it * 7 / 5) % 5], s = seqs[(it * 3) % 7];
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
    absl::Status status = (**fn)(views, {&out_view, 1});
    const double ms = Millis(Clock::now() - start);
    if (!status.ok()) {
      std::fprintf(stderr, "pto demo: call %d failed: %s\n", it,
                   std::string(status.message()).c_str());
      return 1;
    }
    checksum = Fnv1a(out.data, checksum);
    if (it == 0) {
      first_ms = ms;
    } else {
      times.push_back(ms);
    }
    if (!seen[{b, s}]) {  // check every distinct shape once against the reference
      seen[{b, s}] = true;
      absl::StatusOr<std::vector<ops::HostTensor>> want = jit::RunReferenceOf(block, inputs);
      if (!want.ok()) {
        std::fprintf(stderr, "pto demo: reference failed: %s\n",
                     std::string(want.status().message()).c_str());
        return 1;
      }
      const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, dims.ff),
                                              ops::OpTolerance(ir::OpKind::kLayerNorm, dims.model));
      std::string mismatch;
      ++checked;
      if (!ops::AllClose(out, (*want)[0], tol, &mismatch)) {
        ++failed;
        std::fprintf(stderr, "pto demo: batch %lld seq %lld: %s\n", static_cast<long long>(b),
                     static_cast<long long>(s), mismatch.c_str());
      }
      for (size_t i = 0; i < out.data.size(); ++i) {
        const double err = std::abs(out.data[i] - (*want)[0].data[i]);
        const double bound = tol.abs + tol.rel * std::abs((*want)[0].data[i]);
        max_error_ratio = std::max(max_error_ratio, err / bound);
      }
    }
  }
  std::sort(times.begin(), times.end());
  const FunctionStats st = (*fn)->stats();
  std::printf(
      "  shape classes compiled : %lld (kernels compiled: %lld, loaded from cache: %lld, %.0f "
      "ms)\n",
      static_cast<long long>(st.compiles), static_cast<long long>(st.kernels_compiled),
      static_cast<long long>(st.kernels_loaded), st.compile_seconds * 1000);
  std::printf("  first call (%s)      : %.1f ms\n",
              st.kernels_compiled == 0 && st.kernels_loaded > 0 ? "warm" : "cold", first_ms);
  if (!times.empty()) {
    std::printf("  median per iteration   : %.3f ms over %zu iterations after the first\n",
                times[times.size() / 2], times.size());
  }
  std::printf("  output checksum        : %016llx\n", static_cast<unsigned long long>(checksum));
  std::printf(
      "  reference check        : %d shapes checked, %d failed (worst error %.3g of the "
      "tolerance)\n",
      checked, failed, max_error_ratio);
  if (kernel_times) PrintKernelTimes(**rt, first_ms);
  if (!profile_shape.empty() && !PrintProfile(**fn, profile_shape, dims.model, weights)) return 1;
  if (!workload_path.empty()) {
    if (absl::Status s = (*rt)->WriteWorkload(workload_path); !s.ok()) {
      std::fprintf(stderr, "pto demo: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("  workload written to    : %s (pto tune --workload %s)\n", workload_path.c_str(),
                workload_path.c_str());
  }
  std::printf("%s\n", failed == 0 ? "PASS" : "FAIL");
  return failed == 0 ? 0 : 1;
}

}  // namespace pto::tools
