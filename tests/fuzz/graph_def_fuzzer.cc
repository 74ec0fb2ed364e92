// Fuzz target: a GraphDef in text form, as `pto run` reads it: parse, validate
// (graph::FromGraphDef), then trace, compile and run it in a real Runtime at two sizes of its
// symbols. Any text gives a result or an error status, never a crash; the graph round-trips
// through ToGraphDef with the same canonical hash; a program that runs gives as many outputs as
// the graph names, of the shapes the ops' rules give on the concrete input shapes. Kernels are
// checked (RuntimeOptions::checked_kernels): an access outside a buffer aborts with its
// kernel's name, which the sanitizers could not see inside generated code.
//
// Larger programs are legitimate but slow to compile and run, and a slow run is a time-out, not
// a finding: beyond the bounds below an input is only parsed and validated.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_hash.h"
#include "jit/graph/graph_text.h"
#include "ops/shape_rules.h"
#include "proto/graph.pb.h"
#include "pto/pto.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/pto/graph_program.h"

namespace pto::fuzz {
namespace {

constexpr size_t kMaxNodes = 40;
constexpr int kMaxInputs = 16;
constexpr int64_t kMaxNodeElements = int64_t{1} << 18;
constexpr int64_t kMaxTotalElements = int64_t{1} << 21;

// Sizes tried first for a symbol: the top of a power-of-two bucket (jit/shape_class.h), so the
// second call can run in the same shape class at a smaller size.
constexpr int64_t kSizes[] = {3, 7, 5, 15, 1, 2, 31, 64};

// The symbols' values for the two calls: the `pick`-th size within each symbol's range
// (cycling; its min when none is), then the bottom of that size's power-of-two bucket (or the
// symbol's min when that is the same size): a class compiled at one size and run at a smaller
// one is where a shape rule that trusts a compile-time bound reads or writes out of bounds.
std::pair<std::vector<int64_t>, std::vector<int64_t>> SymbolValues(const ir::Graph& graph,
                                                                   size_t pick) {
  std::vector<int64_t> first, second;
  for (const ir::SymbolInfo& s : graph.symbols) {
    std::vector<int64_t> fits;
    for (int64_t v : kSizes) {
      if (v >= s.min && v <= s.max) fits.push_back(v);
    }
    const int64_t v = fits.empty() ? s.min : fits[pick % fits.size()];
    const int64_t bottom =
        v > 0 ? std::max(s.min, static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(v)))) : v;
    first.push_back(v);
    second.push_back(bottom != v ? bottom : s.min);
  }
  return {first, second};
}

// The concrete shape of every input (by input index) at these symbol values; an input no node
// defines gets [1]. nullopt when a dim is negative, overflows or the input is too large.
std::optional<std::vector<std::vector<int64_t>>> InputShapes(const ir::Graph& graph,
                                                             const std::vector<int64_t>& values) {
  std::vector<std::vector<int64_t>> shapes(graph.num_inputs, std::vector<int64_t>{1});
  for (const ir::Node& node : graph.nodes) {
    if (node.op != ir::OpKind::kInput) continue;
    std::vector<int64_t>& shape = shapes[node.attrs.index];
    shape.clear();
    int64_t elements = 1;
    for (const ir::SymExpr& dim : node.shape) {
      bool overflow = false;
      const int64_t d = dim.Evaluate(values, &overflow);
      if (overflow || d < 0 || (d > 0 && elements > kMaxNodeElements / d)) return std::nullopt;
      elements *= d;
      shape.push_back(d);
    }
  }
  return shapes;
}

ir::Shape Constant(const std::vector<int64_t>& dims) { return ir::Shape(dims.begin(), dims.end()); }

// The shape of every node by the ops' rules on these concrete input shapes, up to the first
// node whose rule fails (the tracer rejects that node too). nullopt when some node is too large
// to run within the bounds.
std::optional<std::vector<std::optional<ir::Shape>>> ConcreteShapes(
    const ir::Graph& graph, const std::vector<std::vector<int64_t>>& inputs) {
  std::vector<std::optional<ir::Shape>> shapes(graph.nodes.size());
  int64_t total = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (node.op == ir::OpKind::kInput) {
      shapes[i] = Constant(inputs[node.attrs.index]);
    } else {
      std::vector<ir::Shape> args;
      for (int a : node.inputs) {
        if (!shapes[a].has_value()) return shapes;
        args.push_back(*shapes[a]);
      }
      absl::StatusOr<ir::Shape> shape = ops::InferShape(node.op, node.attrs, args);
      if (!shape.ok()) return shapes;
      shapes[i] = *std::move(shape);
    }
    int64_t elements = 1;
    for (const ir::SymExpr& dim : *shapes[i]) {
      const std::optional<int64_t> d = dim.AsConstant();
      FUZZ_CHECK(d.has_value() && *d >= 0, "a concrete shape rule gives constant dims");
      if (*d > 0 && elements > kMaxNodeElements / *d) return std::nullopt;
      elements *= *d;
    }
    total += elements;
    if (total > kMaxTotalElements) return std::nullopt;
  }
  return shapes;
}

