// pto_bench_call_overhead: what a warm call costs above its kernels' own time.
//   (1) Function call: validation, dispatch-table lookup, symbol binding, plan execution;
//   (2) the same kernels called directly with pre-bound arguments (the kernels' own time);
//   overhead = (1) - (2), on the caller's thread (intra_op_threads = 1);
//   (3) a BoundCall (Function::Bind) of the same views, called with their data pointers, and
//   its overhead (3) - (2).
// And separately the cost of one parallel launch (an empty 2-D parallel loop on the arena), and
// the call while the Runtime records a trace (Runtime::StartTrace: a call event and an event per
// kernel piece), written to a temporary file and removed.
// Prints medians over repetitions (the machine is shared and noisy) as a table.
// --filter SUBSTR runs only the cases whose name contains it, and none of the rest (the demo
// block, the parallel launch): one case's warm calls alone, for a profiler.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "device/aligned_buffer.h"
#include "device/device_info.h"
#include "device/thread_arena.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/trace.h"
#include "pto/pto.h"
#include "tools/pto/transformer_block.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double MedianNanosPerCall(F&& f, int calls, int reps) {
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    per_call.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                       calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

// The demo's block at batch 4, seq 32 on every core: median ms per call without and with a
// trace being recorded, interleaved in rounds (the machine is shared: a slow moment hits
// both).
bool TracedDemoBlock() {
  using namespace pto;
  const tools::BlockDims dims;
  auto rt = Runtime::Open({});
  if (!rt.ok()) return false;
  FunctionOptions options;
  const std::vector<std::vector<int64_t>> weights = tools::WeightShapes(dims);
  for (size_t i = 1; i <= weights.size(); ++i) options.constant_inputs.push_back(i);
  auto fn = (*rt)->JitTraced("transformer_block", 1 + static_cast<int>(weights.size()),
                             tools::TransformerBlock(dims), options);
  if (!fn.ok()) return false;
  std::vector<std::vector<int64_t>> shapes = {{4, 32, dims.model}};
  shapes.insert(shapes.end(), weights.begin(), weights.end());
  std::vector<std::vector<float>> data;
  std::vector<TensorView> in;
  for (const auto& s : shapes) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    data.emplace_back(n, 0.01f);
    in.push_back(TensorView::Dense(data.back().data(), s));
  }
  std::vector<float> out_data(4 * 32 * dims.model);
  const TensorView out = TensorView::Dense(out_data.data(), {4, 32, dims.model});
  if (!(**fn)(in, {&out, 1}).ok()) return false;
  const std::string trace_path = "/tmp/pto_bench_call_overhead_demo_trace.json";
  std::vector<double> off, on;
  for (int round = 0; round < 10; ++round) {
    off.push_back(MedianNanosPerCall([&] { (void)(**fn)(in, {&out, 1}); }, 200, 1) * 1e-6);
    if (!(*rt)->StartTrace(trace_path).ok()) return false;
    on.push_back(MedianNanosPerCall([&] { (void)(**fn)(in, {&out, 1}); }, 200, 1) * 1e-6);
    if (!(*rt)->StopTrace().ok()) return false;
  }
  std::remove(trace_path.c_str());
  std::sort(off.begin(), off.end());
  std::sort(on.begin(), on.end());
  std::printf(
      "\ndemo block 4x32, %d threads, median of 10 rounds of 200 calls: %.3f ms per call, "
      "%.3f ms while tracing\n",
      device::DetectHost().cores, off[off.size() / 2], on[on.size() / 2]);
  return true;
}

