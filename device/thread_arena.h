// A oneTBB arena of a fixed number of threads, and a 2-D parallel loop over tile ranges.
// No oneTBB types in this header: users of device/ need not see them.
#ifndef PTO_DEVICE_THREAD_ARENA_H_
#define PTO_DEVICE_THREAD_ARENA_H_

#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"

namespace pto::device {

class ThreadArena {
 public:
  // threads >= 1; 1 runs everything on the caller's thread.
  explicit ThreadArena(int threads);
  ~ThreadArena();
  ThreadArena(const ThreadArena&) = delete;
  ThreadArena& operator=(const ThreadArena&) = delete;

  // The process's arena of `threads` threads, shared by its holders (Runtimes of the same
  // thread count): oneTBB has one pool of worker threads per process, and a worker serving one
  // arena reaches another only after it has given up on the first, so calls alternating
  // between two arenas ran 1.2-2x slower on the one the worker had just left.
  static std::shared_ptr<ThreadArena> Shared(int threads);

  int threads() const { return threads_; }
  // The calling thread's slot in the arena it is running a task of (0 for the thread that
  // entered it); 0 outside any arena.
  static int CurrentThreadIndex();
  // Calls body(lo, hi) on disjoint sub-ranges covering [0, extent) in both dims, split on
  // multiples of grain (grain <= 0: never split that dim). Blocks until all are done.
  void ParallelFor2D(const int64_t extent[2], const int64_t grain[2],
                     absl::FunctionRef<void(const int64_t lo[2], const int64_t hi[2])> body);

 private:
  struct Impl;
  int threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pto::device

#endif  // PTO_DEVICE_THREAD_ARENA_H_
