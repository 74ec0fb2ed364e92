// gather and scatter_add end to end: compiled against loops written here (numpy's take with
// NaN for an index outside [0, n), negative included; scatter_add's in-order sums with
// out-of-range indices dropped), on odd widths, size-1 dims and repeated indices; scatter_add
// bitwise equal across thread counts and runs; an embedding lookup with a symbolic batch; the
// errors. scatter_add is not public: it is the gradient of gather (a VJP gives it exactly),
// compiled as a kernel of its own kind.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/graph/graph_def.h"
#include "jit/trace.h"
#include "ops/graph_builder.h"
#include "ops/host_tensor.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::testing {
namespace {

using ops::HostTensor;
using Shape = std::vector<int64_t>;

int64_t Count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Split {
  int64_t pre = 1, n = 1, post = 1;
};
Split SplitAt(const Shape& s, int axis) {
  Split r;
  for (int i = 0; i < axis; ++i) r.pre *= s[i];
  r.n = s[axis];
  for (size_t i = axis + 1; i < s.size(); ++i) r.post *= s[i];
  return r;
}

Shape GatherShape(const Shape& x, const Shape& indices, int axis) {
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  return out;
}

std::vector<float> ExpectedGather(const HostTensor& x, const std::vector<int32_t>& idx, int axis) {
  const Split s = SplitAt(x.shape, axis);
  std::vector<float> y;
  for (int64_t p = 0; p < s.pre; ++p) {
    for (int32_t j : idx) {
      for (int64_t q = 0; q < s.post; ++q) {
        y.push_back(j >= 0 && j < s.n ? x.data[(p * s.n + j) * s.post + q]
                                      : std::numeric_limits<float>::quiet_NaN());
      }
    }
  }
  return y;
}

std::vector<float> ExpectedScatterAdd(const Shape& like, const HostTensor& updates,
                                      const std::vector<int32_t>& idx, int axis) {
  const Split s = SplitAt(like, axis);
  const int64_t m = static_cast<int64_t>(idx.size());
  std::vector<float> y(Count(like), 0.0f);
  for (int64_t p = 0; p < s.pre; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      if (idx[i] < 0 || idx[i] >= s.n) continue;
      for (int64_t q = 0; q < s.post; ++q) {
        y[(p * s.n + idx[i]) * s.post + q] += updates.data[(p * m + i) * s.post + q];
      }
    }
  }
  return y;
}

// NaN equal to NaN, otherwise bitwise.
void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i << ": " << got[i];
      continue;
    }
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    EXPECT_EQ(a, b) << what << " element " << i << ": " << got[i] << " vs " << want[i];
    if (a != b) return;
  }
}

std::vector<int32_t> RandomIndices(int64_t count, int32_t n, std::mt19937& rng, bool out_of_range) {
  std::uniform_int_distribution<int32_t> in(0, n - 1), any(-3, n + 2);
  std::vector<int32_t> v(count);
  for (int32_t& x : v) x = out_of_range ? any(rng) : in(rng);
  return v;
}

struct Case {
  Shape x;
  Shape indices;
  int axis;
  bool out_of_range;
};

std::vector<Case> Cases() {
  return {{{11, 5}, {3, 4}, 0, false},     {{4, 6, 3}, {5}, 1, true}, {{7, 1}, {9}, 0, true},
          {{1, 13}, {2, 3}, 1, true},      {{3, 37}, {40}, 1, false}, {{5, 3, 19}, {2, 1}, 0, true},
          {{2, 9, 1, 4}, {6}, 2, true},    {{6, 17}, {}, 0, true},    {{33}, {70}, 0, true},
          {{2, 3, 4}, {1, 1, 1}, -1, true}};
}

