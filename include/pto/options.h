// Options structs with defaults (RocksDB style): every knob of a Runtime and a Function.
#ifndef PTO_OPTIONS_H_
#define PTO_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pto/tensor.h"

namespace pto {

// kOff as RuntimeOptions::log_level: no message at all.
enum class LogLevel : uint8_t { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };
// Receives pto's messages at RuntimeOptions::log_level or above. Without a sink they go to
// stderr, one line each ("warning: pto cache: ..."); a sink replaces that.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// The vector ISA kernels are generated for. kHost uses everything the CPU has; the others
// narrow it (e.g. to test AVX2 code on an AVX-512 machine). Never wider than the host.
enum class TargetIsa : uint8_t { kHost = 0, kAvx512 = 1, kAvx2 = 2, kSse2 = 3 };

// When kernels are tuned (docs/tuning.md).
enum class TuningMode : uint8_t {
  // Kernels run with their default configs, or the tuned configs the cache holds.
  kOff = 0,
  // The first call of a shape class queues its kernels; tuner threads at idle priority search
  // their configs while calls keep running, and faster verified kernels are swapped in. When
  // calls use every core, a tuner thread waits while any call runs; it checks every 250 us
  // using a timer signal, SIGRTMIN+6 (left alone, with a warning, if it already has a handler).
  kBackground = 1,
  // The first call of a shape class tunes its kernels before it returns (warm-up runs).
  kBlocking = 2,
};
// Whether a Runtime's intra-op threads each run on a CPU of their own while they work
// (docs/architecture.md, "Threads"). kAuto pins when the Runtime's threads are as many as
// the CPUs the creating thread may run on: every CPU gets one thread, so pinning only keeps
// two of them off one core; with fewer threads than CPUs it leaves placement to the OS.
enum class ThreadPinning : uint8_t { kAuto = 0, kAlways = 1, kNever = 2 };

enum class TuningStrategy : uint8_t { kExhaustive = 0, kRandom = 1, kEvolutionary = 2 };

// One kernel's tuning as it progresses (TuningOptions::progress) and as it ended
// (Runtime::tuning_results).
struct KernelTuning {
  std::string function;     // the Function's name
  std::string shape_class;  // e.g. "batch=[4..7],in0.1=[64..127]%8" (declared dims by name)
  std::string kernel;       // the kernel's name (its dtype, kind and fused ops)
  // The kernel's symbol with its default config ("f32_matmul_add_6x16_avx2_<hash>"): unlike
  // `kernel`, it tells apart the kernels of one shape class (two share it only when their
  // code is the same).
  std::string symbol;
  int kernel_index = 0;  // among the kernels queued for tuning in this Runtime, from 0
  int call = 0;          // its place in its shape class's plan (Function::Profile's order)
  int kernels_queued = 0;
  int64_t trials = 0;  // candidates tried (failures included)
  int64_t failed = 0;  // candidates that did not compile or gave a wrong answer
  int64_t max_trials = 0;
  double default_seconds = 0;  // the kernel's time with its default config (median)
  double best_seconds = 0;     // the best verified config's time (ratio-corrected)
  std::string best_config;     // "name=value,..." of the best config
  double elapsed_seconds = 0;  // spent on this kernel so far
  bool finished = false;
  // When finished: "completed", "budget", "cancelled" (its Function went), "shutdown"
  // (Runtime::StopTuning or the Runtime went), or "failed: <why>" (e.g. its default config
  // could not be timed).
  std::string ended;
  // Best time so far after each trial (seconds), for tuning curves.
  std::vector<double> curve;
};

struct TuningOptions {
  TuningMode mode = TuningMode::kOff;
  TuningStrategy strategy = TuningStrategy::kEvolutionary;
  uint64_t seed = 1;
  // Tuner threads (each tunes one kernel at a time), in an arena of their own.
  int threads = 1;
  // Per kernel: candidates tried at most, and seconds spent at most (0: no limit).
  int64_t trials_per_kernel = 64;
  double seconds_per_kernel = 60;
  // Over all kernels (0: no limit): each kernel's share is its share of the run time
  // (measured at its default config).
  double seconds_total = 0;
  // Tune kernels even when the cache holds a tuning record for them.
  bool retune = false;
  // A candidate replaces the incumbent only when the median of their interleaved time ratios
  // is at most 1 - min_improvement (a swap has a cost; noise should not cause one).
  double min_improvement = 0.01;
  // Called from tuner threads after every trial and when a kernel ends.
  std::function<void(const KernelTuning&)> progress;
  // A scheduler's say (`pto tune`): called for each kernel about to be queued (one without a
  // complete tuning record), with its function, shape class, kernel, symbol, call and the
  // trials earlier runs made (`trials`); returns the trials to make now (<= 0: not now). Its
  // record is complete once trials_per_kernel are made or its space runs out. Empty: every
  // such kernel is tuned up to trials_per_kernel. Called with the Function's lock held: it must
  // not call into pto.
  std::function<int64_t(const KernelTuning&)> trials_now;
};

struct RuntimeOptions {
  // Directory of the persistent kernel cache (a RocksDB database, created if missing); empty
  // keeps compiled kernels in memory only. A cache that cannot be opened (locked, read-only,
  // damaged beyond repair) degrades to memory-only with one warning to the log sink.
  std::string cache_path;
  // A read-only cache database (e.g. shipped in an image) layered under cache_path: kernels
  // and tuning records missing from cache_path are looked up here; nothing is written here.
  // Empty: none. One that cannot be opened is left out with one warning.
  std::string cache_base_path;
  // Least-recently-used kernels are evicted past this many bytes of object code.
  int64_t cache_capacity_bytes = int64_t{1} << 30;
  // Threads a parallel kernel launch may use: 0 = every core this process may run on
  // (affinity and cgroup quota), 1 = the caller's thread only. Runtimes with the same count
  // share the process's one thread pool for it.
  int intra_op_threads = 0;
  // kAlways pins whenever the creating thread may run on at least intra_op_threads CPUs (the
  // first ones of its affinity set); the calling thread is pinned only for the length of a
  // call that runs a parallel kernel, and gets its own affinity back after it.
  ThreadPinning thread_pinning = ThreadPinning::kAuto;
  TargetIsa isa = TargetIsa::kHost;
  LogSink log_sink;  // empty: stderr
  LogLevel log_level = LogLevel::kWarning;
  // Logs each pass's output (at kDebug) while compiling.
  bool log_passes = false;
  TuningOptions tuning;
  // Counts and times every call per shape class, for Runtime::WriteWorkload (two clock reads
  // per call).
  bool record_workload = false;
  // Deterministic mode (training, tests): tuning is frozen (no kernel is swapped in mid-run, so
  // rounding never changes between calls); tuned configs already in the cache are still used.
  bool deterministic = false;
  // Checked kernels (for tests, fuzzing and debugging; sanitizers do not see inside generated
  // code): every load and store a kernel makes is tested against its buffer's extent, and an
  // access outside it aborts the process with a message on stderr naming the kernel, the
  // buffer, the index and the extent. Slower (docs/performance.md); checked kernels have names
  // ending in "_checked" and cache keys of their own.
  bool checked_kernels = false;
  // The machine's fp32 peak and memory bandwidth (read + written bytes per second) at
  // intra_op_threads, for Function::Profile's roofline. 0: measured once per process at the
  // first Profile that needs it (about 0.2 s; device/machine_limits.h).
  double peak_gflops = 0;
  double peak_bandwidth_gbs = 0;
  // check_numerics for every Function of this Runtime (FunctionOptions::check_numerics).
  bool check_numerics = false;

