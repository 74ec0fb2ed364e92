// RunReference: binds a graph's symbols from concrete inputs and evaluates it node by node.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/ir/sym_expr.h"
#include "ops/derived_symbols.h"
#include "ops/reference.h"

namespace pto::ops {
namespace {

// Where a symbol got its value, for error messages.
struct Binding {
  int64_t value = 0;
  int64_t input = -1;  // the Function input (attrs.index) that bound it
  size_t axis = 0;
};

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

class Runner {
 public:
  Runner(const ir::Graph& graph, std::span<const HostTensor> inputs,
         const std::function<void()>& yield, ReferenceOptions options)
      : graph_(graph),
        inputs_(inputs),
        names_(graph.SymbolNames()),
        yield_(yield),
        options_(options) {}

  absl::StatusOr<std::vector<HostTensor>> Run() {
    if (absl::Status s = BindSymbols(); !s.ok()) return s;
    if (absl::Status s = CheckDTypes(); !s.ok()) return s;
    if (options_.f64) {
      // Every f32 value is computed and kept in f64: the inputs are widened once here, and a
      // float op with an f64 input computes in f64 (EvaluateOp).
      for (const HostTensor& t : inputs_) widened_inputs_.push_back(t.ToF64());
      inputs_ = widened_inputs_;
    }
    // A value is freed after its last reader: memory follows the live values, not the graph.
    const size_t n = graph_.nodes.size();
    std::vector<size_t> last_use(n, 0);
    std::vector<bool> is_output(n, false);
    for (int id : graph_.outputs) {
      if (id >= 0 && id < static_cast<int>(n)) is_output[id] = true;
    }
    for (size_t id = 0; id < n; ++id) {
      for (int in : graph_.nodes[id].inputs) {
        if (in >= 0 && in < static_cast<int>(id)) last_use[in] = id;
      }
    }
    std::vector<HostTensor> values(n);
    for (size_t id = 0; id < n; ++id) {
      if (yield_) yield_();
      absl::StatusOr<HostTensor> v = EvaluateNode(id, values);
      if (!v.ok()) return v.status();
      values[id] = *std::move(v);
      for (int in : graph_.nodes[id].inputs) {
        if (last_use[in] == id && !is_output[in]) values[in] = HostTensor();
      }
    }
    std::vector<HostTensor> outputs;
    for (int id : graph_.outputs) {
      if (id < 0 || id >= static_cast<int>(values.size())) {
        return absl::InvalidArgumentError(absl::StrCat("graph output %", id, " is not a node"));
      }
      outputs.push_back(values[id]);
    }
    return outputs;
  }

 private:
  std::string SymbolName(int s) const {
    return s < static_cast<int>(names_.size()) && !names_[s].empty() ? names_[s]
                                                                     : absl::StrCat("s", s);
  }

