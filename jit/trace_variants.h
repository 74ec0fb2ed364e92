// A Function's trace variants: which input dims are traced as constants and which as symbols,
// the graph traced for that choice, and how a call's shapes bind the symbols. The first call
// traces with the declared dynamic dims symbolic; a later call whose static dims differ traces
// again with those dims symbolic (automatic dynamic shapes) unless that is disabled; when the
// program refuses them symbolic (a dim that broadcasts in one call and not in the next), with
// the call's own values.
#ifndef PTO_JIT_TRACE_VARIANTS_H_
#define PTO_JIT_TRACE_VARIANTS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/call_validation.h"
#include "jit/ir/graph.h"
#include "jit/shape_class.h"
#include "pto/runtime.h"

namespace pto::detail {

// How one input dim is traced: a constant, or symbol `symbol`.
struct DimSpec {
  int symbol = -1;
  int64_t value = 0;
};

// Applied to each traced graph before it is used (the gradient pass, for Runtime::JitGrad).
using GraphTransform = std::function<absl::StatusOr<ir::Graph>(ir::Graph)>;

struct TraceVariant {
  std::vector<std::vector<DimSpec>> inputs;
  std::vector<ir::SymbolInfo> symbols;
  std::vector<bool> declared;           // per symbol: declared by the embedder (range enforced)
  std::vector<ir::DType> input_dtypes;  // per input, as traced
  ir::Graph graph;                      // as traced
  std::string graph_hash;               // graph::CanonicalGraphHash(graph), hex: plan records' key
};

// Whether a call's dims fit a variant's symbols.
enum class SymbolFit {
  kFits,
  kOtherVariant,  // a dim outside this variant's symbols: another variant may serve the call
  kRefused,       // no variant can (a rank mismatch, a dim outside its declared range)
};
struct SymbolCheck {
  SymbolFit fit = SymbolFit::kFits;
  absl::Status status;  // why not, unless kFits
};
SymbolCheck CheckSymbolValues(const TraceVariant& v, const CallShapes& shapes);

// Binds the variant's symbols (and the symbols derived from them) from the input dims into
// `values`; false if a static dim, a repeated symbol or a symbol's range disagrees.
// Allocates nothing.
bool BindSymbols(const TraceVariant& v, const CallShapes& shapes, int64_t* values);

// The shape class as canonical text, the same in every process for the same graph hash: each
// symbol named by the input dim where it first appears (inputs, then axes, in order), e.g.
// "in0.0=1,in0.1=[64..127]"; "static" without symbols. Symbol names are left out (the graph
// hash ignores them too). A generic class (jit::GenericClass) is its ranges,
// "in0.0=[1..64],in0.1=[1..2048]": no class Classify makes has a range starting below 2, and
// one that equals the whole ranges compiles to the same program.
std::string ShapeClassKey(const TraceVariant& v, const jit::ShapeClass& cls);
// The same for people (logs, kernel events, tuning reports, `pto cache ls`): a declared dim
// by its name ("batch=[4..7]"), a dim made symbolic automatically by its place ("in0.1=...").
std::string ShapeClassLabel(const TraceVariant& v, const jit::ShapeClass& cls);

class TraceVariants {
 public:
  TraceVariants(std::string function, int num_inputs, TraceFn fn, const FunctionOptions& options,
                GraphTransform transform = nullptr);

  // The variant for these shapes: an existing one whose static dims match, else a new trace.
  // Each input's dtype is the one the first call gave (f32 when it gave shapes only); a call
  // whose views give another is InvalidArgument. Not thread-safe: the Function calls it under
  // its lock.
  absl::StatusOr<const TraceVariant*> For(const CallShapes& shapes);

  const std::vector<std::unique_ptr<TraceVariant>>& all() const { return variants_; }
  int64_t traces() const { return traces_.load(std::memory_order_relaxed); }

 private:
  // The dims of the first variant: the declared dynamic dims symbolic, the others as given.
  absl::StatusOr<std::unique_ptr<TraceVariant>> FirstSpec(const CallShapes& shapes) const;
  // The last variant with each dim that changed made symbolic (automatic dynamic shapes).
  absl::StatusOr<std::unique_ptr<TraceVariant>> WidenedSpec(const CallShapes& shapes);
  // Traces `v` (unless it is an error) and keeps it, when the call's shapes fit it.
  absl::StatusOr<const TraceVariant*> AddVariant(absl::StatusOr<std::unique_ptr<TraceVariant>> v,
                                                 const CallShapes& shapes);
  // Traces the lambda for the dims of `v` and completes it.
  absl::Status Trace(TraceVariant& v);

  std::string function_;
  int num_inputs_;
  TraceFn fn_;
  GraphTransform transform_;
  std::vector<DynamicDim> dynamic_;
  std::vector<bool> is_constant_;
  bool automatic_dynamic_;
  std::vector<std::unique_ptr<TraceVariant>> variants_;
  std::vector<ir::DType> dtypes_;  // per input, from the first call; empty until then
  int auto_symbols_ = 0;
  std::atomic<int64_t> traces_{0};
};

}  // namespace pto::detail

#endif  // PTO_JIT_TRACE_VARIANTS_H_
