// Appends ops to a tensor graph with their shapes and dtypes inferred by the op rules, as the
// tracer does for pto::Value: what the gradient rules (ops/gradient_rules.h) write the backward
// graph with. The first error is kept and every later call returns -1, so a rule reads as a
// straight sequence of ops with one status check at the end.
#ifndef PTO_OPS_GRAPH_BUILDER_H_
#define PTO_OPS_GRAPH_BUILDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "jit/ir/graph.h"

namespace pto::ops {

class GraphBuilder {
 public:
  explicit GraphBuilder(ir::Graph& graph) : graph_(graph) {}

  // Node `op` over `inputs` (node ids); -1 once any call has failed.
  int Op(ir::OpKind op, const std::vector<int>& inputs, ir::Attrs attrs = {});
  int Constant(double value);  // shape []

  int Add(int a, int b) { return Op(ir::OpKind::kAdd, {a, b}); }
  int Sub(int a, int b) { return Op(ir::OpKind::kSub, {a, b}); }
  int Mul(int a, int b) { return Op(ir::OpKind::kMul, {a, b}); }
  int Div(int a, int b) { return Op(ir::OpKind::kDiv, {a, b}); }
  int Neg(int x) { return Op(ir::OpKind::kNeg, {x}); }
  // x times the scalar c (a named method: an overload Mul(int, double) would take Mul(x, 1)
  // for a node id).
  int Scale(int x, double c) { return Mul(x, Constant(c)); }
  // A tensor of `shape` filled with `value` (a broadcast constant: never read from memory).
  int Filled(double value, const ir::Shape& shape) { return BroadcastTo(Constant(value), shape); }
  int Unary(ir::OpKind op, int x) { return Op(op, {x}); }
  int Compare(ir::OpKind op, int a, int b) { return Op(op, {a, b}); }
  int Where(int condition, int a, int b) { return Op(ir::OpKind::kWhere, {condition, a, b}); }
  int Sum(int x, int64_t axis, bool keepdims);
  int MatMul(int a, int b, bool transpose_a, bool transpose_b);
  int Transpose(int x, std::vector<int64_t> permutation);
  int Slice(int x, int64_t axis, int64_t start, int64_t end, int64_t step = 1);
  int Concat(const std::vector<int>& parts, int64_t axis);
  // x reshaped (same element count) or broadcast (numpy) to a symbolic shape; x itself when
  // its shape already is that.
  int ReshapeTo(int x, const ir::Shape& shape);
  int BroadcastTo(int x, const ir::Shape& shape);
  // x summed over the axes where it was broadcast to reach its shape from `shape` (numpy's
  // rules read backwards: leading axes, and axes where `shape` has the constant 1), then
  // reshaped to `shape`: the gradient of a broadcast.
  int SumTo(int x, const ir::Shape& shape);

  // Valid while no node is added (nodes live in a vector).
  const ir::Node& node(int id) const { return graph_.nodes[id]; }
  ir::Shape shape(int id) const { return id < 0 ? ir::Shape{} : graph_.nodes[id].shape; }
  int64_t rank(int id) const { return static_cast<int64_t>(shape(id).size()); }
  const absl::Status& status() const { return status_; }
  void Fail(absl::Status status);
  ir::Graph& graph() { return graph_; }

 private:
  ir::Graph& graph_;
  absl::Status status_;
};

}  // namespace pto::ops

#endif  // PTO_OPS_GRAPH_BUILDER_H_
