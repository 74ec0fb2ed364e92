#include "jit/trace.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/graph/check_limits.h"
#include "jit/graph/limits.h"
#include "jit/traced_shape_check.h"
#include "ops/shape_rules.h"

namespace pto::detail {
namespace {
thread_local TraceState* current_trace = nullptr;

constexpr const char* kValueScope =
    " (a Value is valid only during the trace that made it: was it kept from an earlier trace?)";

// Stores attributes in one canonical form (non-negative axes, resolved slice bounds of constant
// dims), so that lowering and the graph hash never see two spellings of one op. A slice of a
// symbolic dim keeps its bounds: they resolve against each call's size
// (ops/derived_symbols.h). Runs after shape inference accepted the attributes.
void CanonicalizeAttrs(ir::OpKind op, const std::vector<ir::Shape>& shapes, ir::Attrs& attrs) {
  using ir::OpKind;
  const int64_t rank = shapes.empty() ? 0 : static_cast<int64_t>(shapes[0].size());
  switch (op) {
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kReduceMean:
    case OpKind::kLogSumExp:
    case OpKind::kConcat:
    case OpKind::kIota:
    case OpKind::kGather:
    case OpKind::kScatterAdd:
      if (attrs.axis < 0) attrs.axis += rank;
      break;
    case OpKind::kSlice: {
      if (attrs.axis < 0) attrs.axis += rank;
      if (std::optional<int64_t> dim = shapes[0][attrs.axis].AsConstant()) {
        ops::SliceBounds b = ops::ResolveSlice(*dim, attrs.start, attrs.end, attrs.step);
        attrs.start = b.start;
        attrs.end = b.start + b.length * attrs.step;
        if (b.length == 0) attrs.end = b.start;
      }
      break;
    }
    default:
      break;
  }
}

// The limits of jit/graph/limits.h a new node is checked against before its shape is
// inferred; `nodes` counts it.
absl::Status CheckTraceLimits(const std::string& where, ir::OpKind op, const ir::Attrs& attrs,
                              size_t inputs, size_t nodes) {
  if (absl::Status s = graph::CheckLimit("the trace's node count", static_cast<int64_t>(nodes),
                                         graph::kMaxNodes, "kMaxNodes");
      !s.ok()) {
    return s;
  }
  return graph::CheckNodeCounts(where, op, static_cast<int64_t>(inputs),
                                static_cast<int64_t>(attrs.ints.size()));
}

}  // namespace

class CurrentTraceScope {
 public:
  explicit CurrentTraceScope(TraceState* state) : previous_(current_trace) { current_trace = state; }
  ~CurrentTraceScope() { current_trace = previous_; }

 private:
  TraceState* previous_;
};

TraceState* TraceState::Current() { return current_trace; }

void TraceState::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

Value TraceState::AddConstant(double value, ir::DType dtype) {
  ir::Attrs attrs;
  attrs.scalar = value;
  attrs.dtype = dtype;
  return AddNode(ir::OpKind::kConstant, attrs, {});
}

Value TraceState::AddNode(ir::OpKind op, ir::Attrs attrs, std::span<const Value> inputs) {
  if (!status_.ok()) return Value();
  std::vector<ir::Shape> shapes;
  std::vector<ir::DType> dtypes;
  std::vector<int> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = inputs[i];
    if (v.id() < 0) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(ir::OpName(op), ": input ", i,
                       " is not a traced value (a default-constructed pto::Value?)")));
      return Value();
    }
    if (v.state().get() != this) {
      Fail(absl::InvalidArgumentError(absl::StrCat(ir::OpName(op), ": input ", i,
                                                   " is a Value from another trace", kValueScope)));
      return Value();
    }
    shapes.push_back(graph_.nodes[v.id()].shape);
    dtypes.push_back(graph_.nodes[v.id()].dtype);
    ids.push_back(v.id());
  }
  const std::string where = absl::StrCat("node ", graph_.nodes.size(), " (", ir::OpName(op), ")");
  if (absl::Status s = CheckTraceLimits(where, op, attrs, inputs.size(), graph_.nodes.size() + 1);
      !s.ok()) {
    Fail(std::move(s));
    return Value();
  }
  absl::StatusOr<ir::Shape> shape =
      ops::InferShape(op, attrs, shapes, &graph_.symbols, &graph_.guards);
  if (shape.ok()) {
    if (absl::Status s = CheckTracedShape(op, *shape, graph_.SymbolNames()); !s.ok()) shape = s;
  }
  if (!shape.ok()) {
    Fail(shape.status());
    return Value();
  }
  if (absl::Status s = graph::CheckShape(where, *shape); !s.ok()) {
    Fail(std::move(s));
    return Value();
  }
  absl::StatusOr<ir::DType> dtype = ops::InferDType(op, attrs, dtypes);
  if (!dtype.ok()) {
    Fail(dtype.status());
    return Value();
  }
  CanonicalizeAttrs(op, shapes, attrs);
  ir::Node node;
  node.op = op;
  node.inputs = std::move(ids);
  node.attrs = std::move(attrs);
  node.dtype = *dtype;
  node.shape = *std::move(shape);
  node.checkpoint = checkpoint_;
  graph_.nodes.push_back(std::move(node));
  return Value(weak_from_this(), static_cast<int>(graph_.nodes.size()) - 1);
}

}  // namespace pto::detail

namespace pto::jit {

absl::StatusOr<ir::Graph> Trace(const TraceFn& fn, std::span<const TraceInput> inputs,
                                std::vector<ir::SymbolInfo> symbols) {
  ir::Graph graph;
  graph.symbols = std::move(symbols);
  graph.num_inputs = static_cast<int>(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (absl::Status s = graph::CheckShape(absl::StrCat("input ", i), inputs[i].shape); !s.ok()) {
      return s;
    }
    ir::Node node;
    node.op = ir::OpKind::kInput;
    node.attrs.index = static_cast<int64_t>(i);
    node.shape = inputs[i].shape;
    node.dtype = inputs[i].dtype;
    graph.nodes.push_back(std::move(node));
  }
  auto state = std::make_shared<detail::TraceState>(std::move(graph));
  std::vector<Value> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.emplace_back(state, static_cast<int>(i));
  std::vector<Value> results;
  {
    detail::CurrentTraceScope scope(state.get());
    results = fn(args);
  }
  if (!state->status().ok()) return state->status();
  if (results.empty()) {
    return absl::InvalidArgumentError("the traced function returned no outputs");
  }
  if (absl::Status s = graph::CheckLimit("the traced function's output count",
                                         static_cast<int64_t>(results.size()), graph::kMaxOutputs,
                                         "kMaxOutputs");
      !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].id() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", i, " is not a traced value (a default-constructed pto::Value?)"));
    }
    if (results[i].state() != state) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", i, " is a Value from another trace", detail::kValueScope));
    }
  }
  ir::Graph traced = state->TakeGraph();
  for (const Value& v : results) traced.outputs.push_back(v.id());
  return traced;
}

}  // namespace pto::jit
