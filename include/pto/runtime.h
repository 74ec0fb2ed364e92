// Runtime and Function: the embedder's entry points.
#ifndef PTO_RUNTIME_H_
#define PTO_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pto/options.h"
#include "pto/tensor.h"
#include "pto/train.h"
#include "pto/value.h"

namespace pto {

namespace detail {
class FunctionImpl;
class RuntimeImpl;
struct BoundCallState;
}  // namespace detail

struct FunctionStats {
  int64_t calls = 0;
  int64_t traces = 0;            // times the lambda ran
  int64_t compiles = 0;          // shape classes compiled
  int64_t kernels_compiled = 0;  // LLVM code generation runs
  int64_t kernels_loaded = 0;    // kernels loaded from the persistent cache instead
  int64_t shape_classes = 0;     // installed in the dispatch table
  // Of those, classes generic over the declared ranges (one per trace variant at most): what
  // serves calls no other class takes once max_shape_classes is reached.
  int64_t generic_classes = 0;
  double compile_seconds = 0;
  // Plans replaced by tuned ones while calls kept running (RuntimeOptions::tuning).
  int64_t plans_swapped = 0;
  // Kernels whose config came from a complete tuning record in the cache (not tuned again).
  int64_t kernels_tuned_cached = 0;
  // Kernels whose config came from a tuning record in the cache, complete or not.
  int64_t tuning_records_applied = 0;
};

// One kernel made ready to run in this Runtime: compiled by LLVM ("cold") or loaded from the
// persistent cache's object code ("warm"). A kernel already live in this Runtime (shared by
// another shape class or Function) is reused without an event. The one-time LLVM set-up (the
// JIT engine, made when the Runtime opens) is in no event.
struct KernelEvent {
  std::string kernel;       // the kernel's symbol
  std::string function;     // the Function whose shape class needed it
  std::string shape_class;  // that shape class, declared dims by name ("batch=[4..7]")
  bool loaded_from_cache = false;
  // Cold: emitting LLVM IR, optimizing, code generation and loading the object into the JIT,
  // up to a callable entry point. Warm: the store lookup and loading the stored object, up to
  // a callable entry point.
  double seconds = 0;
};

// One kernel of a Function's plan, as Function::Profile timed it.
struct KernelProfile {
  std::string kernel;  // the kernel's symbol (says what it computes and its tile config)
  double seconds = 0;  // median wall time per call, all threads of the call included
  double share = 0;    // of the kernels' summed medians
  // Per call at the profiled shapes, from the kernel's operations (jit/kernel_cost.h): its
  // floating-point operations and compulsory memory traffic (each element it touches once).
  double flops = 0;
  double bytes = 0;
  double gflops = 0;  // flops / seconds, in 1e9 per second
  double gbs = 0;     // bytes / seconds, in 1e9 per second
  // The machine's peaks (RuntimeOptions::peak_gflops, peak_bandwidth_gbs) bound it by memory:
  // bytes / bandwidth > flops / peak.
  bool memory_bound = false;
  // The roofline's time, max(flops / peak, bytes / bandwidth), over `seconds`: 1 is as fast
  // as the machine allows (a little above 1 is noise or data that stayed in cache).
  double roofline_share = 0;
};

// One thread of a trace Runtime::StopTrace wrote: its events, and of them the kernel pieces
// and their summed time (is every core working?).
struct TraceThread {
  int tid = 0;       // the trace's thread id
  std::string name;  // as the trace names it
  int64_t events = 0;
  int64_t kernel_events = 0;
  double kernel_seconds = 0;
};

// What Runtime::StopTrace wrote.
struct TraceSummary {
  std::string path;
  int64_t events = 0;
  std::vector<TraceThread> threads;  // by tid
};

// The persistent kernel cache as this Runtime sees it (counts are this process's).
struct CacheCounters {
  int64_t hits = 0;
  // Including corrupt values, and tuning-record lookups that find none (one per kernel
  // compiled or loaded: a kernel's tuned config, if any, is looked up first).
  int64_t misses = 0;
  int64_t corrupt = 0;  // values found but unusable (checksum, truncation, schema, key)
  int64_t puts = 0;
  int64_t evictions = 0;
  int64_t entries = 0;       // records of every kind now stored
  int64_t bytes = 0;         // their stored bytes
  int64_t kernel_bytes = 0;  // the part RuntimeOptions::cache_capacity_bytes bounds
  std::string role;          // "memory", "writer" or "reader"
  bool persistent = false;   // records survive the process
  bool code_trusted = true;  // object code from the cache may be loaded
  std::string description;   // "memory" or "rocksdb:<path>"
};

struct RuntimeStats {
  // LLVM code generation runs for kernels (one per kernel compiled). Textual dumps
  // (Function::Dump at the LLVM and assembly stages) are not counted.
  int64_t llvm_codegen_runs = 0;
  // Kernels loaded from the cache's object code instead.
  int64_t kernels_loaded = 0;
  // One-time LLVM set-up, in no KernelEvent: the JIT engine (made when the Runtime opens) and,
  // before the first kernel compile, one compile of a small loop (LLVM initializes parts of
  // its optimizer and code generator on first use). A Runtime that only loads kernels never
  // pays the second part.
  double llvm_setup_seconds = 0;
  CacheCounters cache;
};

// The levels `Function::Dump` can print.
enum class Stage : uint8_t { kTensor, kTile, kBlock, kExec, kLlvm, kAsm };

// The traced program as a callable: (span of inputs) -> outputs.
using TraceFn = std::function<std::vector<Value>(std::span<const Value>)>;

// A Function bound to one set of shapes (Function::Bind): each call passes data pointers
// alone, for loops over fixed shapes where checking views costs as much as a small kernel (a
// 23x29x31 matmul runs in about 0.2 us). What Bind checked (count, rank, dims, dtypes and dense
// strides of every view, the output shapes, the shape class) is not checked again: each pointer
// must address a dense tensor of its bound view's shape and dtype. Each call checks its
// pointers: non-null for a non-empty tensor, 4-byte aligned, no output overlapping an input or
// another output unless it is the input declared in place of it; a failed check, or a count
// other than the bound one, returns the InvalidArgument a call with views would. Calls run the
// class's current plan (a tuned one once it is swapped in) and may come from several threads
// at once. Copies share one binding. Once its Function is destroyed a call returns
// FailedPrecondition; destroying the Function while a bound call runs is not allowed, as for
// the Function's own calls.
class BoundCall {
 public:
  // Unbound: every call returns FailedPrecondition.
  BoundCall();
  ~BoundCall();
  BoundCall(const BoundCall&);
  BoundCall& operator=(const BoundCall&);

