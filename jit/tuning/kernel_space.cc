#include "jit/tuning/kernel_space.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jit/tuning/space_builders.h"

namespace pto::jit {
namespace {

using tuning::KernelFacts;

// Abseil 20220623's string_view is its own type.
absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsConstant(const ir::SymExpr& e, int64_t value) {
  return e.IsConstant() && e.constant() == value;
}

absl::Status Invalid(const ir::Kernel& k, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("no search space for ", SpaceKind(k.kind), " kernel '", k.name, "': ", why));
}

absl::StatusOr<KernelFacts> FactsOf(const ir::Kernel& k) {
  KernelFacts f;
  f.kind = k.kind;
  f.current = k.config;
  const int rank = static_cast<int>(k.domain.size());
  const std::array<ir::SymExpr, 2> grid = ir::KernelGrid(k);
  f.rows = grid[0].AsConstant();
  f.cols = grid[1].AsConstant();
  f.cols_inert = f.cols == 1;
  switch (k.kind) {
    case ir::KernelKind::kElementwise:
      f.work_per_cell = 1;
      if (rank > 0) f.step = k.domain.back().AsConstant();
      f.one_store = k.stores.size() == 1;
      break;
    case ir::KernelKind::kReduce:
      if (k.axis < 0 || k.axis >= rank) return Invalid(k, "its axis is out of range");
      f.work_per_cell = k.domain[k.axis].AsConstant();
      f.step = (k.axis == rank - 1 ? k.domain[k.axis] : k.domain.back()).AsConstant();
      break;
    case ir::KernelKind::kRowOp:
      if (rank < 1) return Invalid(k, "it needs a domain of rank >= 1");
      f.work_per_cell = k.domain.back().AsConstant();
      f.step = f.work_per_cell;
      f.one_store = k.stores.size() == 1;
      break;
    case ir::KernelKind::kScatterAdd: {
      if (rank != 4) return Invalid(k, "it needs the domain [P, N, M, Q]");
      f.work_per_cell = 1;  // as the plan counts it (choose_tile_configs.cc)
      f.step = k.domain[3].AsConstant();
      f.one_store = true;
      break;
    }
    case ir::KernelKind::kMatMul: {
      const int n_accesses = static_cast<int>(k.accesses.size());
      if (rank < 2 || k.a < 0 || k.a >= n_accesses || k.b < 0 || k.b >= n_accesses ||
          static_cast<int>(k.accesses[k.b].strides.size()) != rank + 1) {
        return Invalid(k, "it needs rank >= 2 and operands a, b with rank + 1 strides");
      }
      f.n = k.domain.back().AsConstant();
      f.k = k.k.AsConstant();
      const std::vector<ir::SymExpr>& b = k.accesses[k.b].strides;
      f.dot_form = ir::MatMulDotForm(k);
      f.b_prepacked = k.b_packed >= 0;
      // A B that moves with the batch dims is packed per batch entry in the dot form only.
      for (int d = 0; d + 2 < rank; ++d) {
        if (!IsConstant(b[d], 0) && !f.dot_form) f.can_pack = false;
      }
      // The dot-product form packs only tiles of two row blocks or more: one row never does.
      if (f.dot_form && !f.b_prepacked && f.rows == 1) f.can_pack = false;
      f.can_k_block = ir::MatMulCanBlockK(k);
      break;
    }
  }
  return f;
}

// Every rule lets the default's own values of its parameters through (kernel_space.h).
void LetDefaultThrough(tuner::SearchSpaceSpec& spec) {
  const tuner::Config& def = *spec.default_config;
  for (tuner::Constraint& c : spec.constraints) {
    std::vector<int64_t> values;
    for (const std::string& name : c.parameters) values.push_back(tuning::ValueOf(spec, def, name));
    c.satisfied = [rule = std::move(c.satisfied), values](std::span<const int64_t> v) {
      return std::equal(v.begin(), v.end(), values.begin(), values.end()) || rule(v);
    };
  }
}

tuner::SearchSpaceSpec SpecOf(const KernelFacts& facts, const device::DeviceInfo& device) {
  tuner::SearchSpaceSpec spec = facts.kind == ir::KernelKind::kMatMul
                                    ? tuning::MatMulSpaceSpec(facts, device)
                                    : tuning::LoopSpaceSpec(facts, device);
  spec.search_space_version = kKernelSpaceVersion;
  return spec;
}

// A kernel's space as KernelSearchSpace and KernelSpaceRules make it.
absl::StatusOr<tuner::SearchSpaceSpec> KernelSpaceSpec(const ir::Kernel& kernel,
                                                       const device::DeviceInfo& device) {
  absl::StatusOr<KernelFacts> facts = FactsOf(kernel);
  if (!facts.ok()) return facts.status();
  tuner::SearchSpaceSpec spec = SpecOf(*facts, device);
  LetDefaultThrough(spec);
  return spec;
}

absl::StatusOr<ir::KernelKind> KindOf(std::string_view kind_name) {
  const absl::string_view kind = AsAbsl(kind_name);
  for (ir::KernelKind k :
       {ir::KernelKind::kElementwise, ir::KernelKind::kReduce, ir::KernelKind::kRowOp,
        ir::KernelKind::kMatMul, ir::KernelKind::kScatterAdd}) {
    if (kind == SpaceKind(k)) return k;
  }
  return absl::NotFoundError(absl::StrCat("unknown search space kind '", kind,
                                          "' (known: ", absl::StrJoin(SpaceKinds(), ", "), ")"));
}

// Kind-wide spaces are built once per kind and machine shape (ValidateSpaceConfig runs per
// tuning record of an import).
absl::StatusOr<std::shared_ptr<const tuner::SearchSpace>> CachedKindSpace(
    std::string_view kind_name, const device::DeviceInfo& device) {
  const absl::string_view kind = AsAbsl(kind_name);
  static std::mutex mu;
  static auto* spaces = new std::map<std::string, std::shared_ptr<const tuner::SearchSpace>>();
  const std::string key = absl::StrCat(kind, "/", device.vector_bits, "/", device.vector_registers,
                                       "/", device.l2_bytes);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = spaces->find(key);
    if (it != spaces->end()) return it->second;
  }
  absl::StatusOr<tuner::SearchSpace> space = KindSearchSpace(kind_name, device);
  if (!space.ok()) return space.status();
  auto shared = std::make_shared<const tuner::SearchSpace>(*std::move(space));
  std::lock_guard<std::mutex> lock(mu);
  return spaces->emplace(key, std::move(shared)).first->second;
}

