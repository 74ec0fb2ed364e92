#include "device/epoch.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <latch>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "device/asymmetric_fence.h"
#include "device/sanitizers.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

// Retires a deleter that sets `freed` (checked for double frees).
void RetireFlag(EpochDomain& domain, std::atomic<int>& freed) {
  domain.Retire([&freed] { freed.fetch_add(1); });
}

// Runs `body` on a thread that holds a guard of `domain` until `release` is fulfilled.
class GuardHolder {
 public:
  explicit GuardHolder(EpochDomain& domain) {
    std::promise<void> entered;
    std::future<void> entered_future = entered.get_future();
    thread_ = std::thread([&domain, &entered, released = release_.get_future()]() mutable {
      EpochGuard guard = domain.Enter();
      entered.set_value();
      released.wait();
    });
    entered_future.wait();
  }
  void Leave() {
    release_.set_value();
    thread_.join();
  }

 private:
  std::promise<void> release_;
  std::thread thread_;
};

TEST(EpochTest, RetiredWhileReaderInsideIsFreedOnlyAfterItLeaves) {
  EpochDomain domain;
  std::atomic<int> freed{0};
  GuardHolder reader(domain);
  RetireFlag(domain, freed);
  EXPECT_EQ(domain.Reclaim(), 0u);
  EXPECT_EQ(freed.load(), 0);
  EXPECT_EQ(domain.pending(), 1u);
  reader.Leave();
  EXPECT_EQ(domain.Reclaim(), 1u);
  EXPECT_EQ(freed.load(), 1);
  EXPECT_EQ(domain.pending(), 0u);
  EXPECT_EQ(domain.Reclaim(), 0u);
  EXPECT_EQ(freed.load(), 1);
}

TEST(EpochTest, RetiredWithNoReaderIsFreedByRetiresOwnReclaim) {
  EpochDomain domain;
  { EpochGuard guard = domain.Enter(); }  // a claimed but quiescent slot does not block
  std::atomic<int> freed{0};
  RetireFlag(domain, freed);
  EXPECT_EQ(freed.load(), 1);
  EXPECT_EQ(domain.pending(), 0u);
  EXPECT_EQ(domain.Reclaim(), 0u);
}

TEST(EpochTest, ObjectRetiredAfterEnterOnSameThreadWaitsForLeave) {
  EpochDomain domain;
  std::atomic<int> freed{0};
  {
    EpochGuard guard = domain.Enter();
    domain.Retire(std::unique_ptr<int, void (*)(int*)>(new int(7), [](int* p) { delete p; }));
    RetireFlag(domain, freed);
    EXPECT_EQ(domain.pending(), 2u);
  }
  EXPECT_EQ(domain.Reclaim(), 2u);
  EXPECT_EQ(freed.load(), 1);
}

TEST(EpochTest, NestedGuardsHoldUntilTheOutermostLeaves) {
  EpochDomain domain;
  std::atomic<int> freed{0};
  {
    EpochGuard outer = domain.Enter();
    {
      EpochGuard inner = domain.Enter();
      RetireFlag(domain, freed);
    }
    EXPECT_EQ(domain.Reclaim(), 0u);  // the inner Leave must not mark the thread quiescent
    EXPECT_EQ(freed.load(), 0);
    {
      EpochGuard inner = domain.Enter();
      EXPECT_EQ(domain.Reclaim(), 0u);
    }
    EXPECT_EQ(freed.load(), 0);
  }
  EXPECT_EQ(domain.Reclaim(), 1u);
  EXPECT_EQ(freed.load(), 1);
}

TEST(EpochTest, GuardsOfTwoDomainsOnOneThreadAreIndependent) {
  EpochDomain a, b;
  std::atomic<int> freed_a{0}, freed_b{0};
  for (int i = 0; i < 3; ++i) {  // alternate, so the thread's one-entry cache misses each time
    EpochGuard guard_a = a.Enter();
    EpochGuard guard_b = b.Enter();
  }
  {
    EpochGuard guard_a = a.Enter();
    {
      EpochGuard guard_b = b.Enter();
      RetireFlag(a, freed_a);
      RetireFlag(b, freed_b);
      EXPECT_EQ(freed_a.load() + freed_b.load(), 0);
    }
    EXPECT_EQ(b.Reclaim(), 1u);  // b's guard left; a's guard does not hold b's objects
    EXPECT_EQ(freed_b.load(), 1);
    EXPECT_EQ(a.Reclaim(), 0u);
  }
  EXPECT_EQ(a.Reclaim(), 1u);
  EXPECT_EQ(freed_a.load(), 1);
}

