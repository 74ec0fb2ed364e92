// A Function: trace variants, the lock-free dispatch table of compiled shape classes, and the
// slow path that traces, specializes and compiles under a mutex.
#ifndef PTO_JIT_FUNCTION_IMPL_H_
#define PTO_JIT_FUNCTION_IMPL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "device/aligned_buffer.h"
#include "jit/ir/graph.h"
#include "jit/pipeline.h"
#include "jit/plan.h"
#include "jit/runtime_impl.h"
#include "jit/shape_class.h"
#include "proto/cache.pb.h"
#include "proto/workload.pb.h"
#include "pto/runtime.h"

namespace pto::detail {

inline constexpr int kMaxInputs = 64;

class FunctionImpl {
 public:
  FunctionImpl(std::shared_ptr<RuntimeImpl> runtime, std::string name, int num_inputs, TraceFn fn,
               FunctionOptions options);
  ~FunctionImpl();

  absl::Status Call(absl::Span<const TensorView> inputs, absl::Span<const TensorView> outputs);
  absl::StatusOr<std::vector<KernelProfile>> Profile(absl::Span<const TensorView> inputs,
                                                     absl::Span<const TensorView> outputs,
                                                     int calls);
  absl::StatusOr<std::vector<Tensor>> CallAllocating(absl::Span<const TensorView> inputs);
  absl::Status Precompile(absl::Span<const std::vector<int64_t>> input_shapes);
  absl::StatusOr<std::vector<std::vector<int64_t>>> OutputShapes(
      absl::Span<const std::vector<int64_t>> input_shapes);
  absl::StatusOr<std::string> Dump(Stage stage,
                                   absl::Span<const std::vector<int64_t>> input_shapes);
  void InvalidateConstants();
  FunctionStats stats() const;
  const std::string& name() const { return name_; }
  int num_inputs() const { return num_inputs_; }

  // The workload entries of this Function so far (one per traced variant that compiled).
  std::vector<proto::WorkloadEntry> Workload() const;

  // Validates options against the arity (called by Runtime::JitTraced).
  static absl::Status ValidateOptions(int num_inputs, const FunctionOptions& options);

 private:
  // How one input dim is traced: a constant, or symbol `symbol`.
  struct DimSpec {
    int symbol = -1;
    int64_t value = 0;
  };
  struct Variant {
    std::vector<std::vector<DimSpec>> inputs;
    std::vector<ir::SymbolInfo> symbols;
    std::vector<bool> declared;  // per symbol: declared by the embedder (range enforced)
    ir::Graph graph;             // as traced
    std::string graph_hash;      // graph::CanonicalGraphHash(graph), hex: plan records' key
  };
  struct Entry {
    const Variant* variant = nullptr;
    jit::ShapeClass cls;
    // The plan calls run: loaded once per call (inside an epoch guard); replaced when a tuned
    // kernel is swapped in, the old one retired to the Runtime's epoch domain.
    std::atomic<const jit::Plan*> plan{nullptr};
    std::vector<ir::Shape> output_shapes;
    std::string shape_class;  // canonical text (plan and tuning records, reports)
    // Guarded by mu_: the program with the configs of `plan`, and `plan` itself.
    jit::LoweredProgram program;
    std::unique_ptr<const jit::Plan> current;
    std::vector<ir::TileConfig> default_configs;  // per kernel, before tuning records
    // RuntimeOptions::record_workload: the first call's input shapes, calls and their time.
    std::vector<std::vector<int64_t>> first_shapes;
    std::atomic<int64_t> calls{0};
    std::atomic<int64_t> call_nanos{0};
  };
  struct Table {
    std::vector<const Entry*> entries;
  };
  struct ConstantSet {
    std::vector<device::AlignedBuffer> data;  // per input (empty for non-constants)
  };
  struct Shapes {  // the call's input dims, without allocation
    int rank[kMaxInputs];
    const int64_t* dims[kMaxInputs];
  };

