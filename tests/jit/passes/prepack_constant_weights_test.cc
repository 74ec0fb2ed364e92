// PrepackConstantWeights (jit/passes/prepack_constant_weights.h) alone: a matmul that packs
// B's panels (pack_b, panel_bytes > 0) and reads B from a constant input through a plain K x N
// view (static K and N, constant offset and strides, the same for every batch entry and row)
// gets a kPacked buffer of B's full column blocks (nr_vectors vectors of the config's width, or
// of the target's lanes) in a slot of its own; nothing else changes, and at most
// kMaxKernelBuffers buffers are packed.
#include "jit/passes/prepack_constant_weights.h"

#include <vector>

#include "gtest/gtest.h"
#include "jit/plan.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::SymExpr;
using testing::MatMul;
using testing::MatMulDims;
using testing::TileGraphBuilder;

constexpr int kLanes = 8;

// x[M, K] (input 0) times W (input 1) into y (output 0), W constant.
struct Projection {
  TileGraphBuilder t{{{"m", 1, 64}}};
  int x = t.Input(0, 1), w = t.Input(1, 1), y = t.Output(0, 1);
  explicit Projection(ir::Kernel k, int nr_vectors = 2) {
    k.config.pack_b = true;
    k.config.panel_bytes = 1 << 16;
    k.config.nr_vectors = nr_vectors;
    t.Call(std::move(k), {x, w, y});
  }
  ir::TileGraph& Run(std::vector<bool> constant_inputs = {false, true}) {
    PrepackConstantWeights(t.graph(), constant_inputs, kLanes);
    return t.graph();
  }
  // Whether the pass packed anything.
  bool Packs(std::vector<bool> constant_inputs = {false, true}) {
    const ir::TileGraph& tiles = Run(std::move(constant_inputs));
    return tiles.buffers.size() > 3 || tiles.calls[0].kernel.b_packed >= 0;
  }
};

TEST(PrepackConstantWeightsTest, ConstantWeightGetsAPackedBuffer) {
  // W [32, 40] in blocks of 2 vectors of 8 lanes: two full blocks of 16 columns.
  Projection p(MatMul({.m = SymExpr::Symbol(0), .n = 40, .k = 32}));
  const ir::TileGraph& tiles = p.Run();
  ASSERT_EQ(tiles.buffers.size(), 4u);
  const ir::Buffer& packed = tiles.buffers[3];
  EXPECT_EQ(packed.kind, ir::BufferKind::kPacked);
  EXPECT_EQ(packed.index, 1);
  EXPECT_EQ(
      packed.pack,
      (ir::PackedB{.k = 32, .n = 40, .offset = 0, .stride_k = 40, .stride_n = 1, .block = 16}));
  EXPECT_EQ(packed.elements, SymExpr(32 * 32));
  EXPECT_EQ(packed.label, " (packed for matmul)");
  const ir::KernelCall& call = tiles.calls[0];
  EXPECT_EQ(call.buffers, (std::vector<int>{p.x, p.w, p.y, 3}));
  EXPECT_EQ(call.kernel.num_buffers, 4);
  EXPECT_EQ(call.kernel.b_packed, 3);
  EXPECT_EQ(call.kernel.b_packed_block, 16);
  // B is still read through its access: the columns past the last full block.
  EXPECT_EQ(call.kernel.b, 1);
  EXPECT_TRUE(call.kernel.config.pack_b);
}

TEST(PrepackConstantWeightsTest, TheConfigsWidthBeforeTheTargets) {
  ir::Kernel k = MatMul({.m = 8, .n = 64, .k = 16});
  k.config.vector_width = 4;
  Projection p(std::move(k), 3);
  EXPECT_EQ(p.Run().calls[0].kernel.b_packed_block, 12);
}

TEST(PrepackConstantWeightsTest, DotProductFormAndSharedBatchPackToo) {
  // W stored [N, K]: N stride K, K stride 1.
  Projection transposed(MatMul({.m = 8, .n = 32, .k = 16, .b_transposed = true}));
  const ir::TileGraph& tiles = transposed.Run();
  ASSERT_EQ(tiles.buffers.size(), 4u);
  EXPECT_EQ(
      tiles.buffers[3].pack,
      (ir::PackedB{.k = 16, .n = 32, .offset = 0, .stride_k = 1, .stride_n = 16, .block = 16}));
  // One W for every batch entry.
  Projection shared(MatMul({.m = 8, .n = 32, .k = 16, .batch = 3, .b_shared = true}));
  EXPECT_TRUE(shared.Packs());
}

TEST(PrepackConstantWeightsTest, OnlyConstantInputs) {
  EXPECT_FALSE(Projection(MatMul({.m = 8, .n = 32, .k = 16})).Packs({false, false}));
  // Inputs past the list are not constant.
  EXPECT_FALSE(Projection(MatMul({.m = 8, .n = 32, .k = 16})).Packs({true}));
  // A temp is never a constant input.
  Projection temp(MatMul({.m = 8, .n = 32, .k = 16}));
  temp.t.graph().buffers[temp.w].kind = ir::BufferKind::kTemp;
  EXPECT_FALSE(temp.Packs());
}

