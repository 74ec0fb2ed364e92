// TurnOrder: every round is an order of all the sides, and over a cycle every side comes first
// equally often and follows every other side equally often.
#include "tools/bench/turn_order.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace pto::bench {
namespace {

TEST(TurnOrder, EverySideFollowsEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 7; ++n) {
    SCOPED_TRACE(n);
    const int cycle = static_cast<int>(n % 2 == 0 ? n : 2 * n);
    std::map<std::pair<size_t, size_t>, int> follows;
    std::vector<int> first(n, 0);
    for (int round = 0; round < cycle; ++round) {
      const std::vector<size_t> order = TurnOrder(n, round);
      std::vector<size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t s = 0; s < n; ++s) ASSERT_EQ(sorted[s], s) << "round " << round;
      ++first[order[0]];
      for (size_t k = 1; k < n; ++k) ++follows[{order[k - 1], order[k]}];
      EXPECT_EQ(TurnOrder(n, round + cycle), order) << "the cycle repeats";
    }
    for (size_t s = 0; s < n; ++s) EXPECT_EQ(first[s], cycle / static_cast<int>(n));
    EXPECT_EQ(follows.size(), n * (n - 1));
    for (const auto& [pair, count] : follows) {
      EXPECT_EQ(count, n % 2 == 0 ? 1 : 2) << pair.first << " -> " << pair.second;
    }
  }
}

TEST(TurnOrder, FourSidesAsTheBenchesRunThem) {
  EXPECT_EQ(TurnOrder(4, 0), (std::vector<size_t>{0, 1, 3, 2}));
  EXPECT_EQ(TurnOrder(4, 1), (std::vector<size_t>{1, 2, 0, 3}));
  EXPECT_EQ(TurnOrder(0, 3), std::vector<size_t>{});
}

}  // namespace
}  // namespace pto::bench