TEST(EpochTest, ReadersInLaterChunksBlockReclaim) {
  constexpr int kReaders = 40;  // more than one chunk of slots
  EpochDomain domain;
  std::vector<std::unique_ptr<GuardHolder>> readers;
  for (int i = 0; i < kReaders; ++i) readers.push_back(std::make_unique<GuardHolder>(domain));
  EXPECT_GE(domain.slot_capacity(), static_cast<size_t>(kReaders));
  std::atomic<int> freed{0};
  RetireFlag(domain, freed);
  // Leave in creation order: the last reader sits in the last chunk.
  for (int i = 0; i < kReaders; ++i) {
    EXPECT_EQ(domain.Reclaim(), 0u) << "reader " << i;
    readers[i]->Leave();
  }
  EXPECT_EQ(domain.Reclaim(), 1u);
  EXPECT_EQ(freed.load(), 1);
}

TEST(EpochTest, HasReadersWhileAnyGuardIsHeldInAnyChunk) {
  constexpr int kReaders = 20;  // more than one chunk of slots
  EpochDomain domain;
  EXPECT_FALSE(domain.HasReaders());
  {
    EpochGuard outer = domain.Enter();
    EpochGuard inner = domain.Enter();
    EXPECT_TRUE(domain.HasReaders());
  }
  EXPECT_FALSE(domain.HasReaders());
  std::vector<std::unique_ptr<GuardHolder>> readers;
  for (int i = 0; i < kReaders; ++i) readers.push_back(std::make_unique<GuardHolder>(domain));
  for (int i = 0; i < kReaders; ++i) {
    EXPECT_TRUE(domain.HasReaders()) << "reader " << i;
    readers[i]->Leave();
  }
  EXPECT_FALSE(domain.HasReaders());
}

// A published object whose fields satisfy an invariant until its destructor poisons them.
struct Published {
  explicit Published(uint64_t v, std::vector<std::atomic<int>>* frees)
      : id(v), twice(2 * v), frees(frees) {}
  ~Published() {
    (*frees)[id].fetch_add(1, std::memory_order_relaxed);
    id = ~uint64_t{0};
    twice = 1;
  }
  uint64_t id;
  uint64_t twice;
  std::vector<std::atomic<int>>* frees;
};

TEST(EpochTest, ReadersNeverSeeAFreedObjectWhileAWriterSwapsThousandsOfTimes) {
  constexpr int kReaders = 8;
#if PTO_UNDER_TSAN
  constexpr uint64_t kSwaps = 10000;
#else
  constexpr uint64_t kSwaps = 20000;
#endif
  EpochDomain domain;
  std::vector<std::atomic<int>> frees(kSwaps + 1);
  std::atomic<Published*> current{new Published(0, &frees)};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> bad_reads{0}, reads{0};
  std::latch readers_running(kReaders);

  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      int64_t local_reads = 0, local_bad = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        EpochGuard guard = domain.Enter();
        const Published* p = current.load(std::memory_order_acquire);
        for (int k = 0; k < 4; ++k) {
          if (p->twice != 2 * p->id || p->id > kSwaps) ++local_bad;
        }
        if ((local_reads + r) % 16 == 0) {  // a nested guard now and then
          EpochGuard nested = domain.Enter();
          const Published* q = current.load(std::memory_order_acquire);
          if (q->twice != 2 * q->id || p->twice != 2 * p->id) ++local_bad;
        }
        if (local_reads++ == 0) readers_running.count_down();
      }
      reads.fetch_add(local_reads);
      bad_reads.fetch_add(local_bad);
    });
  }

  readers_running.wait();
  size_t max_pending = 0;  // > 0: readers really did hold objects the writer retired
  for (uint64_t v = 1; v <= kSwaps; ++v) {
    Published* old = current.exchange(new Published(v, &frees), std::memory_order_acq_rel);
    domain.Retire(std::unique_ptr<Published>(old));
    max_pending = std::max(max_pending, domain.pending());
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();

  domain.Reclaim();
  EXPECT_EQ(domain.pending(), 0u);
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_GT(max_pending, 0u);
  std::printf("reads %lld, most objects pending at once %zu\n",
              static_cast<long long>(reads.load()), max_pending);
  delete current.load();
  for (uint64_t v = 0; v <= kSwaps; ++v) {
    ASSERT_EQ(frees[v].load(), 1) << "object " << v;
  }
}

TEST(EpochTest, ThreadChurnReusesSlots) {
  constexpr int kThreads = 1000, kConcurrent = 8;
  EpochDomain domain;
  std::atomic<int> entered{0};
  size_t capacity_after_first_batch = 0;
  for (int batch = 0; batch < kThreads / kConcurrent; ++batch) {
    std::vector<std::thread> threads;
    for (int i = 0; i < kConcurrent; ++i) {
      threads.emplace_back([&] {
        EpochGuard guard = domain.Enter();
        entered.fetch_add(1);
      });
    }
    for (std::thread& t : threads) t.join();  // join waits for thread_local destructors
    if (batch == 0) capacity_after_first_batch = domain.slot_capacity();
  }
  EXPECT_EQ(entered.load(), kThreads);
  EXPECT_EQ(domain.slot_capacity(), capacity_after_first_batch);
  EXPECT_LE(domain.slot_capacity(), 32u);
}