void CheckFailure(const absl::Status& status, const std::string& what) {
  FUZZ_CHECK(status.code() != absl::StatusCode::kInternal &&
                 status.code() != absl::StatusCode::kUnknown && !status.message().empty(),
             what + " fails with a status that says what is wrong, got " + status.ToString());
}

// Calls `fn` on inputs of `shapes` and checks its outputs against `expected` (by node).
void CallAt(Function& fn, const ir::Graph& graph, const std::vector<std::vector<int64_t>>& shapes,
            const std::vector<std::optional<ir::Shape>>& expected) {
  std::vector<std::vector<float>> data;
  std::vector<TensorView> views;
  for (const std::vector<int64_t>& shape : shapes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float>& values = data.emplace_back(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  }
  for (size_t i = 0; i < shapes.size(); ++i)
    views.push_back(TensorView::Dense(data[i].data(), shapes[i]));
  absl::StatusOr<std::vector<Tensor>> outputs = fn(views);
  if (!outputs.ok()) {
    CheckFailure(outputs.status(), "a call");
    return;
  }
  FUZZ_CHECK(outputs->size() == graph.outputs.size(), "one output per graph output");
  for (size_t o = 0; o < outputs->size(); ++o) {
    const std::optional<ir::Shape>& want = expected[graph.outputs[o]];
    if (!want.has_value()) continue;
    const std::span<const int64_t> got = (*outputs)[o].dims();
    bool same = got.size() == want->size();
    for (size_t d = 0; same && d < got.size(); ++d) same = ir::SymExpr(got[d]) == (*want)[d];
    FUZZ_CHECK(same, "output " + std::to_string(o) + " has the shape the ops' rules give, " +
                         ir::ShapeToString(*want) + ", not " +
                         ir::ShapeToString(ir::Shape(got.begin(), got.end())));
  }
}

void CompileAndRun(const ir::Graph& graph, size_t seed) {
  if (graph.nodes.size() > kMaxNodes || graph.num_inputs > kMaxInputs) return;
  tools::GraphProgram program = tools::GraphProgramFromGraph(graph);
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Open({.intra_op_threads = 1, .checked_kernels = true});
  FUZZ_CHECK(runtime.ok(), "a Runtime opens: " + runtime.status().ToString());
  absl::StatusOr<std::unique_ptr<Function>> fn =
      (*runtime)->JitTraced("fuzz", graph.num_inputs, program.trace, program.options);
  if (!fn.ok()) {
    CheckFailure(fn.status(), "Jit");
    return;
  }
  const auto [first, second] = SymbolValues(graph, seed);
  for (const std::vector<int64_t>* values : {&first, &second}) {
    if (values == &second && second == first) break;
    std::optional<std::vector<std::vector<int64_t>>> shapes = InputShapes(graph, *values);
    if (!shapes.has_value()) return;
    std::optional<std::vector<std::optional<ir::Shape>>> expected = ConcreteShapes(graph, *shapes);
    if (!expected.has_value()) return;
    CallAt(**fn, graph, *shapes, *expected);
  }
}

}  // namespace
}  // namespace pto::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pto::fuzz::AsText;
  pto::proto::GraphDef def;
  if (!pto::graph::ParseTextProto(AsText(data, size), "GraphDef", &def).ok()) return 0;
  absl::StatusOr<pto::ir::Graph> graph = pto::graph::FromGraphDef(def);
  if (!graph.ok()) {
    FUZZ_CHECK(graph.status().code() == absl::StatusCode::kInvalidArgument,
               "an invalid GraphDef is InvalidArgument: " + graph.status().ToString());
    return 0;
  }
  absl::StatusOr<pto::ir::Graph> again = pto::graph::FromGraphDef(pto::graph::ToGraphDef(*graph));
  FUZZ_CHECK(again.ok(), "ToGraphDef's output validates: " + again.status().ToString());
  FUZZ_CHECK(pto::graph::CanonicalGraphHash(*again) == pto::graph::CanonicalGraphHash(*graph),
             "a graph keeps its canonical hash through ToGraphDef and FromGraphDef");
  pto::fuzz::CompileAndRun(*graph, std::hash<std::string_view>()(AsText(data, size)));
  return 0;
}
