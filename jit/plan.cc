#include "jit/plan.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "device/aligned_buffer.h"
#include "device/yield_point.h"

namespace pto::jit {
namespace {

// Intermediates live in a per-thread arena reused by every call on that thread, so a warm call
// allocates nothing. (Calls never nest on one thread.)
thread_local device::AlignedBuffer call_arena;

// Per-thread kernel scratch (e.g. a matmul's packed panel of B).
thread_local device::AlignedBuffer kernel_scratch;

// A constant input's packed copy could not be allocated.
absl::Status PackedCopyUnavailable() {
  return absl::ResourceExhaustedError("cannot allocate a prepacked copy of a constant input");
}

// Copies the full column blocks of B (layout in ir::PackedB) from `src` into `dst`.
void PackB(const ir::PackedB& p, const float* src, float* dst) {
  const int64_t blocks = p.n / p.block;
  for (int64_t j = 0; j < blocks; ++j) {
    for (int64_t k = 0; k < p.k; ++k) {
      float* row = dst + (j * p.k + k) * p.block;
      const float* from = src + p.offset + k * p.stride_k + j * p.block * p.stride_n;
      for (int c = 0; c < p.block; ++c) row[c] = from[c * p.stride_n];
    }
  }
}

// The background tuner's runs cut a kernel's grid into at most this many pieces.
constexpr int64_t kYieldPieces = 8;

// The steps of those pieces: grain multiples along the dim with more grains, whole along the
// other.
void PieceSteps(const int64_t extent[2], const int64_t grain[2], int64_t step[2]) {
  int64_t units[2];
  for (int d = 0; d < 2; ++d) {
    step[d] = grain[d] > 0 ? grain[d] : extent[d];
    units[d] = (extent[d] + step[d] - 1) / step[d];
  }
  const int d = units[0] >= units[1] ? 0 : 1;
  step[d] *= (units[d] + kYieldPieces - 1) / kYieldPieces;
  step[1 - d] = extent[1 - d];
}

}  // namespace

void* KernelScratch(int64_t bytes) {
  if (bytes <= 0 || !kernel_scratch.Reserve(static_cast<size_t>(bytes))) return nullptr;
  return kernel_scratch.data();
}

struct PackedOperand::Copy {
  const void* source = nullptr;
  device::AlignedBuffer data;
};

struct PackedOperand::State {
  std::mutex mu;
  std::atomic<const Copy*> current{nullptr};
  std::vector<std::unique_ptr<Copy>> copies;  // every copy made, kept with the plan
};

PackedOperand::PackedOperand(int input, const ir::PackedB& layout)
    : input_(input), layout_(layout), state_(std::make_shared<State>()) {}
PackedOperand::PackedOperand(PackedOperand&&) noexcept = default;
PackedOperand::~PackedOperand() = default;

const float* PackedOperand::Get(const void* source) const {
  const Copy* c = state_->current.load(std::memory_order_acquire);
  if (c != nullptr && c->source == source) return static_cast<const float*>(c->data.data());
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const std::unique_ptr<Copy>& copy : state_->copies) {
    if (copy->source == source) {
      state_->current.store(copy.get(), std::memory_order_release);
      return static_cast<const float*>(copy->data.data());
    }
  }
  auto copy = std::make_unique<Copy>();
  copy->source = source;
  const size_t elements =
      static_cast<size_t>(layout_.n / layout_.block * layout_.block * layout_.k);
  if (!copy->data.Reserve(std::max<size_t>(elements, 1) * sizeof(float))) return nullptr;
  PackB(layout_, static_cast<const float*>(source), static_cast<float*>(copy->data.data()));
  state_->current.store(copy.get(), std::memory_order_release);
  state_->copies.push_back(std::move(copy));
  return static_cast<const float*>(state_->copies.back()->data.data());
}

void PackedOperand::ShareCopiesOf(const PackedOperand& other) {
  if (other.input_ == input_ && other.layout_ == layout_) state_ = other.state_;
}

void Plan::SharePackedOf(const Plan& previous) {
  for (PackedOperand& p : packed) {
    for (const PackedOperand& q : previous.packed) p.ShareCopiesOf(q);
  }
}

