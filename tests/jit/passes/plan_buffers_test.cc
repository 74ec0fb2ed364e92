// PlanBuffers (jit/passes/plan_buffers.h) alone, on hand-made tile graphs: temps whose
// lifetimes (first write .. last read, in call order) do not overlap share an arena slot; an
// in-place pair shares one slot; of the slots free at a buffer's first write the smallest large
// enough is taken, else the largest, sizes compared at the symbols' representative values
// (the top of a bounded range, else max(min, 64)); inputs, outputs and unused temps get none;
// a program needing more than kMaxArenaSlots slots gets one more, empty, and planning stops.
#include "jit/passes/plan_buffers.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/plan.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::SymExpr;
using testing::TileGraphBuilder;

// A call that uses `buffers` (what it computes does not matter to the plan).
void Uses(TileGraphBuilder& t, std::vector<int> buffers) {
  t.Call(testing::Elementwise({1}, ir::ExprOp::kNeg), std::move(buffers));
}

std::string PlanText(ir::TileGraph& tiles) { return BufferPlanToString(tiles, PlanBuffers(tiles)); }

// x -> t0 -> t1 -> t2 -> y, all of 16 elements.
struct Chain {
  TileGraphBuilder t;
  int x = t.Input(0, 16), t0 = t.Temp(16), t1 = t.Temp(16), t2 = t.Temp(16), y = t.Output(0, 16);
  Chain() {
    Uses(t, {x, t0});
    Uses(t, {t0, t1});
    Uses(t, {t1, t2});
    Uses(t, {t2, y});
  }
};

TEST(PlanBuffersTest, TempsThatDoNotOverlapShareASlot) {
  // t0 is dead when t2 is written.
  Chain c;
  const BufferPlan plan = PlanBuffers(c.t.graph());
  EXPECT_EQ(BufferPlanToString(c.t.graph(), plan),
            "slot0: buf1[16] buf3[16]\n"
            "slot1: buf2[16]\n");
  EXPECT_EQ(plan.slot_of, (std::vector<int>{-1, 0, 1, 0, -1}));
  EXPECT_EQ(plan.in_place_of, (std::vector<int>{-1, -1, -1, -1, -1}));
}

TEST(PlanBuffersTest, InPlacePairSharesOneSlotForBothLifetimes) {
  Chain c;
  c.t.graph().calls[1].in_place = {{c.t1, c.t0}};
  const BufferPlan plan = PlanBuffers(c.t.graph());
  // t0 and t1 live from call 0 to call 2 together: t2 needs a slot of its own.
  EXPECT_EQ(BufferPlanToString(c.t.graph(), plan),
            "slot0: buf1[16] buf2[16] (in place of buf1)\n"
            "slot1: buf3[16]\n");
  EXPECT_EQ(plan.in_place_of[c.t1], c.t0);
}

TEST(PlanBuffersTest, PairsWithNonTempsAreIgnored) {
  TileGraphBuilder t;
  const int x = t.Input(0, 16), t0 = t.Temp(16), y = t.Output(0, 16);
  Uses(t, {x, t0});
  Uses(t, {t0, y});
  t.graph().calls.back().in_place = {{y, t0}};
  const BufferPlan plan = PlanBuffers(t.graph());
  EXPECT_EQ(BufferPlanToString(t.graph(), plan), "slot0: buf1[16]\n");
  EXPECT_EQ(plan.in_place_of[y], -1);
}

TEST(PlanBuffersTest, SmallestSlotLargeEnoughElseTheLargestGrows) {
  // a[100] and b[30] die after call 1; then c[20] and d[200] are written.
  TileGraphBuilder t;
  const int x = t.Input(0, 1), a = t.Temp(100), b = t.Temp(30), c = t.Temp(20), d = t.Temp(200),
            y = t.Output(0, 1);
  Uses(t, {x, a, b});
  Uses(t, {a, b});
  Uses(t, {c, d});
  Uses(t, {c, d, y});
  // c takes b's slot (30 >= 20, the smaller of the two that fit); d, fitting none, the
  // largest free one, a's, which grows to 200.
  EXPECT_EQ(PlanText(t.graph()),
            "slot0: buf1[100] buf4[200]\n"
            "slot1: buf2[30] buf3[20]\n");
  (void)c;
  (void)d;
}