struct Case {
  std::string name;
  pto::TraceFn trace;
  std::vector<std::vector<int64_t>> shapes;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace pto;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else {
      std::fprintf(stderr, "usage: pto_bench_call_overhead [--filter SUBSTR]\n");
      return 2;
    }
  }
  std::vector<Case> cases = {
      {"x+1 on [1]",
       [](std::span<const Value> v) { return std::vector<Value>{v[0] + 1.0f}; },
       {{1}}},
      {"3 kernels on [4,8]",
       [](std::span<const Value> v) {
         return std::vector<Value>{softmax(matmul(v[0], v[1])) + reduce_sum(v[0], 1, true)};
       },
       {{4, 8}, {8, 8}}},
  };
  // The small matmuls of the kernel bench, here with their operands in the L1.
  for (auto [m, k, n] : {std::array<int64_t, 3>{23, 29, 31},
                         {64, 64, 64},
                         {17, 33, 65},
                         {48, 96, 40},
                         {100, 100, 100},
                         {128, 27, 128}}) {
    cases.push_back(
        {"matmul " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n),
         [](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1])}; },
         {{m, k}, {k, n}}});
  }
  device::DeviceInfo device = device::DetectHost();
  auto compiler = jit::KernelCompiler::Create(device);
  auto rt = Runtime::Open({.intra_op_threads = 1});
  if (!compiler.ok() || !rt.ok()) {
    std::fprintf(stderr, "set-up failed\n");
    return 1;
  }
  std::printf("%-22s %8s %10s %11s %12s %10s %15s %10s\n", "graph", "kernels", "call ns",
              "kernels ns", "overhead ns", "bound ns", "bound over. ns", "traced ns");
  for (const Case& c : cases) {
    if (c.name.find(filter) == std::string::npos) continue;
    std::vector<std::vector<float>> data;
    std::vector<TensorView> in;
    for (const auto& s : c.shapes) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      data.emplace_back(n, 0.5f);
      in.push_back(TensorView::Dense(data.back().data(), s));
    }
    auto fn = (*rt)->JitTraced(c.name, static_cast<int>(in.size()), c.trace, {});
    auto out_shapes = (*fn)->OutputShapes(c.shapes);
    std::vector<std::vector<float>> out_data;
    std::vector<TensorView> out;
    for (const auto& s : *out_shapes) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      out_data.emplace_back(n);
      out.push_back(TensorView::Dense(out_data.back().data(), s));
    }
    if (!(**fn)(in, out).ok()) return 1;
    const double call = MedianNanosPerCall([&] { (void)(**fn)(in, out); }, 20000, 15);
    absl::StatusOr<BoundCall> bound_call = (*fn)->Bind(in, out);
    if (!bound_call.ok()) return 1;
    std::vector<const void*> in_data;
    std::vector<void*> out_data_ptrs;
    for (const TensorView& v : in) in_data.push_back(v.data);
    for (const TensorView& v : out) out_data_ptrs.push_back(v.data);
    const double bound_ns =
        MedianNanosPerCall([&] { (void)(*bound_call)(in_data, out_data_ptrs); }, 20000, 15);
    const std::string trace_path = "/tmp/pto_bench_call_overhead_trace.json";
    if (!(*rt)->StartTrace(trace_path).ok()) return 1;
    const double traced = MedianNanosPerCall([&] { (void)(**fn)(in, out); }, 2000, 15);
    if (!(*rt)->StopTrace().ok()) return 1;
    std::remove(trace_path.c_str());
    // The same kernels, bound once and called directly.
    std::vector<jit::TraceInput> trace_inputs;
    for (const auto& s : c.shapes) {
      jit::TraceInput t;
      for (int64_t d : s) t.shape.push_back(ir::SymExpr(d));
      trace_inputs.push_back(t);
    }
    auto graph = jit::Trace(c.trace, trace_inputs, {});
    jit::PipelineOptions options;
    options.device = &device;
    auto lowered = jit::Lower(*graph, jit::ShapeClass{}, options);
    auto built = jit::BuildPlan(*lowered, **compiler);
    const std::unique_ptr<jit::Plan>& plan = built->plan;
    std::vector<float> arena(1 << 16);
    struct Bound {
      pto_kernel_fn fn;
      std::vector<void*> buffers;
      int64_t hi[2];
      void* scratch;
    };
    // The scratch Plan::Run would give each kernel (a matmul packs B there, or reads B in
    // place without it).
    int64_t scratch_bytes = 0;
    for (const jit::PlanKernel& k : plan->kernels) {
      scratch_bytes = std::max(scratch_bytes, k.scratch_bytes);
    }
    device::AlignedBuffer scratch(static_cast<size_t>(scratch_bytes));
    std::vector<Bound> bound;
    for (const jit::PlanKernel& k : plan->kernels) {
      Bound b{k.fn,
              {},
              {k.grid[0].Evaluate({}), k.grid[1].Evaluate({})},
              k.scratch_bytes > 0 ? scratch.data() : nullptr};
      for (const jit::BufferRef& r : k.buffers) {
        b.buffers.push_back(r.kind == ir::BufferKind::kInput    ? in[r.index].data
                            : r.kind == ir::BufferKind::kOutput ? out[r.index].data
                                                                : arena.data() + 4096 * r.index);
      }
      bound.push_back(std::move(b));
    }
    const int64_t lo[2] = {0, 0};
    const double kernels = MedianNanosPerCall(
        [&] {
          for (const Bound& b : bound) {
            const pto_kernel_args args{b.buffers.data(), nullptr};
            b.fn(&args, lo, b.hi, b.scratch);
          }
        },
        20000, 15);
    std::printf("%-22s %8zu %10.1f %11.1f %12.1f %10.1f %15.1f %10.1f\n", c.name.c_str(),
                bound.size(), call, kernels, call - kernels, bound_ns, bound_ns - kernels, traced);
  }
  if (!filter.empty()) return 0;
  if (!TracedDemoBlock()) return 1;
  device::ThreadArena arena(std::max(2, device.cores));
  const int64_t extent[2] = {arena.threads(), 1}, grain[2] = {1, 1};
  const double launch = MedianNanosPerCall(
      [&] { arena.ParallelFor2D(extent, grain, [](const int64_t*, const int64_t*) {}); }, 20000,
      15);
  std::printf("\nparallel launch (empty 2-D loop over %d threads): %.1f ns median\n",
              arena.threads(), launch);
  return 0;
}
