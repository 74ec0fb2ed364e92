// The losses of pto/losses.h: compositions of the public ops, after checks of their inputs'
// ranks and dtypes that name the loss and the argument.
#include "pto/losses.h"

#include <memory>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/ir/dtype.h"
#include "jit/ir/sym_expr.h"
#include "jit/trace.h"

namespace pto {
namespace {

// The node of `v` when it is a live Value of a running trace that has no error yet; null
// otherwise (then the ops below record, or have recorded, the error).
const ir::Node* NodeOf(const Value& v) {
  std::shared_ptr<detail::TraceState> state = v.state();
  if (state == nullptr || v.id() < 0 || !state->status().ok()) return nullptr;
  return &state->graph().nodes[v.id()];
}

// Records an InvalidArgument "<loss>: <message>" in the trace of `v`; returns an invalid Value.
Value Reject(const Value& v, const char* loss, const std::string& message) {
  v.state()->Fail(absl::InvalidArgumentError(absl::StrCat(loss, ": ", message)));
  return Value();
}

std::string ShapeOf(const Value& v, const ir::Node& node) {
  return ir::ShapeToString(node.shape, v.state()->graph().SymbolNames());
}

// Empty when `node` is of `dtype` and rank `rank`, else what is wrong with argument `name`.
std::string CheckArg(const Value& v, const ir::Node& node, const char* name, ir::DType dtype,
                     int rank, const char* layout) {
  if (node.dtype != dtype) {
    return absl::StrCat(name, " must be ", std::string(ir::DTypeName(dtype)), ", got ",
                        std::string(ir::DTypeName(node.dtype)));
  }
  if (static_cast<int>(node.shape.size()) != rank) {
    return absl::StrCat(name, " must have rank ", rank, " ", layout, ", got ", ShapeOf(v, node));
  }
  return "";
}

// -mean over the batch of sum_c targets[n, c] * log_softmax(logits)[n, c].
Value WeightedNll(Value logits, Value targets) {
  return -reduce_mean(reduce_sum(targets * log_softmax(logits), 1), 0);
}

}  // namespace

Value cross_entropy(Value logits, Value labels) {
  constexpr const char* kLoss = "cross_entropy";
  const ir::Node* l = NodeOf(logits);
  const ir::Node* y = NodeOf(labels);
  if (l == nullptr || y == nullptr) return WeightedNll(logits, one_hot(labels, 1));
  std::string bad = CheckArg(logits, *l, "logits", ir::DType::kF32, 2, "[batch, classes]");
  if (bad.empty()) bad = CheckArg(labels, *y, "labels", ir::DType::kI32, 1, "[batch]");
  if (!bad.empty()) return Reject(logits, kLoss, bad);
  const std::optional<int64_t> classes = l->shape[1].AsConstant();
  if (!classes.has_value()) {
    return Reject(
        logits, kLoss,
        absl::StrCat("the class dim of logits must be static, got ", ShapeOf(logits, *l)));
  }
  if (!(l->shape[0] == y->shape[0])) {
    return Reject(logits, kLoss,
                  absl::StrCat("labels ", ShapeOf(labels, *y), " and logits ", ShapeOf(logits, *l),
                               " must have the same batch dim"));
  }
  return WeightedNll(logits, one_hot(labels, *classes));
}

Value cross_entropy_probs(Value logits, Value probs) {
  constexpr const char* kLoss = "cross_entropy_probs";
  const ir::Node* l = NodeOf(logits);
  const ir::Node* p = NodeOf(probs);
  if (l == nullptr || p == nullptr) return WeightedNll(logits, probs);
  std::string bad = CheckArg(logits, *l, "logits", ir::DType::kF32, 2, "[batch, classes]");
  if (bad.empty()) bad = CheckArg(probs, *p, "probs", ir::DType::kF32, 2, "[batch, classes]");
  if (!bad.empty()) return Reject(logits, kLoss, bad);
  if (!(l->shape == p->shape)) {
    return Reject(logits, kLoss,
                  absl::StrCat("probs ", ShapeOf(probs, *p), " and logits ", ShapeOf(logits, *l),
                               " must have the same shape"));
  }
  return WeightedNll(logits, probs);
}

Value mse(Value a, Value b) {
  const ir::Node* na = NodeOf(a);
  const ir::Node* nb = NodeOf(b);
  if (na != nullptr && nb != nullptr) {
    for (const auto& [v, node, name] : {std::tuple{a, na, "a"}, std::tuple{b, nb, "b"}}) {
      if (node->dtype != ir::DType::kF32) {
        return Reject(
            v, "mse",
            absl::StrCat(name, " must be f32, got ", std::string(ir::DTypeName(node->dtype))));
      }
    }
  }
  Value d = a - b;
  return reduce_mean(reshape(d * d, {-1}), 0);
}

}  // namespace pto
