// pto_bench_check_numerics: what FunctionOptions::check_numerics costs. The demo's transformer
// block (weights constant, as `pto demo` declares them) at a few (batch, seq) sizes, called by
// two Functions of one Runtime, one checking and one not, interleaved call by call; prints the
// median time per call of each over the repetitions and their ratio. See docs/performance.md.
//
//   pto_bench_check_numerics [--reps 41] [--threads 0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "ops/host_tensor.h"
#include "pto/pto.h"
#include "tools/pto/transformer_block.h"

namespace pto::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::unique_ptr<Function> BlockFunction(Runtime& rt, const tools::BlockDims& dims, int weights,
                                        bool check) {
  FunctionOptions o;
  o.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, 1024)}};
  for (int i = 1; i <= weights; ++i) o.constant_inputs.push_back(i);
  o.check_numerics = check;
  absl::StatusOr<std::unique_ptr<Function>> fn = rt.JitTraced(
      check ? "block_checked" : "block", weights + 1, tools::TransformerBlock(dims), std::move(o));
  return fn.ok() ? *std::move(fn) : nullptr;
}

int Main(int argc, char** argv) {
  int64_t reps = 41, threads = 0;
  bool ok = argc % 2 == 1;
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    int64_t* target = arg == "--reps" ? &reps : arg == "--threads" ? &threads : nullptr;
    ok = target != nullptr && absl::SimpleAtoi(argv[i + 1], target);
  }
  if (!ok || reps < 1 || threads < 0) {
    std::fprintf(stderr, "usage: pto_bench_check_numerics [--reps N] [--threads N]\n");
    return 2;
  }
  RuntimeOptions options;
  options.intra_op_threads = static_cast<int>(threads);
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) {
    std::fprintf(stderr, "%s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  const tools::BlockDims dims;
  const std::vector<std::vector<int64_t>> weight_shapes = tools::WeightShapes(dims);
  std::vector<ops::HostTensor> weights;
  for (size_t i = 0; i < weight_shapes.size(); ++i) {
    weights.push_back(ops::HostTensor::Random(weight_shapes[i], 100 + i, -0.1f, 0.1f));
  }
  const int num_weights = static_cast<int>(weights.size());
  std::unique_ptr<Function> plain = BlockFunction(**rt, dims, num_weights, false);
  std::unique_ptr<Function> checked = BlockFunction(**rt, dims, num_weights, true);
  if (plain == nullptr || checked == nullptr) return 1;
  std::printf(
      "transformer block (model %lld, heads %lld, ff %lld), intra_op_threads %lld, "
      "median of %lld calls each\n",
      static_cast<long long>(dims.model), static_cast<long long>(dims.heads),
      static_cast<long long>(dims.ff), static_cast<long long>(threads),
      static_cast<long long>(reps));
  std::printf("  %-12s %12s %12s %8s\n", "batch x seq", "off ms", "on ms", "on/off");
  for (const auto& [batch, seq] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 16}, {4, 64}, {4, 128}, {8, 256}}) {
    ops::HostTensor x = ops::HostTensor::Random({batch, seq, dims.model}, 7);
    std::vector<TensorView> in = {TensorView::Dense(x.data.data(), x.shape)};
    for (const ops::HostTensor& w : weights)
      in.push_back(TensorView::Dense(w.data.data(), w.shape));
    std::vector<float> out_plain(x.data.size()), out_checked(x.data.size());
    const TensorView out_p = TensorView::Dense(out_plain.data(), x.shape);
    const TensorView out_c = TensorView::Dense(out_checked.data(), x.shape);
    auto time = [&](Function& fn, const TensorView& out) -> double {
      const auto start = Clock::now();
      absl::Status s = fn(in, {&out, 1});
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return -1;
      }
      return ms;
    };
    // Warm-up: compiles both classes (the same kernels: the second loads them).
    for (int i = 0; i < 3; ++i) {
      if (time(*plain, out_p) < 0 || time(*checked, out_c) < 0) return 1;
    }
    if (out_plain != out_checked) {
      std::fprintf(stderr, "checked and unchecked results differ at %lldx%lld\n",
                   static_cast<long long>(batch), static_cast<long long>(seq));
      return 1;
    }
    std::vector<double> off, on;
    for (int64_t r = 0; r < reps; ++r) {
      off.push_back(time(*plain, out_p));
      on.push_back(time(*checked, out_c));
    }
    const double off_ms = Median(off), on_ms = Median(on);
    std::printf("  %-12s %12.3f %12.3f %8.3f\n",
                (std::to_string(batch) + " x " + std::to_string(seq)).c_str(), off_ms, on_ms,
                on_ms / off_ms);
  }
  return 0;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) { return pto::bench::Main(argc, argv); }
