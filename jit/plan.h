// An immutable Plan runs one shape class: the kernel call sequence with bound arguments, the
// arena layout of intermediates, and how kernel symbols derive from the call's symbol values.
// A call loads one Plan pointer and uses only it. Run allocates nothing on the heap (the
// per-thread arena grows only when a larger size class is first seen).
#ifndef PTO_JIT_PLAN_H_
#define PTO_JIT_PLAN_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "device/thread_arena.h"
#include "jit/ir/tile_graph.h"
#include "jit/kernel_abi.h"

namespace pto::jit {

inline constexpr int kMaxSymbols = 64;
inline constexpr int kMaxKernelBuffers = 64;
inline constexpr int kMaxArenaSlots = 256;

// This thread's kernel scratch of at least `bytes` (grown on first use; null if it cannot be
// had: the kernel then runs without it).
void* KernelScratch(int64_t bytes);

// Runs `fn` over the whole of `extent` on the calling thread with its kernel scratch; nothing
// for an empty grid. Plan::RunSingle's serial launch, and a bound call's copy of it.
inline void RunKernelSerially(pto_kernel_fn fn, void* const* buffers, const int64_t* symbols,
                              const int64_t extent[2], int64_t scratch_bytes) {
  if (extent[0] <= 0 || extent[1] <= 0) return;
  const pto_kernel_args args{buffers, symbols};
  const int64_t lo[2] = {0, 0};
  fn(&args, lo, extent, scratch_bytes > 0 ? KernelScratch(scratch_bytes) : nullptr);
}

struct BufferRef {
  ir::BufferKind kind = ir::BufferKind::kTemp;
  int index = 0;  // input/output position, arena slot for temps, Plan::packed entry
  // For check_numerics: the graph node the buffer holds contiguously (ir::Buffer::node; -1:
  // none), and whether the kernel stores to it.
  int node = -1;
  bool written = false;
};

// A constant input repacked for a matmul's B (ir::PackedB), built at the first call that
// passes a given constant buffer and kept with the plan (constants change only when the
// Function's constants are invalidated; each set's copy lives as long as the plan).
class PackedOperand {
 public:
  PackedOperand(int input, const ir::PackedB& layout);
  PackedOperand(PackedOperand&&) noexcept;
  ~PackedOperand();
  // The packed copy of `source` (the input's data); null if it cannot be allocated. Lock-free
  // once the copy of this source exists.
  const float* Get(const void* source) const;
  int input() const { return input_; }
  const ir::PackedB& layout() const { return layout_; }
  // Shares `other`'s copies (same input and layout): a plan that replaces another (a tuned
  // kernel swapped in) does not pack the constants again.
  void ShareCopiesOf(const PackedOperand& other);

 private:
  struct Copy;
  struct State;
  int input_;
  ir::PackedB layout_;
  std::shared_ptr<State> state_;
};

struct PlanKernel {
  pto_kernel_fn fn = nullptr;
  std::string name;
  std::array<ir::SymExpr, 2> grid;
  int64_t grain[2] = {1, 0};
  ir::SymExpr work_per_cell = 1;
  // Per-thread scratch the kernel may use (kernel ABI); 0: none, the kernel gets null.
  int64_t scratch_bytes = 0;
  std::vector<BufferRef> buffers;
  // The graph nodes whose ops it computes (ir::KernelCall::nodes), for check_numerics.
  std::vector<int> nodes;
};

// What a RunObserver sees of one kernel launch: its index in Plan::kernels, its bound buffers
// (in PlanKernel::buffers order), the call's kernel symbol values and the grid's extent.
struct KernelLaunch {
  int index = 0;
  std::span<void* const> buffers;
  std::span<const int64_t> symbols;
  int64_t extent[2] = {0, 0};
};

// Watches a Plan::Run (debugging and profiling; a run without one pays a pointer test per
// kernel). BeforeKernel and AfterKernel run on the calling thread around each kernel, after
// all of its pieces are done; a non-OK status from either ends the run with that status.
// With wants_pieces(), OnPiece reports each piece of a kernel's grid on the thread that ran it
// (thread: device::ThreadArena's index, 0 for the caller) with its steady-clock start and end.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual absl::Status BeforeKernel(const KernelLaunch& /*launch*/) { return absl::OkStatus(); }
  virtual absl::Status AfterKernel(const KernelLaunch& /*launch*/) { return absl::OkStatus(); }
  virtual bool wants_pieces() const { return false; }
  virtual void OnPiece(int /*kernel*/, const int64_t /*lo*/[2], const int64_t /*hi*/[2],
                       int /*thread*/, std::chrono::steady_clock::time_point /*start*/,
                       std::chrono::steady_clock::time_point /*end*/) {}
};

