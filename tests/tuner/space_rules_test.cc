// SpaceRules: a space's rules without its enumeration. Its verdicts on single configs agree with
// the enumerated SearchSpace, it rejects the same specs, and creating it enumerates nothing.
#include "tuner/space_rules.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/test_spaces.h"
#include "tuner/search_space.h"

namespace pto::tuner {
namespace {

using ::testing::HasSubstr;

TEST(SpaceRulesTest, AgreesWithTheEnumeratedSpaceOnEveryConfig) {
  for (int registers : {16, 32}) {
    SCOPED_TRACE(registers);
    const SearchSpaceSpec spec = MatmulLikeSpec(TestDevice(registers));
    absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
    ASSERT_TRUE(space.ok()) << space.status();
    const int64_t built = SearchSpacesBuilt();
    absl::StatusOr<SpaceRules> rules = SpaceRules::Create(spec);
    ASSERT_TRUE(rules.ok()) << rules.status();
    EXPECT_EQ(SearchSpacesBuilt(), built);
    EXPECT_EQ(rules->full_size(), space->full_size());
    EXPECT_EQ(rules->kind(), "matmul");
    EXPECT_EQ(rules->search_space_version(), 3);
    int64_t valid = 0;
    for (int64_t code = 0; code < space->full_size(); ++code) {
      const Config config = space->Decode(code);
      EXPECT_EQ(rules->Decode(code), config);
      EXPECT_EQ(rules->Code(config), code);
      EXPECT_EQ(rules->Contains(config), space->Contains(config)) << space->ToString(config);
      EXPECT_EQ(rules->IsValid(config), space->IndexOf(config).has_value());
      valid += rules->IsValid(config) ? 1 : 0;
    }
    EXPECT_EQ(valid, space->size());
  }
}

TEST(SpaceRulesTest, ParseAndContainsNameWhatIsWrong) {
  absl::StatusOr<SpaceRules> rules = SpaceRules::Create(MatmulLikeSpec(TestDevice(16)));
  ASSERT_TRUE(rules.ok()) << rules.status();
  absl::StatusOr<Config> config =
      rules->Parse("tile_rows=1,unroll=1,mr=8,nr_vectors=4,vector_width=4");
  ASSERT_TRUE(config.ok()) << config.status();
  const absl::Status spill = rules->Contains(*config);
  EXPECT_EQ(spill.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(spill.message(),
              HasSubstr("config tile_rows=1,unroll=1,mr=8,nr_vectors=4,vector_width=4 violates "
                        "constraint 'register_capacity'"));
  const absl::Status not_candidate = rules->Contains({1, 1, 5, 1, 4});
  EXPECT_EQ(not_candidate.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_candidate.message(), HasSubstr("parameter 'mr' has value 5, expected one of"));
  const absl::StatusOr<Config> unknown = rules->Parse("colour=1");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown parameter 'colour'"));
  EXPECT_EQ(rules->ToString(*config), "tile_rows=1,unroll=1,mr=8,nr_vectors=4,vector_width=4");
}

// Specs SearchSpace::Create rejects for their structure or their default are rejected here with
// the same status; a spec whose only fault is an empty space is rejected only by the
// enumeration, or here by a default config that cannot be in it.
TEST(SpaceRulesTest, RejectsWhatTheSpaceRejects) {
  auto base = [] {
    SearchSpaceSpec spec;
    spec.kind = "k";
    spec.parameters = {{"a", {1, 2}}, {"b", {1, 2, 3}}};
    return spec;
  };
  std::vector<SearchSpaceSpec> bad;
  bad.push_back(base());
  bad.back().parameters.clear();
  bad.push_back(base());
  bad.back().parameters.push_back({"a", {1}});
  bad.push_back(base());
  bad.back().parameters.push_back({"c", {4, 8, 4}});
  bad.push_back(base());
  bad.back().constraints.push_back({"r", "why", {"a", "c"}, [](auto) { return true; }});
  bad.push_back(base());
  bad.back().constraints.push_back({"r", "why", {"a"}, nullptr});
  bad.push_back(base());
  std::vector<int64_t> many(2048);
  for (int i = 0; i < 2048; ++i) many[i] = i;
  bad.back().parameters = {{"x", many}, {"y", many}, {"z", {1, 2}}};
  bad.push_back(base());
  bad.back().constraints.push_back({"odd_a", "a is odd", {"a"}, [](auto v) { return v[0] == 1; }});
  bad.back().default_config = Config{2, 1};
  for (const SearchSpaceSpec& spec : bad) {
    const absl::Status want = SearchSpace::Create(spec).status();
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(SpaceRules::Create(spec).status(), want);
  }
  EXPECT_EQ(SpaceRules::Create(bad.back()).status().message(),
            "search space 'k': the default config is not in the space: config a=2,b=1 violates "
            "constraint 'odd_a': a is odd");

  SearchSpaceSpec empty = base();
  empty.constraints.push_back({"never", "why", {"a"}, [](auto) { return false; }});
  EXPECT_EQ(SearchSpace::Create(empty).status().message(),
            "search space 'k': no config satisfies every constraint");
  EXPECT_TRUE(SpaceRules::Create(empty).ok());
  empty.default_config = Config{1, 1};
  EXPECT_EQ(SpaceRules::Create(empty).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pto::tuner
