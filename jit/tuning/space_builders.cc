#include "jit/tuning/space_builders.h"

#include <algorithm>
#include <cassert>

#include "absl/strings/str_cat.h"

namespace pto::jit::tuning {
namespace {

constexpr TileConfigField kFields[] = {
    {"tile_rows", [](const ir::TileConfig& c) { return c.tile_rows; },
     [](ir::TileConfig& c, int64_t v) { c.tile_rows = v; }},
    {"tile_cols", [](const ir::TileConfig& c) { return c.tile_cols; },
     [](ir::TileConfig& c, int64_t v) { c.tile_cols = v; }},
    {"vector_width", [](const ir::TileConfig& c) { return int64_t{c.vector_width}; },
     [](ir::TileConfig& c, int64_t v) { c.vector_width = static_cast<int>(v); }},
    {"unroll", [](const ir::TileConfig& c) { return int64_t{c.unroll}; },
     [](ir::TileConfig& c, int64_t v) { c.unroll = static_cast<int>(v); }},
    {"mr", [](const ir::TileConfig& c) { return int64_t{c.mr}; },
     [](ir::TileConfig& c, int64_t v) { c.mr = static_cast<int>(v); }},
    {"nr_vectors", [](const ir::TileConfig& c) { return int64_t{c.nr_vectors}; },
     [](ir::TileConfig& c, int64_t v) { c.nr_vectors = static_cast<int>(v); }},
    {"panel_bytes", [](const ir::TileConfig& c) { return c.panel_bytes; },
     [](ir::TileConfig& c, int64_t v) { c.panel_bytes = v; }},
    {"pack_b", [](const ir::TileConfig& c) { return int64_t{c.pack_b ? 1 : 0}; },
     [](ir::TileConfig& c, int64_t v) { c.pack_b = v != 0; }},
    {"pack_prefetch_rows", [](const ir::TileConfig& c) { return c.pack_prefetch_rows; },
     [](ir::TileConfig& c, int64_t v) { c.pack_prefetch_rows = v; }},
    {"kc", [](const ir::TileConfig& c) { return c.kc; },
     [](ir::TileConfig& c, int64_t v) { c.kc = v; }},
    {"mc", [](const ir::TileConfig& c) { return c.mc; },
     [](ir::TileConfig& c, int64_t v) { c.mc = v; }},
    {"prefetch_b", [](const ir::TileConfig& c) { return c.prefetch_b; },
     [](ir::TileConfig& c, int64_t v) { c.prefetch_b = v; }},
    {"prefetch_output", [](const ir::TileConfig& c) { return int64_t{c.prefetch_output ? 1 : 0}; },
     [](ir::TileConfig& c, int64_t v) { c.prefetch_output = v != 0; }},
    {"narrow_tail", [](const ir::TileConfig& c) { return int64_t{c.narrow_tail ? 1 : 0}; },
     [](ir::TileConfig& c, int64_t v) { c.narrow_tail = v != 0; }},
    {"loop_order", [](const ir::TileConfig& c) { return int64_t{static_cast<int>(c.loop_order)}; },
     [](ir::TileConfig& c, int64_t v) { c.loop_order = static_cast<ir::LoopOrder>(v); }},
    {"prefetch_inputs", [](const ir::TileConfig& c) { return c.prefetch_inputs; },
     [](ir::TileConfig& c, int64_t v) { c.prefetch_inputs = v; }},
    {"streaming_stores",
     [](const ir::TileConfig& c) { return int64_t{c.streaming_stores ? 1 : 0}; },
     [](ir::TileConfig& c, int64_t v) { c.streaming_stores = v != 0; }},
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const TileConfigField* FindTileConfigField(std::string_view name) {
  for (const TileConfigField& f : kFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

tuner::Config ConfigFromFields(std::span<const tuner::Parameter> parameters,
                               const ir::TileConfig& config) {
  tuner::Config out;
  for (const tuner::Parameter& p : parameters) {
    const TileConfigField* field = FindTileConfigField(p.name);
    int64_t value = field != nullptr ? field->get(config) : 0;
    const bool ignored = p.values.size() == 1 && p.values[0] == 0;
    if (ignored) value = 0;
    out.push_back(value);
  }
  return out;
}

std::vector<int64_t> SortedUnique(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<int64_t> ExtentCandidates(std::span<const int64_t> list, std::optional<int64_t> extent,
                                      std::optional<int64_t> whole, int64_t current) {
  std::vector<int64_t> out = {current};
  if (!extent.has_value()) {
    out.insert(out.end(), list.begin(), list.end());
    if (whole.has_value()) out.push_back(*whole);
    return SortedUnique(std::move(out));
  }
  for (int64_t v : list) {
    if (v < *extent) out.push_back(v);
  }
  const bool current_is_whole = current == 0 || current >= *extent;
  if (!current_is_whole && whole.has_value()) out.push_back(*whole);
  return SortedUnique(std::move(out));
}

std::optional<int64_t> TaskSpan(int64_t grain, std::optional<int64_t> extent) {
  if (grain <= 0) return extent;
  return extent.has_value() ? std::min(grain, *extent) : grain;
}

int64_t ValueOf(const tuner::SearchSpaceSpec& spec, const tuner::Config& config,
                std::string_view name) {
  for (size_t p = 0; p < spec.parameters.size(); ++p) {
    if (spec.parameters[p].name == name) return config[p];
  }
  assert(false && "no such parameter");
  return 0;
}

std::optional<tuner::Constraint> ParallelTasksRule(const KernelFacts& facts,
                                                   const device::DeviceInfo& device,
                                                   bool with_cols) {
  if (facts.wide || !facts.rows.has_value() || !facts.cols.has_value()) return std::nullopt;
  const int64_t rows = std::max<int64_t>(1, *facts.rows);
  const int64_t cols = std::max<int64_t>(1, *facts.cols);
  auto tasks = [rows, cols](int64_t tile_rows, int64_t tile_cols) {
    return CeilDiv(rows, *TaskSpan(tile_rows, rows)) * CeilDiv(cols, *TaskSpan(tile_cols, cols));
  };
  const int64_t wanted = std::min<int64_t>(std::max(1, device.cores),
                                           tasks(facts.current.tile_rows, facts.current.tile_cols));
  tuner::Constraint c;
  c.name = "parallel_tasks";
  c.reason =
      absl::StrCat("the grain must split the ", rows, " x ", cols, " grid into at least ", wanted,
                   " tasks (the default's, up to the cores): fewer leave cores idle");
  c.parameters = {"tile_rows"};
  if (with_cols) c.parameters.push_back("tile_cols");
  c.satisfied = [tasks, wanted, with_cols](std::span<const int64_t> v) {
    return tasks(v[0], with_cols ? v[1] : 0) >= wanted;
  };
  return c;
}

}  // namespace pto::jit::tuning
