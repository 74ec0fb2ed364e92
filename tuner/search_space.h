// A search space: named integer parameters, each with its candidate values, and constraints
// that prune the configs which cannot be good (or cannot be compiled) on this machine, e.g.
// register and cache capacity from DeviceInfo (tuner/hardware_rules.h). Those are its rules
// (SpaceRules, tuner/space_rules.h: parse, check and print one config).
//
// A Config holds one value per parameter, in parameter order. It is *in* the space when every
// value is one of its parameter's candidates and every constraint holds. The space enumerates
// its full (Cartesian) product once when it is created and keeps the valid configs' codes, so
// sizes, enumeration, uniform sampling and membership are exact and cheap; the full product is
// therefore bounded (kMaxFullSize). Enumerating costs time in proportion to the full product:
// code that only checks given configs uses SpaceRules.
//
// Text form: "tile_rows=4,unroll=2,mr=4,nr_vectors=2" (parameters in space order, no spaces).
// It is stable: it depends only on the parameter names and values, so tuning records written
// by one process can be parsed and validated (Parse, then Contains) by another.
#ifndef PTO_TUNER_SEARCH_SPACE_H_
#define PTO_TUNER_SEARCH_SPACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner/rng.h"
#include "tuner/space_rules.h"

namespace pto::tuner {

// Spaces enumerated so far in this process (SearchSpace::Create calls that reached the
// enumeration, the costly part): a statistic for tests and benches.
int64_t SearchSpacesBuilt();

class SearchSpace : public SpaceRules {
 public:
  // InvalidArgument naming the problem: what SpaceRules::Create rejects, or no config
  // satisfying every constraint.
  static absl::StatusOr<SearchSpace> Create(SearchSpaceSpec spec);

  const Config& default_config() const { return default_config_; }

  // Number of configs that satisfy every constraint.
  int64_t size() const { return static_cast<int64_t>(valid_codes_.size()); }
  // Number of configs of the full product that violate constraint `c` (whatever the others
  // say), so a rule's effect can be reported and tested.
  int64_t ViolationCount(int c) const { return violations_[c]; }

  // All valid configs, in enumeration order: the first parameter varies slowest.
  std::vector<Config> Enumerate() const;
  // The i-th valid config in enumeration order; 0 <= i < size().
  Config At(int64_t i) const;
  // Code() of At(i), without decoding.
  int64_t CodeAt(int64_t i) const { return valid_codes_[i]; }
  // Position of `config` among the valid configs, or nullopt if it is not in the space.
  std::optional<int64_t> IndexOf(const Config& config) const;
  // A valid config drawn uniformly.
  Config Sample(Rng& rng) const;
  // Valid configs that differ from `config` in one parameter moved to an adjacent candidate
  // (previous, then next), parameters in order. `config` must have candidate values.
  std::vector<Config> Neighbors(const Config& config) const;

 private:
  explicit SearchSpace(SpaceRules rules) : SpaceRules(std::move(rules)) {}

  std::vector<int64_t> valid_codes_;  // increasing
  std::vector<int64_t> violations_;   // per constraint
  Config default_config_;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_SEARCH_SPACE_H_