// Two observers of one run (either may be null): a traced call that also checks numerics.
// Each call goes to the first, then the second; the first error ends the run.
class RunObserverPair : public RunObserver {
 public:
  RunObserverPair(RunObserver* first, RunObserver* second) : first_(first), second_(second) {}
  // What Plan::Run should be given: null for none, the one observer, or this pair.
  RunObserver* single_or_self() {
    if (first_ == nullptr) return second_;
    return second_ == nullptr ? first_ : this;
  }
  absl::Status BeforeKernel(const KernelLaunch& launch) override {
    if (absl::Status s = first_->BeforeKernel(launch); !s.ok()) return s;
    return second_->BeforeKernel(launch);
  }
  absl::Status AfterKernel(const KernelLaunch& launch) override {
    if (absl::Status s = first_->AfterKernel(launch); !s.ok()) return s;
    return second_->AfterKernel(launch);
  }
  bool wants_pieces() const override { return first_->wants_pieces() || second_->wants_pieces(); }
  void OnPiece(int kernel, const int64_t lo[2], const int64_t hi[2], int thread,
               std::chrono::steady_clock::time_point start,
               std::chrono::steady_clock::time_point end) override {
    if (first_->wants_pieces()) first_->OnPiece(kernel, lo, hi, thread, start, end);
    if (second_->wants_pieces()) second_->OnPiece(kernel, lo, hi, thread, start, end);
  }

 private:
  RunObserver* first_;
  RunObserver* second_;
};

// A kernel symbol's value: call_symbols[symbol], or `constant` when symbol < 0.
struct SymbolSource {
  int symbol = -1;
  int64_t constant = 0;
};

struct Plan {
  std::vector<PlanKernel> kernels;
  std::vector<std::vector<ir::SymExpr>> slot_sizes;  // per arena slot: its members' elements
  std::vector<SymbolSource> symbols;
  std::vector<std::shared_ptr<const void>> code;  // keeps the kernels' machine code alive
  std::vector<PackedOperand> packed;              // BufferRef kPacked indexes these
  // Parallel launches only for kernels with at least this much work (scalar ops).
  int64_t parallel_threshold = 1 << 15;
  // A pinning arena's caller joins its CPU at the first parallel kernel with at least this much
  // work, or that it would run on a worker's CPU: moving it there and back costs a few
  // microseconds, which shorter calls would pay as a share of their time (measurements:
  // docs/architecture.md, "Threads").
  int64_t pin_caller_threshold = int64_t{1} << 26;

  // A plan of one kernel that reads the call's inputs (or their packed copies) and writes its
  // outputs, with its grid, work and symbol values known when it was compiled (a small matmul
  // or an op on static shapes): Run launches it from these fields, held in the Plan itself,
  // without evaluating expressions or touching the arena. A warm call of a small kernel whose
  // operands stream through the caches then touches a few cache lines of the plan, not a
  // dozen. `valid` is false for every other plan.
  struct SingleLaunch {
    static constexpr int kMaxBuffers = 8;
    static constexpr int kMaxSymbols = 8;
    bool valid = false;
    pto_kernel_fn fn = nullptr;
    int num_buffers = 0;
    BufferRef buffers[kMaxBuffers];
    int64_t extent[2] = {0, 0};
    int64_t grain[2] = {1, 0};
    int64_t work = 0;
    int64_t scratch_bytes = 0;
    int64_t symbols[kMaxSymbols] = {};
  };
  SingleLaunch single;
  // Sets `single` when the plan qualifies (BindPlan calls it once the plan is complete).
  void SetSingleLaunch();
  // Whether `single` is set and runs on the calling thread alone over `threads`.
  bool SingleRunsSerially(const device::ThreadArena* threads) const {
    return single.valid && !RunsParallel(threads, single.work, single.extent, single.grain);
  }

  // Shares the prepacked constants of `previous` where the same input has the same layout.
  void SharePackedOf(const Plan& previous);

  // `call_symbols`: values of the traced graph's symbols for this call. `kernel_seconds`, when
  // not null, receives each kernel's wall time (one per kernel, in order): the tuner times a
  // kernel inside the program it belongs to, on the data its producers leave.
  // On a thread with a yield hook (device/yield_point.h: the background tuner's), the hook runs
  // before each kernel and, on one thread, between up to 8 pieces of its grid (cut on grain
  // multiples, as a parallel split would); time in it is not kernel time.
  // `observer`, when not null, watches the run (RunObserver).
  // `intermediates`, when not null, holds the intermediate buffers instead of the calling
  // thread's own arena, which lives as long as the thread (a tuning job's, freed with the job).
  absl::Status Run(std::span<const int64_t> call_symbols, void* const* inputs, void* const* outputs,
                   device::ThreadArena* threads, double* kernel_seconds = nullptr,
                   RunObserver* observer = nullptr,
                   device::AlignedBuffer* intermediates = nullptr) const;

 private:
  // Run of a plan with `single` set, unobserved, on a thread without a yield hook.
  absl::Status RunSingle(void* const* inputs, void* const* outputs,
                         device::ThreadArena* threads) const;
  // Whether a kernel with this much work over this grid splits across `threads`.
  bool RunsParallel(const device::ThreadArena* threads, int64_t work, const int64_t extent[2],
                    const int64_t grain[2]) const;
};

}  // namespace pto::jit

#endif  // PTO_JIT_PLAN_H_