TEST(Gather, MatchesTakeWithNaNOutOfRange) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  std::mt19937 rng(3);
  uint64_t seed = 10;
  for (const Case& c : Cases()) {
    const int axis = c.axis < 0 ? c.axis + static_cast<int>(c.x.size()) : c.axis;
    auto fn = rt->Jit("gather", [&c](Value x, Value i) { return gather(x, i, c.axis); });
    ASSERT_TRUE(fn.ok()) << fn.status();
    const HostTensor x = HostTensor::Random(c.x, ++seed);
    std::vector<int32_t> idx =
        RandomIndices(Count(c.indices), static_cast<int32_t>(c.x[axis]), rng, c.out_of_range);
    if (c.out_of_range && idx.size() > 2) {
      idx[0] = -1;
      idx[1] = static_cast<int32_t>(c.x[axis]);
    }
    absl::StatusOr<std::vector<HostTensor>> out =
        RunPto(**fn, {x, HostTensor::I32(c.indices, idx)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, GatherShape(c.x, c.indices, axis));
    ExpectSameBits((*out)[0].data, ExpectedGather(x, idx, axis),
                   "gather " + x.ShapeString() + " axis " + std::to_string(axis));
    // The ops/ reference agrees (NaN where the loops above put it).
    absl::StatusOr<std::vector<HostTensor>> ref = RunReference(
        [&c](std::span<const Value> v) { return std::vector<Value>{gather(v[0], v[1], c.axis)}; },
        {x, HostTensor::I32(c.indices, idx)});
    ASSERT_TRUE(ref.ok()) << ref.status();
    ExpectSameBits((*ref)[0].data, ExpectedGather(x, idx, axis), "reference");
  }
}

// d/dx of gather(x, i) against cotangent u is scatter_add(x, u, i).
absl::StatusOr<std::unique_ptr<Function>> ScatterAddFunction(Runtime& rt, int axis) {
  return rt.JitGrad("scatter", [axis](Value x, Value i) { return gather(x, i, axis); },
                    {.wrt = {0}, .cotangents = 1});
}

TEST(ScatterAdd, SumsInIndexOrderAndDropsOutOfRange) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  std::mt19937 rng(5);
  uint64_t seed = 50;
  for (const Case& c : Cases()) {
    const int axis = c.axis < 0 ? c.axis + static_cast<int>(c.x.size()) : c.axis;
    auto fn = ScatterAddFunction(*rt, c.axis);
    ASSERT_TRUE(fn.ok()) << fn.status();
    const HostTensor x = HostTensor::Random(c.x, ++seed);
    std::vector<int32_t> idx =
        RandomIndices(Count(c.indices), static_cast<int32_t>(c.x[axis]), rng, c.out_of_range);
    const HostTensor u = HostTensor::Random(GatherShape(c.x, c.indices, axis), ++seed, -10, 10);
    absl::StatusOr<std::vector<HostTensor>> out =
        RunPto(**fn, {x, HostTensor::I32(c.indices, idx), u});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[1].shape, c.x);
    ExpectSameBits((*out)[1].data, ExpectedScatterAdd(c.x, u, idx, axis),
                   "scatter_add " + x.ShapeString() + " axis " + std::to_string(axis));
  }
}

// Rows of 150 columns: the scatter_add kernel splits them into column tasks (of 64), each
// walking all 300 positions; the sums must not depend on the split.
TEST(ScatterAdd, BitwiseEqualAcrossThreadCountsAndRunsWithManyRepeats) {
  const Shape x_shape = {7, 150};
  const Shape idx_shape = {300};
  std::mt19937 rng(9);
  std::vector<int32_t> idx = RandomIndices(Count(idx_shape), 7, rng, false);
  const HostTensor x = HostTensor::Random(x_shape, 1);
  // Values of very different magnitudes: any change of the summation order shows.
  HostTensor u = HostTensor::Random({300, 150}, 2, -1, 1);
  for (size_t i = 0; i < u.data.size(); i += 7) u.data[i] *= 1e6f;
  const std::vector<float> want = ExpectedScatterAdd(x_shape, u, idx, 0);
  for (int threads : {1, 2, 2}) {
    std::unique_ptr<Runtime> rt = OpenRuntime({.intra_op_threads = threads});
    auto fn = ScatterAddFunction(*rt, 0);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<std::vector<HostTensor>> out =
          RunPto(**fn, {x, HostTensor::I32(idx_shape, idx), u});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectSameBits((*out)[1].data, want, "threads " + std::to_string(threads));
    }
  }
}