// Enters `domain` from its destructor, which runs at thread exit.
struct EntersAtThreadExit {
  ~EntersAtThreadExit() {
    if (domain == nullptr) return;
    EpochGuard guard = domain->Enter();
    entered->fetch_add(1);
  }
  EpochDomain* domain = nullptr;
  std::atomic<int>* entered = nullptr;
};

TEST(EpochTest, EnterFromAThreadLocalDestructorAfterClaimsAreReleased) {
  EpochDomain domain;
  std::atomic<int> entered{0};
  const size_t capacity = domain.slot_capacity();
  for (int i = 0; i < 50; ++i) {
    std::thread([&] {
      // Constructed before the thread's first Enter, so destroyed after the thread's claims.
      thread_local EntersAtThreadExit at_exit;
      at_exit.domain = &domain;
      at_exit.entered = &entered;
      EpochGuard guard = domain.Enter();
    }).join();
  }
  EXPECT_EQ(entered.load(), 50);
  EXPECT_EQ(domain.slot_capacity(), capacity);
  std::atomic<int> freed{0};
  RetireFlag(domain, freed);  // no slot was left inside a guard
  EXPECT_EQ(freed.load(), 1);
}

TEST(EpochTest, DomainRecreatedAtTheSameAddressDoesNotReuseAStaleSlot) {
  alignas(EpochDomain) unsigned char storage[sizeof(EpochDomain)];
  auto* first = new (storage) EpochDomain;
  { EpochGuard guard = first->Enter(); }  // caches this thread's slot of the first domain
  first->~EpochDomain();

  auto* second = new (storage) EpochDomain;
  ASSERT_EQ(static_cast<void*>(first), static_cast<void*>(second));
  std::atomic<int> freed{0};
  {
    EpochGuard guard = second->Enter();
    RetireFlag(*second, freed);
    // With a stale slot the guard would sit in the dead domain's table, unseen by this scan.
    EXPECT_EQ(second->Reclaim(), 0u);
    EXPECT_EQ(freed.load(), 0);
  }
  EXPECT_EQ(second->Reclaim(), 1u);
  second->~EpochDomain();
  EXPECT_EQ(freed.load(), 1);
}

TEST(EpochTest, DestructorFreesEverythingStillRetiredIncludingRetiresFromDeleters) {
  std::atomic<int> freed{0};
  {
    EpochDomain domain;
    {
      EpochGuard guard = domain.Enter();
      domain.Retire([&] {
        freed.fetch_add(1);
        RetireFlag(domain, freed);
      });
    }
    EXPECT_EQ(domain.pending(), 1u);
    EXPECT_EQ(freed.load(), 0);
  }
  EXPECT_EQ(freed.load(), 2);
}

// Makes every later membarrier system call of the calling thread fail with EPERM (a seccomp
// filter, as a sandbox would install one); other system calls are allowed.
bool FailMembarrierFromNowOn() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// Reclaim's asymmetric fence is the membarrier system call. When it fails, nothing is ordered
// against the readers' light fences: Reclaim must free nothing and keep the record pending, and
// the domain's destructor (no guard left, by contract) still frees it. Runs in a child process
// (a re-executed test binary, so the child registers for membarrier itself) whose filter fails
// the call.
TEST(EpochTest, AFailedMembarrierFreesNothingAndKeepsTheRecordPending) {
  if (!AsymmetricFencesAvailable()) {
    GTEST_SKIP() << "membarrier(PRIVATE_EXPEDITED) is not available here: Reclaim uses a full "
                    "fence, with no system call to fail";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::atomic<int> freed{0};
        auto domain = std::make_unique<EpochDomain>();
        const bool before = HeavyFence();
        if (!FailMembarrierFromNowOn()) {
          std::fprintf(stderr, "seccomp refused the filter\n");
          std::_Exit(2);
        }
        const bool after = HeavyFence();
        RetireFlag(*domain, freed);  // Retire's own Reclaim fails too
        const size_t reclaimed = domain->Reclaim();
        std::fprintf(stderr, "fence before %d after %d; reclaimed %zu, freed %d, pending %zu; ",
                     before, after, reclaimed, freed.load(), domain->pending());
        domain.reset();
        std::fprintf(stderr, "after the destructor freed %d\n", freed.load());
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0),
      "fence before 1 after 0; reclaimed 0, freed 0, pending 1; after the destructor freed 1");
}

TEST(EpochTest, EnterLeaveCost) {
  EpochDomain domain;
#if PTO_UNDER_TSAN
  constexpr int kIterations = 200'000;
#else
  constexpr int kIterations = 2'000'000;
#endif
  { EpochGuard warm = domain.Enter(); }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    EpochGuard guard = domain.Enter();
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
      kIterations;
  std::printf("Enter+Leave: %.1f ns\n", ns);  // informational: timing is not asserted
  EXPECT_EQ(domain.pending(), 0u);
}

}  // namespace
}  // namespace pto::device