bool IsGrain(absl::string_view name) { return name == "tile_rows" || name == "tile_cols"; }

}  // namespace

const char* SpaceKind(ir::KernelKind kind) {
  switch (kind) {
    case ir::KernelKind::kElementwise:
      return "elementwise";
    case ir::KernelKind::kReduce:
      return "reduce";
    case ir::KernelKind::kRowOp:
      return "row_op";
    case ir::KernelKind::kMatMul:
      return "matmul";
    case ir::KernelKind::kScatterAdd:
      return "scatter_add";
  }
  return "unknown";
}

std::vector<std::string> SpaceKinds() {
  return {"elementwise", "matmul", "reduce", "row_op", "scatter_add"};
}

absl::StatusOr<tuner::SearchSpace> KernelSearchSpace(const ir::Kernel& kernel,
                                                     const device::DeviceInfo& device) {
  absl::StatusOr<tuner::SearchSpaceSpec> spec = KernelSpaceSpec(kernel, device);
  if (!spec.ok()) return spec.status();
  return tuner::SearchSpace::Create(*std::move(spec));
}

absl::StatusOr<tuner::SpaceRules> KernelSpaceRules(const ir::Kernel& kernel,
                                                   const device::DeviceInfo& device) {
  absl::StatusOr<tuner::SearchSpaceSpec> spec = KernelSpaceSpec(kernel, device);
  if (!spec.ok()) return spec.status();
  return tuner::SpaceRules::Create(*std::move(spec));
}

