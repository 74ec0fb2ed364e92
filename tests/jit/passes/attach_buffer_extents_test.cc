// AttachBufferExtents (jit/passes/attach_buffer_extents.h) alone: each kernel gets, per slot
// in slot order, its buffer's size in elements and a name for messages ("input 0", "output 1",
// "intermediate", "packed input 2"); extents attached before are replaced.
#include "jit/passes/attach_buffer_extents.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::SymExpr;
using testing::Elementwise;
using testing::TileGraphBuilder;

// "name[elements]" per slot of `call`.
std::vector<std::string> Extents(const ir::TileGraph& tiles, int call) {
  std::vector<std::string> names;
  for (const ir::SymbolInfo& s : tiles.symbols) names.push_back(s.name);
  std::vector<std::string> out;
  for (const ir::BufferExtent& e : tiles.calls[call].kernel.buffer_extents) {
    out.push_back(e.name + "[" + e.elements.ToString(names) + "]");
  }
  return out;
}

TEST(AttachBufferExtentsTest, EverySlotGetsItsBuffersSizeAndName) {
  const SymExpr n = SymExpr::Symbol(0);
  TileGraphBuilder t({{"n", 1, 64}});
  const int x = t.Input(0, n * 4), a = t.Temp(n * 4), y = t.Output(1, n * 4), w = t.Input(2, 16);
  t.graph().buffers.push_back({ir::BufferKind::kPacked, 2, {}, SymExpr(12), ir::DType::kF32, ""});
  const int packed = static_cast<int>(t.graph().buffers.size()) - 1;
  t.Call(Elementwise({n, 4}, ir::ExprOp::kExp), {x, a});
  // Slots in another order than the buffers, one buffer in two slots.
  t.Call(Elementwise({n, 4}, ir::ExprOp::kAdd), {a, a, y});
  t.Call(testing::MatMul({.m = 4, .n = 4, .k = 4}), {w, packed, a});
  AttachBufferExtents(t.graph());
  EXPECT_EQ(Extents(t.graph(), 0), (std::vector<std::string>{"input 0[4*n]", "intermediate[4*n]"}));
  EXPECT_EQ(Extents(t.graph(), 1),
            (std::vector<std::string>{"intermediate[4*n]", "intermediate[4*n]", "output 1[4*n]"}));
  EXPECT_EQ(Extents(t.graph(), 2),
            (std::vector<std::string>{"input 2[16]", "packed input 2[12]", "intermediate[4*n]"}));
}

TEST(AttachBufferExtentsTest, ExtentsAttachedBeforeAreReplaced) {
  TileGraphBuilder t;
  const int x = t.Input(0, 16), y = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ir::ExprOp::kNeg), {x, y});
  t.graph().calls[0].kernel.buffer_extents = {
      {SymExpr(1), "stale"}, {SymExpr(2), "stale"}, {SymExpr(3), "stale"}};
  AttachBufferExtents(t.graph());
  EXPECT_EQ(Extents(t.graph(), 0), (std::vector<std::string>{"input 0[16]", "output 0[16]"}));
  // The kernel's identity (its text) does not include them.
  const std::string text = t.graph().ToString();
  EXPECT_EQ(text.find("input 0[16]"), std::string::npos) << text;
}

}  // namespace
}  // namespace pto::jit
