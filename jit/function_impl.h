// A Function: a call validates its views, finds its shape class in the dispatch table
// (lock-free) and runs the class's plan; a call whose views match the shapes of one this
// thread made before reuses what those checks found (jit/call_memo.h). A call no class serves takes
// the slow path under the Function's lock: the trace variant for its dims (traced if new), the
// class compiled by the pipeline, its tuning queued, the class installed. Once max_shape_classes
// classes are compiled, the class compiled is the variant's generic one (not tuned); calls that
// arrive while it compiles wait for the lock and then find it.
#ifndef PTO_JIT_FUNCTION_IMPL_H_
#define PTO_JIT_FUNCTION_IMPL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "device/machine_limits.h"
#include "jit/call_validation.h"
#include "jit/compile_class.h"
#include "jit/constant_inputs.h"
#include "jit/dispatch_table.h"
#include "jit/numerics/checked_constants.h"
#include "jit/runtime_impl.h"
#include "jit/trace_variants.h"
#include "jit/tuning/function_tuning.h"
#include "proto/workload.pb.h"
#include "pto/runtime.h"

namespace pto::detail {

struct BoundCallState;

class FunctionImpl {
 public:
  // `transform` rewrites each traced graph (the gradient pass); empty: none.
  FunctionImpl(std::shared_ptr<RuntimeImpl> runtime, std::string name, int num_inputs, TraceFn fn,
               FunctionOptions options, GraphTransform transform = nullptr);
  ~FunctionImpl();

  absl::Status Call(absl::Span<const TensorView> inputs, absl::Span<const TensorView> outputs);
  // Checks the views as a call would, compiling their class if needed, and binds them
  // (jit/bound_call.h); CallBound runs a bound call on data pointers.
  absl::StatusOr<std::shared_ptr<const BoundCallState>> Bind(absl::Span<const TensorView> inputs,
                                                             absl::Span<const TensorView> outputs);
  // `inputs` and `outputs` hold as many pointers as `bound` has views (BoundCall checks it).
  absl::Status CallBound(const BoundCallState& bound, const void* const* inputs,
                         void* const* outputs);
  absl::StatusOr<std::vector<KernelProfile>> Profile(absl::Span<const TensorView> inputs,
                                                     absl::Span<const TensorView> outputs,
                                                     int calls);
  absl::StatusOr<std::vector<Tensor>> CallAllocating(absl::Span<const TensorView> inputs);
  absl::Status Precompile(absl::Span<const std::vector<int64_t>> input_shapes);
  // Shapes given as vectors take FunctionOptions::input_dtypes (when declared).
  void DeclaredDTypes(CallShapes& shapes) const;
  absl::StatusOr<std::vector<std::vector<int64_t>>> OutputShapes(
      absl::Span<const std::vector<int64_t>> input_shapes);
  // `stage`: a pipeline step or level name (jit::PrintAfter).
  absl::StatusOr<std::string> Dump(std::string_view stage,
                                   absl::Span<const std::vector<int64_t>> input_shapes);
  void InvalidateConstants() { constants_.Invalidate(); }
  FunctionStats stats() const;
  const std::string& name() const { return name_; }
  int num_inputs() const { return num_inputs_; }

  // The workload entries of this Function so far (one per traced variant that compiled).
  std::vector<proto::WorkloadEntry> Workload() const;

 private:
  // Compiles the shape class of `shapes` (under mu_), or the generic class of its variant once
  // the cap is reached; `queued` receives the tuning jobs it queued.
  absl::StatusOr<const CompiledClass*> CompileFor(const CallShapes& shapes, int64_t* values,
                                                  std::vector<uint64_t>* queued);
  // The trace variant for these shapes (traced if new) and its symbol values; `views`, when
  // given, the call's inputs (their dtypes are checked, or traced by a first call).
  absl::StatusOr<const TraceVariant*> TracedVariant(
      absl::Span<const std::vector<int64_t>> input_shapes, int64_t* values,
      absl::Span<const TensorView> views = {});
  // The checks a call's views need once its class and symbol values are found: shape guards,
  // input dtypes, each output view against the class's result, in-place shapes. They depend on
  // the views' shapes and dtypes only, so a call that matches a remembered one skips them.
  absl::Status CheckCall(const CompiledClass& cls, absl::Span<const TensorView> inputs,
                         absl::Span<const TensorView> outputs, const int64_t* values) const;
  // Runs the plan of views already checked, on their data pointers (num_inputs_ inputs, the
  // class's outputs); `kernels` (may be null) receives the names of the plan that ran and, per
  // kernel, its time (as Plan::Run gives it). The warm call path passes plain pointers, not
  // spans: a span after the fifth argument goes on the stack, and reading it whole back from
  // there stalls on the two stores that wrote it.
  struct KernelTimes {
    std::vector<std::string> names;
    std::vector<double> seconds;
  };
  absl::Status Launch(const CompiledClass& cls, const void* const* inputs, void* const* outputs,
                      const int64_t* values, KernelTimes* kernels = nullptr);
  // Launch, counted and timed for the class while RuntimeOptions::record_workload is on.
  absl::Status LaunchCounted(const CompiledClass& cls, const void* const* inputs,
                             void* const* outputs, const int64_t* values);
  // RuntimeOptions' peaks, or those measured once per process where they are 0.
  device::MachinePeaks Peaks() const;
  // Call's work; Call adds a trace event around it while the Runtime traces.
  absl::Status CallUntraced(absl::Span<const TensorView> inputs,
                            absl::Span<const TensorView> outputs);
  // Every check of a call with views (the views, the class and its symbol values, the outputs,
  // no overlap), as a call that matches a remembered one or a bound call skips them. Compiles
  // the class if no installed one serves the views; copies stale constant inputs.
  absl::StatusOr<const CompiledClass*> CheckViews(absl::Span<const TensorView> inputs,
                                                  absl::Span<const TensorView> outputs,
                                                  int64_t* values);
  // The launch a bound call copies from the class's current plan, published in `bound` unless
  // one of the class's current generation is there already.
  void RefreshBoundLaunch(const BoundCallState& bound);
  // CallBound's work, as CallUntraced is Call's.
  absl::Status CallBoundUntraced(const BoundCallState& bound, const void* const* inputs,
                                 void* const* outputs);

  std::shared_ptr<RuntimeImpl> runtime_;  // first: the Runtime's internals outlive the rest
  std::string name_;
  const uint64_t id_;  // this thread's remembered calls are keyed by it (jit/call_memo.h)
  int num_inputs_;
  FunctionOptions options_;
  bool check_numerics_;  // FunctionOptions' or RuntimeOptions' check_numerics
  ConstantInputs constants_;
  jit::numerics::CheckedConstants checked_constants_;  // check_numerics: copies found finite
  DispatchTable table_;
  std::atomic<int64_t> calls_{0};
  CompileCounters counters_;

  mutable std::mutex mu_;  // the slow path: guards variants_, table_'s classes, tuning_
  TraceVariants variants_;
  // Held only here: BoundCalls keep a weak reference, which expires with the Function.
  std::shared_ptr<const void> alive_ = std::make_shared<int>(0);
  FunctionTuning tuning_;  // last: its searches end before the rest goes
};

}  // namespace pto::detail

#endif  // PTO_JIT_FUNCTION_IMPL_H_