  absl::Status BindSymbols() {
    if (static_cast<int64_t>(inputs_.size()) != graph_.num_inputs) {
      return absl::InvalidArgumentError(absl::StrCat("the graph has ", graph_.num_inputs,
                                                     " inputs but ", inputs_.size(),
                                                     " tensors were given"));
    }
    bindings_.assign(graph_.symbols.size(), std::nullopt);
    // Pass 1: dims that are exactly one symbol bind it.
    for (const ir::Node& node : graph_.nodes) {
      if (node.op != ir::OpKind::kInput) continue;
      const int64_t index = node.attrs.index;
      if (index < 0 || index >= static_cast<int64_t>(inputs_.size())) {
        return absl::InvalidArgumentError(absl::StrCat("input node index ", index,
                                                       " is out of range: ", inputs_.size(),
                                                       " tensors were given"));
      }
      const HostTensor& t = inputs_[index];
      if (t.shape.size() != node.shape.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", index, " has shape ", t.ShapeString(), " but the graph expects ",
                         ir::ShapeToString(node.shape, names_), " (rank ", node.shape.size(), ")"));
      }
      for (size_t axis = 0; axis < t.shape.size(); ++axis) {
        std::optional<int> s = node.shape[axis].AsSymbol();
        if (!s.has_value()) continue;
        if (*s >= static_cast<int>(bindings_.size())) bindings_.resize(*s + 1);
        std::optional<Binding>& b = bindings_[*s];
        if (!b.has_value()) {
          b = Binding{t.shape[axis], index, axis};
        } else if (b->value != t.shape[axis]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "symbol ", SymbolName(*s), " is ", t.shape[axis], " in input ", index, " (shape ",
              t.ShapeString(), ", axis ", axis, ") but ", b->value, " in input ", b->input,
              " (shape ", inputs_[b->input].ShapeString(), ", axis ", b->axis, ")"));
        }
      }
    }
    // Ranges of the bound symbols, and every symbol a dim uses must be bound.
    values_.assign(bindings_.size(), 0);
    for (size_t s = 0; s < bindings_.size(); ++s) {
      if (s < graph_.symbols.size() && graph_.symbols[s].derived.has_value()) {
        if (absl::Status st = BindDerived(s); !st.ok()) return st;
        continue;
      }
      if (!bindings_[s].has_value()) continue;
      values_[s] = bindings_[s]->value;
      if (s < graph_.symbols.size()) {
        const ir::SymbolInfo& info = graph_.symbols[s];
        if (values_[s] < info.min || values_[s] > info.max) {
          return absl::InvalidArgumentError(absl::StrCat(
              "symbol ", SymbolName(s), " is ", values_[s], " (from input ", bindings_[s]->input,
              " axis ", bindings_[s]->axis, ") but its range is [", info.min, ", ", info.max, "]"));
        }
      }
    }
    // Pass 2: every input dim (constants and polynomials too) must agree with the tensor.
    for (const ir::Node& node : graph_.nodes) {
      if (node.op != ir::OpKind::kInput) continue;
      const HostTensor& t = inputs_[node.attrs.index];
      if (IsHostDType(t.dtype) && t.size() != t.NumElements()) {
        return absl::InvalidArgumentError(absl::StrCat("input ", node.attrs.index, " shape ",
                                                       t.ShapeString(), " needs ", t.NumElements(),
                                                       " values but has ", t.size()));
      }
      absl::StatusOr<std::vector<int64_t>> want = Evaluate(node.shape);
      if (!want.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", node.attrs.index, ": ", want.status().message()));
      }
      if (*want != t.shape) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", node.attrs.index, " has shape ", t.ShapeString(), " but the graph shape ",
            ir::ShapeToString(node.shape, names_), " evaluates to ", DimsString(*want)));
      }
    }
    return absl::OkStatus();
  }

  // Each input's dtype against its input node's: equal, or an f64 tensor for an f32 node (the
  // reference's wide type stands for f32).
  absl::Status CheckDTypes() const {
    for (const ir::Node& node : graph_.nodes) {
      if (node.op != ir::OpKind::kInput) continue;
      const HostTensor& t = inputs_[node.attrs.index];
      const bool ok =
          IsHostDType(t.dtype) &&
          (t.dtype == node.dtype || (t.dtype == ir::DType::kF64 && node.dtype == ir::DType::kF32));
      if (!ok) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", node.attrs.index, " has dtype ", std::string(ir::DTypeName(t.dtype)),
            " but the graph's input is ", std::string(ir::DTypeName(node.dtype)),
            node.dtype == ir::DType::kF32 ? " (f32 or f64 tensors are accepted)" : ""));
      }
    }
    return absl::OkStatus();
  }

  // A derived symbol (a slice's start or length) from the symbols of its dim, bound before it.
  absl::Status BindDerived(size_t s) {
    const ir::DerivedSymbol& d = *graph_.symbols[s].derived;
    for (int used : d.dim.Symbols()) {
      if (used >= static_cast<int>(s) || !bindings_[used].has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "symbol ", SymbolName(static_cast<int>(s)), " is derived from ", d.dim.ToString(names_),
            ", whose symbol ", SymbolName(used), " is not bound before it"));
      }
    }
    values_[s] = EvaluateDerivedSymbol(d, values_);
    bindings_[s] = Binding{values_[s], -1, 0};
    return absl::OkStatus();
  }

  // The concrete value of a graph shape under the bindings.
  absl::StatusOr<std::vector<int64_t>> Evaluate(const ir::Shape& shape) const {
    std::vector<int64_t> dims;
    for (const ir::SymExpr& d : shape) {
      for (int s : d.Symbols()) {
        if (s >= static_cast<int>(bindings_.size()) || !bindings_[s].has_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("symbol ", SymbolName(s), " in shape ", ir::ShapeToString(shape, names_),
                           " is not bound: no input dim is exactly that symbol"));
        }
      }
      bool overflow = false;
      dims.push_back(d.Evaluate(values_, &overflow));
      if (overflow) {
        return absl::InvalidArgumentError(absl::StrCat("shape ", ir::ShapeToString(shape, names_),
                                                       " overflows int64 for these inputs"));
      }
    }
    return dims;
  }

  absl::StatusOr<HostTensor> EvaluateNode(size_t id, const std::vector<HostTensor>& values) {
    const ir::Node& node = graph_.nodes[id];
    const std::string where =
        absl::StrCat("node %", id, " (", std::string(ir::OpName(node.op)), ")");
    HostTensor result;
    if (node.op == ir::OpKind::kInput) {
      result = inputs_[node.attrs.index];
    } else if (node.op == ir::OpKind::kConstant && node.dtype == ir::DType::kI32) {
      const double v = node.attrs.scalar;
      if (v != std::trunc(v) || v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": the i32 constant ", v, " is not an int32"));
      }
      result = HostTensor::I32({}, {static_cast<int32_t>(v)});
    } else if (node.op == ir::OpKind::kConstant && options_.f64) {
      result = HostTensor::Zeros({}, ir::DType::kF64);
      result.Set(0, node.attrs.scalar);  // the constant's double, not its f32 rounding
    } else {
      std::vector<const HostTensor*> args;
      for (int in : node.inputs) {
        if (in < 0 || in >= static_cast<int>(id)) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": operand %", in, " is not an earlier node"));
        }
        args.push_back(&values[in]);
      }
      // A symbolic target shape (broadcast_to, reshape) takes the call's values.
      ir::Attrs attrs = node.attrs;
      if (!attrs.shape.empty()) {
        absl::StatusOr<std::vector<int64_t>> target = Evaluate(attrs.shape);
        if (!target.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": ", target.status().message()));
        }
        attrs.shape.assign(target->begin(), target->end());
      }
      absl::StatusOr<HostTensor> r = EvaluateOp(node.op, attrs, args, yield_);
      if (!r.ok()) {
        return absl::Status(r.status().code(), absl::StrCat(where, ": ", r.status().message()));
      }
      result = *std::move(r);
    }
    if (options_.f64 && result.dtype == ir::DType::kF32) result = result.ToF64();
    const bool dtype_ok = result.dtype == node.dtype ||
                          (result.dtype == ir::DType::kF64 && node.dtype == ir::DType::kF32);
    if (!dtype_ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the graph dtype is ", std::string(ir::DTypeName(node.dtype)),
                       " but the reference computed ", std::string(ir::DTypeName(result.dtype))));
    }
    absl::StatusOr<std::vector<int64_t>> want = Evaluate(node.shape);
    if (!want.ok())
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", want.status().message()));
    if (*want != result.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the graph shape ", ir::ShapeToString(node.shape, names_), " evaluates to ",
          DimsString(*want), " but the reference computed ", result.ShapeString()));
    }
    return result;
  }

  const ir::Graph& graph_;
  std::span<const HostTensor> inputs_;
  std::vector<std::string> names_;
  const std::function<void()>& yield_;
  ReferenceOptions options_;
  std::vector<HostTensor> widened_inputs_;
  std::vector<std::optional<Binding>> bindings_;
  std::vector<int64_t> values_;
};

}  // namespace

absl::StatusOr<std::vector<HostTensor>> RunReference(const ir::Graph& graph,
                                                     std::span<const HostTensor> inputs,
                                                     const std::function<void()>& yield,
                                                     ReferenceOptions options) {
  return Runner(graph, inputs, yield, options).Run();
}

}  // namespace pto::ops