tuner::Config ToSpaceConfig(const tuner::SpaceRules& space, const ir::TileConfig& config) {
  return tuning::ConfigFromFields(space.parameters(), config);
}

absl::StatusOr<ir::TileConfig> ApplySpaceConfig(const tuner::SpaceRules& space,
                                                const tuner::Config& config, ir::TileConfig base) {
  for (const tuner::Parameter& p : space.parameters()) {
    if (tuning::FindTileConfigField(p.name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "search space '", space.kind(), "': parameter '", p.name, "' is not a TileConfig field"));
    }
  }
  if (absl::Status in = space.Contains(config); !in.ok()) {
    return absl::Status(in.code(), absl::StrCat("cannot apply a config outside the ", space.kind(),
                                                " space: ", in.message()));
  }
  const tuner::Config as_is = ToSpaceConfig(space, base);
  for (int p = 0; p < space.num_parameters(); ++p) {
    if (config[p] == as_is[p]) continue;
    tuning::FindTileConfigField(space.parameters()[p].name)->set(base, config[p]);
  }
  return base;
}

absl::StatusOr<tuner::SearchSpace> KindSearchSpace(std::string_view kind,
                                                   const device::DeviceInfo& device) {
  absl::StatusOr<ir::KernelKind> k = KindOf(kind);
  if (!k.ok()) return k.status();
  KernelFacts facts;
  facts.kind = *k;
  facts.wide = true;
  return tuner::SearchSpace::Create(SpecOf(facts, device));
}

absl::Status ValidateSpaceConfig(std::string_view kind_name, uint32_t version,
                                 std::string_view text, const device::DeviceInfo& device) {
  const absl::string_view kind = AsAbsl(kind_name), config_text = AsAbsl(text);
  absl::StatusOr<std::shared_ptr<const tuner::SearchSpace>> space =
      CachedKindSpace(kind_name, device);
  if (!space.ok()) return space.status();
  const tuner::SearchSpace& s = **space;
  if (version != static_cast<uint32_t>(kKernelSpaceVersion)) {
    return absl::FailedPreconditionError(absl::StrCat("search space version ", version,
                                                      " (this pto's ", kind, " space is version ",
                                                      kKernelSpaceVersion, ")"));
  }
  const std::string not_a_config =
      absl::StrCat("config '", config_text, "' is not a config of the ", kind, " space: ");
  // Grains come from a kernel's extents: any value in range stands for the placeholder 0.
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(config_text, ',')) {
    const size_t eq = item.find('=');
    if (eq != absl::string_view::npos && IsGrain(item.substr(0, eq))) {
      const absl::string_view name = item.substr(0, eq), value_text = item.substr(eq + 1);
      int64_t value = 0;
      const bool digits = !value_text.empty() && value_text.size() <= 18 &&
                          std::all_of(value_text.begin(), value_text.end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || !absl::SimpleAtoi(value_text, &value) || value > kMaxGrain) {
        return absl::InvalidArgumentError(
            absl::StrCat(not_a_config, "parameter '", name, "' has value '", value_text,
                         "', expected a grain in [0, ", kMaxGrain, "]"));
      }
      items.push_back(absl::StrCat(name, "=0"));
      continue;
    }
    items.emplace_back(item);
  }
  const std::string placeholder_text = absl::StrJoin(items, ",");
  absl::StatusOr<tuner::Config> config = s.Parse(placeholder_text);
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        not_a_config, absl::StripPrefix(config.status().message(),
                                        absl::StrCat("config '", placeholder_text, "': "))));
  }
  if (absl::Status in = s.Contains(*config); !in.ok()) {
    return absl::Status(
        in.code(),
        absl::StrCat(
            "config '", config_text, "' is outside the ", kind, " space on this machine: ",
            absl::StripPrefix(in.message(), absl::StrCat("config ", s.ToString(*config), " "))));
  }
  return absl::OkStatus();
}

}  // namespace pto::jit
