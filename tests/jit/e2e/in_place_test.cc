// Buffer planning: which kernel outputs are written in place over a dying input
// (jit/passes/mark_in_place), which buffers share an arena slot (plan_buffers), the split of a
// column-sliced projection (split_matmul_columns), and every such program against the ops/
// reference, including the cases where in place must not apply.
#include <algorithm>
#include <string>
#include <vector>

#include "device/device_info.h"
#include "gtest/gtest.h"
#include "jit/pipeline.h"
#include "jit/trace.h"
#include "tests/jit/e2e/test_util.h"
#include "tools/pto/transformer_block.h"

namespace pto {
namespace {

using ops::HostTensor;

jit::LoweredProgram Lower(const TraceFn& trace, const std::vector<std::vector<int64_t>>& shapes) {
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(trace, shapes);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : jit::LoweredProgram{};
}

// The calls of one kernel kind, in order.
std::vector<const ir::KernelCall*> Calls(const jit::LoweredProgram& p, ir::KernelKind kind) {
  std::vector<const ir::KernelCall*> out;
  for (const ir::KernelCall& c : p.tiles.calls) {
    if (c.kernel.kind == kind) out.push_back(&c);
  }
  return out;
}

int PairsIn(const jit::LoweredProgram& p) {
  int n = 0;
  for (const ir::KernelCall& c : p.tiles.calls) n += static_cast<int>(c.in_place.size());
  return n;
}

// The buffer a kernel slot of `call` is bound to.
int Buffer(const ir::KernelCall& call, int access) {
  return call.buffers[call.kernel.accesses[access].buffer];
}
int StoredBuffer(const ir::KernelCall& call) { return Buffer(call, call.kernel.stores[0].access); }
// The buffer of a row op's first load of x.
int LoadedBuffer(const ir::KernelCall& call) {
  for (const ir::ExprNode& n : call.kernel.input) {
    if (n.op == ir::ExprOp::kLoad) return Buffer(call, n.access);
  }
  return -1;
}

// Sum over the arena's slots of their largest member (elements): the plan's peak.
int64_t ArenaElements(const jit::LoweredProgram& p) {
  int64_t total = 0;
  for (const auto& members : p.buffers.slot_members) {
    int64_t largest = 0;
    for (int b : members) largest = std::max(largest, p.tiles.buffers[b].elements.Evaluate({}));
    total += largest;
  }
  return total;
}

void ExpectMatchesReference(const char* name, const TraceFn& trace,
                            const std::vector<std::vector<int64_t>>& shapes, ops::Tolerance tol) {
  SCOPED_TRACE(name);
  static std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  std::vector<HostTensor> in;
  for (size_t i = 0; i < shapes.size(); ++i) in.push_back(HostTensor::Random(shapes[i], 11 + i));
  auto fn = rt->JitTraced(name, static_cast<int>(shapes.size()), trace, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  // Twice: the second call runs in an arena the first one left dirty.
  for (int rep = 0; rep < 2; ++rep) {
    auto got = testing::RunPto(**fn, in);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = testing::RunReference(trace, in);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(testing::Compare(*got, *want, tol), "");
  }
}

// A matmul and a row op of reduction length k.
ops::Tolerance Tol(int64_t k) {
  return ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, k),
                      ops::OpTolerance(ir::OpKind::kLayerNorm, k));
}

void ExpectMatchesReference(const char* name, const TraceFn& trace,
                            const std::vector<std::vector<int64_t>>& shapes, int64_t k) {
  ExpectMatchesReference(name, trace, shapes, Tol(k));
}

// x [n, n]; the softmax's input is the scores matmul's output, which dies there.
const TraceFn kAttention = [](std::span<const Value> v) {
  Value scores = matmul(v[0], v[1], {.transpose_b = true}) * 0.25f;
  return std::vector<Value>{matmul(softmax(scores), v[2])};
};

TEST(InPlace, SoftmaxOverwritesTheScores) {
  const std::vector<std::vector<int64_t>> shapes = {{3, 20, 16}, {3, 20, 16}, {3, 20, 16}};
  jit::LoweredProgram p = Lower(kAttention, shapes);
  std::vector<const ir::KernelCall*> rows = Calls(p, ir::KernelKind::kRowOp);
  ASSERT_EQ(rows.size(), 1u);
  const ir::KernelCall& softmax = *rows[0];
  ASSERT_EQ(softmax.in_place.size(), 1u);
  const int scores = LoadedBuffer(softmax);
  EXPECT_EQ(softmax.in_place[0], std::make_pair(StoredBuffer(softmax), scores));
  EXPECT_EQ(p.buffers.slot_of[StoredBuffer(softmax)], p.buffers.slot_of[scores]);
  EXPECT_EQ(p.buffers.in_place_of[StoredBuffer(softmax)], scores);
  // Matmuls never write in place (their operands are read at other indices).
  for (const ir::KernelCall* mm : Calls(p, ir::KernelKind::kMatMul))
    EXPECT_TRUE(mm->in_place.empty());
  EXPECT_EQ(PairsIn(p), 1);
  // Scores and probabilities in one slot: one buffer of 3*20*20.
  EXPECT_EQ(ArenaElements(p), 3 * 20 * 20);
  ExpectMatchesReference("attention", kAttention, shapes, 16);
}

// t = softmax(x) is read by a reduction first, then (last) by an elementwise kernel at the same
// index: that kernel writes over t.
const TraceFn kElementwiseOverRowOp = [](std::span<const Value> v) {
  Value t = softmax(v[0]);
  Value total = reduce_sum(t, -1);
  Value u = pto::exp(t * 3.0f + 1.0f) - t;
  return std::vector<Value>{total, matmul(u, v[1])};
};

TEST(InPlace, ElementwiseOverwritesItsLastInput) {
  const std::vector<std::vector<int64_t>> shapes = {{9, 37}, {37, 5}};
  jit::LoweredProgram p = Lower(kElementwiseOverRowOp, shapes);
  std::vector<const ir::KernelCall*> ew = Calls(p, ir::KernelKind::kElementwise);
  std::vector<const ir::KernelCall*> rows = Calls(p, ir::KernelKind::kRowOp);
  ASSERT_EQ(ew.size(), 1u);
  ASSERT_EQ(rows.size(), 1u);
  const int t = StoredBuffer(*rows[0]);
  const int u = StoredBuffer(*ew[0]);
  ASSERT_EQ(ew[0]->in_place.size(), 1u);
  EXPECT_EQ(ew[0]->in_place[0], std::make_pair(u, t));
  EXPECT_EQ(p.buffers.slot_of[u], p.buffers.slot_of[t]);
  // The softmax's input is the caller's x: never overwritten.
  EXPECT_TRUE(rows[0]->in_place.empty());
  ExpectMatchesReference("elementwise_over_row_op", kElementwiseOverRowOp, shapes, 37);
}

// Reads of t at another index than the one written: a transpose and a broadcast.
TEST(InPlace, NotWhenTheInputIsReadTransposed) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value t = softmax(v[0]);                    // [n, n]
    Value u = transpose(t, {1, 0}) * 2.0f + t;  // reads t at [j, i] and [i, j]
    return std::vector<Value>{matmul(u, v[1])};
  };
  const std::vector<std::vector<int64_t>> shapes = {{19, 19}, {19, 4}};
  jit::LoweredProgram p = Lower(trace, shapes);
  ASSERT_EQ(Calls(p, ir::KernelKind::kElementwise).size(), 1u);
  EXPECT_EQ(PairsIn(p), 0);
  ExpectMatchesReference("transposed", trace, shapes, 19);
}

