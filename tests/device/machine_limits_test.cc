#include "device/machine_limits.h"

#include <cmath>

#include "gtest/gtest.h"

namespace pto::device {
namespace {

TEST(MeasureHandoffTest, BothRatesArePositiveAndFinite) {
  // 1 MiB of a 64-bit-word buffer, 20 rounds: a few milliseconds.
  const HandoffRates r = MeasureHandoff(int64_t{1} << 20, 20);
  EXPECT_GT(r.other_thread_gbs, 0.1);
  EXPECT_GT(r.same_thread_gbs, 0.1);
  EXPECT_TRUE(std::isfinite(r.other_thread_gbs));
  EXPECT_TRUE(std::isfinite(r.same_thread_gbs));
}

TEST(MeasureHandoffTest, ABufferOfOddSizeIsReadWhole) {
  // 1000 words and 4 bytes: the words are read, the tail bytes ignored; no read past the end
  // (ASan builds check it).
  const HandoffRates r = MeasureHandoff(8004, 3);
  EXPECT_GT(r.other_thread_gbs, 0);
  EXPECT_GT(r.same_thread_gbs, 0);
}

TEST(MeasureHandoffTest, NothingToMeasureGivesZeros) {
  for (const auto& [bytes, rounds] :
       {std::pair<int64_t, int>{0, 5}, {7, 5}, {1 << 20, 0}, {-(int64_t{1} << 20), 5}}) {
    const HandoffRates r = MeasureHandoff(bytes, rounds);
    EXPECT_EQ(r.other_thread_gbs, 0) << bytes << " bytes, " << rounds << " rounds";
    EXPECT_EQ(r.same_thread_gbs, 0) << bytes << " bytes, " << rounds << " rounds";
  }
}

}  // namespace
}  // namespace pto::device
