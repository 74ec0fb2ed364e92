#include "tuner/search_space.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/test_spaces.h"
#include "tuner/hardware_rules.h"

namespace pto::tuner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The rules of test_spaces.h written out independently, for brute-force counting.
bool RegisterRuleHolds(int64_t mr, int64_t nr, int registers) {
  return mr * nr + nr + 1 <= registers;
}
bool CacheRuleHolds(int64_t mr, int64_t nr, int64_t vw, int64_t l1d) {
  const int64_t bytes = (mr * kTestK + kTestK * nr * vw) * 4;
  return bytes <= l1d / 2;
}

TEST(SearchSpaceTest, ConstraintsPruneExactlyTheConfigsTheyShould) {
  for (int registers : {16, 32}) {
    SCOPED_TRACE(registers);
    device::DeviceInfo info = TestDevice(registers);
    absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(info));
    ASSERT_TRUE(space.ok()) << space.status();

    int64_t full = 0, valid = 0, reg_violations = 0, cache_violations = 0;
    std::vector<Config> expected;
    for (int64_t tile_rows : {1, 2, 4, 8}) {
      for (int64_t unroll : {1, 2, 4}) {
        for (int64_t mr : {2, 4, 6, 8}) {
          for (int64_t nr : {1, 2, 3, 4}) {
            for (int64_t vw : {4, 8}) {
              ++full;
              const bool reg = RegisterRuleHolds(mr, nr, registers);
              const bool cache = CacheRuleHolds(mr, nr, vw, info.l1d_bytes);
              reg_violations += !reg;
              cache_violations += !cache;
              if (reg && cache) {
                ++valid;
                expected.push_back({tile_rows, unroll, mr, nr, vw});
              }
            }
          }
        }
      }
    }
    EXPECT_EQ(space->full_size(), full);
    EXPECT_EQ(space->size(), valid);
    EXPECT_LT(valid, full);
    EXPECT_GT(reg_violations, 0);
    EXPECT_GT(cache_violations, 0);
    EXPECT_EQ(space->ViolationCount(0), reg_violations);
    EXPECT_EQ(space->ViolationCount(1), cache_violations);
    // Enumerate yields exactly the valid configs, first parameter slowest (the loop order).
    EXPECT_EQ(space->Enumerate(), expected);
    for (int64_t i = 0; i < space->size(); ++i) {
      EXPECT_EQ(space->At(i), expected[i]);
      EXPECT_EQ(space->IndexOf(expected[i]), i);
      EXPECT_TRUE(space->Contains(expected[i]).ok());
    }
  }
}