TEST(InPlace, NotWhenTheInputIsBroadcast) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value t = softmax(v[0]);  // [1, n], read by every row of u
    Value u = t * v[1];       // [m, n]
    return std::vector<Value>{matmul(u, v[2])};
  };
  const std::vector<std::vector<int64_t>> shapes = {{1, 24}, {6, 24}, {24, 3}};
  jit::LoweredProgram p = Lower(trace, shapes);
  EXPECT_EQ(PairsIn(p), 0);
  ExpectMatchesReference("broadcast", trace, shapes, 24);
}

// p = softmax(t) while t is still read afterwards (by p * t, a kernel of its own as p has two
// readers): the softmax must not overwrite t; the elementwise kernel that reads both last may
// overwrite one of them.
TEST(InPlace, NotWhenTheInputIsReadLater) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value t = layer_norm(v[0], v[1], v[2]);
    Value p = softmax(t);
    Value first = matmul(p, v[3]);
    return std::vector<Value>{matmul(p * t, v[3]) + first};
  };
  const std::vector<std::vector<int64_t>> shapes = {{7, 33}, {33}, {33}, {33, 2}};
  jit::LoweredProgram p = Lower(trace, shapes);
  std::vector<const ir::KernelCall*> rows = Calls(p, ir::KernelKind::kRowOp);
  ASSERT_EQ(rows.size(), 2u);
  for (const ir::KernelCall* r : rows) EXPECT_TRUE(r->in_place.empty());
  const int t = StoredBuffer(*rows[0]);
  const int sm = StoredBuffer(*rows[1]);
  EXPECT_NE(p.buffers.slot_of[t], p.buffers.slot_of[sm]);
  std::vector<const ir::KernelCall*> ew = Calls(p, ir::KernelKind::kElementwise);
  ASSERT_EQ(ew.size(), 1u);
  ASSERT_EQ(ew[0]->in_place.size(), 1u);
  EXPECT_EQ(ew[0]->in_place[0].first, StoredBuffer(*ew[0]));
  EXPECT_TRUE(ew[0]->in_place[0].second == t || ew[0]->in_place[0].second == sm);
  ExpectMatchesReference("read_later", trace, shapes, 33);
}

