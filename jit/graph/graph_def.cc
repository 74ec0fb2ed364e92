#include "jit/graph/graph_def.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/graph/check_limits.h"
#include "jit/graph/limits.h"

namespace pto::graph {
namespace {

// ir and proto enums share their numbers (the schema); these casts rely on it.
proto::OpKind ToProto(ir::OpKind op) { return static_cast<proto::OpKind>(op); }
proto::DType ToProto(ir::DType t) { return static_cast<proto::DType>(t); }

proto::DimDef ToDimDef(const ir::SymExpr& dim) {
  proto::DimDef def;
  for (const auto& [mono, coeff] : dim.terms()) {
    proto::TermDef* term = def.add_terms();
    term->set_coeff(coeff);
    for (int s : mono) term->add_symbols(s);
  }
  return def;
}

// Number of inputs `op` takes: {min, max}.
std::pair<int, int> Arity(ir::OpKind op) {
  constexpr int kUnbounded = std::numeric_limits<int>::max();
  switch (op) {
    case ir::OpKind::kInput:
    case ir::OpKind::kConstant:
      return {0, 0};
    case ir::OpKind::kLayerNorm:
    case ir::OpKind::kLayerNormGrad:
    case ir::OpKind::kRmsNormGrad:
      return {3, 3};
    case ir::OpKind::kRmsNorm:
    case ir::OpKind::kMatMul:
    case ir::OpKind::kSoftmaxGrad:
    case ir::OpKind::kLogSoftmaxGrad:
    case ir::OpKind::kGather:
      return {2, 2};
    case ir::OpKind::kConcat:
      return {1, kUnbounded};
    case ir::OpKind::kWhere:
    case ir::OpKind::kScatterAdd:
      return {3, 3};
    default:
      if (ir::IsComparison(op)) return {2, 2};
      return {ir::IsBinaryElementwise(op) ? 2 : 1, ir::IsBinaryElementwise(op) ? 2 : 1};
  }
}

// Element types the ops compile today; the schema names more for later.
bool IsSupported(proto::DType t) { return t == proto::DT_F32 || t == proto::DT_I32; }

std::string ArityText(std::pair<int, int> arity) {
  if (arity.first == arity.second) return absl::StrCat(arity.first);
  return absl::StrCat("at least ", arity.first);
}

class Converter {
 public:
  explicit Converter(const proto::GraphDef& def) : def_(def) {}

  absl::StatusOr<ir::Graph> Run() {
    if (def_.num_inputs() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_inputs is ", def_.num_inputs(), ", must not be negative"));
    }
    if (absl::Status s = CheckCounts(); !s.ok()) return s;
    graph_.num_inputs = def_.num_inputs();
    if (absl::Status s = ConvertSymbols(); !s.ok()) return s;
    for (int i = 0; i < def_.nodes_size(); ++i) {
      if (absl::Status s = ConvertNode(i); !s.ok()) return s;
    }
    for (int i = 0; i < def_.outputs_size(); ++i) {
      int id = def_.outputs(i);
      if (id < 0 || id >= def_.nodes_size()) {
        return absl::InvalidArgumentError(absl::StrCat("output ", i, " refers to node ", id,
                                                       ", but the graph has ", def_.nodes_size(),
                                                       " nodes"));
      }
      graph_.outputs.push_back(id);
    }
    return std::move(graph_);
  }

 private:
  // The graph's counts, before anything is allocated per input, node, output or symbol.
  absl::Status CheckCounts() const {
    if (absl::Status s = CheckLimit("num_inputs", def_.num_inputs(), kMaxInputs, "kMaxInputs");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckLimit("node count", def_.nodes_size(), kMaxNodes, "kMaxNodes");
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            CheckLimit("output count", def_.outputs_size(), kMaxOutputs, "kMaxOutputs");
        !s.ok()) {
      return s;
    }
    return CheckLimit("symbol count", def_.symbols_size(), kMaxSymbols, "kMaxSymbols");
  }