  absl::Status operator()(absl::Span<const void* const> inputs,
                          absl::Span<void* const> outputs) const;
  absl::Status Call(std::initializer_list<const void*> inputs,
                    std::initializer_list<void*> outputs) const {
    return (*this)(absl::MakeConstSpan(inputs.begin(), inputs.size()),
                   absl::MakeConstSpan(outputs.begin(), outputs.size()));
  }
  bool bound() const { return state_ != nullptr; }

 private:
  friend class Function;
  explicit BoundCall(std::shared_ptr<const detail::BoundCallState> state);
  std::shared_ptr<const detail::BoundCallState> state_;
};

class Function {
 public:
  ~Function();
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  // Runs on caller-owned inputs, writing caller-owned outputs. Safe to call from several
  // threads at once. A call whose views have the shapes, strides and dtypes of a call this
  // thread made before skips the checks those decided and checks only its pointers (null,
  // alignment, overlap): a loop calling with the same shapes pays for its checks once.
  absl::Status operator()(absl::Span<const TensorView> inputs,
                          absl::Span<const TensorView> outputs);
  absl::Status Call(std::initializer_list<TensorView> inputs,
                    std::initializer_list<TensorView> outputs) {
    return (*this)(absl::MakeConstSpan(inputs.begin(), inputs.size()),
                   absl::MakeConstSpan(outputs.begin(), outputs.size()));
  }
  // Allocates and returns the outputs.
  absl::StatusOr<std::vector<Tensor>> operator()(absl::Span<const TensorView> inputs);

  // Checks these views as a call would (compiling their class if no compiled one serves them)
  // without running, and binds their shapes: BoundCall. The views' data must pass a call's
  // checks too; a bound call passes its own pointers.
  absl::StatusOr<BoundCall> Bind(absl::Span<const TensorView> inputs,
                                 absl::Span<const TensorView> outputs);

  // Compiles the shape class of these input shapes ahead of the first call with them (past
  // FunctionOptions::max_shape_classes, the generic class that will serve them).
  absl::Status Precompile(absl::Span<const std::vector<int64_t>> input_shapes);
  // Constant inputs are read again at the next call.
  void InvalidateConstants();
  // The output shapes a call with these input shapes produces.
  absl::StatusOr<std::vector<std::vector<int64_t>>> OutputShapes(
      absl::Span<const std::vector<int64_t>> input_shapes);
  // A printable form of one level of the pipeline for these input shapes.
  absl::StatusOr<std::string> Dump(Stage stage,
                                   absl::Span<const std::vector<int64_t>> input_shapes);
  // What one step of the pipeline leaves (a step name as the pass log prints it, e.g. "cse"
  // or "choose_tile_configs"), or a level by name ("tensor" ... "asm"). InvalidArgument for
  // an unknown name, listing the names.
  absl::StatusOr<std::string> Dump(std::string_view stage,
                                   absl::Span<const std::vector<int64_t>> input_shapes);
  // Runs these views `calls` times (after one untimed call, which compiles if needed) and
  // returns each kernel of the plan in execution order with its median time: where the time
  // of a call goes. InvalidArgument as a call for bad views, or for calls < 1.
  absl::StatusOr<std::vector<KernelProfile>> Profile(absl::Span<const TensorView> inputs,
                                                     absl::Span<const TensorView> outputs,
                                                     int calls = 20);