void Plan::SetSingleLaunch() {
  single = SingleLaunch();
  if (kernels.size() != 1 || symbols.size() > SingleLaunch::kMaxSymbols) return;
  const PlanKernel& k = kernels[0];
  if (!k.grid[0].IsConstant() || !k.grid[1].IsConstant() || !k.work_per_cell.IsConstant() ||
      k.buffers.size() > SingleLaunch::kMaxBuffers) {
    return;
  }
  SingleLaunch s;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (symbols[i].symbol >= 0) return;
    s.symbols[i] = symbols[i].constant;
  }
  for (size_t j = 0; j < k.buffers.size(); ++j) {
    if (k.buffers[j].kind == ir::BufferKind::kTemp) return;
    s.buffers[j] = k.buffers[j];
  }
  s.num_buffers = static_cast<int>(k.buffers.size());
  s.fn = k.fn;
  s.extent[0] = k.grid[0].constant();
  s.extent[1] = k.grid[1].constant();
  s.grain[0] = k.grain[0];
  s.grain[1] = k.grain[1];
  s.work = s.extent[0] * s.extent[1] * k.work_per_cell.constant();
  s.scratch_bytes = k.scratch_bytes;
  s.valid = true;
  single = s;
}

bool Plan::RunsParallel(const device::ThreadArena* threads, int64_t work, const int64_t extent[2],
                        const int64_t grain[2]) const {
  // A grid of one grain is one task: the caller runs it without entering the arena.
  const bool one_task =
      (grain[0] <= 0 || extent[0] <= grain[0]) && (grain[1] <= 0 || extent[1] <= grain[1]);
  return threads != nullptr && threads->threads() > 1 && work >= parallel_threshold && !one_task;
}

absl::Status Plan::RunSingle(void* const* inputs, void* const* outputs,
                             device::ThreadArena* threads) const {
  const SingleLaunch& s = single;
  void* bufs[SingleLaunch::kMaxBuffers];
  for (int j = 0; j < s.num_buffers; ++j) {
    const BufferRef& b = s.buffers[j];
    if (b.kind == ir::BufferKind::kInput) {
      bufs[j] = inputs[b.index];
    } else if (b.kind == ir::BufferKind::kOutput) {
      bufs[j] = outputs[b.index];
    } else {  // kPacked (SetSingleLaunch admits no temps)
      const PackedOperand& p = packed[b.index];
      const float* data = p.Get(inputs[p.input()]);
      if (data == nullptr) {
        return PackedCopyUnavailable();
      }
      bufs[j] = const_cast<float*>(data);  // kernels only read it
    }
  }
  if (s.extent[0] <= 0 || s.extent[1] <= 0) return absl::OkStatus();
  if (RunsParallel(threads, s.work, s.extent, s.grain)) {
    const pto_kernel_args args{bufs, s.symbols};
    device::ThreadArena::CallerPin caller_pin;
    if (s.work >= pin_caller_threshold || threads->OnWorkerCpu()) caller_pin.Pin(threads);
    threads->ParallelFor2D(s.extent, s.grain, [&](const int64_t lo[2], const int64_t hi[2]) {
      s.fn(&args, lo, hi, KernelScratch(s.scratch_bytes));
    });
    return absl::OkStatus();
  }
  RunKernelSerially(s.fn, bufs, s.symbols, s.extent, s.scratch_bytes);
  return absl::OkStatus();
}