TEST(SearchSpaceTest, ContainsNamesWhatIsWrong) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(TestDevice(16)));
  ASSERT_TRUE(space.ok()) << space.status();

  absl::Status arity = space->Contains({1, 1, 4});
  EXPECT_EQ(arity.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(arity.message(),
            "config has 3 values; search space 'matmul' has 5 parameters "
            "(tile_rows,unroll,mr,nr_vectors,vector_width)");

  absl::Status value = space->Contains({1, 1, 5, 1, 4});
  EXPECT_EQ(value.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(value.message(), "parameter 'mr' has value 5, expected one of {2,4,6,8}");

  // 6*3 + 3 + 1 = 22 > 16 registers.
  absl::Status reg = space->Contains({1, 1, 6, 3, 4});
  EXPECT_EQ(reg.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reg.message(),
            "config tile_rows=1,unroll=1,mr=6,nr_vectors=3,vector_width=4 violates constraint "
            "'register_capacity': mr*nr_vectors accumulators + nr_vectors B vectors + 1 "
            "broadcast of A must fit in the 16 vector registers");

  // (2*128 + 128*4*8)*4 = 17408 bytes > half of 32 KiB; registers: 2*4+4+1 = 13 fit.
  absl::Status cache = space->Contains({1, 1, 2, 4, 8});
  EXPECT_EQ(cache.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(cache.message(), HasSubstr("violates constraint 'b_panel_fits_l1d'"));
  EXPECT_THAT(cache.message(), HasSubstr("must fit in 50% of L1d: 16384 of 32768 bytes"));
  EXPECT_FALSE(space->IsValid({1, 1, 2, 4, 8}));
  EXPECT_EQ(space->IndexOf({1, 1, 2, 4, 8}), std::nullopt);
  EXPECT_EQ(space->IndexOf({1, 1, 5, 1, 4}), std::nullopt);
}

TEST(SearchSpaceTest, TextFormRoundTripsForEveryConfig) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(TestDevice(32)));
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->ToString({8, 2, 4, 2, 8}),
            "tile_rows=8,unroll=2,mr=4,nr_vectors=2,vector_width=8");
  for (const Config& config : space->Enumerate()) {
    absl::StatusOr<Config> parsed = space->Parse(space->ToString(config));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, config);
  }
  // Any order is accepted.
  absl::StatusOr<Config> shuffled =
      space->Parse("vector_width=4,mr=2,tile_rows=1,nr_vectors=1,unroll=4");
  ASSERT_TRUE(shuffled.ok()) << shuffled.status();
  EXPECT_THAT(*shuffled, ElementsAre(1, 4, 2, 1, 4));
  // Parse checks candidates but not constraints; Contains does.
  absl::StatusOr<Config> too_big =
      space->Parse("tile_rows=1,unroll=1,mr=8,nr_vectors=4,vector_width=4");
  ASSERT_TRUE(too_big.ok()) << too_big.status();
  EXPECT_EQ(space->Contains(*too_big).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SearchSpaceTest, ParseErrorsNameTheParameter) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(TestDevice(16)));
  ASSERT_TRUE(space.ok()) << space.status();
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {"", "config '': item '' is not name=value"},
      {"tile_rows=1,,unroll=1", "config 'tile_rows=1,,unroll=1': item '' is not name=value"},
      {"mr4", "config 'mr4': item 'mr4' is not name=value"},
      {"=4", "config '=4': item '=4' is not name=value"},
      {"tile_rows=1,kc=256",
       "config 'tile_rows=1,kc=256': unknown parameter 'kc' (search space 'matmul' has "
       "tile_rows,unroll,mr,nr_vectors,vector_width)"},
      {"mr=2,mr=4", "config 'mr=2,mr=4': parameter 'mr' is given twice"},
      {"mr=abc", "config 'mr=abc': parameter 'mr' has value 'abc', which is not an integer"},
      {"mr=", "config 'mr=': parameter 'mr' has value '', which is not an integer"},
      {"mr= 4", "config 'mr= 4': parameter 'mr' has value ' 4', which is not an integer"},
      {"mr=+4", "config 'mr=+4': parameter 'mr' has value '+4', which is not an integer"},
      {"mr=99999999999999999999",
       "config 'mr=99999999999999999999': parameter 'mr' has value '99999999999999999999', "
       "which is not an integer"},
      {"mr=5", "config 'mr=5': parameter 'mr' has value 5, expected one of {2,4,6,8}"},
      {"tile_rows=1,unroll=1,mr=2,vector_width=4",
       "config 'tile_rows=1,unroll=1,mr=2,vector_width=4': parameter 'nr_vectors' is missing"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Config> parsed = space->Parse(c.text);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(parsed.status().message(), c.message) << c.text;
  }
}

TEST(SearchSpaceTest, NeighborsMoveOneParameterToAnAdjacentValidValue) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(TestDevice(16)));
  ASSERT_TRUE(space.ok()) << space.status();
  const Config center = {2, 2, 4, 2, 4};
  ASSERT_TRUE(space->IsValid(center));
  std::vector<Config> expected;
  for (int p = 0; p < space->num_parameters(); ++p) {
    const std::vector<int64_t>& values = space->parameters()[p].values;
    const int i = space->ValueIndex(p, center[p]);
    for (int j : {i - 1, i + 1}) {
      if (j < 0 || j >= static_cast<int>(values.size())) continue;
      Config n = center;
      n[p] = values[j];
      if (space->IsValid(n)) expected.push_back(n);
    }
  }
  EXPECT_EQ(space->Neighbors(center), expected);
  // mr 4 -> 6 with nr_vectors 2 needs 6*2+2+1 = 15 registers: allowed; mr 6 -> 8 would not be.
  EXPECT_THAT(space->Neighbors(center), ::testing::Contains(Config{2, 2, 6, 2, 4}));
  EXPECT_THAT(space->Neighbors({1, 1, 6, 2, 4}),
              ::testing::Not(::testing::Contains(Config{1, 1, 8, 2, 4})));
  // A corner has only upward neighbours.
  for (const Config& n : space->Neighbors({1, 1, 2, 1, 4})) {
    EXPECT_TRUE(space->IsValid(n));
    int moved = 0;
    for (int p = 0; p < 5; ++p) moved += n[p] != Config{1, 1, 2, 1, 4}[p];
    EXPECT_EQ(moved, 1);
  }
}

