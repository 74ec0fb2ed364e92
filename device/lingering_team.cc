#include "device/lingering_team.h"

#include <utility>

namespace pto::device {
namespace {

// A slot's states. A worker moves kPending -> kLingering when its task starts and kLingering ->
// kGone when it leaves; a caller moves kLingering -> kAssigned to hand it a job, and the worker
// back to kLingering when its part is done.
enum State : int { kGone = 0, kPending = 1, kLingering = 2, kAssigned = 3 };

// Clock reads while spinning: one per this many pauses.
constexpr int kPausesPerClockRead = 64;

void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// OneTbbLoops held in the process, for every team.
std::atomic<int> one_tbb_loops{0};

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct LingeringTeam::Job {
  Job(int pieces, absl::FunctionRef<void(int)> run_piece) : pieces(pieces), run_piece(run_piece) {}
  const int pieces;
  const absl::FunctionRef<void(int)> run_piece;
  std::atomic<int> next{0};       // the next piece to take
  std::atomic<int> remaining{0};  // workers handed the job and not yet done with it

  void RunPieces() {
    for (int p = next.fetch_add(1, std::memory_order_relaxed); p < pieces;
         p = next.fetch_add(1, std::memory_order_relaxed)) {
      run_piece(p);
    }
  }
};

LingeringTeam::LingeringTeam(int workers, std::chrono::nanoseconds linger,
                             std::chrono::nanoseconds pending_wait)
    : linger_(linger), pending_wait_(pending_wait), slots_(workers > 0 ? workers : 0) {}

int LingeringTeam::AwaitPending(Slot& slot) const {
  const int64_t until = slot.pending_since.load(std::memory_order_relaxed) + pending_wait_.count();
  for (int spins = 1;; ++spins) {
    const int state = slot.state.load(std::memory_order_relaxed);
    if (state != kPending) return state;
    Pause();
    if (spins % kPausesPerClockRead == 0 && NowNanos() >= until) return kPending;
  }
}

LingeringTeam::OneTbbLoop::OneTbbLoop(LingeringTeam* team) : team_(team) {
  if (team_ != nullptr) one_tbb_loops.fetch_add(1, std::memory_order_acq_rel);
}

LingeringTeam::OneTbbLoop::~OneTbbLoop() {
  if (team_ != nullptr) one_tbb_loops.fetch_sub(1, std::memory_order_acq_rel);
}

bool LingeringTeam::TryRun(int pieces, absl::FunctionRef<void(int)> run_piece) {
  if (pieces < 2 || busy_.exchange(true, std::memory_order_acquire)) return false;
  Job job(pieces, run_piece);
  int handed = 0;
  for (Slot& slot : slots_) {
    if (handed + 1 >= pieces) break;  // no more threads than pieces
    int state = slot.state.load(std::memory_order_relaxed);
    if (state == kPending) state = AwaitPending(slot);
    if (state != kLingering) continue;
    slot.job.store(&job, std::memory_order_relaxed);
    // Counted before the hand-over: the worker may finish before this thread goes on.
    job.remaining.fetch_add(1, std::memory_order_relaxed);
    int expected = kLingering;
    if (slot.state.compare_exchange_strong(expected, kAssigned, std::memory_order_release,
                                           std::memory_order_relaxed)) {
      ++handed;
    } else {
      job.remaining.fetch_sub(1, std::memory_order_relaxed);  // it left meanwhile
    }
  }
  if (handed == 0) {
    busy_.store(false, std::memory_order_release);
    return false;
  }
  job.RunPieces();
  // The workers' writes are this thread's once each has counted itself done.
  while (job.remaining.load(std::memory_order_acquire) != 0) Pause();
  loops_run_.fetch_add(1, std::memory_order_relaxed);
  busy_.store(false, std::memory_order_release);
  return true;
}

void LingeringTeam::Linger(Slot& slot) {
  // The slot is kPending, and only this task moves it on.
  if (stopped_.load(std::memory_order_acquire) ||
      one_tbb_loops.load(std::memory_order_acquire) > 0) {
    slot.state.store(kGone, std::memory_order_release);
    return;
  }
  slot.state.store(kLingering, std::memory_order_release);
  auto deadline = std::chrono::steady_clock::now() + linger_;
  for (int spins = 1;; ++spins) {
    if (slot.state.load(std::memory_order_acquire) == kAssigned) {
      Job* job = slot.job.load(std::memory_order_relaxed);
      job->RunPieces();
      // Free for the next job before the caller hears this one is done: the next caller comes
      // only after that.
      slot.state.store(kLingering, std::memory_order_relaxed);
      job->remaining.fetch_sub(1, std::memory_order_release);  // the last touch of `job`
      deadline = std::chrono::steady_clock::now() + linger_;
      continue;
    }
    Pause();
    if (spins % kPausesPerClockRead != 0) continue;
    if (!stopped_.load(std::memory_order_relaxed) &&
        one_tbb_loops.load(std::memory_order_relaxed) == 0 &&
        std::chrono::steady_clock::now() < deadline) {
      continue;
    }
    int expected = kLingering;
    if (slot.state.compare_exchange_strong(expected, kGone, std::memory_order_acq_rel)) return;
  }
}

void LingeringTeam::KeepLingering(absl::FunctionRef<void(std::function<void()>)> enqueue) {
  for (Slot& slot : slots_) {
    if (stopped_.load(std::memory_order_relaxed) ||
        one_tbb_loops.load(std::memory_order_relaxed) > 0) {
      return;
    }
    if (slot.state.load(std::memory_order_relaxed) != kGone) continue;
    int expected = kGone;
    if (!slot.state.compare_exchange_strong(expected, kPending, std::memory_order_acq_rel)) {
      continue;
    }
    slot.pending_since.store(NowNanos(), std::memory_order_relaxed);
    tasks_.fetch_add(1, std::memory_order_relaxed);
    enqueue([team = shared_from_this(), &slot] {
      team->Linger(slot);
      team->tasks_.fetch_sub(1, std::memory_order_release);
    });
  }
}

void LingeringTeam::Stop() { stopped_.store(true, std::memory_order_release); }

int LingeringTeam::lingering() const {
  int n = 0;
  for (const Slot& slot : slots_) {
    const int s = slot.state.load(std::memory_order_relaxed);
    n += s == kLingering || s == kAssigned;
  }
  return n;
}

}  // namespace pto::device