absl::Status Plan::Run(std::span<const int64_t> call_symbols, void* const* inputs,
                       void* const* outputs, device::ThreadArena* threads, double* kernel_seconds,
                       RunObserver* observer, device::AlignedBuffer* intermediates) const {
  // Only the background tuner's runs have a yield hook: callers' runs check once per run.
  const bool yielding = device::HasYieldHook();
  if (single.valid && kernel_seconds == nullptr && observer == nullptr && !yielding) {
    return RunSingle(inputs, outputs, threads);
  }
  int64_t sym[kMaxSymbols];
  for (size_t i = 0; i < symbols.size(); ++i) {
    const SymbolSource& s = symbols[i];
    sym[i] = s.symbol < 0 ? s.constant : call_symbols[s.symbol];
  }
  const std::span<const int64_t> values(sym, symbols.size());
  size_t offsets[kMaxArenaSlots];
  size_t total = 0;
  for (size_t s = 0; s < slot_sizes.size(); ++s) {
    int64_t elements = 0;
    bool overflow = false;
    for (const ir::SymExpr& e : slot_sizes[s])
      elements = std::max(elements, e.Evaluate(values, &overflow));
    if (overflow || elements > (int64_t{1} << 60) / 4) {
      return absl::ResourceExhaustedError("intermediate buffer size overflows at these shapes");
    }
    offsets[s] = total;
    total += (static_cast<size_t>(elements) * 4 + 63) / 64 * 64;
  }
  device::AlignedBuffer& arena = intermediates != nullptr ? *intermediates : call_arena;
  if (!arena.Reserve(total)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", total, " bytes for intermediate buffers"));
  }
  char* base = static_cast<char*>(arena.data());
  const float* packed_data[kMaxKernelBuffers];
  for (size_t i = 0; i < packed.size(); ++i) {
    packed_data[i] = packed[i].Get(inputs[packed[i].input()]);
    if (packed_data[i] == nullptr) {
      return PackedCopyUnavailable();
    }
  }
  // The caller joins a pinning arena's CPUs at the first long parallel kernel, or at the first
  // parallel kernel it would run on a worker's CPU, for the rest of the run.
  device::ThreadArena::CallerPin caller_pin;
  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    if (yielding) device::YieldPoint();  // waits here while calls run
    const PlanKernel& k = kernels[ki];
    const auto start = kernel_seconds != nullptr ? std::chrono::steady_clock::now()
                                                 : std::chrono::steady_clock::time_point();
    const double yielded = yielding ? device::SecondsYielded() : 0;
    void* bufs[kMaxKernelBuffers];
    for (size_t j = 0; j < k.buffers.size(); ++j) {
      const BufferRef& b = k.buffers[j];
      switch (b.kind) {
        case ir::BufferKind::kInput:
          bufs[j] = inputs[b.index];
          break;
        case ir::BufferKind::kOutput:
          bufs[j] = outputs[b.index];
          break;
        case ir::BufferKind::kTemp:
          bufs[j] = base + offsets[b.index];
          break;
        case ir::BufferKind::kPacked:
          bufs[j] = const_cast<float*>(packed_data[b.index]);  // kernels only read it
          break;
      }
    }
    const pto_kernel_args args{bufs, sym};
    const int64_t extent[2] = {k.grid[0].Evaluate(values), k.grid[1].Evaluate(values)};
    KernelLaunch launch;
    if (observer != nullptr) {
      launch = {static_cast<int>(ki),
                std::span<void* const>(bufs, k.buffers.size()),
                values,
                {extent[0], extent[1]}};
      if (absl::Status s = observer->BeforeKernel(launch); !s.ok()) return s;
    }
    // Runs one piece of the grid; with an observer that wants pieces, times it.
    const auto run_piece = [&](const int64_t lo[2], const int64_t hi[2]) {
      if (observer == nullptr || !observer->wants_pieces()) {
        k.fn(&args, lo, hi, KernelScratch(k.scratch_bytes));
        return;
      }
      const auto piece_start = std::chrono::steady_clock::now();
      k.fn(&args, lo, hi, KernelScratch(k.scratch_bytes));
      observer->OnPiece(static_cast<int>(ki), lo, hi, device::ThreadArena::CurrentThreadIndex(),
                        piece_start, std::chrono::steady_clock::now());
    };
    if (extent[0] > 0 && extent[1] > 0) {
      const int64_t work = extent[0] * extent[1] * k.work_per_cell.Evaluate(values);
      if (RunsParallel(threads, work, extent, k.grain)) {
        if (work >= pin_caller_threshold || threads->OnWorkerCpu()) caller_pin.Pin(threads);
        threads->ParallelFor2D(extent, k.grain, run_piece);
      } else if (yielding) {
        // The background tuner's one-thread runs: yields between pieces of the grid cut like a
        // parallel split would (on grain multiples, along the dim with more grains, a few
        // pieces: a matmul piece packs its own panels of B, as a task of the split does).
        int64_t step[2];
        PieceSteps(extent, k.grain, step);
        for (int64_t r = 0; r < extent[0]; r += step[0]) {
          for (int64_t c = 0; c < extent[1]; c += step[1]) {
            if (r + c > 0) device::YieldPoint();
            const int64_t lo[2] = {r, c};
            const int64_t hi[2] = {std::min(r + step[0], extent[0]),
                                   std::min(c + step[1], extent[1])};
            run_piece(lo, hi);
          }
        }
      } else {
        const int64_t lo[2] = {0, 0};
        run_piece(lo, extent);
      }
    }
    if (kernel_seconds != nullptr) {
      // Waits at yield points are not the kernel's time. The yielded total is read before the
      // clock (and after it at the start): a timer's wait that falls between the two reads then
      // adds to the kernel's time, never takes more than it had.
      const double waited = yielding ? device::SecondsYielded() - yielded : 0;
      kernel_seconds[ki] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - waited;
    }
    if (observer != nullptr) {
      if (absl::Status s = observer->AfterKernel(launch); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::jit
