// Workers of a oneTBB arena that stay a short while after a parallel loop, each spinning on a
// mailbox of its own, so that the next loop reaches them without oneTBB's wake-up: a worker
// that oneTBB hands a new loop starts it 1-2 us after the caller, a lingering one within a
// fraction of that (docs/architecture.md, "Threads"). ThreadArena runs its loops through it.
#ifndef PTO_DEVICE_LINGERING_TEAM_H_
#define PTO_DEVICE_LINGERING_TEAM_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"

namespace pto::device {

class LingeringTeam : public std::enable_shared_from_this<LingeringTeam> {
 public:
  // `workers`: how many of the arena's threads besides the caller may linger. `linger`: how
  // long each stays after the last piece it ran.
  // `pending_wait`: how long after a slot's linger task was handed to oneTBB a loop waits for
  // it to start rather than run through oneTBB (whose worker might take the linger task first).
  LingeringTeam(int workers, std::chrono::nanoseconds linger,
                std::chrono::nanoseconds pending_wait);
  LingeringTeam(const LingeringTeam&) = delete;
  LingeringTeam& operator=(const LingeringTeam&) = delete;

  // Runs run_piece(p) once for every p in [0, pieces), on the calling thread and on the
  // lingering workers it takes (each piece on one thread, taken in order as threads come
  // free). Returns false, having run nothing, when no worker lingers or another caller holds
  // the team; the caller then runs the loop through oneTBB.
  bool TryRun(int pieces, absl::FunctionRef<void(int)> run_piece);

  // For every worker slot without a lingering worker (or one on its way), passes `enqueue` a
  // task that lingers in that slot; the arena's owner enqueues it. Nothing after Stop.
  void KeepLingering(absl::FunctionRef<void(std::function<void()>)> enqueue);

  // Lingering workers leave at once, and none lingers from now on.
  void Stop();

  // Workers lingering now (a test's view).
  int lingering() const;
  // Linger tasks handed to `enqueue` that have not finished (queued or lingering).
  int unfinished() const { return tasks_.load(std::memory_order_acquire); }
  // Loops TryRun ran with lingering workers, since construction.
  int64_t loops_run() const { return loops_run_.load(std::memory_order_relaxed); }

  // Held around a loop run through oneTBB instead: while any is held, in any team, lingering
  // workers leave and none starts, so oneTBB has them for it (the process's arenas share
  // oneTBB's workers, and one spinning in another arena's team would sit the loop out).
  class OneTbbLoop {
   public:
    explicit OneTbbLoop(LingeringTeam* team);  // null: nothing to do
    ~OneTbbLoop();
    OneTbbLoop(const OneTbbLoop&) = delete;
    OneTbbLoop& operator=(const OneTbbLoop&) = delete;

   private:
    LingeringTeam* team_;
  };

 private:
  struct Job;
  struct alignas(64) Slot {
    std::atomic<int> state{0};  // a State
    std::atomic<Job*> job{nullptr};
    std::atomic<int64_t> pending_since{0};  // steady_clock nanoseconds
  };
  // The slot's state once it is no longer pending, or kPending after pending_wait_.
  int AwaitPending(Slot& slot) const;
  void Linger(Slot& slot);

  const std::chrono::nanoseconds linger_;
  const std::chrono::nanoseconds pending_wait_;
  std::vector<Slot> slots_;
  std::atomic<bool> busy_{false};  // a caller holds the team
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> loops_run_{0};
  std::atomic<int> tasks_{0};
};

}  // namespace pto::device

#endif  // PTO_DEVICE_LINGERING_TEAM_H_
