#include "tools/pto/graph_input_check.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::tools {
namespace {

// Where a symbol got its value.
struct Binding {
  int64_t value = 0;
  int input = 0;
  size_t axis = 0;
};

// How a file of the declared dtype is written, for the message: " ('<f4' in a .npy file)".
std::string NpyHint(ir::DType declared) {
  switch (declared) {
    case ir::DType::kF32:
      return " ('<f4' in a .npy file)";
    case ir::DType::kI32:
      return " ('<i4' in a .npy file)";
    default:
      return "";
  }
}

class Checker {
 public:
  Checker(const ir::Graph& graph, std::span<const std::string> names,
          std::span<const GivenInput> inputs)
      : graph_(graph),
        names_(names),
        inputs_(inputs),
        symbol_names_(graph.SymbolNames()),
        declared_(graph.num_inputs, nullptr),
        bindings_(graph.symbols.size()) {}

  absl::Status Run() {
    for (const ir::Node& n : graph_.nodes) {
      if (n.op == ir::OpKind::kInput) declared_[n.attrs.index] = &n;
    }
    if (inputs_.size() != declared_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the graph has ", declared_.size(),
                                                     " inputs; ", inputs_.size(), " were given"));
    }
    // Constant dims and dims that are one symbol (which bind it), input by input.
    for (size_t i = 0; i < declared_.size(); ++i) {
      if (absl::Status s = CheckDirect(static_cast<int>(i)); !s.ok()) return s;
    }
    // The other symbolic dims, now that their symbols may be bound.
    for (size_t i = 0; i < declared_.size(); ++i) {
      if (absl::Status s = CheckPolynomials(static_cast<int>(i)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  std::string Name(int i) const { return absl::StrCat("input ", i, " (", names_[i], ")"); }

  absl::Status Mismatch(int i, const std::string& why) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(i), ": shape [", absl::StrJoin(inputs_[i].shape, ", "),
                     "] does not match the declared shape ",
                     ir::ShapeToString(declared_[i]->shape, symbol_names_), ": ", why));
  }

  absl::Status CheckDirect(int i) {
    const ir::Node& node = *declared_[i];
    const GivenInput& in = inputs_[i];
    if (in.dtype != node.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(Name(i), ": dtype ", std::string(ir::DTypeName(in.dtype)), ", declared ",
                       std::string(ir::DTypeName(node.dtype)), NpyHint(node.dtype)));
    }
    if (in.shape.size() != node.shape.size()) {
      return Mismatch(i, absl::StrCat("rank ", in.shape.size(), ", declared ", node.shape.size()));
    }
    for (size_t axis = 0; axis < in.shape.size(); ++axis) {
      const int64_t dim = in.shape[axis];
      const ir::SymExpr& want = node.shape[axis];
      if (std::optional<int64_t> c = want.AsConstant()) {
        if (dim != *c)
          return Mismatch(i, absl::StrCat("dim ", axis, " is ", dim, ", declared ", *c));
        continue;
      }
      std::optional<int> s = want.AsSymbol();
      if (!s.has_value()) continue;
      const std::string& symbol = symbol_names_[*s];
      if (const std::optional<Binding>& b = bindings_[*s]; b.has_value()) {
        if (dim != b->value) {
          return Mismatch(
              i, absl::StrCat("dim ", axis, " is ", dim, ", but ", symbol, " is ", b->value,
                              " (dim ", b->axis, " of ", Name(b->input), ")"));
        }
        continue;
      }
      const ir::SymbolInfo& info = graph_.symbols[*s];
      if (dim < info.min || dim > info.max) {
        return Mismatch(i, absl::StrCat("dim ", axis, " is ", dim, ", outside ", symbol,
                                        "'s range [", info.min, ", ", info.max, "]"));
      }
      bindings_[*s] = Binding{dim, i, axis};
    }
    return absl::OkStatus();
  }

  absl::Status CheckPolynomials(int i) {
    const ir::Node& node = *declared_[i];
    for (size_t axis = 0; axis < node.shape.size(); ++axis) {
      const ir::SymExpr& want = node.shape[axis];
      if (want.IsConstant() || want.AsSymbol().has_value()) continue;
      std::vector<int64_t> values(graph_.symbols.size(), 0);
      bool bound = true;
      for (int s : want.Symbols()) {
        bound = bound && bindings_[s].has_value();
        if (bound) values[s] = bindings_[s]->value;
      }
      if (!bound) continue;  // a symbol no single dim binds: the reference's binding decides
      const int64_t value = want.Evaluate(values);
      if (inputs_[i].shape[axis] != value) {
        return Mismatch(i, absl::StrCat("dim ", axis, " is ", inputs_[i].shape[axis], ", declared ",
                                        want.ToString(symbol_names_), " = ", value));
      }
    }
    return absl::OkStatus();
  }

  const ir::Graph& graph_;
  std::span<const std::string> names_;
  std::span<const GivenInput> inputs_;
  std::vector<std::string> symbol_names_;
  std::vector<const ir::Node*> declared_;
  std::vector<std::optional<Binding>> bindings_;
};

}  // namespace

absl::Status CheckGraphInputs(const ir::Graph& graph, std::span<const std::string> names,
                              std::span<const GivenInput> inputs) {
  return Checker(graph, names, inputs).Run();
}

}  // namespace pto::tools