  absl::Status ConvertSymbols() {
    absl::flat_hash_map<std::string, int> seen;
    for (int i = 0; i < def_.symbols_size(); ++i) {
      const proto::SymbolDef& s = def_.symbols(i);
      ir::SymbolInfo info;
      info.name = s.name();
      if (s.has_min()) info.min = s.min();
      if (s.has_max()) info.max = s.max();
      std::string where = absl::StrCat("symbol ", i, " (\"", s.name(), "\")");
      if (info.name.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("symbol ", i, ": name is empty"));
      }
      if (auto [it, inserted] = seen.emplace(info.name, i); !inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": name is already used by symbol ", it->second));
      }
      if (info.min < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": min is ", info.min, ", must not be negative"));
      }
      if (info.min > info.max) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": min ", info.min, " is greater than max ", info.max));
      }
      if (s.has_derived()) {
        absl::StatusOr<ir::DerivedSymbol> derived = ConvertDerived(s.derived(), where);
        if (!derived.ok()) return derived.status();
        info.derived = *std::move(derived);
      }
      graph_.symbols.push_back(std::move(info));
    }
    return absl::OkStatus();
  }

  // A derived symbol's dim may use only the symbols converted before it.
  absl::StatusOr<ir::DerivedSymbol> ConvertDerived(const proto::DerivedSymbolDef& def,
                                                   const std::string& where) {
    if (!proto::DerivedSymbolDef::Kind_IsValid(def.kind())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": derived kind ", def.kind(), " is not a known kind"));
    }
    if (def.step() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": derived slice step is ", def.step(), ", must be >= 1"));
    }
    absl::StatusOr<ir::SymExpr> dim = ConvertDim(def.dim(), absl::StrCat(where, ": derived dim"));
    if (!dim.ok()) return dim.status();
    ir::DerivedSymbol d;
    d.kind = static_cast<ir::DerivedSymbol::Kind>(def.kind());
    d.dim = *std::move(dim);
    d.start = def.start();
    d.end = def.end();
    d.step = def.step();
    return d;
  }

  absl::Status ConvertNode(int i) {
    const proto::NodeDef& n = def_.nodes(i);
    if (!proto::OpKind_IsValid(n.op())) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", i, ": op ", n.op(), " is not a known OpKind"));
    }
    ir::Node node;
    node.op = static_cast<ir::OpKind>(n.op());
    node.name = n.name();
    std::string where = absl::StrCat("node ", i, " (", std::string(ir::OpName(node.op)), ")");
    if (!proto::DType_IsValid(n.dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": dtype ", n.dtype(), " is not a known DType"));
    }
    node.dtype = static_cast<ir::DType>(n.dtype());
    if (!proto::DType_IsValid(n.cast_dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": cast_dtype ", n.cast_dtype(), " is not a known DType"));
    }
    if (!IsSupported(n.dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": dtype ", proto::DType_Name(n.dtype()),
                       " is not supported (only DT_F32 and DT_I32 are)"));
    }
    if (!IsSupported(n.cast_dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": cast_dtype ", proto::DType_Name(n.cast_dtype()),
                       " is not supported (only DT_F32 and DT_I32 are)"));
    }
    if (absl::Status s = CheckNodeCounts(where, node.op, n.inputs_size(), n.ints_size()); !s.ok()) {
      return s;
    }

    std::pair<int, int> arity = Arity(node.op);
    if (n.inputs_size() < arity.first || n.inputs_size() > arity.second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": has ", n.inputs_size(), " inputs, expected ", ArityText(arity)));
    }
    for (int j = 0; j < n.inputs_size(); ++j) {
      int id = n.inputs(j);
      if (id < 0 || id >= i) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": input ", j, " refers to node ", id,
                                                       ", which is not defined before it"));
      }
      node.inputs.push_back(id);
    }

    ir::Attrs& a = node.attrs;
    a.index = n.index();
    a.scalar = n.scalar();
    a.axis = n.axis();
    a.keepdims = n.keepdims();
    a.transpose_a = n.transpose_a();
    a.transpose_b = n.transpose_b();
    if (n.has_eps()) a.eps = n.eps();
    a.start = n.start();
    a.end = n.end();
    if (n.has_step()) a.step = n.step();
    a.dtype = static_cast<ir::DType>(n.cast_dtype());
    a.ints.assign(n.ints().begin(), n.ints().end());
    node.recomputed = n.recomputed();

    if (node.op == ir::OpKind::kInput) {
      if (a.index < 0 || a.index >= graph_.num_inputs) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": index ", a.index, " is out of range [0, ", graph_.num_inputs, ")"));
      }
      if (auto [it, inserted] = input_index_owner_.emplace(a.index, i); !inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": index ", a.index, " is already used by node ", it->second));
      }
    }

    if (absl::Status s =
            CheckLimit(absl::StrCat(where, ": rank"), n.shape_size(), kMaxRank, "kMaxRank");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckLimit(absl::StrCat(where, ": target_shape rank"),
                                    n.target_shape_size(), kMaxRank, "kMaxRank");
        !s.ok()) {
      return s;
    }
    for (int d = 0; d < n.target_shape_size(); ++d) {
      absl::StatusOr<ir::SymExpr> dim =
          ConvertDim(n.target_shape(d), absl::StrCat(where, ": target_shape dim ", d));
      if (!dim.ok()) return dim.status();
      a.shape.push_back(*std::move(dim));
    }
    for (int d = 0; d < n.shape_size(); ++d) {
      absl::StatusOr<ir::SymExpr> dim =
          ConvertDim(n.shape(d), absl::StrCat(where, ": shape dim ", d));
      if (!dim.ok()) return dim.status();
      node.shape.push_back(*std::move(dim));
    }
    if (absl::Status s = CheckShape(where, node.shape); !s.ok()) return s;
    graph_.nodes.push_back(std::move(node));
    return absl::OkStatus();
  }

  absl::StatusOr<ir::SymExpr> ConvertDim(const proto::DimDef& def, const std::string& where) {
    int max_degree = 0;
    for (const proto::TermDef& term : def.terms()) {
      max_degree = std::max(max_degree, term.symbols_size());
    }
    if (absl::Status s = CheckDimCounts(where, def.terms_size(), max_degree); !s.ok()) return s;
    std::set<std::vector<int>> monomials;
    ir::SymExpr dim;
    for (int t = 0; t < def.terms_size(); ++t) {
      const proto::TermDef& term = def.terms(t);
      ir::SymExpr value(term.coeff());
      std::vector<int> mono;
      for (int s : term.symbols()) {
        if (s < 0 || s >= static_cast<int>(graph_.symbols.size())) {
          return absl::InvalidArgumentError(absl::StrCat(where, " term ", t, " uses symbol ", s,
                                                         ", but the graph has ",
                                                         graph_.symbols.size(), " symbols"));
        }
        mono.push_back(s);
        value = value * ir::SymExpr::Symbol(s);
      }
      std::sort(mono.begin(), mono.end());
      if (!monomials.insert(mono).second) {
        // Merging would add coefficients, which may overflow; the writer never repeats one.
        return absl::InvalidArgumentError(
            absl::StrCat(where, " term ", t, " repeats the symbols of an earlier term"));
      }
      dim = dim + value;
    }
    if (std::optional<int64_t> c = dim.AsConstant(); c.has_value() && *c < 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, " is ", *c, ", must not be negative"));
    }
    return dim;
  }

  const proto::GraphDef& def_;
  ir::Graph graph_;
  absl::flat_hash_map<int64_t, int> input_index_owner_;  // input index -> node id
};

}  // namespace

