#include "tuner/space_rules.h"

#include <cassert>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace pto::tuner {
namespace {

bool IsValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// An optional '-' and decimal digits only (SimpleAtoi alone also takes '+' and spaces).
bool IsInteger(absl::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string Candidates(const Parameter& p) {
  return absl::StrCat("{", absl::StrJoin(p.values, ","), "}");
}

std::string ParameterNames(const std::vector<Parameter>& params) {
  return absl::StrJoin(params, ",",
                       [](std::string* out, const Parameter& p) { absl::StrAppend(out, p.name); });
}

// The parameters' checks; the product of their candidate counts in `full`.
absl::Status CheckParameters(const SearchSpaceSpec& spec, const std::string& where, int64_t& full) {
  if (spec.parameters.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "has no parameters"));
  }
  absl::flat_hash_set<std::string> names;
  full = 1;
  for (const Parameter& p : spec.parameters) {
    if (!IsValidName(p.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "parameter name '", p.name, "' is not [A-Za-z0-9_]+"));
    }
    if (!names.insert(p.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "parameter '", p.name, "' is declared twice"));
    }
    if (p.values.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "parameter '", p.name, "' has no candidate values"));
    }
    absl::flat_hash_set<int64_t> seen;
    for (int64_t v : p.values) {
      if (!seen.insert(v).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "parameter '", p.name, "' lists the value ", v, " twice"));
      }
    }
    const int64_t n = static_cast<int64_t>(p.values.size());
    if (full > SpaceRules::kMaxFullSize / n) {
      return absl::InvalidArgumentError(absl::StrCat(where,
                                                     "the product of the candidate counts exceeds ",
                                                     SpaceRules::kMaxFullSize, " configs"));
    }
    full *= n;
  }
  return absl::OkStatus();
}

absl::Status CheckConstraintNames(const SearchSpaceSpec& spec, const std::string& where) {
  absl::flat_hash_set<std::string> constraint_names;
  for (const Constraint& c : spec.constraints) {
    if (!IsValidName(c.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "constraint name '", c.name, "' is not [A-Za-z0-9_]+"));
    }
    if (!constraint_names.insert(c.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "constraint '", c.name, "' is declared twice"));
    }
    if (!c.satisfied) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "constraint '", c.name, "' has no predicate"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SpaceRules> SpaceRules::Check(SearchSpaceSpec spec) {
  const std::string where = absl::StrCat("search space '", spec.kind, "': ");
  int64_t full = 0;
  if (absl::Status s = CheckParameters(spec, where, full); !s.ok()) return s;
  if (absl::Status s = CheckConstraintNames(spec, where); !s.ok()) return s;

  SpaceRules rules;
  rules.spec_ = std::move(spec);
  rules.full_size_ = full;
  const int np = rules.num_parameters();
  rules.radix_weight_.assign(np, 1);
  for (int p = np - 2; p >= 0; --p) {
    rules.radix_weight_[p] = rules.radix_weight_[p + 1] *
                             static_cast<int64_t>(rules.spec_.parameters[p + 1].values.size());
  }
  for (const Constraint& c : rules.spec_.constraints) {
    std::vector<int> indices;
    for (const std::string& name : c.parameters) {
      const int p = rules.ParameterIndex(name);
      if (p < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "constraint '", c.name, "' reads unknown parameter '", name,
                         "' (the space has ", ParameterNames(rules.spec_.parameters), ")"));
      }
      indices.push_back(p);
    }
    rules.constraint_params_.push_back(std::move(indices));
  }
  return rules;
}

absl::Status SpaceRules::CheckDefault() const {
  if (!spec_.default_config.has_value()) return absl::OkStatus();
  if (absl::Status s = Contains(*spec_.default_config); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "search space '", spec_.kind, "': the default config is not in the space: ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<SpaceRules> SpaceRules::Create(SearchSpaceSpec spec) {
  absl::StatusOr<SpaceRules> rules = Check(std::move(spec));
  if (!rules.ok()) return rules.status();
  if (absl::Status s = rules->CheckDefault(); !s.ok()) return s;
  return rules;
}

int SpaceRules::ParameterIndex(absl::string_view name) const {
  for (int p = 0; p < num_parameters(); ++p) {
    if (spec_.parameters[p].name == name) return p;
  }
  return -1;
}

int SpaceRules::ValueIndex(int p, int64_t value) const {
  const std::vector<int64_t>& values = spec_.parameters[p].values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == value) return static_cast<int>(i);
  }
  return -1;
}

