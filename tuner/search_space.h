// A search space: named integer parameters, each with its candidate values, and constraints
// that prune the configs which cannot be good (or cannot be compiled) on this machine, e.g.
// register and cache capacity from DeviceInfo (tuner/hardware_rules.h).
//
// A Config holds one value per parameter, in parameter order. It is *in* the space when every
// value is one of its parameter's candidates and every constraint holds. The space enumerates
// its full (Cartesian) product once when it is created and keeps the valid configs' codes, so
// sizes, enumeration, uniform sampling and membership are exact and cheap; the full product is
// therefore bounded (kMaxFullSize).
//
// Text form: "tile_rows=4,unroll=2,mr=4,nr_vectors=2" (parameters in space order, no spaces).
// It is stable: it depends only on the parameter names and values, so tuning records written
// by one process can be parsed and validated (Parse, then Contains) by another.
#ifndef PTO_TUNER_SEARCH_SPACE_H_
#define PTO_TUNER_SEARCH_SPACE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tuner/rng.h"

namespace pto::tuner {

// One value per parameter of a SearchSpace, in the space's parameter order.
using Config = std::vector<int64_t>;

struct Parameter {
  std::string name;  // [A-Za-z0-9_]+, unique in the space
  // Candidate values, distinct, in the order Neighbors walks them (usually increasing).
  std::vector<int64_t> values;
};

// A rule over some parameters. `satisfied` receives the values of `parameters`, in that
// order, and returns whether the config may be tried.
struct Constraint {
  std::string name;    // unique in the space, e.g. "register_capacity"
  std::string reason;  // one sentence, quoted in Contains' error
  std::vector<std::string> parameters;
  std::function<bool(std::span<const int64_t> values)> satisfied;
};

struct SearchSpaceSpec {
  std::string kind;  // what the space tunes, e.g. "matmul"; used in messages
  // Bumped whenever parameters, candidates or constraints change meaning; tuning keys carry
  // it, so records found under another version are not reused.
  int search_space_version = 1;
  std::vector<Parameter> parameters;
  std::vector<Constraint> constraints;
  // The config used before tuning; must be in the space. Empty: the first valid config.
  std::optional<Config> default_config;
};

// Spaces enumerated so far in this process (SearchSpace::Create calls that reached the
// enumeration, the costly part): a statistic for tests and benches.
int64_t SearchSpacesBuilt();

class SearchSpace {
 public:
  // Bound on the product of the candidate counts (the full space is enumerated on creation).
  static constexpr int64_t kMaxFullSize = int64_t{1} << 22;

  // InvalidArgument naming the problem: no parameters, a bad or duplicate name, no or
  // duplicate candidates, a constraint over an unknown parameter or without a predicate, a
  // full space over kMaxFullSize, no config satisfying every constraint, or a default config
  // that is not in the space.
  static absl::StatusOr<SearchSpace> Create(SearchSpaceSpec spec);

  const std::string& kind() const { return spec_.kind; }
  int search_space_version() const { return spec_.search_space_version; }
  const std::vector<Parameter>& parameters() const { return spec_.parameters; }
  const std::vector<Constraint>& constraints() const { return spec_.constraints; }
  int num_parameters() const { return static_cast<int>(spec_.parameters.size()); }
  // Index of the named parameter, or -1.
  int ParameterIndex(absl::string_view name) const;
  const Config& default_config() const { return default_config_; }

  // Number of configs in the Cartesian product of the candidates.
  int64_t full_size() const { return full_size_; }
  // Number of configs that satisfy every constraint.
  int64_t size() const { return static_cast<int64_t>(valid_codes_.size()); }
  // Number of configs of the full product that violate constraint `c` (whatever the others
  // say), so a rule's effect can be reported and tested.
  int64_t ViolationCount(int c) const { return violations_[c]; }

  // OK if `config` is in the space. InvalidArgument if it has the wrong number of values or
  // a value that is not its parameter's candidate (naming the parameter); FailedPrecondition
  // naming the first violated constraint and its reason.
  absl::Status Contains(const Config& config) const;
  bool IsValid(const Config& config) const;

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

  // "name=value,..." in parameter order. `config` must have one value per parameter.
  std::string ToString(const Config& config) const;
  // Parses "name=value,..." (any order, each parameter exactly once). InvalidArgument naming
  // the item or parameter at fault: not name=value, unknown or repeated parameter, a value
  // that is not an integer or not a candidate, a missing parameter. Constraints are not
  // checked: call Contains.
  absl::StatusOr<Config> Parse(absl::string_view text) const;

  // Mixed-radix code of a config with candidate values in the full product (first parameter
  // most significant), and back. Stable for a given spec.
  int64_t Code(const Config& config) const;
  Config Decode(int64_t code) const;
  // Index of `value` among parameter `p`'s candidates, or -1.
  int ValueIndex(int p, int64_t value) const;

 private:
  SearchSpace() = default;
  // -1 if every constraint holds, else the index of the first violated one.
  int FirstViolated(const Config& config) const;
  bool Holds(int c, const Config& config) const;
  absl::Status CheckValues(const Config& config) const;

  SearchSpaceSpec spec_;
  std::vector<std::vector<int>> constraint_params_;  // parameter indices per constraint
  std::vector<int64_t> radix_weight_;                // per parameter
  int64_t full_size_ = 0;
  std::vector<int64_t> valid_codes_;  // increasing
  std::vector<int64_t> violations_;   // per constraint
  Config default_config_;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_SEARCH_SPACE_H_
