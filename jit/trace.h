// The tracer: runs the embedder's lambda once over symbolic Values and records a tensor graph.
#ifndef PTO_JIT_TRACE_H_
#define PTO_JIT_TRACE_H_

#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "pto/runtime.h"
#include "pto/value.h"

namespace pto::detail {

// One run of a lambda being traced. Owned by jit::Trace (by shared_ptr) for that run only;
// Values point to it weakly, so a Value kept past its trace is recognized, never dereferenced.
class TraceState : public std::enable_shared_from_this<TraceState> {
 public:
  explicit TraceState(ir::Graph graph) : graph_(std::move(graph)) {}

  // Appends a node after shape and dtype inference. On an error (the first is kept) the
  // returned Value is invalid and later ops on it are no-ops.
  Value AddNode(ir::OpKind op, ir::Attrs attrs, std::span<const Value> inputs);
  // A scalar constant of `dtype` (f32, or i32 for an integral value).
  Value AddConstant(double value, ir::DType dtype = ir::DType::kF32);
  void Fail(absl::Status status);

  // Marks the nodes added until EndCheckpoint with a new checkpoint segment (pto::checkpoint);
  // returns the previous segment, which EndCheckpoint restores (segments may nest: a node
  // belongs to the innermost).
  int BeginCheckpoint() {
    const int previous = checkpoint_;
    checkpoint_ = next_checkpoint_++;
    return previous;
  }
  void EndCheckpoint(int previous) { checkpoint_ = previous; }

  const ir::Graph& graph() const { return graph_; }
  ir::Graph TakeGraph() { return std::move(graph_); }
  const absl::Status& status() const { return status_; }

  // The TraceState of the trace running on this thread (for free functions like constant()).
  static TraceState* Current();

 private:
  friend class CurrentTraceScope;
  ir::Graph graph_;
  absl::Status status_;
  int checkpoint_ = -1;
  int next_checkpoint_ = 0;
};

}  // namespace pto::detail

namespace pto::jit {

// Shape of one Function input as seen by the tracer: each dim is a constant or a symbol.
struct TraceInput {
  ir::Shape shape;
  ir::DType dtype = ir::DType::kF32;
};

// Runs `fn` over inputs with these (possibly symbolic) shapes. `symbols` names the symbols the
// shapes use. Errors from shape inference come back as the first recorded error.
absl::StatusOr<ir::Graph> Trace(const TraceFn& fn, std::span<const TraceInput> inputs,
                                std::vector<ir::SymbolInfo> symbols);

}  // namespace pto::jit

#endif  // PTO_JIT_TRACE_H_
