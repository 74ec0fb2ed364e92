#include "jit/trace_variants.h"

#include <map>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/callback_guard.h"
#include "jit/graph/graph_hash.h"
#include "jit/graph/limits.h"
#include "jit/trace.h"
#include "ops/derived_symbols.h"

namespace pto::detail {
namespace {

// At most this many symbols per variant: as many as a GraphDef's program may have.
constexpr size_t kMaxVariantSymbols = graph::kMaxSymbols;

}  // namespace

SymbolCheck CheckSymbolValues(const TraceVariant& v, const CallShapes& shapes) {
  auto other = [](absl::Status s) { return SymbolCheck{SymbolFit::kOtherVariant, std::move(s)}; };
  auto refused = [](absl::Status s) { return SymbolCheck{SymbolFit::kRefused, std::move(s)}; };
  std::vector<int64_t> value(v.symbols.size(), -1);
  std::vector<std::pair<int, int>> where(v.symbols.size());
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    const std::vector<DimSpec>& spec = v.inputs[i];
    if (static_cast<int>(spec.size()) != shapes.rank[i]) {
      return refused(absl::InvalidArgumentError(absl::StrCat("input ", i, ": rank ", shapes.rank[i],
                                                             " does not match the traced rank ",
                                                             spec.size())));
    }
    for (size_t d = 0; d < spec.size(); ++d) {
      const int s = spec[d].symbol;
      const int64_t x = shapes.dims[i][d];
      if (s < 0) continue;
      const ir::SymbolInfo& info = v.symbols[s];
      if (v.declared[s] && (x < info.min || x > info.max)) {
        return refused(absl::InvalidArgumentError(
            absl::StrCat("input ", i, " dim ", d, " (", info.name, ") is ", x,
                         ", outside the declared range [", info.min, ", ", info.max, "]")));
      }
      if (!v.declared[s] && x > info.max) {
        return other(absl::InvalidArgumentError(
            absl::StrCat("input ", i, " dim ", d, " is ", x, ", above ", info.max,
                         ", the largest size pto supports for a dim that changes between calls")));
      }
      if (value[s] >= 0 && value[s] != x) {
        return other(absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " dim ", d, " (", info.name, ") is ", x, " but input ", where[s].first,
            " dim ", where[s].second, " gives ", info.name, " = ", value[s])));
      }
      value[s] = x;
      where[s] = {static_cast<int>(i), static_cast<int>(d)};
    }
  }
  return {};
}

bool BindSymbols(const TraceVariant& v, const CallShapes& shapes, int64_t* values) {
  const size_t n = v.symbols.size();
  bool bound[jit::kMaxSymbols] = {};
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    const std::vector<DimSpec>& spec = v.inputs[i];
    if (static_cast<int>(spec.size()) != shapes.rank[i]) return false;
    for (size_t d = 0; d < spec.size(); ++d) {
      const int64_t x = shapes.dims[i][d];
      if (spec[d].symbol < 0) {
        if (spec[d].value != x) return false;
      } else if (bound[spec[d].symbol]) {
        if (values[spec[d].symbol] != x) return false;
      } else {
        bound[spec[d].symbol] = true;
        values[spec[d].symbol] = x;
      }
    }
  }
  ops::BindDerivedSymbols(v.symbols, std::span<int64_t>(values, n));
  for (size_t s = 0; s < n; ++s) {
    if (values[s] < v.symbols[s].min || values[s] > v.symbols[s].max) return false;
  }
  return true;
}

namespace {

// Each symbol of an input dim once (inputs, then axes, in order), as "NAME=CLASS"; NAME from
// `name(symbol, input, axis)`.
template <typename Name>
std::string ShapeClassText(const TraceVariant& v, const jit::ShapeClass& cls, Name&& name) {
  std::vector<bool> named(v.symbols.size(), false);
  std::string out;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    for (size_t d = 0; d < v.inputs[i].size(); ++d) {
      const int s = v.inputs[i][d].symbol;
      if (s < 0 || named[s]) continue;
      named[s] = true;
      const jit::SymbolClass& c = cls.symbols[s];
      absl::StrAppend(&out, out.empty() ? "" : ",", name(s, i, d), "=");
      if (c.lo == c.hi) {
        absl::StrAppend(&out, c.lo);
      } else {
        absl::StrAppend(&out, "[", c.lo, "..", c.hi, "]");
      }
    }
  }
  return out.empty() ? "static" : out;
}

}  // namespace