// The gradient of an embedding lookup is one kernel of the scatter_add kind (not a reduction
// over the vocabulary), checked or not; rows before the axis (axis 1) are its grid's rows.
TEST(ScatterAdd, IsOneScatterKernelCheckedAndUnchecked) {
  std::mt19937 rng(13);
  for (bool checked : {false, true}) {
    for (int axis : {0, 1}) {
      std::unique_ptr<Runtime> rt = OpenRuntime({.checked_kernels = checked});
      const Shape x_shape = axis == 0 ? Shape{50, 70} : Shape{3, 50, 70};
      const Shape idx_shape = {4, 9};
      auto fn = ScatterAddFunction(*rt, axis);
      ASSERT_TRUE(fn.ok()) << fn.status();
      const HostTensor x = HostTensor::Random(x_shape, 3);
      std::vector<int32_t> idx = RandomIndices(Count(idx_shape), 50, rng, /*out_of_range=*/true);
      const HostTensor u = HostTensor::Random(GatherShape(x_shape, idx_shape, axis), 4);
      absl::StatusOr<std::vector<HostTensor>> out =
          RunPto(**fn, {x, HostTensor::I32(idx_shape, idx), u});
      ASSERT_TRUE(out.ok()) << out.status();
      const std::string what =
          (checked ? "checked" : "unchecked") + std::string(" axis ") + std::to_string(axis);
      ExpectSameBits((*out)[1].data, ExpectedScatterAdd(x_shape, u, idx, axis), what);
      int scatter_kernels = 0;
      for (const KernelEvent& e : rt->kernel_events()) {
        if (e.kernel.rfind("f32_scatter_add", 0) == 0) ++scatter_kernels;
      }
      EXPECT_EQ(scatter_kernels, 1) << what;
    }
  }
}

// Token embedding plus position embedding: tokens i32 [batch, seq] -> [batch, seq, dim], one
// kernel (the gather feeds the add), batch symbolic.
TEST(Gather, EmbeddingLookupWithASymbolicBatchIsOneKernel) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  Dim batch("batch", 1, 64);
  const int64_t vocab = 50, seq = 6, dim = 19;
  auto fn = rt->Jit("embed",
                    [](Value tokens, Value table, Value positions) {
                      return gather(table, tokens, 0) + positions;
                    },
                    {.dynamic = {{0, 0, batch}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const HostTensor table = HostTensor::Random({vocab, dim}, 7);
  const HostTensor pos = HostTensor::Random({seq, dim}, 8);
  std::mt19937 rng(11);
  for (int64_t b : {3, 5, 17}) {
    std::vector<int32_t> tokens = RandomIndices(b * seq, vocab, rng, false);
    absl::StatusOr<std::vector<HostTensor>> out =
        RunPto(**fn, {HostTensor::I32({b, seq}, tokens), table, pos});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, (Shape{b, seq, dim}));
    std::vector<float> want = ExpectedGather(table, tokens, 0);
    for (size_t i = 0; i < want.size(); ++i) want[i] += pos.data[i % (seq * dim)];
    ExpectSameBits((*out)[0].data, want, "batch " + std::to_string(b));
    if (b == 3) {
      const FunctionStats st = (*fn)->stats();
      EXPECT_EQ(st.kernels_compiled + st.kernels_loaded, 1) << "gather and add fuse";
    }
  }
}

TEST(Gather, CheckedKernelsRunInRangeAndOutOfRangeIndices) {
  std::unique_ptr<Runtime> rt = OpenRuntime({.checked_kernels = true});
  auto fn = rt->Jit("gather", [](Value x, Value i) { return gather(x, i, 1) * 2.0f; });
  ASSERT_TRUE(fn.ok()) << fn.status();
  const HostTensor x = HostTensor::Random({3, 10, 7}, 4);
  const std::vector<int32_t> idx = {9, 0, -1, 10, 1000000, 3, 3, 9, 2};
  absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, {x, HostTensor::I32({9}, idx)});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> want = ExpectedGather(x, idx, 1);
  for (float& v : want) v *= 2.0f;
  ExpectSameBits((*out)[0].data, want, "checked");
}