TEST(PlanBuffersTest, SizesAreComparedAtRepresentativeValues) {
  // n in [1, 100] counts as 100; m, unbounded, as 64.
  const SymExpr n = SymExpr::Symbol(0), m = SymExpr::Symbol(1);
  for (const int64_t later : {60, 70}) {
    TileGraphBuilder t({{"n", 1, 100}, {"m", 1, std::numeric_limits<int64_t>::max()}});
    const int x = t.Input(0, 1), a = t.Temp(n), b = t.Temp(m), c = t.Temp(later);
    Uses(t, {x, a, b});
    Uses(t, {a, b});
    Uses(t, {c, x});
    const BufferPlan plan = PlanBuffers(t.graph());
    // 60 fits both (m's slot, 64, is the smaller); 70 only n's.
    EXPECT_EQ(plan.slot_of[c], later == 60 ? plan.slot_of[b] : plan.slot_of[a]) << later;
  }
  // An unbounded range above the typical size counts from its minimum: k as 200, so 150 fits
  // its slot (at 64 it would fit neither and take m's, the largest).
  TileGraphBuilder t({{"k", 200, std::numeric_limits<int64_t>::max()}, {"m", 1, 100}});
  const int x = t.Input(0, 1), a = t.Temp(SymExpr::Symbol(0)), b = t.Temp(SymExpr::Symbol(1)),
            c = t.Temp(150);
  Uses(t, {x, a, b});
  Uses(t, {a, b});
  Uses(t, {c, x});
  const BufferPlan plan = PlanBuffers(t.graph());
  EXPECT_EQ(plan.slot_of[c], plan.slot_of[a]);
}

TEST(PlanBuffersTest, InputsOutputsAndUnusedTempsGetNoSlot) {
  TileGraphBuilder t;
  const int x = t.Input(0, 8), unused = t.Temp(8), y = t.Output(0, 8);
  Uses(t, {x, y});
  const BufferPlan plan = PlanBuffers(t.graph());
  EXPECT_EQ(BufferPlanToString(t.graph(), plan), "");
  EXPECT_EQ(plan.slot_of, (std::vector<int>{-1, -1, -1}));
  EXPECT_TRUE(plan.slot_members.empty());
  (void)unused;
}

TEST(PlanBuffersTest, MoreThanTheArenaHoldsStopsAtOneSlotMore) {
  // kMaxArenaSlots + 1 temps, all live at once.
  TileGraphBuilder t;
  std::vector<int> temps;
  for (int i = 0; i <= kMaxArenaSlots; ++i) temps.push_back(t.Temp(4));
  Uses(t, temps);
  Uses(t, temps);
  const BufferPlan plan = PlanBuffers(t.graph());
  ASSERT_EQ(plan.slot_members.size(), static_cast<size_t>(kMaxArenaSlots) + 1);
  EXPECT_TRUE(plan.slot_members.back().empty());
  EXPECT_EQ(plan.slot_of[temps[kMaxArenaSlots - 1]], kMaxArenaSlots - 1);
  EXPECT_EQ(plan.slot_of[temps[kMaxArenaSlots]], -1);
  // Exactly kMaxArenaSlots fit.
  TileGraphBuilder fits;
  std::vector<int> fewer;
  for (int i = 0; i < kMaxArenaSlots; ++i) fewer.push_back(fits.Temp(4));
  Uses(fits, fewer);
  Uses(fits, fewer);
  EXPECT_EQ(PlanBuffers(fits.graph()).slot_members.size(), static_cast<size_t>(kMaxArenaSlots));
}

TEST(PlanBuffersTest, SymbolicSizesPrintWithTheirNames) {
  const SymExpr n = SymExpr::Symbol(0);
  TileGraphBuilder t({{"n", 1, 64}});
  const int x = t.Input(0, n), a = t.Temp(n * 4), b = t.Temp(n), y = t.Output(0, n);
  Uses(t, {x, a});
  Uses(t, {a, b});
  Uses(t, {b, y});
  EXPECT_EQ(PlanText(t.graph()),
            "slot0: buf1[4*n]\n"
            "slot1: buf2[n]\n");
}

}  // namespace
}  // namespace pto::jit