TEST(PrepackConstantWeightsTest, OnlyMatMulsThatPackPanelsAndAreNotPackedYet) {
  {
    ir::Kernel k = MatMul({.m = 8, .n = 32, .k = 16});
    Projection p(std::move(k));
    p.t.graph().calls[0].kernel.config.pack_b = false;
    EXPECT_FALSE(p.Packs());
  }
  {
    Projection p(MatMul({.m = 8, .n = 32, .k = 16}));
    p.t.graph().calls[0].kernel.config.panel_bytes = 0;
    EXPECT_FALSE(p.Packs());
  }
  {
    Projection p(MatMul({.m = 8, .n = 32, .k = 16}));
    p.Run();
    p.Run();  // a second run adds nothing
    EXPECT_EQ(p.t.graph().buffers.size(), 4u);
    EXPECT_EQ(p.t.graph().calls[0].buffers.size(), 4u);
  }
  {
    ir::Kernel k = testing::Elementwise({4, 8}, ir::ExprOp::kAdd);
    k.config.pack_b = true;
    k.config.panel_bytes = 1 << 16;
    TileGraphBuilder t;
    const int a = t.Input(0, 32), b = t.Input(1, 32), c = t.Output(0, 32);
    t.Call(std::move(k), {a, b, c});
    PrepackConstantWeights(t.graph(), {true, true}, kLanes);
    EXPECT_EQ(t.graph().buffers.size(), 3u);
  }
}

TEST(PrepackConstantWeightsTest, OnlyPlainStaticViews) {
  // B moving with the batch.
  EXPECT_FALSE(Projection(MatMul({.m = 8, .n = 32, .k = 16, .batch = 3})).Packs());
  // Symbolic K or N.
  EXPECT_FALSE(Projection(MatMul({.m = 8, .n = 32, .k = SymExpr::Symbol(0)})).Packs());
  EXPECT_FALSE(Projection(MatMul({.m = 8, .n = SymExpr::Symbol(0), .k = 16})).Packs());
  {
    // An offset known only at run time (a slice starting at a symbolic index).
    ir::Kernel k = MatMul({.m = 8, .n = 32, .k = 16});
    k.accesses[1].offset = SymExpr::Symbol(0);
    EXPECT_FALSE(Projection(std::move(k)).Packs());
  }
  {
    // B moving with M.
    ir::Kernel k = MatMul({.m = 8, .n = 32, .k = 16});
    k.accesses[1].strides[0] = 1;
    EXPECT_FALSE(Projection(std::move(k)).Packs());
  }
  {
    // Not f32.
    ir::Kernel k = MatMul({.m = 8, .n = 32, .k = 16});
    k.accesses[1].dtype = ir::DType::kBF16;
    EXPECT_FALSE(Projection(std::move(k)).Packs());
  }
  {
    // A constant offset is fine: it is part of the layout.
    ir::Kernel k = MatMul({.m = 8, .n = 32, .k = 16});
    k.accesses[1].offset = 5;
    Projection p(std::move(k));
    ASSERT_TRUE(p.Packs());
    EXPECT_EQ(p.t.graph().buffers[3].pack.offset, 5);
  }
}

TEST(PrepackConstantWeightsTest, NoFullColumnBlockNothingToPack) {
  EXPECT_FALSE(Projection(MatMul({.m = 8, .n = 15, .k = 16})).Packs());
  EXPECT_TRUE(Projection(MatMul({.m = 8, .n = 16, .k = 16})).Packs());
}

TEST(PrepackConstantWeightsTest, AtMostKMaxKernelBuffersArePacked) {
  TileGraphBuilder t;
  const int x = t.Input(0, 128), w = t.Input(1, 256), y = t.Temp(128);
  for (int i = 0; i <= kMaxKernelBuffers; ++i) {
    ir::Kernel k = MatMul({.m = 8, .n = 16, .k = 16});
    k.config.pack_b = true;
    k.config.panel_bytes = 1 << 16;
    t.Call(std::move(k), {x, w, y});
  }
  PrepackConstantWeights(t.graph(), {false, true}, kLanes);
  EXPECT_EQ(t.graph().buffers.size(), 3u + kMaxKernelBuffers);
  EXPECT_EQ(t.graph().calls[kMaxKernelBuffers - 1].kernel.b_packed, 3);
  EXPECT_EQ(t.graph().calls[kMaxKernelBuffers].kernel.b_packed, -1);
}

TEST(PrepackConstantWeightsTest, ReadsConstantInputNamesTheAccessesBuffer) {
  TileGraphBuilder t;
  const int x = t.Input(0, 128), w = t.Input(2, 256), y = t.Temp(128);
  t.Call(MatMul({.m = 8, .n = 16, .k = 16}), {x, w, y});
  const ir::KernelCall& call = t.graph().calls[0];
  const std::vector<bool> constant = {false, false, true};
  EXPECT_FALSE(ReadsConstantInput(t.graph(), call, 0, constant));  // x
  EXPECT_TRUE(ReadsConstantInput(t.graph(), call, 1, constant));   // w, input 2
  EXPECT_FALSE(ReadsConstantInput(t.graph(), call, 2, constant));  // y, a temp
  EXPECT_FALSE(ReadsConstantInput(t.graph(), call, -1, constant));
  EXPECT_FALSE(ReadsConstantInput(t.graph(), call, 1, {false, true}));
}

}  // namespace
}  // namespace pto::jit