// A row op's epilogue that reads its input again at the same index (softmax(t) * t + t): the
// whole row is read before any of it is written, so it may overwrite t.
TEST(InPlace, RowOpEpilogueReadingItsInput) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value t = layer_norm(v[0], v[1], v[2]);
    return std::vector<Value>{matmul(softmax(t) * t + t, v[3])};
  };
  const std::vector<std::vector<int64_t>> shapes = {{7, 33}, {33}, {33}, {33, 2}};
  jit::LoweredProgram p = Lower(trace, shapes);
  std::vector<const ir::KernelCall*> rows = Calls(p, ir::KernelKind::kRowOp);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0]->in_place.empty());  // reads the caller's x
  ASSERT_EQ(rows[1]->in_place.size(), 1u);
  EXPECT_EQ(rows[1]->in_place[0], std::make_pair(StoredBuffer(*rows[1]), StoredBuffer(*rows[0])));
  ExpectMatchesReference("row_op_epilogue", trace, shapes, 33);
}

// Two matmuls meeting in one elementwise op (what splitting a projection can produce).
TEST(InPlace, TwoMatmulsIntoOneElementwiseOp) {
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{matmul(v[0], v[1]) * matmul(v[0], v[2]) + 1.0f};
  };
  ExpectMatchesReference("two_matmuls", trace, {{6, 13}, {13, 5}, {13, 5}}, 13);
}