  // The defaults with what the process's environment sets, as users of Triton and oneDNN
  // expect: PTO_CACHE_DIR (cache_path), PTO_LOG (log_level: debug, info, warning, error or
  // off), PTO_CHECK_NUMERICS (check_numerics: 1, 0, true or false) and PTO_PIN_THREADS
  // (thread_pinning: auto, always or never). The library reads the environment only here,
  // when the embedder asks. InvalidArgument for a value of one of them it does not know.
  static absl::StatusOr<RuntimeOptions> FromEnvironment();
};

// A named symbolic dim with its range. Dims with the same name are one symbol: the `batch` of
// x and of the mask must agree at every call.
class Dim {
 public:
  Dim(std::string name, int64_t min, int64_t max) : name_(std::move(name)), min_(min), max_(max) {}
  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }

 private:
  std::string name_;
  int64_t min_;
  int64_t max_;
};

struct DynamicDim {
  int input = 0;
  int axis = 0;
  Dim dim;
};

// What Runtime::JitGrad differentiates (docs/training.md).
struct GradientOptions {
  // The inputs of the lambda to differentiate with respect to (f32 inputs, each once).
  std::vector<int> wrt;
  // 0: the lambda's output 0 is a scalar loss (every dim 1), differentiated with seed 1; its
  // other outputs are returned as they are. n > 0: a vector-Jacobian product: the Function
  // takes n more inputs after the lambda's, the cotangents of outputs 0 .. n-1 (each of its
  // output's dtype and shape; give symbolic dims the same pto::Dim as the output's).
  int cotangents = 0;
  // Cheap elementwise forward values the backward pass reads are computed again there instead
  // of being kept alive in between (docs/training.md, "Saved or recomputed").
  bool recompute_cheap_values = true;
  // Gradient accumulation (micro-batches): the Function takes one more input per wrt entry,
  // after the lambda's inputs and the cotangents, an accumulator of that input's shape, and each
  // gradient output is its accumulator plus the gradient. Declare the gradient outputs in place
  // of their accumulators (FunctionOptions::in_place_outputs) to add into their memory.
  bool accumulate = false;
};

