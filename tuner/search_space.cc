#include "tuner/search_space.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pto::tuner {
namespace {

std::atomic<int64_t> spaces_built{0};

}  // namespace

int64_t SearchSpacesBuilt() { return spaces_built.load(std::memory_order_relaxed); }

absl::StatusOr<SearchSpace> SearchSpace::Create(SearchSpaceSpec spec) {
  absl::StatusOr<SpaceRules> rules = Check(std::move(spec));
  if (!rules.ok()) return rules.status();
  SearchSpace space(*std::move(rules));

  // Enumerate the full product once: count each constraint's violations, keep valid codes.
  spaces_built.fetch_add(1, std::memory_order_relaxed);
  const int nc = static_cast<int>(space.constraints().size());
  space.violations_.assign(nc, 0);
  for (int64_t code = 0; code < space.full_size(); ++code) {
    const Config config = space.Decode(code);
    bool valid = true;
    for (int c = 0; c < nc; ++c) {
      if (!space.Holds(c, config)) {
        ++space.violations_[c];
        valid = false;
      }
    }
    if (valid) space.valid_codes_.push_back(code);
  }
  if (space.valid_codes_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("search space '", space.kind(), "': no config satisfies every constraint"));
  }
  if (absl::Status s = space.CheckDefault(); !s.ok()) return s;
  space.default_config_ =
      space.spec().default_config.has_value() ? *space.spec().default_config : space.At(0);
  return space;
}

std::vector<Config> SearchSpace::Enumerate() const {
  std::vector<Config> out;
  out.reserve(valid_codes_.size());
  for (int64_t code : valid_codes_) out.push_back(Decode(code));
  return out;
}

Config SearchSpace::At(int64_t i) const {
  assert(i >= 0 && i < size());
  return Decode(valid_codes_[i]);
}

std::optional<int64_t> SearchSpace::IndexOf(const Config& config) const {
  if (!CheckValues(config).ok()) return std::nullopt;
  const int64_t code = Code(config);
  auto it = std::lower_bound(valid_codes_.begin(), valid_codes_.end(), code);
  if (it == valid_codes_.end() || *it != code) return std::nullopt;
  return it - valid_codes_.begin();
}

Config SearchSpace::Sample(Rng& rng) const { return At(rng.UniformIndex(size())); }

std::vector<Config> SearchSpace::Neighbors(const Config& config) const {
  std::vector<Config> out;
  for (int p = 0; p < num_parameters(); ++p) {
    const int i = ValueIndex(p, config[p]);
    assert(i >= 0);
    const std::vector<int64_t>& values = parameters()[p].values;
    for (int j : {i - 1, i + 1}) {
      if (j < 0 || j >= static_cast<int>(values.size())) continue;
      Config n = config;
      n[p] = values[j];
      if (FirstViolated(n) < 0) out.push_back(std::move(n));
    }
  }
  return out;
}

}  // namespace pto::tuner