proto::GraphDef ToGraphDef(const ir::Graph& graph) {
  proto::GraphDef def;
  def.set_num_inputs(graph.num_inputs);
  for (const ir::SymbolInfo& s : graph.symbols) {
    proto::SymbolDef* sd = def.add_symbols();
    sd->set_name(s.name);
    sd->set_min(s.min);
    if (s.max != std::numeric_limits<int64_t>::max()) sd->set_max(s.max);
    if (s.derived.has_value()) {
      proto::DerivedSymbolDef* d = sd->mutable_derived();
      d->set_kind(static_cast<proto::DerivedSymbolDef::Kind>(s.derived->kind));
      *d->mutable_dim() = ToDimDef(s.derived->dim);
      d->set_start(s.derived->start);
      d->set_end(s.derived->end);
      d->set_step(s.derived->step);
    }
  }
  const ir::Attrs defaults;
  for (const ir::Node& node : graph.nodes) {
    proto::NodeDef* n = def.add_nodes();
    n->set_name(node.name);
    n->set_op(ToProto(node.op));
    for (int id : node.inputs) n->add_inputs(id);
    n->set_dtype(ToProto(node.dtype));
    for (const ir::SymExpr& dim : node.shape) *n->add_shape() = ToDimDef(dim);
    const ir::Attrs& a = node.attrs;
    n->set_index(a.index);
    n->set_scalar(a.scalar);
    n->set_axis(a.axis);
    n->set_keepdims(a.keepdims);
    n->set_transpose_a(a.transpose_a);
    n->set_transpose_b(a.transpose_b);
    // Bitwise comparison: -0.0 or a NaN payload must survive the round trip.
    if (std::bit_cast<uint32_t>(a.eps) != std::bit_cast<uint32_t>(defaults.eps)) {
      n->set_eps(a.eps);
    }
    n->set_start(a.start);
    n->set_end(a.end);
    if (a.step != defaults.step) n->set_step(a.step);
    n->set_cast_dtype(ToProto(a.dtype));
    for (int64_t v : a.ints) n->add_ints(v);
    for (const ir::SymExpr& dim : a.shape) *n->add_target_shape() = ToDimDef(dim);
    n->set_recomputed(node.recomputed);
  }
  for (int id : graph.outputs) def.add_outputs(id);
  return def;
}

absl::StatusOr<ir::Graph> FromGraphDef(const proto::GraphDef& def) { return Converter(def).Run(); }

}  // namespace pto::graph
