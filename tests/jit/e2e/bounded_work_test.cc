// Bounded work for any program: the limits of jit/graph/limits.h as the tracer enforces them,
// fusion groups capped in cost (long chains become several kernels that still compute the
// right result), wide concats grouped into few kernels, and a 100,000-node graph through
// tracing, hashing, the text form, the reference and levels 1-4 on a thread with a small stack.
#include <pthread.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/function_impl.h"
#include "jit/graph/graph_hash.h"
#include "jit/graph/graph_text.h"
#include "jit/graph/limits.h"
#include "jit/kernel_compiler.h"
#include "jit/passes/fusion_policy.h"
#include "jit/pipeline.h"
#include "jit/plan.h"
#include "jit/reference_runner.h"
#include "jit/trace.h"
#include "ops/reference.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

// The limits agree with the arrays that hold what they bound.
static_assert(graph::kMaxInputs == detail::kMaxInputs);
static_assert(graph::kMaxOutputs <= detail::kMaxInputs);  // Function's output array
static_assert(graph::kMaxRank == kMaxRank);
static_assert(2 * graph::kMaxSymbols <= jit::kMaxSymbols);

// --- Limits of traced programs ---

absl::Status PrecompileError(const TraceFn& trace, std::vector<std::vector<int64_t>> shapes) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt->JitTraced("limits", static_cast<int>(shapes.size()), trace, {});
  if (!fn.ok()) return fn.status();
  return (*fn)->Precompile(shapes);
}