std::string ShapeClassKey(const TraceVariant& v, const jit::ShapeClass& cls) {
  return ShapeClassText(v, cls,
                        [](int, size_t i, size_t d) { return absl::StrCat("in", i, ".", d); });
}

std::string ShapeClassLabel(const TraceVariant& v, const jit::ShapeClass& cls) {
  return ShapeClassText(v, cls, [&v](int s, size_t i, size_t d) {
    return v.declared[s] ? v.symbols[s].name : absl::StrCat("in", i, ".", d);
  });
}

TraceVariants::TraceVariants(std::string function, int num_inputs, TraceFn fn,
                             const FunctionOptions& options, GraphTransform transform)
    : function_(std::move(function)),
      num_inputs_(num_inputs),
      fn_(std::move(fn)),
      transform_(std::move(transform)),
      dynamic_(options.dynamic),
      is_constant_(num_inputs, false),
      automatic_dynamic_(options.automatic_dynamic) {
  for (int c : options.constant_inputs) is_constant_[c] = true;
}

absl::StatusOr<const TraceVariant*> TraceVariants::For(const CallShapes& shapes) {
  for (int i = 0; i < num_inputs_; ++i) {
    if (shapes.rank[i] > kMaxRank) return absl::InvalidArgumentError("rank too large");
  }
  if (dtypes_.empty()) {
    for (int i = 0; i < num_inputs_; ++i) {
      dtypes_.push_back(shapes.has_dtypes ? static_cast<ir::DType>(shapes.dtype[i])
                                          : ir::DType::kF32);
    }
  } else if (shapes.has_dtypes) {
    for (int i = 0; i < num_inputs_; ++i) {
      if (absl::Status s =
              CheckViewDType(shapes.dtype[i], static_cast<DType>(dtypes_[i]), "input", i);
          !s.ok()) {
        return s;
      }
    }
  }
  // An existing variant whose static dims match.
  for (const auto& v : variants_) {
    const SymbolCheck check = CheckSymbolValues(*v, shapes);
    if (check.fit == SymbolFit::kRefused) return check.status;
    if (check.fit == SymbolFit::kOtherVariant) continue;
    bool statics_match = true;
    for (int i = 0; i < num_inputs_ && statics_match; ++i) {
      for (int d = 0; d < shapes.rank[i]; ++d) {
        const DimSpec& spec = v->inputs[i][d];
        if (spec.symbol < 0 && spec.value != shapes.dims[i][d]) statics_match = false;
      }
    }
    if (statics_match) return v.get();
  }
  if (variants_.empty()) return AddVariant(FirstSpec(shapes), shapes);
  absl::StatusOr<std::unique_ptr<TraceVariant>> spec = WidenedSpec(shapes);
  if (!spec.ok()) return spec.status();  // e.g. automatic dynamic shapes are off
  if (const SymbolCheck check = CheckSymbolValues(**spec, shapes); check.fit != SymbolFit::kFits) {
    return check.status;
  }
  absl::StatusOr<const TraceVariant*> widened = AddVariant(std::move(spec), shapes);
  if (widened.ok() || widened.status().code() != absl::StatusCode::kInvalidArgument) {
    return widened;
  }
  // A program the widened dims do not fit: a dim that broadcasts (size 1) in one call and not
  // in the next, like a bias of [1] then [n], is no symbol the shape rules can accept. Trace
  // these shapes as they are (the declared dims symbolic), a variant of their own.
  return AddVariant(FirstSpec(shapes), shapes);
}

absl::StatusOr<const TraceVariant*> TraceVariants::AddVariant(
    absl::StatusOr<std::unique_ptr<TraceVariant>> v, const CallShapes& shapes) {
  if (!v.ok()) return v.status();
  if (const SymbolCheck check = CheckSymbolValues(**v, shapes); check.fit != SymbolFit::kFits) {
    return check.status;
  }
  if ((*v)->symbols.size() > kMaxVariantSymbols) {
    return absl::InvalidArgumentError("too many symbolic dims");
  }
  if (absl::Status s = Trace(**v); !s.ok()) return s;
  variants_.push_back(*std::move(v));
  return variants_.back().get();
}