int64_t SpaceRules::Code(const Config& config) const {
  assert(static_cast<int>(config.size()) == num_parameters());
  int64_t code = 0;
  for (int p = 0; p < num_parameters(); ++p) {
    const int i = ValueIndex(p, config[p]);
    assert(i >= 0);
    code += radix_weight_[p] * i;
  }
  return code;
}

Config SpaceRules::Decode(int64_t code) const {
  assert(code >= 0 && code < full_size_);
  Config config(num_parameters());
  for (int p = 0; p < num_parameters(); ++p) {
    const int64_t i = code / radix_weight_[p];
    code %= radix_weight_[p];
    config[p] = spec_.parameters[p].values[i];
  }
  return config;
}

bool SpaceRules::Holds(int c, const Config& config) const {
  const std::vector<int>& indices = constraint_params_[c];
  int64_t buffer[16];
  std::vector<int64_t> heap;
  int64_t* values = buffer;
  if (indices.size() > std::size(buffer)) {
    heap.resize(indices.size());
    values = heap.data();
  }
  for (size_t i = 0; i < indices.size(); ++i) values[i] = config[indices[i]];
  return spec_.constraints[c].satisfied(std::span<const int64_t>(values, indices.size()));
}

int SpaceRules::FirstViolated(const Config& config) const {
  for (int c = 0; c < static_cast<int>(spec_.constraints.size()); ++c) {
    if (!Holds(c, config)) return c;
  }
  return -1;
}

absl::Status SpaceRules::CheckValues(const Config& config) const {
  if (static_cast<int>(config.size()) != num_parameters()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config has ", config.size(), " values; search space '", spec_.kind, "' has ",
                     num_parameters(), " parameters (", ParameterNames(spec_.parameters), ")"));
  }
  for (int p = 0; p < num_parameters(); ++p) {
    if (ValueIndex(p, config[p]) < 0) {
      const Parameter& param = spec_.parameters[p];
      return absl::InvalidArgumentError(absl::StrCat("parameter '", param.name, "' has value ",
                                                     config[p], ", expected one of ",
                                                     Candidates(param)));
    }
  }
  return absl::OkStatus();
}

absl::Status SpaceRules::Contains(const Config& config) const {
  if (absl::Status s = CheckValues(config); !s.ok()) return s;
  const int c = FirstViolated(config);
  if (c < 0) return absl::OkStatus();
  const Constraint& constraint = spec_.constraints[c];
  return absl::FailedPreconditionError(absl::StrCat("config ", ToString(config),
                                                    " violates constraint '", constraint.name,
                                                    "': ", constraint.reason));
}

bool SpaceRules::IsValid(const Config& config) const {
  return CheckValues(config).ok() && FirstViolated(config) < 0;
}

std::string SpaceRules::ToString(const Config& config) const {
  assert(static_cast<int>(config.size()) == num_parameters());
  std::string out;
  for (int p = 0; p < num_parameters(); ++p) {
    absl::StrAppend(&out, p == 0 ? "" : ",", spec_.parameters[p].name, "=", config[p]);
  }
  return out;
}

absl::StatusOr<Config> SpaceRules::Parse(absl::string_view text) const {
  Config config(num_parameters(), 0);
  std::vector<bool> given(num_parameters(), false);
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("config '", text, "': item '", item, "' is not name=value"));
    }
    const absl::string_view name = item.substr(0, eq);
    const absl::string_view value_text = item.substr(eq + 1);
    const int p = ParameterIndex(name);
    if (p < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("config '", text, "': unknown parameter '", name, "' (search space '",
                       spec_.kind, "' has ", ParameterNames(spec_.parameters), ")"));
    }
    if (given[p]) {
      return absl::InvalidArgumentError(
          absl::StrCat("config '", text, "': parameter '", name, "' is given twice"));
    }
    int64_t value = 0;
    if (!IsInteger(value_text) || !absl::SimpleAtoi(value_text, &value)) {
      return absl::InvalidArgumentError(absl::StrCat("config '", text, "': parameter '", name,
                                                     "' has value '", value_text,
                                                     "', which is not an integer"));
    }
    if (ValueIndex(p, value) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("config '", text, "': parameter '", name,
                                                     "' has value ", value, ", expected one of ",
                                                     Candidates(spec_.parameters[p])));
    }
    config[p] = value;
    given[p] = true;
  }
  for (int p = 0; p < num_parameters(); ++p) {
    if (!given[p]) {
      return absl::InvalidArgumentError(absl::StrCat("config '", text, "': parameter '",
                                                     spec_.parameters[p].name, "' is missing"));
    }
  }
  return config;
}

}  // namespace pto::tuner
