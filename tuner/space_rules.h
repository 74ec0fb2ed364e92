// A search space's rules without its enumeration: the parameters with their candidate values,
// the constraints and the default config, checked when created, so that a given config can be
// parsed, checked and printed at the cost of that one config. SearchSpace (search_space.h)
// is SpaceRules plus the enumeration of every valid config, whose cost grows with the full
// product of the candidates; where only given configs are checked (a stored tuning record
// validated before use), SpaceRules gives the same answers without it.
//
// Config and text form: see search_space.h.
#ifndef PTO_TUNER_SPACE_RULES_H_
#define PTO_TUNER_SPACE_RULES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pto::tuner {

// One value per parameter of a space, in the space's parameter order.
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

class SpaceRules {
 public:
  // Bound on the product of the candidate counts (SearchSpace enumerates the full product).
  static constexpr int64_t kMaxFullSize = int64_t{1} << 22;

  // InvalidArgument naming the problem: no parameters, a bad or duplicate name, no or
  // duplicate candidates, a constraint over an unknown parameter or without a predicate, a
  // full product over kMaxFullSize, or a default config that is not in the space. A spec with
  // a default config is accepted here exactly when SearchSpace::Create accepts it (its default
  // proves the space is not empty); without one, emptiness is not checked (that needs the
  // enumeration).
  static absl::StatusOr<SpaceRules> Create(SearchSpaceSpec spec);

  const std::string& kind() const { return spec_.kind; }
  int search_space_version() const { return spec_.search_space_version; }
  const std::vector<Parameter>& parameters() const { return spec_.parameters; }
  const std::vector<Constraint>& constraints() const { return spec_.constraints; }
  int num_parameters() const { return static_cast<int>(spec_.parameters.size()); }
  // Index of the named parameter, or -1.
  int ParameterIndex(absl::string_view name) const;
  // Index of `value` among parameter `p`'s candidates, or -1.
  int ValueIndex(int p, int64_t value) const;

  // Number of configs in the Cartesian product of the candidates.
  int64_t full_size() const { return full_size_; }

  // OK if `config` is in the space. InvalidArgument if it has the wrong number of values or
  // a value that is not its parameter's candidate (naming the parameter); FailedPrecondition
  // naming the first violated constraint and its reason.
  absl::Status Contains(const Config& config) const;
  bool IsValid(const Config& config) const;

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

 protected:
  SpaceRules() = default;
  // The spec's structural checks (everything Create checks but the default config).
  static absl::StatusOr<SpaceRules> Check(SearchSpaceSpec spec);
  // Create's check of the default config, if the spec has one.
  absl::Status CheckDefault() const;
  const SearchSpaceSpec& spec() const { return spec_; }

  // -1 if every constraint holds, else the index of the first violated one.
  int FirstViolated(const Config& config) const;
  bool Holds(int c, const Config& config) const;
  absl::Status CheckValues(const Config& config) const;

 private:
  SearchSpaceSpec spec_;
  std::vector<std::vector<int>> constraint_params_;  // parameter indices per constraint
  std::vector<int64_t> radix_weight_;                // per parameter
  int64_t full_size_ = 0;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_SPACE_RULES_H_
