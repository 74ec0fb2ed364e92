#include "ops/graph_builder.h"

#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/shape_rules.h"

namespace pto::ops {

void GraphBuilder::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

int GraphBuilder::Op(ir::OpKind op, const std::vector<int>& inputs, ir::Attrs attrs) {
  if (!status_.ok()) return -1;
  std::vector<ir::Shape> shapes;
  std::vector<ir::DType> dtypes;
  for (int id : inputs) {
    if (id < 0 || id >= static_cast<int>(graph_.nodes.size())) {
      Fail(absl::InternalError(
          absl::StrCat(ir::OpName(op), ": operand ", id, " is not a node of the graph")));
      return -1;
    }
    shapes.push_back(graph_.nodes[id].shape);
    dtypes.push_back(graph_.nodes[id].dtype);
  }
  absl::StatusOr<ir::Shape> shape = InferShape(op, attrs, shapes, &graph_.symbols, &graph_.guards);
  if (!shape.ok()) {
    Fail(shape.status());
    return -1;
  }
  absl::StatusOr<ir::DType> dtype = InferDType(op, attrs, dtypes);
  if (!dtype.ok()) {
    Fail(dtype.status());
    return -1;
  }
  ir::Node node;
  node.op = op;
  node.inputs = inputs;
  node.attrs = std::move(attrs);
  node.dtype = *dtype;
  node.shape = *std::move(shape);
  graph_.nodes.push_back(std::move(node));
  return static_cast<int>(graph_.nodes.size()) - 1;
}

int GraphBuilder::Constant(double value) {
  ir::Attrs attrs;
  attrs.scalar = value;
  return Op(ir::OpKind::kConstant, {}, attrs);
}

int GraphBuilder::Sum(int x, int64_t axis, bool keepdims) {
  ir::Attrs attrs;
  attrs.axis = axis;
  attrs.keepdims = keepdims;
  return Op(ir::OpKind::kReduceSum, {x}, attrs);
}

int GraphBuilder::MatMul(int a, int b, bool transpose_a, bool transpose_b) {
  ir::Attrs attrs;
  attrs.transpose_a = transpose_a;
  attrs.transpose_b = transpose_b;
  return Op(ir::OpKind::kMatMul, {a, b}, attrs);
}

int GraphBuilder::Transpose(int x, std::vector<int64_t> permutation) {
  ir::Attrs attrs;
  attrs.ints = std::move(permutation);
  return Op(ir::OpKind::kTranspose, {x}, attrs);
}

int GraphBuilder::Slice(int x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  ir::Attrs attrs;
  attrs.axis = axis;
  attrs.start = start;
  attrs.end = end;
  attrs.step = step;
  return Op(ir::OpKind::kSlice, {x}, attrs);
}

int GraphBuilder::Concat(const std::vector<int>& parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  ir::Attrs attrs;
  attrs.axis = axis;
  return Op(ir::OpKind::kConcat, parts, attrs);
}

int GraphBuilder::ReshapeTo(int x, const ir::Shape& shape) {
  if (!status_.ok()) return -1;
  if (graph_.nodes[x].shape == shape) return x;
  ir::Attrs attrs;
  attrs.shape = shape;
  return Op(ir::OpKind::kReshape, {x}, attrs);
}

int GraphBuilder::BroadcastTo(int x, const ir::Shape& shape) {
  if (!status_.ok()) return -1;
  if (graph_.nodes[x].shape == shape) return x;
  ir::Attrs attrs;
  attrs.shape = shape;
  return Op(ir::OpKind::kBroadcastTo, {x}, attrs);
}

int GraphBuilder::SumTo(int x, const ir::Shape& shape) {
  if (!status_.ok()) return -1;
  const ir::Shape from = graph_.nodes[x].shape;
  if (from == shape) return x;
  if (from.size() < shape.size()) {
    Fail(absl::InternalError(
        absl::StrCat("SumTo: rank ", from.size(), " below the target's ", shape.size())));
    return -1;
  }
  const size_t lead = from.size() - shape.size();
  // Axes kept with size 1 first (their positions do not move), then the leading ones.
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].AsConstant() == 1 && from[lead + i].AsConstant() != 1) {
      x = Sum(x, static_cast<int64_t>(lead + i), /*keepdims=*/true);
    }
  }
  for (size_t i = 0; i < lead; ++i) x = Sum(x, 0, /*keepdims=*/false);
  return ReshapeTo(x, shape);
}

}  // namespace pto::ops