TEST(Gather, Errors) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  auto call = [&](auto f, std::vector<HostTensor> in) {
    auto fn = rt->Jit("bad", f);
    if (!fn.ok()) return fn.status();
    return RunPto(**fn, in).status();
  };
  const HostTensor x = HostTensor::Random({4, 5}, 1);
  absl::Status f32_indices =
      call([](Value a, Value i) { return gather(a, i, 0); }, {x, HostTensor::Random({3}, 2)});
  EXPECT_EQ(f32_indices.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(f32_indices.message().find("gather: input 1 (indices) is f32; indices are i32"),
            std::string::npos)
      << f32_indices;
  absl::Status bad_axis =
      call([](Value a, Value i) { return gather(a, i, 2); }, {x, HostTensor::I32({2}, {0, 1})});
  EXPECT_EQ(bad_axis.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_axis.message().find("gather: axis 2"), std::string::npos) << bad_axis;
  absl::Status i32_values = call([](Value a, Value i) { return gather(a, i, 0); },
                                 {HostTensor::I32({2}, {1, 2}), HostTensor::I32({2}, {0, 1})});
  EXPECT_EQ(i32_values.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(i32_values.message().find("gather: input 0 is i32; gather takes f32 values"),
            std::string::npos)
      << i32_values;
  // A result of more than 8 dims.
  absl::Status rank = call([](Value a, Value i) { return gather(a, i, 0); },
                           {x, HostTensor::I32({1, 1, 1, 1, 1, 1, 1, 1}, {0})});
  EXPECT_EQ(rank.code(), absl::StatusCode::kInvalidArgument) << rank;
}

// A gather inlined into a reduction's input, a softmax's input and a matmul's epilogue, with
// in-range and out-of-range indices (NaN rows stay in their rows).
TEST(Gather, FusesIntoReductionsRowOpsAndMatMulEpilogues) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const TraceFn trace = [](std::span<const Value> v) {
    Value g = gather(v[0], v[1], 0);  // [7, 13]
    return std::vector<Value>{reduce_sum(g * 2.0f, -1), reduce_max(g, 0), softmax(g + 1.0f),
                              matmul(v[2], v[3]) + g};
  };
  absl::StatusOr<std::unique_ptr<Function>> fn = rt->JitTraced("fused", 4, trace, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const HostTensor x = HostTensor::Random({9, 13}, 1);
  const HostTensor a = HostTensor::Random({7, 5}, 2), b = HostTensor::Random({5, 13}, 3);
  const std::vector<int32_t> in_range = {8, 0, 3, 3, 8, 1, 2};
  EXPECT_EQ(DiffFromReference(**fn, trace, {x, HostTensor::I32({7}, in_range), a, b},
                              {.abs = 1e-5, .rel = 1e-5}),
            "");
  // Row 2 of the gather is NaN: its sum, its softmax row and its matmul row are NaN, the
  // other rows are not.
  const std::vector<int32_t> off = {8, 0, -4, 3, 8, 1, 2};
  absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, {x, HostTensor::I32({7}, off), a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int r = 0; r < 7; ++r) {
    EXPECT_EQ(std::isnan((*out)[0].data[r]), r == 2) << r;
    EXPECT_EQ(std::isnan((*out)[2].data[r * 13 + 5]), r == 2) << r;
    EXPECT_EQ(std::isnan((*out)[3].data[r * 13 + 12]), r == 2) << r;
  }
}

// A GraphDef keeps gather and scatter_add (which only the gradient pass makes) with their
// inputs and axes.
TEST(Gather, GraphDefRoundTripsGatherAndScatterAdd) {
  std::vector<jit::TraceInput> inputs(2);
  inputs[0].shape = {ir::SymExpr(11), ir::SymExpr(5)};
  inputs[1].shape = {ir::SymExpr(3), ir::SymExpr(4)};
  inputs[1].dtype = ir::DType::kI32;
  absl::StatusOr<ir::Graph> g = jit::Trace(
      [](std::span<const Value> v) { return std::vector<Value>{gather(v[0], v[1], -2)}; }, inputs,
      {});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_NE(g->ToString().find("gather(%0, %1) axis=0 : f32[3, 4, 5]"), std::string::npos)
      << g->ToString();
  // scatter_add(like = x, updates = the gather's result, indices).
  ops::GraphBuilder b(*g);
  ir::Attrs axis0;
  const int s = b.Op(ir::OpKind::kScatterAdd, {0, g->outputs[0], 1}, axis0);
  ASSERT_TRUE(b.status().ok()) << b.status();
  g->outputs.push_back(s);
  EXPECT_NE(g->ToString().find("scatter_add(%0, %2, %1) axis=0 : f32[11, 5]"), std::string::npos)
      << g->ToString();
  absl::StatusOr<ir::Graph> back = graph::FromGraphDef(graph::ToGraphDef(*g));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToString(), g->ToString());
}

}  // namespace
}  // namespace pto::testing