  FunctionStats stats() const;
  const std::string& name() const;
  int num_inputs() const;

  explicit Function(std::unique_ptr<detail::FunctionImpl> impl);
  detail::FunctionImpl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<detail::FunctionImpl> impl_;
};

// Lifetime. A Function keeps what it needs of its Runtime alive (the compiler and its loaded
// kernels, the kernel cache, the thread pool, the log sink): it may outlive the Runtime and
// keeps working, compiling new shape classes too. Destroying the Runtime ends tuning (as
// StopTuning, waiting for running searches); nothing is tuned afterwards. The cache stays open
// (a writer keeps its role) and the log sink and RuntimeOptions stay in use until the last of
// the Runtime's Functions is destroyed too.
//
// Callbacks. pto runs embedder code: the traced lambda (at a Function's first call per shape
// variant), the log sink and the tuning progress callback, sometimes while holding its own
// locks or inside a tuning job. From inside them, calls that could wait for pto's work are
// refused with FailedPrecondition: any Function call (operator(), Call, Precompile,
// OutputShapes, Dump, Profile), Runtime::Jit, WriteWorkload and WaitForTuning. Read-only
// queries (stats, kernel_events, tuning_results, Function::stats) work, and StopTuning asks
// tuning to stop without waiting. Destroying a Function or the Runtime from inside a callback
// is not allowed.
class Runtime {
 public:
  static absl::StatusOr<std::unique_ptr<Runtime>> Open(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Wraps `fn`, a lambda over pto::Value returning a Value, a std::vector<Value> or a tuple of
  // Values. Nothing is traced or compiled until the first call (or Precompile).
  template <typename F>
  absl::StatusOr<std::unique_ptr<Function>> Jit(std::string name, F fn,
                                                FunctionOptions options = {}) {
    using Traits = LambdaTraits<decltype(&F::operator())>;
    TraceFn trace = [fn = std::move(fn)](std::span<const Value> in) {
      return Invoke<Traits::kArity>(fn, in, std::make_index_sequence<Traits::kArity>());
    };
    return JitTraced(std::move(name), Traits::kArity, std::move(trace), std::move(options));
  }
  absl::StatusOr<std::unique_ptr<Function>> JitTraced(std::string name, int num_inputs,
                                                      TraceFn trace, FunctionOptions options);

  // Like Jit, for a Function that also returns gradients: its outputs are the lambda's
  // outputs followed by d(loss)/d(input) for each input in gradient.wrt, in that order, each
  // of its input's shape (zeros for an input the loss does not depend on). The lambda is
  // traced as for Jit and differentiated at the tensor level with its symbolic shapes, so the
  // gradient program is fused, planned, cached and tuned like any other (docs/training.md).
  // InvalidArgument for a bad `gradient` (at once) and, at the first call, for a loss that is
  // not scalar or an op on the loss's path that has no gradient.
  template <typename F>
  absl::StatusOr<std::unique_ptr<Function>> JitGrad(std::string name, F fn,
                                                    GradientOptions gradient,
                                                    FunctionOptions options = {}) {
    using Traits = LambdaTraits<decltype(&F::operator())>;
    TraceFn trace = [fn = std::move(fn)](std::span<const Value> in) {
      return Invoke<Traits::kArity>(fn, in, std::make_index_sequence<Traits::kArity>());
    };
    return JitGradTraced(std::move(name), Traits::kArity, std::move(trace), std::move(gradient),
                         std::move(options));
  }
  // `num_inputs` is the lambda's; the Function has gradient.cotangents more (and one accumulator
  // per wrt input with gradient.accumulate).
  absl::StatusOr<std::unique_ptr<Function>> JitGradTraced(std::string name, int num_inputs,
                                                          TraceFn trace, GradientOptions gradient,
                                                          FunctionOptions options);

  // A training step (docs/training.md, "The training step"): `fn` returns a scalar loss as its
  // output 0 (other outputs are ignored); its inputs listed in step.parameters are trained with
  // step.optimizer, starting from `initial_parameters` (one per entry, copied). The step is
  // one Function: forward, backward and the update, parameters and optimizer state donated.
  // `options` name inputs by the lambda's numbering; a parameter may be neither dynamic nor
  // constant, and in_place_outputs are the step's own. InvalidArgument for bad options or
  // parameters (at once) and, at the first step, for a loss that is not scalar.
  template <typename F>
  absl::StatusOr<std::unique_ptr<TrainStep>> JitTrainStep(
      std::string name, F fn, absl::Span<const TensorView> initial_parameters,
      TrainStepOptions step, FunctionOptions options = {}) {
    using Traits = LambdaTraits<decltype(&F::operator())>;
    TraceFn trace = [fn = std::move(fn)](std::span<const Value> in) {
      return Invoke<Traits::kArity>(fn, in, std::make_index_sequence<Traits::kArity>());
    };
    return JitTrainStepTraced(std::move(name), Traits::kArity, std::move(trace), initial_parameters,
                              std::move(step), std::move(options));
  }
  absl::StatusOr<std::unique_ptr<TrainStep>> JitTrainStepTraced(
      std::string name, int num_inputs, TraceFn trace,
      absl::Span<const TensorView> initial_parameters, TrainStepOptions step,
      FunctionOptions options);

  RuntimeStats stats() const;
  // Every kernel compiled or loaded so far, in order.
  std::vector<KernelEvent> kernel_events() const;
  // Every kernel queued for tuning so far (RuntimeOptions::tuning), its state or result.
  std::vector<KernelTuning> tuning_results() const;
  // Blocks until no kernel is queued or being tuned (background tuning). FailedPrecondition
  // from inside a callback (it would wait for the tuning job the callback runs in).
  absl::Status WaitForTuning();
  // Ends tuning now, from any thread (e.g. a signal handler's thread while another waits in a
  // blocking call): running searches stop within a step and keep what they found (incomplete
  // tuning records, resumed by a later Runtime); nothing more is tuned in this Runtime. Waits
  // for running searches to stop, except from inside a callback (e.g. the progress callback
  // deciding that tuning has done enough), where it asks them to stop and returns at once.
  void StopTuning();
  // Writes the workload seen so far (RuntimeOptions::record_workload) as a text-format
  // proto/workload.proto file for `pto tune --workload`: per Function (live or destroyed), its
  // traced graph and the shape classes it was called at, with call counts and seconds.
  // FailedPrecondition when recording is off; the file is replaced atomically.
  absl::Status WriteWorkload(const std::string& path) const;

  // Records a timeline until StopTrace: each call of each Function of this Runtime (an event
  // on the calling thread), each piece of each kernel's grid on the thread that ran it (with
  // its range), each shape class compiled and each kernel compiled or loaded from the cache.
  // StartTrace checks that `path` can be written (PermissionDenied "cannot write the trace to
  // PATH: REASON" otherwise); FailedPrecondition while a trace is being recorded. Off, tracing
  // costs a call one atomic load.
  absl::Status StartTrace(const std::string& path);
  // Writes the trace to StartTrace's path as Chrome Trace Event Format JSON (open it at
  // ui.perfetto.dev or chrome://tracing) and stops recording. FailedPrecondition when no trace
  // is being recorded.
  absl::StatusOr<TraceSummary> StopTrace();

  detail::RuntimeImpl* impl() const { return impl_.get(); }

 private:
  explicit Runtime(std::shared_ptr<detail::RuntimeImpl> impl);

  template <typename T>
  struct LambdaTraits;
  template <typename C, typename R, typename... A>
  struct LambdaTraits<R (C::*)(A...) const> {
    static constexpr size_t kArity = sizeof...(A);
  };
  template <typename C, typename R, typename... A>
  struct LambdaTraits<R (C::*)(A...)> {
    static constexpr size_t kArity = sizeof...(A);
  };

  static std::vector<Value> ToValues(Value v) { return {v}; }
  static std::vector<Value> ToValues(std::vector<Value> v) { return v; }
  template <typename... T>
  static std::vector<Value> ToValues(std::tuple<T...> t) {
    return std::apply([](auto... v) { return std::vector<Value>{Value(v)...}; }, t);
  }
  template <typename A, typename B>
  static std::vector<Value> ToValues(std::pair<A, B> p) {
    return {Value(p.first), Value(p.second)};
  }
  template <size_t N, typename F, size_t... I>
  static std::vector<Value> Invoke(const F& fn, std::span<const Value> in,
                                   std::index_sequence<I...>) {
    return ToValues(fn(in[I]...));
  }

  std::shared_ptr<detail::RuntimeImpl> impl_;  // shared with its Functions
};

}  // namespace pto

#endif  // PTO_RUNTIME_H_
