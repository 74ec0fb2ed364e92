#include "device/epoch.h"

#include <algorithm>
#include <utility>

#include "device/asymmetric_fence.h"

namespace pto::device {
namespace epoch_internal {

inline constexpr int kSlotsPerChunk = 16;

struct SlotChunk {
  explicit SlotChunk(SlotTable* table) {
    for (Slot& slot : slots) slot.table = table;
  }
  Slot slots[kSlotsPerChunk];
  std::atomic<SlotChunk*> next{nullptr};
};

// The slots of one domain. Outlives the domain while threads still hold claims on it, so a
// thread can give its slot back at exit whatever the order of destruction.
struct SlotTable {
  SlotTable() : head(this) {}
  ~SlotTable() {
    for (SlotChunk* chunk = head.next.load(std::memory_order_relaxed); chunk != nullptr;) {
      delete std::exchange(chunk, chunk->next.load(std::memory_order_relaxed));
    }
  }

  SlotChunk head;
  std::atomic<int> refs{1};  // the domain's, plus one per claimed slot
  std::atomic<bool> domain_alive{true};
  std::atomic<size_t> chunks{1};
  std::mutex claim_mu;  // serializes claims and growth; releases need no lock
};

namespace {

void Unref(SlotTable* table) {
  if (table->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete table;
}

Slot* ClaimSlot(SlotTable* table) {
  table->refs.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(table->claim_mu);
  SlotChunk* last = &table->head;
  for (SlotChunk* chunk = last; chunk != nullptr;
       chunk = chunk->next.load(std::memory_order_acquire)) {
    last = chunk;
    for (Slot& slot : chunk->slots) {
      bool free = false;
      // Acquire: the previous owner's writes to nesting and release_on_leave happen before ours.
      if (slot.claimed.compare_exchange_strong(free, true, std::memory_order_acquire)) return &slot;
    }
  }
  auto* chunk = new SlotChunk(table);
  chunk->slots[0].claimed.store(true, std::memory_order_relaxed);
  last->next.store(chunk, std::memory_order_release);  // Reclaim walks the list without the lock
  table->chunks.fetch_add(1, std::memory_order_relaxed);
  return &chunk->slots[0];
}

// A thread gives up its claim; a slot still inside a guard is released by that guard's Leave.
void DropClaim(Slot* slot) {
  if (slot->nesting > 0) {
    slot->release_on_leave = true;
  } else {
    ReleaseSlot(slot);
  }
}

// This thread's slots, one per domain it has entered; given back when the thread exits.
struct ThreadClaims {
  ~ThreadClaims();
  struct Claim {
    uint64_t domain_id;
    Slot* slot;
  };
  std::vector<Claim> claims;
};

// Set once this thread's ThreadClaims is destroyed (a later thread_local destructor may still
// Enter). Trivially destructible, so readable at any point of thread exit.
thread_local constinit bool tls_claims_destroyed = false;

ThreadClaims::~ThreadClaims() {
  for (const Claim& claim : claims) DropClaim(claim.slot);
  tls_cache = {0, nullptr};
  tls_claims_destroyed = true;
}

ThreadClaims& Claims() {
  thread_local ThreadClaims claims;
  return claims;
}

}  // namespace

// External linkage: one counter for the process even if this library is linked into several
// shared objects (tls_cache, an inline variable, is one per process too).
std::atomic<uint64_t> next_domain_id{1};  // 0 is the empty cache's id

void ReleaseSlot(Slot* slot) {
  SlotTable* table = slot->table;
  slot->release_on_leave = false;
  slot->claimed.store(false, std::memory_order_release);
  Unref(table);
}

}  // namespace epoch_internal

using epoch_internal::Slot;
using epoch_internal::SlotChunk;

EpochDomain::EpochDomain()
    : id_(epoch_internal::next_domain_id.fetch_add(1, std::memory_order_relaxed)),
      asymmetric_(AsymmetricFencesAvailable()),
      table_(new epoch_internal::SlotTable) {}

EpochDomain::~EpochDomain() {
  // Deleters may Retire more objects: drain until none is left.
  for (;;) {
    std::vector<Retired> all;
    {
      std::lock_guard<std::mutex> lock(retired_mu_);
      all.swap(retired_);
    }
    if (all.empty()) break;
    for (Retired& retired : all) std::move(retired.deleter)();
  }
  table_->domain_alive.store(false, std::memory_order_release);
  epoch_internal::Unref(table_);
}

Slot* EpochDomain::ThreadSlot() {
  using namespace epoch_internal;
  if (tls_claims_destroyed) {
    // Thread exit is past the point where claims are given back: this guard's Leave releases it.
    Slot* slot = ClaimSlot(table_);
    slot->release_on_leave = true;
    return slot;
  }
  std::vector<ThreadClaims::Claim>& claims = Claims().claims;
  Slot* slot = nullptr;
  // Also drop claims on destroyed domains, so a long-lived thread's list stays short.
  std::erase_if(claims, [&](const ThreadClaims::Claim& claim) {
    if (claim.domain_id == id_) {
      slot = claim.slot;
      return false;
    }
    if (claim.slot->table->domain_alive.load(std::memory_order_acquire)) return false;
    DropClaim(claim.slot);
    return true;
  });
  if (slot == nullptr) {
    slot = ClaimSlot(table_);
    claims.push_back({id_, slot});
  }
  tls_cache = {id_, slot};
  return slot;
}

void EpochDomain::Retire(absl::AnyInvocable<void() &&> deleter) {
  if (!deleter) return;
  {
    std::lock_guard<std::mutex> lock(retired_mu_);
    const uint64_t epoch = epoch_.fetch_add(1, std::memory_order_seq_cst);
    retired_.push_back({epoch, std::move(deleter)});
  }
  Reclaim();
}

size_t EpochDomain::Reclaim() {
  // Records retired after this load may have readers that entered after the scan: keep them.
  uint64_t oldest = epoch_.load(std::memory_order_acquire);
  if (!asymmetric_) {
    epoch_internal::FullFence();
  } else if (!HeavyFence()) {
    return 0;
  }
  oldest = std::min(oldest, OldestReaderEpoch());
  std::vector<Retired> ready;
  {
    std::lock_guard<std::mutex> lock(retired_mu_);
    auto end = std::find_if(retired_.begin(), retired_.end(),
                            [&](const Retired& r) { return r.epoch >= oldest; });
    ready.assign(std::make_move_iterator(retired_.begin()), std::make_move_iterator(end));
    retired_.erase(retired_.begin(), end);
  }
  // Outside the lock: deleters may be slow (dropping JIT code) or Retire more.
  for (Retired& retired : ready) std::move(retired.deleter)();
  return ready.size();
}

size_t EpochDomain::pending() const {
  std::lock_guard<std::mutex> lock(retired_mu_);
  return retired_.size();
}

uint64_t EpochDomain::OldestReaderEpoch() const {
  uint64_t oldest = epoch_internal::kQuiescent;
  for (const SlotChunk* chunk = &table_->head; chunk != nullptr;
       chunk = chunk->next.load(std::memory_order_acquire)) {
    for (const Slot& slot : chunk->slots) {
      oldest = std::min(oldest, slot.epoch.load(epoch_internal::kSlotScan));
    }
  }
  return oldest;
}

bool EpochDomain::HasReaders() const { return OldestReaderEpoch() != epoch_internal::kQuiescent; }

size_t EpochDomain::slot_capacity() const {
  return table_->chunks.load(std::memory_order_relaxed) * epoch_internal::kSlotsPerChunk;
}

}  // namespace pto::device
