#include "device/thread_arena.h"

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <map>
#include <mutex>

namespace pto::device {

struct ThreadArena::Impl {
  explicit Impl(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

ThreadArena::ThreadArena(int threads)
    : threads_(threads < 1 ? 1 : threads), impl_(std::make_unique<Impl>(threads_)) {}

ThreadArena::~ThreadArena() = default;

std::shared_ptr<ThreadArena> ThreadArena::Shared(int threads) {
  // std::mutex, not absl::Mutex: TSan sees pthread mutexes, not Debian's uninstrumented abseil.
  static std::mutex mu;
  static auto* arenas = new std::map<int, std::weak_ptr<ThreadArena>>();
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<ThreadArena>& slot = (*arenas)[threads < 1 ? 1 : threads];
  std::shared_ptr<ThreadArena> arena = slot.lock();
  if (arena == nullptr) {
    arena = std::make_shared<ThreadArena>(threads);
    slot = arena;
  }
  return arena;
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
  const int64_t n0 = (extent[0] + g0 - 1) / g0, n1 = (extent[1] + g1 - 1) / g1;
  impl_->arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range2d<int64_t>(0, n0, 1, 0, n1, 1),
                      [&](const tbb::blocked_range2d<int64_t>& r) {
                        const int64_t lo[2] = {r.rows().begin() * g0, r.cols().begin() * g1};
                        const int64_t hi[2] = {std::min(r.rows().end() * g0, extent[0]),
                                               std::min(r.cols().end() * g1, extent[1])};
                        body(lo, hi);
                      });
  });
}

}  // namespace pto::device