  absl::Status ValidateInputs(absl::Span<const TensorView> inputs) const;
  // The dims of validated views (the hot path: no allocation).
  Shapes ShapesOfViews(absl::Span<const TensorView> inputs) const;
  // Shapes given as vectors (Precompile, OutputShapes, Dump), checked for count, rank and sign.
  absl::StatusOr<Shapes> ShapesOf(absl::Span<const std::vector<int64_t>> input_shapes) const;
  // The trace variant for these shapes (traced if new) and its symbol values.
  absl::StatusOr<const Variant*> TracedVariant(absl::Span<const std::vector<int64_t>> input_shapes,
                                               int64_t* values);
  // Binds variant symbols from the input dims; false if a static dim or a repeated symbol
  // disagrees.
  bool BindSymbols(const Variant& v, const Shapes& shapes, int64_t* values) const;
  const Entry* Lookup(const Shapes& shapes, int64_t* values) const;
  // Compiles the shape class of `shapes`; `queued` receives the tuning jobs it queued.
  absl::StatusOr<const Entry*> CompileFor(const Shapes& shapes, int64_t* values,
                                          std::vector<uint64_t>* queued = nullptr);
  // Sets each kernel's config from the cache's tuning record, if it has a valid one; returns
  // the records applied, per kernel.
  std::vector<std::optional<proto::TuningRecord>> ApplyTuningRecords(const std::string& shape_class,
                                                                     jit::LoweredProgram& program);
  // Queues tuning jobs for the kernels of `entry` (mu_ held).
  void QueueTuning(Entry& entry, std::span<const int64_t> values,
                   const std::vector<std::optional<proto::TuningRecord>>& records,
                   std::vector<uint64_t>* queued);
  // A tuning job found a faster config for kernel `call` of `entry`: rebuild and swap the plan.
  void PublishTuned(Entry& entry, int call, const ir::TileConfig& config);
  void WriteTuningRecord(const Entry& entry, int call, const KernelTuning& result,
                         const ir::TileConfig& best, bool complete);
  // Blocking tuning: waits for the jobs a compile queued.
  void WaitForJobs(const std::vector<uint64_t>& jobs);
  absl::StatusOr<const Variant*> VariantFor(const Shapes& shapes);
  absl::Status CheckSymbolValues(const Variant& v, const Shapes& shapes) const;
  absl::StatusOr<jit::LoweredProgram> LowerFor(absl::Span<const std::vector<int64_t>> input_shapes);
  // `kernels` (may be null): the symbols of the plan that ran and, per kernel, its time (as
  // Plan::Run gives it).
  struct KernelTimes {
    std::vector<std::string> names;
    std::vector<double> seconds;
  };
  absl::Status Run(const Entry& entry, absl::Span<const TensorView> inputs,
                   absl::Span<const TensorView> outputs, const int64_t* values,
                   KernelTimes* kernels = nullptr);
  absl::Status RefreshConstants(absl::Span<const TensorView> inputs);
  jit::PipelineOptions pipeline_options() const;
  // The shape class as canonical text, the same in every process for the same graph hash:
  // each symbol named by the input dim where it first appears (inputs, then axes, in order),
  // e.g. "in0.0=1,in0.1=[64..127]%8"; "static" without symbols. Symbol names are left out
  // (the graph hash ignores them too).
  static std::string CanonicalShapeClass(const Variant& v, const jit::ShapeClass& cls);
  // Writes the plan record of a shape class just built; a failure is logged, never fatal.
  void WritePlanRecord(const Variant& v, const std::string& shape_class,
                       std::vector<std::string> kernel_keys);

  std::shared_ptr<RuntimeImpl> runtime_;  // first: the Runtime's internals outlive the rest
  std::string name_;
  int num_inputs_;
  TraceFn fn_;
  FunctionOptions options_;
  std::vector<bool> is_constant_;
  int64_t lanes_;

  std::atomic<const Table*> table_{nullptr};
  std::atomic<const ConstantSet*> constants_{nullptr};
  std::atomic<bool> constants_stale_{true};

  mutable std::mutex mu_;  // guards everything below and the slow path
  std::vector<std::unique_ptr<Variant>> variants_;
  std::vector<std::unique_ptr<Entry>> entries_;
  // Tables and constant sets replaced while calls may still read them; freed with the Function.
  std::vector<std::unique_ptr<const Table>> tables_;
  std::vector<std::unique_ptr<const ConstantSet>> constant_sets_;
  int auto_symbols_ = 0;
  std::vector<uint64_t> tuning_jobs_;  // every job queued, cancelled and awaited on destruction

  std::atomic<int64_t> calls_{0}, traces_{0}, compiles_{0}, kernels_compiled_{0},
      kernels_loaded_{0};
  std::atomic<int64_t> compile_nanos_{0};
  std::atomic<int64_t> plans_swapped_{0};
  std::atomic<int64_t> kernels_tuned_cached_{0};
};

}  // namespace pto::detail

#endif  // PTO_JIT_FUNCTION_IMPL_H_
