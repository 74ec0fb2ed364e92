// FlowNetwork::MinCut on small networks whose least cuts are known by hand.
#include "jit/passes/min_cut.h"

#include <vector>

#include "gtest/gtest.h"

namespace pto::jit {
namespace {

TEST(MinCut, FindsTheClassicNetworksCut) {
  // CLRS's example (vertices s=0, v1..v4, t=5): max flow 23, the cut {s, v1, v2, v4}.
  FlowNetwork network(6);
  network.AddEdge(0, 1, 16);
  network.AddEdge(0, 2, 13);
  network.AddEdge(2, 1, 4);
  network.AddEdge(1, 3, 12);
  network.AddEdge(3, 2, 9);
  network.AddEdge(2, 4, 14);
  network.AddEdge(4, 3, 7);
  network.AddEdge(3, 5, 20);
  network.AddEdge(4, 5, 4);
  int64_t capacity = 0;
  const std::vector<bool> side = network.MinCut(0, 5, &capacity);
  EXPECT_EQ(capacity, 23);
  EXPECT_EQ(side, (std::vector<bool>{true, true, true, false, true, false}));
}

TEST(MinCut, CutsTheCheaperOfTwoEdgesInSeriesNeverAnUncuttableOne) {
  FlowNetwork network(4);
  network.AddEdge(0, 1, kUncuttable);
  network.AddEdge(1, 2, 7);
  network.AddEdge(2, 3, 5);
  int64_t capacity = 0;
  EXPECT_EQ(network.MinCut(0, 3, &capacity), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(capacity, 5);
}

TEST(MinCut, WithoutAPathTheCutIsEmpty) {
  FlowNetwork network(3);
  network.AddEdge(0, 1, 3);
  int64_t capacity = -1;
  EXPECT_EQ(network.MinCut(0, 2, &capacity), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(capacity, 0);
}

// A path of a million vertices: the cut is its cheapest edge, found without recursion.
TEST(MinCut, APathAsLongAsTheGraphTakesNoStack) {
  constexpr int kVertices = 1'000'000;
  FlowNetwork network(kVertices);
  for (int v = 0; v + 1 < kVertices; ++v) {
    network.AddEdge(v, v + 1, v == kVertices / 2 ? 3 : 1000 + v % 7);
  }
  int64_t capacity = 0;
  const std::vector<bool> side = network.MinCut(0, kVertices - 1, &capacity);
  EXPECT_EQ(capacity, 3);
  EXPECT_TRUE(side[kVertices / 2]);
  EXPECT_FALSE(side[kVertices / 2 + 1]);
}

}  // namespace
}  // namespace pto::jit
