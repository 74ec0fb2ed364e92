#include "tools/pto/workload_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cache/fs_safety.h"
#include "google/protobuf/text_format.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_text.h"

namespace pto::tools {
namespace {

absl::Status Invalid(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

std::string RangeText(std::pair<int64_t, int64_t> r) {
  return r.first == r.second ? absl::StrCat(r.first)
                             : absl::StrCat("[", r.first, "..", r.second, "]");
}

// The dim's own size or range as [min, max] (a size s is [s, s]); nullopt for a name alone.
absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> DimDefinition(
    const proto::WorkloadDim& dim, const std::string& field, bool name_alone_ok) {
  const bool has_range = dim.has_min() || dim.has_max();
  if (dim.has_size() && has_range) return Invalid(field, "gives both a size and a range");
  if (has_range && !(dim.has_min() && dim.has_max())) {
    return Invalid(field, "a range needs both min and max");
  }
  if (!dim.has_size() && !has_range) {
    if (name_alone_ok && !dim.name().empty()) return std::nullopt;
    return Invalid(field, "gives no size or range");
  }
  if (dim.has_size()) {
    if (dim.size() <= 0)
      return Invalid(field, absl::StrCat("size ", dim.size(), " is not positive"));
    return std::make_pair(dim.size(), dim.size());
  }
  if (dim.min() <= 0) {
    return Invalid(field, absl::StrCat("range min ", dim.min(), " is not positive"));
  }
  if (dim.min() > dim.max()) {
    return Invalid(field, absl::StrCat("range min ", dim.min(), " > max ", dim.max()));
  }
  return std::make_pair(dim.min(), dim.max());
}

// Every combination of the variables' representatives, last variable innermost; InvalidArgument
// (prefixed with `where`) beyond max_sets.
absl::StatusOr<std::vector<std::vector<int64_t>>> Combinations(
    const std::vector<std::pair<int64_t, int64_t>>& variables, int max_sets,
    absl::string_view where) {
  std::vector<std::vector<int64_t>> values;
  std::vector<std::string> counts;
  double total = 1;  // a double: a product of many ranges may not fit an int64
  for (const auto& [min, max] : variables) {
    values.push_back(DimRepresentatives(min, max));
    total *= static_cast<double>(values.back().size());
    if (values.back().size() > 1) counts.push_back(absl::StrCat(values.back().size()));
  }
  if (total > max_sets) {
    return Invalid(where,
                   absl::StrCat("the ranges touch ", absl::StrJoin(counts, " x "),
                                " power-of-two buckets: ", total, " combinations, more than the ",
                                max_sets, " tuned per entry; narrow or split the ranges"));
  }
  std::vector<std::vector<int64_t>> out(1);
  for (const std::vector<int64_t>& choices : values) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& prefix : out) {
      for (int64_t v : choices) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    }
    out = std::move(next);
  }
  return out;
}

// A shapes entry as variables (named dims once, unnamed ranges) and per input dim either a
// fixed size or a variable.
struct ShapesLayout {
  std::vector<std::pair<int64_t, int64_t>> variables;
  std::vector<std::vector<int64_t>> fixed;  // by input, by dim: the size, or -1 - variable
};

// `prefix` starts field names in errors, e.g. "entry 'mlp': shapes[0]." (or "").
absl::StatusOr<ShapesLayout> LayoutOf(const proto::WorkloadShapes& shapes,
                                      const std::string& prefix) {
  ShapesLayout layout;
  struct Named {
    int variable;
    std::optional<std::pair<int64_t, int64_t>> definition;
    std::string first_field;
  };
  std::map<std::string, Named> named;
  for (int i = 0; i < shapes.inputs_size(); ++i) {
    std::vector<int64_t>& dims = layout.fixed.emplace_back();
    for (int j = 0; j < shapes.inputs(i).dims_size(); ++j) {
      const proto::WorkloadDim& dim = shapes.inputs(i).dims(j);
      const std::string field = absl::StrCat(prefix, "inputs[", i, "].dims[", j, "]");
      absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> def =
          DimDefinition(dim, field, /*name_alone_ok=*/true);
      if (!def.ok()) return def.status();
      if (dim.name().empty()) {
        if ((*def)->first == (*def)->second) {
          dims.push_back((*def)->first);
        } else {
          const int64_t variable = static_cast<int64_t>(layout.variables.size());
          layout.variables.push_back(**def);
          dims.push_back(-1 - variable);
        }
        continue;
      }
      auto [it, inserted] = named.try_emplace(
          dim.name(), Named{static_cast<int>(layout.variables.size()), std::nullopt, field});
      if (inserted) layout.variables.emplace_back();
      Named& n = it->second;
      if (def->has_value()) {
        if (n.definition.has_value() && *n.definition != **def) {
          return Invalid(field,
                         absl::StrCat("dim '", dim.name(), "' is ", RangeText(**def), " here but ",
                                      RangeText(*n.definition), " at ", n.first_field));
        }
        if (!n.definition.has_value()) n.first_field = field;
        n.definition = **def;
      }
      dims.push_back(-1 - n.variable);
    }
  }
  for (const auto& [name, n] : named) {
    if (!n.definition.has_value()) {
      return Invalid(n.first_field,
                     absl::StrCat("dim '", name, "' has no size or range at any of its uses"));
    }
    layout.variables[n.variable] = *n.definition;
  }
  return layout;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ModelVariables(
    const proto::WorkloadModel& model, const std::string& prefix) {
  std::vector<std::pair<int64_t, int64_t>> variables;
  std::set<std::string> names;
  for (int i = 0; i < model.params_size(); ++i) {
    const proto::WorkloadDim& param = model.params(i);
    const std::string field = absl::StrCat(prefix, "params[", i, "]");
    if (param.name().empty()) return Invalid(field, "has no name");
    if (!names.insert(param.name()).second) {
      return Invalid(field, absl::StrCat("param '", param.name(), "' is given twice"));
    }
    absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> def =
        DimDefinition(param, field, /*name_alone_ok=*/false);
    if (!def.ok()) return def.status();
    variables.push_back(**def);
  }
  return variables;
}

// A GraphDef's inputs: how many, and the rank of each one an input node declares. Kept per
// declared input, not per input: num_inputs is whatever the file says.
struct GraphInputs {
  int64_t count = 0;
  std::map<int64_t, int> ranks;  // by input index
};

GraphInputs InputsOf(const proto::GraphDef& graph) {
  GraphInputs inputs;
  inputs.count = std::max(graph.num_inputs(), 0);
  for (const proto::NodeDef& node : graph.nodes()) {
    if (node.op() == proto::OP_INPUT && node.index() >= 0 && node.index() < inputs.count) {
      inputs.ranks[node.index()] = node.shape_size();
    }
  }
  return inputs;
}

// Checks counts and ranks of per-input shapes against the graph's inputs.
absl::Status CheckAgainstGraph(const GraphInputs& inputs, const std::vector<int>& given,
                               const std::string& field, absl::string_view what) {
  if (static_cast<int64_t>(given.size()) != inputs.count) {
    return Invalid(field, absl::StrCat("gives ", given.size(), " ", what, " but the graph has ",
                                       inputs.count, " inputs"));
  }
  for (const auto& [i, rank] : inputs.ranks) {
    if (given[i] != rank) {
      return Invalid(field, absl::StrCat(what, "[", i, "] has ", given[i], " dims but graph input ",
                                         i, " has ", rank));
    }
  }
  return absl::OkStatus();
}

bool NonNegativeFinite(double v) { return std::isfinite(v) && v >= 0; }

// A model entry: its name, its params' combinations, and no shapes or constants of its own.
absl::Status ValidateModel(const proto::WorkloadEntry& entry, const std::string& at) {
  const proto::WorkloadModel& model = entry.model();
  if (model.name().empty()) return Invalid(at + "model.name", "is empty");
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> variables =
      ModelVariables(model, at + "model.");
  if (!variables.ok()) return variables.status();
  absl::Status count = Combinations(*variables, kMaxRepresentatives, at + "model").status();
  if (!count.ok()) return count;
  if (entry.shapes_size() > 0 || entry.shape_classes_size() > 0) {
    return Invalid(at + (entry.shapes_size() > 0 ? "shapes" : "shape_classes"),
                   "a model's shapes come from its params");
  }
  if (entry.constant_inputs_size() > 0) {
    return Invalid(at + "constant_inputs", "a model declares its own");
  }
  return absl::OkStatus();
}

// What an entry's graph source says about the graph.
struct SourceFacts {
  std::optional<GraphInputs> inputs;  // known for embedded graphs
  bool dynamic = false;
};

absl::StatusOr<SourceFacts> ValidateSource(const proto::WorkloadEntry& entry,
                                           const std::string& label) {
  const std::string at = label + ": ";
  SourceFacts facts;
  switch (entry.source_case()) {
    case proto::WorkloadEntry::SOURCE_NOT_SET:
      return Invalid(label, "has no graph source: give one of graph, graph_file or model");
    case proto::WorkloadEntry::kGraph: {
      absl::StatusOr<ir::Graph> graph = graph::FromGraphDef(entry.graph());
      if (!graph.ok()) return Prefixed(at + "graph", graph.status());
      facts.inputs = InputsOf(entry.graph());
      facts.dynamic = entry.graph().symbols_size() > 0;
      break;
    }
    case proto::WorkloadEntry::kGraphFile:
      if (entry.graph_file().empty()) return Invalid(at + "graph_file", "is empty");
      break;
    case proto::WorkloadEntry::kModel:
      if (absl::Status s = ValidateModel(entry, at); !s.ok()) return s;
      break;
  }
  return facts;
}

absl::Status ValidateConstantInputs(const proto::WorkloadEntry& entry, const std::string& at,
                                    const std::optional<GraphInputs>& inputs) {
  std::set<int32_t> constants;
  for (int i = 0; i < entry.constant_inputs_size(); ++i) {
    const int32_t c = entry.constant_inputs(i);
    const std::string field = absl::StrCat(at, "constant_inputs[", i, "]");
    if (c < 0) return Invalid(field, absl::StrCat("input ", c, " is negative"));
    if (inputs.has_value() && c >= inputs->count) {
      return Invalid(
          field, absl::StrCat("input ", c, " is not below the graph's ", inputs->count, " inputs"));
    }
    if (!constants.insert(c).second) {
      return Invalid(field, absl::StrCat("input ", c, " is listed twice"));
    }
  }
  return absl::OkStatus();
}

// `prefix`: "<label>: shapes[k]".
absl::Status ValidateShapes(const proto::WorkloadShapes& shapes, const std::string& prefix,
                            const std::optional<GraphInputs>& inputs) {
  absl::StatusOr<ShapesLayout> layout = LayoutOf(shapes, prefix + ".");
  if (!layout.ok()) return layout.status();
  absl::Status count = Combinations(layout->variables, kMaxRepresentatives, prefix).status();
  if (!count.ok()) return count;
  if (inputs.has_value()) {
    std::vector<int> given;
    for (const proto::WorkloadInput& input : shapes.inputs()) given.push_back(input.dims_size());
    absl::Status s = CheckAgainstGraph(*inputs, given, prefix, "inputs");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// `prefix`: "<label>: shape_classes[k]".
absl::Status ValidateShapeClass(const proto::WorkloadShapeClass& cls, const std::string& prefix,
                                const std::optional<GraphInputs>& inputs) {
  if (cls.shape_class().empty()) return Invalid(prefix + ".shape_class", "is empty");
  std::vector<int> given;
  for (int i = 0; i < cls.input_shapes_size(); ++i) {
    given.push_back(cls.input_shapes(i).dims_size());
    for (int j = 0; j < cls.input_shapes(i).dims_size(); ++j) {
      const int64_t d = cls.input_shapes(i).dims(j);
      if (d <= 0) {
        return Invalid(absl::StrCat(prefix, ".input_shapes[", i, "].dims[", j, "]"),
                       absl::StrCat("size ", d, " is not positive"));
      }
    }
  }
  if (inputs.has_value()) {
    absl::Status s = CheckAgainstGraph(*inputs, given, prefix, "input_shapes");
    if (!s.ok()) return s;
  }
  if (cls.calls() < 0) {
    return Invalid(prefix + ".calls", absl::StrCat(cls.calls(), " is negative"));
  }
  if (!NonNegativeFinite(cls.total_seconds())) {
    return Invalid(prefix + ".total_seconds",
                   absl::StrCat(cls.total_seconds(), " is not a non-negative number"));
  }
  return absl::OkStatus();
}

absl::Status ValidateEntry(const proto::WorkloadEntry& entry, const std::string& label) {
  const std::string at = label + ": ";
  absl::StatusOr<SourceFacts> source = ValidateSource(entry, label);
  if (!source.ok()) return source.status();
  const std::optional<GraphInputs>& inputs = source->inputs;
  if (absl::Status s = ValidateConstantInputs(entry, at, inputs); !s.ok()) return s;
  for (int k = 0; k < entry.shapes_size(); ++k) {
    absl::Status s = ValidateShapes(entry.shapes(k), absl::StrCat(at, "shapes[", k, "]"), inputs);
    if (!s.ok()) return s;
  }
  for (int k = 0; k < entry.shape_classes_size(); ++k) {
    absl::Status s = ValidateShapeClass(entry.shape_classes(k),
                                        absl::StrCat(at, "shape_classes[", k, "]"), inputs);
    if (!s.ok()) return s;
  }
  if (source->dynamic && entry.shapes_size() == 0 && entry.shape_classes_size() == 0) {
    return Invalid(label, "the graph has dynamic dims but no shapes or shape_classes to tune at");
  }
  if (entry.has_weight() && !NonNegativeFinite(entry.weight())) {
    return Invalid(at + "weight", absl::StrCat(entry.weight(), " is not a non-negative number"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateWorkload(const proto::Workload& workload) {
  if (workload.schema_version() != kWorkloadSchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema_version ", workload.schema_version(),
                     workload.schema_version() == 0 ? " (absent)" : "",
                     " is not known: this pto reads version ", kWorkloadSchemaVersion));
  }
  std::map<std::string, int> names;
  for (int i = 0; i < workload.entries_size(); ++i) {
    const proto::WorkloadEntry& entry = workload.entries(i);
    if (entry.name().empty()) return Invalid(absl::StrCat("entry ", i), "name is empty");
    const std::string label = absl::StrCat("entry '", entry.name(), "'");
    auto [it, inserted] = names.try_emplace(entry.name(), i);
    if (!inserted) {
      return Invalid(label, absl::StrCat("the name is used by entries ", it->second, " and ", i));
    }
    absl::Status s = ValidateEntry(entry, label);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot open ", path));
  }
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return text;
}

absl::Status WriteTextFile(const std::string& path, std::string_view contents) {
  return cache::fs_safety::WriteFileAtomically(path, contents);
}

absl::StatusOr<proto::Workload> ReadWorkload(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  proto::Workload workload;
  if (absl::Status s = graph::ParseTextProto(*text, "workload", &workload); !s.ok()) {
    return Invalid(path, s.message());
  }
  absl::Status valid = ValidateWorkload(workload);
  if (!valid.ok()) return Prefixed(path, valid);
  return workload;
}

absl::Status WriteWorkload(const std::string& path, const proto::Workload& workload) {
  absl::Status valid = ValidateWorkload(workload);
  if (!valid.ok()) return valid;
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(workload, &text)) {
    return absl::InternalError(absl::StrCat("cannot print the workload for ", path));
  }
  return WriteTextFile(path, absl::StrCat("# proto-file: proto/workload.proto\n",
                                          "# proto-message: pto.proto.Workload\n", text));
}

std::string ResolveGraphFile(const std::string& workload_path, const std::string& graph_file) {
  const std::filesystem::path file(graph_file);
  if (file.is_absolute()) return graph_file;
  return (std::filesystem::path(workload_path).parent_path() / file).string();
}

std::vector<double> EntryShares(const proto::Workload& workload) {
  std::vector<double> shares;
  double sum = 0;
  for (const proto::WorkloadEntry& entry : workload.entries()) {
    double weight = 0;
    if (entry.has_weight()) {
      weight = entry.weight();
    } else if (entry.shape_classes_size() > 0) {
      for (const proto::WorkloadShapeClass& cls : entry.shape_classes()) {
        weight += cls.total_seconds();
      }
    } else {
      weight = 1;
    }
    shares.push_back(weight);
    sum += weight;
  }
  for (double& share : shares) share = sum > 0 ? share / sum : 1.0 / shares.size();
  return shares;
}

std::vector<int64_t> DimRepresentatives(int64_t min, int64_t max) {
  std::vector<int64_t> sizes;
  if (min < 1 || min > max) return sizes;
  int64_t lo = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(min)));
  while (true) {
    const int64_t hi = lo > std::numeric_limits<int64_t>::max() / 2
                           ? std::numeric_limits<int64_t>::max()
                           : 2 * lo - 1;
    int64_t middle = std::llround(static_cast<double>(lo) * std::sqrt(2.0));
    middle = std::clamp(std::clamp(middle, lo, hi), min, max);
    sizes.push_back(middle);
    if (hi >= max) break;
    lo = hi + 1;
  }
  return sizes;
}

absl::StatusOr<std::vector<ShapeSet>> BucketRepresentatives(const proto::WorkloadShapes& shapes,
                                                            int max_sets) {
  absl::StatusOr<ShapesLayout> layout = LayoutOf(shapes, "");
  if (!layout.ok()) return layout.status();
  absl::StatusOr<std::vector<std::vector<int64_t>>> combinations =
      Combinations(layout->variables, max_sets, "shapes");
  if (!combinations.ok()) return combinations.status();
  std::vector<ShapeSet> sets;
  for (const std::vector<int64_t>& values : *combinations) {
    ShapeSet& set = sets.emplace_back();
    for (const std::vector<int64_t>& input : layout->fixed) {
      std::vector<int64_t>& shape = set.emplace_back();
      for (int64_t d : input) shape.push_back(d >= 0 ? d : values[-1 - d]);
    }
  }
  return sets;
}

absl::StatusOr<std::vector<std::map<std::string, int64_t>>> ModelParamRepresentatives(
    const proto::WorkloadModel& model, int max_sets) {
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> variables = ModelVariables(model, "");
  if (!variables.ok()) return variables.status();
  absl::StatusOr<std::vector<std::vector<int64_t>>> combinations =
      Combinations(*variables, max_sets, "params");
  if (!combinations.ok()) return combinations.status();
  std::vector<std::map<std::string, int64_t>> sets;
  for (const std::vector<int64_t>& values : *combinations) {
    std::map<std::string, int64_t>& set = sets.emplace_back();
    for (int i = 0; i < model.params_size(); ++i) set[model.params(i).name()] = values[i];
  }
  return sets;
}

}  // namespace pto::tools