TEST(SearchSpaceTest, SampleIsValidCoversTheSpaceAndIsSeeded) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(TestDevice(16)));
  ASSERT_TRUE(space.ok()) << space.status();
  Rng a(7), b(7), c(8);
  std::set<Config> seen;
  std::vector<Config> from_a, from_c;
  for (int i = 0; i < 4000; ++i) {
    Config x = space->Sample(a);
    EXPECT_EQ(x, space->Sample(b));
    EXPECT_TRUE(space->IsValid(x));
    seen.insert(x);
    from_a.push_back(x);
    from_c.push_back(space->Sample(c));
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), space->size());
  EXPECT_NE(from_a, from_c);
}

TEST(SearchSpaceTest, DefaultConfigIsInTheSpace) {
  device::DeviceInfo info = TestDevice(16);
  SearchSpaceSpec spec = MatmulLikeSpec(info);
  spec.default_config = Config{1, 1, 4, 2, 4};
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->default_config(), (Config{1, 1, 4, 2, 4}));
  EXPECT_EQ(space->search_space_version(), 3);
  EXPECT_EQ(space->kind(), "matmul");

  spec.default_config.reset();
  space = SearchSpace::Create(spec);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->default_config(), space->At(0));

  spec.default_config = Config{1, 1, 8, 4, 4};
  space = SearchSpace::Create(spec);
  EXPECT_EQ(space.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(space.status().message(),
              HasSubstr("search space 'matmul': the default config is not in the space: config "
                        "tile_rows=1,unroll=1,mr=8,nr_vectors=4,vector_width=4 violates "
                        "constraint 'register_capacity'"));
}