TEST(TracedLimitsTest, ConcatInputs) {
  absl::Status s = PrecompileError(
      [](std::span<const Value> v) {
        return std::vector<Value>{concat(std::vector<Value>(graph::kMaxConcatInputs + 1, v[0]), 0)};
      },
      {{2, 3}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "node 1 (concat): input count 16385 exceeds the limit kMaxConcatInputs = 16384");
}

TEST(TracedLimitsTest, ReshapeInts) {
  absl::Status s = PrecompileError(
      [](std::span<const Value> v) {
        return std::vector<Value>{reshape(v[0], std::vector<int64_t>(9, 1))};
      },
      {{1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node 1 (reshape): ints count 9 exceeds the limit kMaxRank = 8");
}

TEST(TracedLimitsTest, OutputCount) {
  absl::Status s = PrecompileError(
      [](std::span<const Value> v) { return std::vector<Value>(65, v[0] + 1.0f); }, {{4}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "the traced function's output count 65 exceeds the limit kMaxOutputs = 64");
}

TEST(TracedLimitsTest, StaticElements) {
  absl::Status s =
      PrecompileError([](std::span<const Value> v) { return std::vector<Value>{v[0] + 1.0f}; },
                      {{int64_t{1} << 30, int64_t{1} << 30}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "input 0: static element count 1152921504606846976 exceeds the limit "
            "kMaxStaticElements = 281474976710656");
}

TEST(TracedLimitsTest, NodeCount) {
  const TraceFn endless = [](std::span<const Value> v) {
    Value y = v[0];
    for (int64_t i = 0; i < graph::kMaxNodes; ++i) y = y + 1.0f;  // 2 nodes each
    return std::vector<Value>{y};
  };
  jit::TraceInput x;
  x.shape = {ir::SymExpr(1)};
  absl::StatusOr<ir::Graph> g = jit::Trace(endless, {&x, 1}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(),
            "the trace's node count 1048577 exceeds the limit kMaxNodes = 1048576");
}

TEST(TracedLimitsTest, LiveBuffers) {
  // 300 values that each need a buffer (two uses), all live until the sum at the end.
  const TraceFn program = [](std::span<const Value> v) {
    std::vector<Value> live;
    for (int i = 0; i < 300; ++i) live.push_back(v[0] * (0.5f + i));
    Value sum = live[0] * live[0];
    for (int i = 1; i < 300; ++i) sum = sum + live[i] * live[i];
    return std::vector<Value>{sum};
  };
  absl::StatusOr<jit::LoweredProgram> lowered = testing::LowerStatic(program, {{3, 5}});
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lowered.status().message(),
            "the program needs more than 256 intermediate buffers at once (kMaxArenaSlots); "
            "fewer values may be live at one time");
}

// --- Fusion groups capped in cost ---

// The cost of a kernel's expression programs (jit/passes/fusion_policy.h's units) and, for a
// kernel with several stores (a concat's copies), the stores too.
int KernelCost(const ir::Kernel& k, const jit::FusionOptions& options) {
  int cost = 0;
  for (const std::vector<ir::ExprNode>* program : {&k.input, &k.output}) {
    for (const ir::ExprNode& n : *program) {
      cost += ir::IsTranscendental(n.op) ? options.transcendental_cost : 1;
    }
  }
  if (k.stores.size() > 1) cost += static_cast<int>(k.stores.size()) * jit::kStoreCost;
  return cost;
}

// Lowers `trace` with `fusion`, checks every kernel against the cap, then compiles and runs
// the plan and compares it with the ops/ reference. Returns the kernel count.
int CheckCappedProgram(const TraceFn& trace, const std::vector<std::vector<int64_t>>& shapes,
                       const jit::FusionOptions& fusion, ops::Tolerance tol = {1e-5, 1e-5}) {
  absl::StatusOr<jit::LoweredProgram> lowered = testing::LowerStatic(trace, shapes, fusion);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return -1;
  for (const ir::KernelCall& call : lowered->tiles.calls) {
    EXPECT_LE(KernelCost(call.kernel, fusion), fusion.max_group_cost)
        << ir::KernelToString(call.kernel, {});
  }
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device::DetectHost());
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  absl::StatusOr<jit::BuiltPlan> built = jit::BuildPlan(*lowered, **compiler);
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return -1;
  const std::unique_ptr<jit::Plan>& plan = built->plan;
  std::vector<ops::HostTensor> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(ops::HostTensor::Random(shapes[i], 7 + i));
  }
  absl::StatusOr<std::vector<ops::HostTensor>> want = testing::RunReference(trace, inputs);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return -1;
  std::vector<void*> in;
  for (const ops::HostTensor& t : inputs) in.push_back(const_cast<float*>(t.data.data()));
  std::vector<ops::HostTensor> got = *want;
  std::vector<void*> out;
  for (ops::HostTensor& t : got) {
    std::fill(t.data.begin(), t.data.end(), -7.0f);
    out.push_back(t.data.data());
  }
  EXPECT_TRUE(plan->Run({}, in.data(), out.data(), nullptr).ok());
  EXPECT_EQ(testing::Compare(got, *want, tol), "");
  return static_cast<int>(lowered->tiles.calls.size());
}

// A chain that stays bounded: tanh, sigmoid and affine steps.
Value BoundedStep(Value y, int i) {
  switch (i % 3) {
    case 0:
      return tanh(y * 1.5f);
    case 1:
      return sigmoid(y) - 0.5f;
    default:
      return y * 0.75f + 0.1f;
  }
}

TraceFn BoundedChain(int steps) {
  return [steps](std::span<const Value> v) {
    Value y = v[0];
    for (int i = 0; i < steps; ++i) y = BoundedStep(y, i);
    return std::vector<Value>{y};
  };
}

TEST(FusionCapTest, LongChainIsSplitAndStillRight) {
  // 120 steps cost 640 (6, 6 and 4 a step, with their loads and constants): 3 kernels under
  // the default cap of 256.
  EXPECT_EQ(CheckCappedProgram(BoundedChain(120), {{5, 37}}, {}, {1e-4, 1e-4}), 3);
  // A small cap: many small kernels, the same result.
  EXPECT_GE(CheckCappedProgram(BoundedChain(30), {{5, 37}}, {.max_group_cost = 16}, {1e-4, 1e-4}),
            10);
}

TEST(FusionCapTest, BranchesAreCutLargestFirst) {
  // add(a: a mul and 12 tanh, b: 3 sigmoids): cost 1 + 51 + 13 = 65. Over a cap of 60, the
  // larger operand gets a buffer (one more kernel); the smaller stays inline.
  const TraceFn branches = [](std::span<const Value> v) {
    Value a = v[0] * 0.1f, b = v[1];
    for (int i = 0; i < 12; ++i) a = tanh(a);
    for (int i = 0; i < 3; ++i) b = sigmoid(b);
    return std::vector<Value>{a + b};
  };
  EXPECT_EQ(CheckCappedProgram(branches, {{4, 19}, {4, 19}}, {.max_group_cost = 60}), 2);
  // Under the cap as a whole: one kernel.
  EXPECT_EQ(CheckCappedProgram(branches, {{4, 19}, {4, 19}}, {.max_group_cost = 70}), 1);
}

TEST(FusionCapTest, EpilogueEndsAtTheCap) {
  // A matmul's epilogue of 40 ops, a reduction's prologue of 40, a layer norm's of 20 with
  // views (transposes) in the chains: each group is cut to the cap.
  const TraceFn program = [](std::span<const Value> v) {
    Value m = matmul(v[0], v[1]);
    for (int i = 0; i < 40; ++i) m = BoundedStep(m, i);
    Value r = v[2];
    for (int i = 0; i < 40; ++i) r = transpose(BoundedStep(r, i), 0, 1);
    Value n = v[3];
    for (int i = 0; i < 20; ++i) n = BoundedStep(n, i);
    return std::vector<Value>{m, reduce_sum(r, 1), layer_norm(n, v[4] * 2.0f, v[5] + 1.0f)};
  };
  const std::vector<std::vector<int64_t>> shapes = {{6, 8}, {8, 10}, {9, 9}, {3, 17}, {17}, {17}};
  EXPECT_GT(CheckCappedProgram(program, shapes, {.max_group_cost = 24}, {1e-4, 1e-4}), 10);
  EXPECT_EQ(CheckCappedProgram(program, shapes, {}, {1e-4, 1e-4}), 3);
}

// `n` inputs of one shape (some computed inline), then 3 of other lengths along the axis.
TraceFn WideConcat(int n) {
  return [n](std::span<const Value> v) {
    std::vector<Value> parts;
    for (int i = 0; i < n; ++i) parts.push_back(i % 3 == 0 ? v[0] : v[0] * (0.5f + i));
    parts.push_back(v[1]);
    parts.push_back(tanh(v[1]));
    parts.push_back(slice(v[0], 0, 1, 2));
    return std::vector<Value>{concat(parts, 0)};
  };
}

TEST(FusionCapTest, WideConcatIsGrouped) {
  const std::vector<std::vector<int64_t>> shapes = {{2, 33}, {5, 33}};
  // Copies of 9 or 11 units each (a load or a mul, and the store) under the default cap of
  // 256: 24 or 25 per kernel.
  const int kernels = CheckCappedProgram(WideConcat(200), shapes, {});
  EXPECT_GE(kernels, 8 + 2);
  EXPECT_LE(kernels, 9 + 2);
  // A cap that fits one copy per kernel: one kernel per input.
  EXPECT_EQ(CheckCappedProgram(WideConcat(10), shapes, {.max_group_cost = 12}), 13);
}

TEST(FusionCapTest, ConcatRunsAreOneKernelEach) {
  // 1,000 copies of x, the 40 rows of y one by one, tanh(x), the rows of y from the last
  // backwards, and the first 7 rows of y's transpose: one kernel for each of the 4 runs, and
  // one for tanh(x).
  const TraceFn program = [](std::span<const Value> v) {
    std::vector<Value> parts(1000, v[0]);
    for (int64_t r = 0; r < 40; ++r) parts.push_back(slice(v[1], 0, r, r + 1));
    parts.push_back(tanh(v[0]));  // computed: ends a run
    for (int64_t r = 39; r >= 0; --r) parts.push_back(slice(v[1], 0, r, r + 1));
    const Value yt = transpose(v[1], 0, 1);
    for (int64_t r = 0; r < 7; ++r) parts.push_back(slice(yt, 0, r, r + 1));
    return std::vector<Value>{concat(parts, 0)};
  };
  EXPECT_EQ(CheckCappedProgram(program, {{1, 40}, {40, 40}}, {}), 5);
}

// --- A deep graph on a small stack ---

// Runs `f` on a thread with a stack of `bytes` and waits for it.
void RunOnSmallStack(size_t bytes, const std::function<void()>& f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, body, const_cast<std::function<void()>*>(&f)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(DeepGraphTest, HundredThousandNodesOnASmallStack) {
  constexpr int kNodes = 100000;
  const TraceFn deep = [](std::span<const Value> v) {
    Value y = v[0];
    for (int i = 0; i < kNodes / 2; ++i) y = transpose(tanh(y), 0, 1);
    return std::vector<Value>{y};
  };
  const std::vector<std::vector<int64_t>> shapes = {{6, 6}};
  RunOnSmallStack(256 << 10, [&] {
    jit::TraceInput x;
    x.shape = {ir::SymExpr(6), ir::SymExpr(6)};
    absl::StatusOr<ir::Graph> g = jit::Trace(deep, {&x, 1}, {});
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_EQ(g->nodes.size(), static_cast<size_t>(kNodes + 1));
    // The hash and the text form.
    const graph::GraphHash hash = graph::CanonicalGraphHash(*g);
    absl::StatusOr<ir::Graph> back = graph::ParseGraphText(graph::GraphToText(*g));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(graph::CanonicalGraphHash(*back), hash);
    // The reference.
    const std::vector<ops::HostTensor> inputs = {ops::HostTensor::Random({6, 6}, 3)};
    absl::StatusOr<std::vector<ops::HostTensor>> want = ops::RunReference(*g, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    // Levels 1-4: canonicalize, CSE, DCE, fusion, the tile graph, schedule, buffers.
    absl::StatusOr<jit::LoweredProgram> lowered = testing::LowerStatic(deep, shapes);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    // Kernels of at most 64 tanh (cost 4 each under the cap of 256).
    EXPECT_GE(lowered->tiles.calls.size(), static_cast<size_t>(kNodes / 2 / 64));
  });
}

}  // namespace
}  // namespace pto