// Output `output` may be written over input `input`'s buffer (JAX's donate_argnums): a training
// step updates its parameters and optimizer state in their own memory, a gradient adds into
// an accumulator. See FunctionOptions::in_place_outputs.
struct InPlaceOutput {
  int output = 0;
  int input = 0;
};

struct FunctionOptions {
  std::vector<DynamicDim> dynamic;
  // Inputs whose contents are fixed (weights): read once at the first call and kept by the
  // Function until InvalidateConstants(); their shapes are static.
  std::vector<int> constant_inputs;
  // A dim not declared dynamic is specialized on its first value and made symbolic when a
  // second value is seen (torch.compile's "automatic dynamic shapes").
  bool automatic_dynamic = true;
  // At most this many shape classes specialized to buckets of sizes are compiled. Past that,
  // calls no compiled class takes run a class generic over the declared ranges, compiled once
  // (per trace variant) with a warning in the log and not tuned: the cap bounds compilations,
  // never which calls succeed.
  int max_shape_classes = 32;
  // Checks every value a call computes for NaN and infinity (like tf.debugging.check_numerics
  // or torch's anomaly mode), for debugging: the inputs before the first kernel, then each
  // kernel's outputs after it runs. The first non-finite value fails the call with
  // InvalidArgument naming the input, or the kernel, the buffer and graph node it wrote, the
  // element index and value, and the op of the kernel that first produced a non-finite value
  // (found by re-running the kernel's ops through the reference). The caller's outputs are
  // then partly written. Off: no cost (a pointer test per kernel). On: docs/performance.md.
  // RuntimeOptions::check_numerics turns it on for every Function.
  bool check_numerics = false;
  // Outputs that may reuse an input's buffer. At a call, a declared output's view either is
  // the input's view (the same data pointer and shape: pto writes the result over the input)
  // or has memory of its own (an ordinary output; the input is left unchanged); any other
  // overlap is refused. The output must have the input's dtype and shape at every call. An
  // input is donated to one output at most, an output listed once, and a constant input is
  // never donated (InvalidArgument). pto writes in place only where no kernel reads the old
  // value after the writing kernel starts; otherwise it computes the output into a buffer of
  // its own and copies it over the input after the input's last reader (docs/architecture.md,
  // "In place").
  std::vector<InPlaceOutput> in_place_outputs;
  // The inputs' dtypes (kF32 or kI32, one per input) for traces made from shapes alone
  // (Precompile, OutputShapes, Dump) before a call gives views; empty: every input f32. A call's
  // views must agree with them.
  std::vector<DType> input_dtypes;
};

}  // namespace pto

#endif  // PTO_OPTIONS_H_
