#include "device/thread_arena.h"

#include <sched.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "device/lingering_team.h"
#include "device/piece_grid.h"

namespace pto::device {
namespace {

// The CPUs the calling thread may run on, in order.
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

bool RunOn(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// A worker's own affinity while a pinning arena holds it (a worker serves one arena at a time).
thread_local bool worker_pinned = false;
thread_local cpu_set_t worker_saved;

// Pins each worker to its slot's CPU when it joins the arena, and gives it back its own
// affinity when it leaves (the process's workers also serve other arenas).
class PinWorkers : public tbb::task_scheduler_observer {
 public:
  PinWorkers(tbb::task_arena& arena, const std::vector<int>& cpus)
      : tbb::task_scheduler_observer(arena), cpus_(cpus) {
    observe(true);
  }
  ~PinWorkers() override { observe(false); }

  void on_scheduler_entry(bool is_worker) override {
    if (!is_worker) return;
    const int slot = tbb::this_task_arena::current_thread_index();
    if (slot <= 0 || slot >= static_cast<int>(cpus_.size())) return;
    // Still pinned (an arena that ended while this worker was in it sent no exit): keep the
    // affinity saved then, and move to this slot's CPU.
    if (!worker_pinned && sched_getaffinity(0, sizeof worker_saved, &worker_saved) != 0) return;
    worker_pinned = RunOn(cpus_[slot]) || worker_pinned;
  }
  void on_scheduler_exit(bool is_worker) override {
    if (!is_worker || !worker_pinned) return;
    sched_setaffinity(0, sizeof worker_saved, &worker_saved);
    worker_pinned = false;
  }

 private:
  const std::vector<int>& cpus_;
};

}  // namespace

struct ThreadArena::Impl {
  Impl(int threads, const std::vector<int>& cpus)
      : arena(threads),
        team(threads > 1
                 ? std::make_shared<LingeringTeam>(threads - 1, kWorkerLinger, kLingerStartWait)
                 : nullptr) {
    if (!cpus.empty()) pin_workers = std::make_unique<PinWorkers>(arena, cpus);
  }
  ~Impl() {
    if (team == nullptr) return;
    // Lingering workers leave within microseconds; a linger task still queued runs as soon as
    // a worker takes it and leaves at once. Both are waited for while the arena is alive, so
    // no task outlives it.
    team->Stop();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (team->unfinished() > 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
  }
  tbb::task_arena arena;
  std::shared_ptr<LingeringTeam> team;      // null for one thread
  std::unique_ptr<PinWorkers> pin_workers;  // declared after `arena`: stops observing first
  std::atomic<int> callers{0};              // CallerPins alive; only the first pins
};

ThreadArena::ThreadArena(int threads, bool pin) : threads_(threads < 1 ? 1 : threads) {
  if (pin && threads_ > 1) {
    std::vector<int> allowed = AllowedCpus();
    if (static_cast<int>(allowed.size()) >= threads_) {
      cpus_.assign(allowed.begin(), allowed.begin() + threads_);
    }
  }
  impl_ = std::make_unique<Impl>(threads_, cpus_);
}

ThreadArena::~ThreadArena() = default;

std::shared_ptr<ThreadArena> ThreadArena::Shared(int threads, bool pin) {
  // std::mutex, not absl::Mutex: TSan sees pthread mutexes, not Debian's uninstrumented abseil.
  static std::mutex mu;
  static auto* arenas = new std::map<std::pair<int, bool>, std::weak_ptr<ThreadArena>>();
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<ThreadArena>& slot = (*arenas)[{threads < 1 ? 1 : threads, pin}];
  std::shared_ptr<ThreadArena> arena = slot.lock();
  if (arena == nullptr) {
    arena = std::make_shared<ThreadArena>(threads, pin);
    slot = arena;
  }
  return arena;
}

int ThreadArena::AllowedCpuCount() { return static_cast<int>(AllowedCpus().size()); }

bool ThreadArena::OnWorkerCpu() const {
  if (cpus_.size() < 2) return false;
  const int cpu = sched_getcpu();
  return std::find(cpus_.begin() + 1, cpus_.end(), cpu) != cpus_.end();
}

int ThreadArena::CurrentThreadIndex() {
  const int index = tbb::this_task_arena::current_thread_index();
  return index < 0 ? 0 : index;
}

void ThreadArena::ParallelFor2D(
    const int64_t extent[2], const int64_t grain[2],
    absl::FunctionRef<void(const int64_t lo[2], const int64_t hi[2])> body) {
  // Split in units of `grain`, so every range starts on a multiple of it.
  const int64_t g0 = grain[0] > 0 ? grain[0] : (extent[0] > 0 ? extent[0] : 1);
  const int64_t g1 = grain[1] > 0 ? grain[1] : (extent[1] > 0 ? extent[1] : 1);
  // One piece per thread, as even as the grain allows, whichever way the loop runs: the
  // workers start together, a piece of a matmul packs the panels of B it reads once, and the
  // pieces, so the results, do not depend on which path or thread ran them.
  const int64_t grains[2] = {g0, g1};
  const PieceGrid grid = SplitForThreads(extent, grains, threads_);
  if (grid.units[0] <= 0 || grid.units[1] <= 0) return;
  const auto run_piece = [&](int p) {
    int64_t lo_units[2], hi_units[2];
    grid.Piece(p, lo_units, hi_units);
    const int64_t lo[2] = {lo_units[0] * g0, lo_units[1] * g1};
    const int64_t hi[2] = {std::min(hi_units[0] * g0, extent[0]),
                           std::min(hi_units[1] * g1, extent[1])};
    body(lo, hi);
  };
  if (grid.pieces() <= 1) {
    run_piece(0);
    return;
  }
  LingeringTeam* team = impl_->team.get();
  if (team == nullptr || !team->TryRun(grid.pieces(), run_piece)) {
    LingeringTeam::OneTbbLoop one_tbb_loop(team);
    impl_->arena.execute(
        [&] { tbb::parallel_for(0, grid.pieces(), run_piece, tbb::simple_partitioner()); });
  }
  if (team != nullptr) {
    team->KeepLingering(
        [this](std::function<void()> task) { impl_->arena.enqueue(std::move(task)); });
  }
}

int ThreadArena::lingering_workers() const {
  return impl_->team == nullptr ? 0 : impl_->team->lingering();
}

int64_t ThreadArena::loops_on_lingering_workers() const {
  return impl_->team == nullptr ? 0 : impl_->team->loops_run();
}

void ThreadArena::CallerPin::Pin(ThreadArena* arena) {
  if (tried_) return;
  tried_ = true;
  if (arena == nullptr || !arena->pins()) return;
  arena_ = arena;
  if (arena->impl_->callers.fetch_add(1, std::memory_order_acq_rel) != 0) return;
  if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
  pinned_ = RunOn(arena->cpus_[0]);
}

ThreadArena::CallerPin::~CallerPin() {
  if (arena_ == nullptr) return;
  if (pinned_) sched_setaffinity(0, sizeof saved_, &saved_);
  arena_->impl_->callers.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace pto::device
