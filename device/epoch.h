// Epoch-based reclamation: frees objects (old Plans and their code) once no reader can hold them.
//
// Protocol. The domain has a global epoch E and one cache-line slot per reader thread.
//  - Reader (Enter): slot = E, then a full fence, then load the published pointer (acquire).
//    Leave: slot = quiescent (release). Nested guards keep the outer guard's epoch.
//  - Writer: store the new pointer, then Retire(old): under a mutex, e = E++ is recorded with old.
//  - Reclaim: read E, a full fence, then read every slot; a record is freed when e is below E and
//    below every slot's epoch (a quiescent slot counts as infinity).
// Why no reader can still hold a freed object: take a reader that loaded the old pointer and the
// two fences. If the reader's fence comes first (in the single total order of seq_cst fences),
// Reclaim's slot read sees the reader's epoch r (or a value stored after that reader left);
// r <= e, since a reader that read E after the increment sees the new pointer (the increment is
// after the store), so the object is kept.
// If Reclaim's fence comes first, the reader's load comes after the new pointer's store and
// cannot return the old one. Every slot store is a release and every scan load an acquire, so a
// reader's last use of an object happens before its deleter runs.
// Where the system offers them (device/asymmetric_fence.h), the pair of fences is asymmetric:
// the reader's is a compiler barrier, Reclaim's a membarrier that runs a full fence on every
// thread of the process; the argument above holds with that fence in the reader's place. A
// reader then pays no full fence, which waits for its store buffer to drain, on every call.
//
// Readers are allocation-free after a thread's first Enter on a domain: a thread_local cache keyed
// by a never-reused domain id finds the thread's slot. Slots live in a list of fixed chunks (never
// moved) and go back to the free pool when the thread exits.
#ifndef PTO_DEVICE_EPOCH_H_
#define PTO_DEVICE_EPOCH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "device/sanitizers.h"

namespace pto::device {

namespace epoch_internal {

inline constexpr uint64_t kQuiescent = ~uint64_t{0};

#if PTO_UNDER_TSAN
// TSan does not model fences (GCC rejects them under -Wtsan): slot stores and scan loads are
// seq_cst instead, which orders them against each other in the same total order.
inline constexpr std::memory_order kSlotStore = std::memory_order_seq_cst;
inline constexpr std::memory_order kSlotScan = std::memory_order_seq_cst;
inline void FullFence() {}
#else
inline constexpr std::memory_order kSlotStore = std::memory_order_release;
inline constexpr std::memory_order kSlotScan = std::memory_order_acquire;
inline void FullFence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif

struct SlotTable;

struct alignas(64) Slot {
  std::atomic<uint64_t> epoch{kQuiescent};
  std::atomic<bool> claimed{false};
  // Owner thread only (handed over through `claimed`).
  uint32_t nesting = 0;
  // Released by the outermost Leave instead of at thread exit (see EpochDomain::ThreadSlot).
  bool release_on_leave = false;
  SlotTable* table = nullptr;
};

// Gives the slot back to its table; drops the thread's reference to the table.
void ReleaseSlot(Slot* slot);

struct ThreadCache {
  uint64_t domain_id;
  Slot* slot;
};
// The slot of the domain this thread entered last. Trivially destructible: safe in any
// thread_local destructor.
inline thread_local constinit ThreadCache tls_cache{0, nullptr};

}  // namespace epoch_internal

// A reader's critical section: objects loaded inside it are not freed until it ends.
// Scoped: destroy it on the thread that created it, before the domain.
class EpochGuard {
 public:
  EpochGuard(const EpochGuard&) = delete;
  EpochGuard& operator=(const EpochGuard&) = delete;
  ~EpochGuard() {
    epoch_internal::Slot* slot = slot_;
    if (--slot->nesting == 0) {
      slot->epoch.store(epoch_internal::kQuiescent, std::memory_order_release);
      if (slot->release_on_leave) [[unlikely]] {
        epoch_internal::ReleaseSlot(slot);
      }
    }
  }

 private:
  friend class EpochDomain;
  explicit EpochGuard(epoch_internal::Slot* slot) : slot_(slot) {}
  epoch_internal::Slot* slot_;
};

class EpochDomain {
 public:
  EpochDomain();
  // Frees everything still retired: the owner guarantees no guard of this domain remains.
  ~EpochDomain();
  EpochDomain(const EpochDomain&) = delete;
  EpochDomain& operator=(const EpochDomain&) = delete;

  // Enter before loading a published pointer; keep the guard while using what it points to.
  EpochGuard Enter() {
    using epoch_internal::tls_cache;
    epoch_internal::Slot* slot = tls_cache.domain_id == id_ ? tls_cache.slot : ThreadSlot();
    if (slot->nesting++ == 0) {
      slot->epoch.store(epoch_.load(std::memory_order_acquire), epoch_internal::kSlotStore);
      if (asymmetric_) {
        std::atomic_signal_fence(std::memory_order_seq_cst);  // Reclaim's HeavyFence pairs
      } else {
        epoch_internal::FullFence();
      }
    }
    return EpochGuard(slot);
  }

  // Call after the object is unpublished (the new pointer is stored): `deleter` runs once no
  // reader can hold it, on whichever thread calls Reclaim (or Retire, or the destructor).
  // Thread-safe; runs Reclaim.
  void Retire(absl::AnyInvocable<void() &&> deleter);
  template <typename T, typename D>
  void Retire(std::unique_ptr<T, D> object) {
    if (object != nullptr) Retire([object = std::move(object)]() mutable { object.reset(); });
  }

  // Frees every retired object no reader can still hold; returns how many. Thread-safe. Frees
  // nothing if the membarrier system call fails (they stay pending).
  size_t Reclaim();
  // Retired objects not yet freed.
  size_t pending() const;
  // Whether some thread is inside a guard now (a snapshot: background work polls it to stay
  // out of the readers' way).
  bool HasReaders() const;
  // Slots allocated for reader threads (claimed or free): bounded by the most threads that held
  // a slot at once, rounded up to a chunk.
  size_t slot_capacity() const;

 private:
  struct Retired {
    uint64_t epoch;
    absl::AnyInvocable<void() &&> deleter;
  };

  // Slow path of Enter: this thread's slot, claimed on its first Enter.
  epoch_internal::Slot* ThreadSlot();
  // The smallest epoch of a reader inside a guard now; kQuiescent when there is none.
  uint64_t OldestReaderEpoch() const;

  const uint64_t id_;
  const bool asymmetric_;                   // AsymmetricFencesAvailable(), beside id_ for Enter
  epoch_internal::SlotTable* const table_;  // shared with threads holding slots; refcounted
  // Own cache line: read by every Enter, written by Retire.
  alignas(64) std::atomic<uint64_t> epoch_{1};
  alignas(64) mutable std::mutex retired_mu_;
  std::vector<Retired> retired_;  // in epoch order: epochs are taken under the mutex
};

}  // namespace pto::device

#endif  // PTO_DEVICE_EPOCH_H_