absl::StatusOr<std::unique_ptr<TraceVariant>> TraceVariants::FirstSpec(
    const CallShapes& shapes) const {
  auto v = std::make_unique<TraceVariant>();
  std::map<std::string, int> by_name;
  for (int i = 0; i < num_inputs_; ++i) {
    v->inputs.emplace_back(shapes.rank[i]);
    for (int d = 0; d < shapes.rank[i]; ++d) v->inputs[i][d].value = shapes.dims[i][d];
  }
  for (const DynamicDim& dd : dynamic_) {
    if (dd.axis >= shapes.rank[dd.input]) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic dim '", dd.dim.name(), "': input ",
                                                     dd.input, " has rank ", shapes.rank[dd.input],
                                                     ", no axis ", dd.axis));
    }
    auto [it, inserted] = by_name.emplace(dd.dim.name(), static_cast<int>(v->symbols.size()));
    if (inserted) {
      v->symbols.push_back(ir::SymbolInfo{dd.dim.name(), dd.dim.min(), dd.dim.max()});
      v->declared.push_back(true);
    }
    v->inputs[dd.input][dd.axis].symbol = it->second;
  }
  return v;
}

absl::StatusOr<std::unique_ptr<TraceVariant>> TraceVariants::WidenedSpec(const CallShapes& shapes) {
  // Dims that changed from the same value to the same value share one symbol (x and its
  // residual's batch).
  const TraceVariant& last = *variants_.back();
  auto v = std::make_unique<TraceVariant>();
  v->inputs = last.inputs;
  v->symbols = last.symbols;
  v->declared = last.declared;
  while (!v->symbols.empty() && v->symbols.back().derived.has_value()) {  // the trace adds them
    v->symbols.pop_back();
    v->declared.pop_back();
  }
  std::map<std::pair<int64_t, int64_t>, int> groups;
  for (int i = 0; i < num_inputs_; ++i) {
    if (static_cast<int>(last.inputs[i].size()) != shapes.rank[i]) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": rank ", shapes.rank[i],
                                                     " does not match the traced rank ",
                                                     last.inputs[i].size()));
    }
    for (int d = 0; d < shapes.rank[i]; ++d) {
      DimSpec& spec = v->inputs[i][d];
      const int64_t x = shapes.dims[i][d];
      if (spec.symbol >= 0 || spec.value == x) continue;
      if (is_constant_[i] || !automatic_dynamic_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " dim ", d, " is ", x, " but the function was traced with ", spec.value,
            is_constant_[i] ? " (a constant input's shape is fixed)"
                            : " (declare the dim dynamic or enable automatic_dynamic)"));
      }
      auto [it, inserted] =
          groups.emplace(std::pair{spec.value, x}, static_cast<int>(v->symbols.size()));
      if (inserted) {
        v->symbols.push_back(
            ir::SymbolInfo{absl::StrCat("d", auto_symbols_++), 0, int64_t{1} << 40});
        v->declared.push_back(false);
      }
      spec.symbol = it->second;
    }
  }
  return v;
}

absl::Status TraceVariants::Trace(TraceVariant& v) {
  std::vector<jit::TraceInput> trace_inputs(num_inputs_);
  v.input_dtypes = dtypes_;
  for (int i = 0; i < num_inputs_; ++i) {
    trace_inputs[i].dtype = dtypes_[i];
    for (const DimSpec& spec : v.inputs[i]) {
      trace_inputs[i].shape.push_back(spec.symbol >= 0 ? ir::SymExpr::Symbol(spec.symbol)
                                                       : ir::SymExpr(spec.value));
    }
  }
  traces_.fetch_add(1);
  absl::StatusOr<ir::Graph> graph;
  {
    const CallbackScope lambda_runs(CallbackKind::kTracedLambda, function_);
    graph = jit::Trace(fn_, trace_inputs, v.symbols);
  }
  if (graph.ok() && transform_) graph = transform_(*std::move(graph));
  if (!graph.ok()) return graph.status();
  v.graph = *std::move(graph);
  // The trace appends the symbols its slices derive (after the inputs' symbols).
  v.symbols = v.graph.symbols;
  v.declared.resize(v.symbols.size(), false);
  if (v.symbols.size() > kMaxVariantSymbols) {
    return absl::InvalidArgumentError(
        absl::StrCat("too many symbolic dims: the program uses ", v.symbols.size(),
                     " symbols (counting those derived by slices of symbolic dims); at most ",
                     kMaxVariantSymbols, " are supported"));
  }
  v.graph_hash = graph::CanonicalGraphHash(v.graph).Hex();
  return absl::OkStatus();
}

}  // namespace pto::detail
