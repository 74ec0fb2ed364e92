// A oneTBB arena of a fixed number of threads, and a 2-D parallel loop over tile ranges.
// No oneTBB types in this header: users of device/ need not see them.
#ifndef PTO_DEVICE_THREAD_ARENA_H_
#define PTO_DEVICE_THREAD_ARENA_H_

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"

namespace pto::device {

class ThreadArena {
 public:
  // After a parallel loop, the arena's workers stay this long spinning for the next one, which
  // then reaches them without oneTBB's wake-up (device/lingering_team.h).
  static constexpr std::chrono::microseconds kWorkerLinger{200};
  // A loop that finds a worker's linger task queued but not started waits this long for it.
  static constexpr std::chrono::microseconds kLingerStartWait{20};

  // threads >= 1; 1 runs everything on the caller's thread. With `pin`, and when the calling
  // thread may run on at least `threads` CPUs, each of the arena's threads runs on a CPU of
  // its own while it works in the arena: worker slot i on the i-th of those CPUs, and a caller
  // that holds a CallerPin on the 0th. Unpinned, a worker woken after an idle spell was often
  // placed on the caller's core, and the calls it missed ran on one thread.
  explicit ThreadArena(int threads, bool pin = false);
  ~ThreadArena();
  ThreadArena(const ThreadArena&) = delete;
  ThreadArena& operator=(const ThreadArena&) = delete;

  // The process's arena of `threads` threads (pinned or not), shared by its holders (Runtimes
  // of the same thread count and pinning): oneTBB has one pool of worker threads per process,
  // and a worker serving one arena reaches another only after it has given up on the first, so
  // calls alternating between two arenas ran 1.2-2x slower on the one the worker had just left.
  static std::shared_ptr<ThreadArena> Shared(int threads, bool pin = false);

  // How many CPUs the calling thread may run on (its affinity set; 0 if unknown).
  static int AllowedCpuCount();

  int threads() const { return threads_; }
  // Whether the arena pins its threads (asked for, and enough CPUs).
  bool pins() const { return !cpus_.empty(); }
  // The CPUs a pinning arena's slots run on (slot i on cpus()[i]); empty when it does not pin.
  const std::vector<int>& cpus() const { return cpus_; }
  // Whether the calling thread runs on a CPU a pinning arena keeps for its workers (a slot > 0),
  // where it would share a core with a worker: one vDSO call.
  bool OnWorkerCpu() const;
  // The calling thread's slot in the arena it is running a task of (0 for the thread that
  // entered it); 0 outside any arena.
  static int CurrentThreadIndex();
  // Calls body(lo, hi) on disjoint sub-ranges covering [0, extent) in both dims, split on
  // multiples of grain (grain <= 0: never split that dim). Blocks until all are done.
  // The range is cut into one piece per thread (device/piece_grid.h), run on the arena's
  // workers lingering from an earlier loop (kWorkerLinger) when they are there, else by oneTBB.
  void ParallelFor2D(const int64_t extent[2], const int64_t grain[2],
                     absl::FunctionRef<void(const int64_t lo[2], const int64_t hi[2])> body);
  // Workers lingering now, and loops run on lingering workers so far (for tests).
  int lingering_workers() const;
  int64_t loops_on_lingering_workers() const;

  // While alive, on a pinning arena and when no other thread holds one: the calling thread
  // runs on the arena's slot-0 CPU; its own affinity comes back when this ends. Held around a
  // run of many parallel loops (a Function call), so the caller is moved once per run. Makes no
  // heap allocation (a call's hot path).
  class CallerPin {
   public:
    CallerPin() = default;  // holds nothing until Pin
    explicit CallerPin(ThreadArena* arena) { Pin(arena); }
    ~CallerPin();
    // Joins `arena`'s CPUs as described above; once per CallerPin (later calls do nothing).
    void Pin(ThreadArena* arena);
    CallerPin(const CallerPin&) = delete;
    CallerPin& operator=(const CallerPin&) = delete;
    bool pinned() const { return pinned_; }

   private:
    ThreadArena* arena_ = nullptr;
    bool pinned_ = false;
    bool tried_ = false;
    // The caller's own affinity, while pinned_ (left uninitialized: a run constructs a
    // CallerPin, and zeroing 128 bytes is a measurable part of a short call).
    cpu_set_t saved_;
  };

 private:
  struct Impl;
  int threads_;
  std::vector<int> cpus_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pto::device

#endif  // PTO_DEVICE_THREAD_ARENA_H_