// A fused projection read through column slices becomes one matmul per slice; the slices of
// the weight are views (both weight layouts), and the result matches the reference.
TEST(SplitMatMulColumns, ProjectionSlicesBecomeMatmuls) {
  const TraceFn nk = [](std::span<const Value> v) {
    Value qkv = linear(v[0], v[1], v[2]);  // [n, 3*d]
    Value q = slice(qkv, -1, 0, 8), k = slice(qkv, -1, 8, 16), w = slice(qkv, -1, 16, 24);
    return std::vector<Value>{matmul(softmax(matmul(q, k, {.transpose_b = true})), w)};
  };
  const std::vector<std::vector<int64_t>> nk_shapes = {{10, 12}, {24, 12}, {24}};
  jit::LoweredProgram p = Lower(nk, nk_shapes);
  EXPECT_EQ(Calls(p, ir::KernelKind::kMatMul).size(), 5u);
  ExpectMatchesReference("split_nk", nk, nk_shapes, 12);

  const TraceFn kn = [](std::span<const Value> v) {
    Value both = matmul(v[0], v[1]);  // [n, 2*d], weight [K, N]
    return std::vector<Value>{slice(both, -1, 0, 5) * slice(both, -1, 5, 10) + 1.0f};
  };
  const std::vector<std::vector<int64_t>> kn_shapes = {{6, 13}, {13, 10}};
  p = Lower(kn, kn_shapes);
  EXPECT_EQ(Calls(p, ir::KernelKind::kMatMul).size(), 2u);
  ExpectMatchesReference("split_kn", kn, kn_shapes, 13);
}

TEST(SplitMatMulColumns, NotWhenTheWholeResultIsRead) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value r = linear(v[0], v[1], v[2]);
    return std::vector<Value>{slice(r, -1, 0, 4) + 1.0f, r};
  };
  const std::vector<std::vector<int64_t>> shapes = {{5, 6}, {8, 6}, {8}};
  EXPECT_EQ(Calls(Lower(trace, shapes), ir::KernelKind::kMatMul).size(), 1u);
  // Overlapping slices that would repeat arithmetic.
  const TraceFn overlap = [](std::span<const Value> v) {
    Value r = linear(v[0], v[1], v[2]);
    return std::vector<Value>{slice(r, -1, 0, 6) * slice(r, -1, 2, 8)};
  };
  EXPECT_EQ(Calls(Lower(overlap, shapes), ir::KernelKind::kMatMul).size(), 1u);
  ExpectMatchesReference("overlap", overlap, shapes, 6);
}

// The demo block: softmax over the scores in place, q/k/v as separate buffers, and an arena at
// most 0.70x of the unfused chain's peak (h, qkv, scores and probabilities live at once there).
TEST(InPlace, TransformerBlock) {
  tools::BlockDims dims;
  const int64_t batch = 1, seq = 128;
  std::vector<std::vector<int64_t>> shapes = {{batch, seq, dims.model}};
  for (auto& s : tools::WeightShapes(dims)) shapes.push_back(s);
  jit::LoweredProgram p = Lower(tools::TransformerBlock(dims), shapes);
  std::vector<const ir::KernelCall*> rows = Calls(p, ir::KernelKind::kRowOp);
  int softmaxes_in_place = 0;
  for (const ir::KernelCall* r : rows) {
    if (r->kernel.row_op == ir::RowOpKind::kSoftmax) softmaxes_in_place += !r->in_place.empty();
  }
  EXPECT_EQ(softmaxes_in_place, 1);
  const int64_t rows_x = batch * seq, scores = batch * dims.heads * seq * seq;
  const int64_t unfused_peak = rows_x * 3 * dims.model + 2 * scores;
  EXPECT_LE(ArenaElements(p) * 100, unfused_peak * 70)
      << jit::BufferPlanToString(p.tiles, p.buffers);
  // A wrong alias gives O(1) errors; the block's rounding (two layernorms amplify it beyond
  // the first-order sum of its ops' tolerances) stays far below this bound.
  const ops::Tolerance tol{.abs = 1e-3, .rel = 1e-3};
  ExpectMatchesReference("block", tools::TransformerBlock(dims), shapes, tol);
}

}  // namespace
}  // namespace pto