TEST(SearchSpaceTest, CreateRejectsBadSpecs) {
  auto error = [](SearchSpaceSpec spec) {
    absl::StatusOr<SearchSpace> space = SearchSpace::Create(std::move(spec));
    EXPECT_EQ(space.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(space.status().message());
  };
  auto base = [] {
    SearchSpaceSpec spec;
    spec.kind = "k";
    spec.parameters = {{"a", {1, 2}}, {"b", {1, 2, 3}}};
    return spec;
  };
  {
    SearchSpaceSpec spec = base();
    spec.parameters.clear();
    EXPECT_EQ(error(spec), "search space 'k': has no parameters");
  }
  {
    SearchSpaceSpec spec = base();
    spec.parameters.push_back({"a", {1}});
    EXPECT_EQ(error(spec), "search space 'k': parameter 'a' is declared twice");
  }
  {
    SearchSpaceSpec spec = base();
    spec.parameters.push_back({"c=d", {1}});
    EXPECT_EQ(error(spec), "search space 'k': parameter name 'c=d' is not [A-Za-z0-9_]+");
  }
  {
    SearchSpaceSpec spec = base();
    spec.parameters.push_back({"c", {}});
    EXPECT_EQ(error(spec), "search space 'k': parameter 'c' has no candidate values");
  }
  {
    SearchSpaceSpec spec = base();
    spec.parameters.push_back({"c", {4, 8, 4}});
    EXPECT_EQ(error(spec), "search space 'k': parameter 'c' lists the value 4 twice");
  }
  {
    SearchSpaceSpec spec = base();
    std::vector<int64_t> many(2048);
    for (int i = 0; i < 2048; ++i) many[i] = i;
    spec.parameters = {{"x", many}, {"y", many}, {"z", {1, 2}}};
    EXPECT_EQ(error(spec),
              "search space 'k': the product of the candidate counts exceeds 4194304 configs");
  }
  {
    SearchSpaceSpec spec = base();
    spec.constraints.push_back({"r", "why", {"a", "c"}, [](auto) { return true; }});
    EXPECT_EQ(error(spec),
              "search space 'k': constraint 'r' reads unknown parameter 'c' (the "
              "space has a,b)");
  }
  {
    SearchSpaceSpec spec = base();
    spec.constraints.push_back({"r", "why", {"a"}, nullptr});
    EXPECT_EQ(error(spec), "search space 'k': constraint 'r' has no predicate");
  }
  {
    SearchSpaceSpec spec = base();
    spec.constraints.push_back({"r", "why", {"a"}, [](auto) { return true; }});
    spec.constraints.push_back({"r", "why", {"b"}, [](auto) { return true; }});
    EXPECT_EQ(error(spec), "search space 'k': constraint 'r' is declared twice");
  }
  {
    SearchSpaceSpec spec = base();
    spec.constraints.push_back({"never", "why", {"a"}, [](auto) { return false; }});
    EXPECT_EQ(error(spec), "search space 'k': no config satisfies every constraint");
  }
}

TEST(HardwareRulesTest, VectorWidthsFollowTheIsa) {
  device::DeviceInfo info;
  info.vector_bits = 128;
  EXPECT_THAT(VectorWidthCandidates(info), ElementsAre(4));
  info.vector_bits = 256;
  EXPECT_THAT(VectorWidthCandidates(info), ElementsAre(4, 8));
  info.vector_bits = 512;
  EXPECT_THAT(VectorWidthCandidates(info), ElementsAre(4, 8, 16));
}

TEST(HardwareRulesTest, RegisterCapacityDependsOnTheRegisterFile) {
  const int64_t six_by_four[] = {6, 4};    // 6*4 + 4 + 1 = 29
  const int64_t four_by_three[] = {4, 3};  // 4*3 + 3 + 1 = 16
  Constraint avx2 = RegisterCapacity(TestDevice(16), MatmulLikeRegisters());
  Constraint avx512 = RegisterCapacity(TestDevice(32), MatmulLikeRegisters());
  EXPECT_FALSE(avx2.satisfied(six_by_four));
  EXPECT_TRUE(avx512.satisfied(six_by_four));
  EXPECT_TRUE(avx2.satisfied(four_by_three));
  EXPECT_THAT(avx2.parameters, ElementsAre("mr", "nr_vectors"));
  EXPECT_EQ(avx2.reason,
            "mr*nr_vectors accumulators + nr_vectors B vectors + 1 broadcast of A must fit in the "
            "16 vector registers");
}

// The count is the caller's: the rule applies it to the values of its parameters, in order.
TEST(HardwareRulesTest, RegisterCapacityUsesTheCallersCount) {
  RegisterRule rule;
  rule.parameters = {"a", "b"};
  rule.holds = "a + 2*b values";
  rule.registers = [](std::span<const int64_t> v) { return v[0] + 2 * v[1]; };
  Constraint c = RegisterCapacity(TestDevice(16), rule);
  const int64_t at_limit[] = {10, 3};  // 16
  const int64_t beyond[] = {3, 7};     // 17
  EXPECT_TRUE(c.satisfied(at_limit));
  EXPECT_FALSE(c.satisfied(beyond));
  EXPECT_THAT(c.parameters, ElementsAre("a", "b"));
  EXPECT_EQ(c.name, "register_capacity");
  EXPECT_EQ(c.reason, "a + 2*b values must fit in the 16 vector registers");
}

TEST(HardwareRulesTest, CacheCapacityUsesTheChosenLevel) {
  device::DeviceInfo info = TestDevice(16);
  info.l1d_bytes = 48 << 10;
  info.l2_bytes = 1 << 20;
  info.l3_bytes = 32 << 20;
  auto rule = [](CacheLevel level) {
    CacheRule r;
    r.name = "fits";
    r.level = level;
    r.fraction = 0.25;
    r.parameters = {"bytes"};
    r.working_set_bytes = [](std::span<const int64_t> v) { return v[0]; };
    return r;
  };
  const int64_t small[] = {12 << 10}, medium[] = {100 << 10}, large[] = {8 << 20};
  Constraint l1 = CacheCapacity(info, rule(CacheLevel::kL1d));
  Constraint l2 = CacheCapacity(info, rule(CacheLevel::kL2));
  Constraint l3 = CacheCapacity(info, rule(CacheLevel::kL3));
  EXPECT_TRUE(l1.satisfied(small));
  EXPECT_FALSE(l1.satisfied(medium));
  EXPECT_TRUE(l2.satisfied(medium));
  EXPECT_FALSE(l2.satisfied(large));
  EXPECT_TRUE(l3.satisfied(large));
  EXPECT_EQ(l2.reason, "the working set of (bytes) must fit in 25% of L2: 262144 of 1048576 bytes");
}

}  // namespace
}  // namespace pto::tuner
