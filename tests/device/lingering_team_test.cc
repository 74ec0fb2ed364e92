// LingeringTeam and the loops ThreadArena runs through it: later loops reach the workers that
// linger from an earlier one, every unit runs once whichever path a loop takes, and lingering
// workers leave when their time is up, when a loop runs through oneTBB, and at Stop.
#include "device/lingering_team.h"

#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "device/piece_grid.h"
#include "device/thread_arena.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

// Waits up to `limit` for `done`; whether it came true.
bool WaitFor(const std::function<bool()>& done, std::chrono::nanoseconds limit) {
  const auto until = steady_clock::now() + limit;
  while (!done()) {
    if (steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

void SpinFor(std::chrono::microseconds t) {
  const auto until = steady_clock::now() + t;
  while (steady_clock::now() < until) {
  }
}

// A grid of n0 x n1 whole units.
PieceGrid SplitUnits(int64_t n0, int64_t n1, int threads) {
  const int64_t extent[2] = {n0, n1}, grain[2] = {1, 1};
  return SplitForThreads(extent, grain, threads);
}

TEST(PieceGrid, OnePiecePerThreadAlongOneDimThenTheOther) {
  PieceGrid g = SplitUnits(12, 3, 2);
  EXPECT_EQ(g.splits[0], 2);
  EXPECT_EQ(g.splits[1], 1);
  g = SplitUnits(1, 7, 3);
  EXPECT_EQ(g.pieces(), 3);
  EXPECT_EQ(g.splits[1], 3);
  g = SplitUnits(2, 2, 4);  // 2 x 2 pieces
  EXPECT_EQ(g.pieces(), 4);
  g = SplitUnits(3, 1, 8);  // never more pieces than units
  EXPECT_EQ(g.pieces(), 3);
  g = SplitUnits(1, 1, 2);
  EXPECT_EQ(g.pieces(), 1);
  // Pieces tile the grid: every unit in exactly one.
  for (int64_t n0 : {1, 2, 5, 9}) {
    for (int64_t n1 : {1, 3, 8}) {
      for (int t : {1, 2, 3, 4, 7}) {
        g = SplitUnits(n0, n1, t);
        EXPECT_LE(g.pieces(), t);
        std::vector<int> hits(n0 * n1, 0);
        for (int p = 0; p < g.pieces(); ++p) {
          int64_t lo[2], hi[2];
          g.Piece(p, lo, hi);
          for (int64_t r = lo[0]; r < hi[0]; ++r) {
            for (int64_t c = lo[1]; c < hi[1]; ++c) ++hits[r * n1 + c];
          }
        }
        for (int h : hits) ASSERT_EQ(h, 1) << n0 << "x" << n1 << " on " << t;
      }
    }
  }
}

// Where the rows' last unit is short, halves of the rows would leave one thread waiting for the
// other: 512 rows in units of 96 (the last of 32) split 288 | 224, so the columns (4 units of
// 128) are the split; 2048 rows in units of 384 split 1152 | 896, so 768 columns in 6 units of
// 128 are (6 units each way: the dim with more units would have been the rows). Rows within
// 1/16 of even stay the split (128 rows as 66 | 62 over 4 column units).
TEST(PieceGrid, TheSplitKeepsTheLargestPieceSmallestAndPrefersRows) {
  const int64_t mlp[2] = {512, 512}, mlp_grain[2] = {96, 128};
  PieceGrid g = SplitForThreads(mlp, mlp_grain, 2);
  EXPECT_EQ(g.splits[0], 1);
  EXPECT_EQ(g.splits[1], 2);
  const int64_t tall[2] = {2048, 768}, tall_grain[2] = {384, 128};
  g = SplitForThreads(tall, tall_grain, 2);
  EXPECT_EQ(g.splits[0], 1);
  EXPECT_EQ(g.splits[1], 2);
  const int64_t block[2] = {128, 512}, block_grain[2] = {66, 128};
  g = SplitForThreads(block, block_grain, 2);
  EXPECT_EQ(g.splits[0], 2);
  EXPECT_EQ(g.splits[1], 1);
  int64_t lo[2], hi[2];
  g.Piece(1, lo, hi);
  EXPECT_EQ(lo[0], 1);  // in units: rows [66, 128)
  EXPECT_EQ(hi[0], 2);
  // A grain of 0 is the whole extent; an empty extent has no units.
  const int64_t row[2] = {1, 1000}, row_grain[2] = {0, 64};
  g = SplitForThreads(row, row_grain, 2);
  EXPECT_EQ(g.units[0], 1);
  EXPECT_EQ(g.units[1], 16);
  EXPECT_EQ(g.splits[1], 2);
  const int64_t empty[2] = {0, 5}, empty_grain[2] = {4, 1};
  EXPECT_EQ(SplitForThreads(empty, empty_grain, 2).units[0], 0);
}

TEST(LingeringTeam, WithoutLingeringWorkersTryRunRunsNothing) {
  auto team = std::make_shared<LingeringTeam>(1, milliseconds(10), std::chrono::microseconds(20));
  int ran = 0;
  EXPECT_FALSE(team->TryRun(4, [&](int) { ++ran; }));
  EXPECT_FALSE(team->TryRun(1, [&](int) { ++ran; })) << "one piece needs no team";
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(team->loops_run(), 0);
}

// A worker lingers in a oneTBB arena, takes the pieces the caller leaves, and leaves when a
// loop runs through oneTBB (in any arena) or the team stops, long before its linger is up.
TEST(LingeringTeam, TakesPiecesAndLeavesForOneTbbLoopsAndAtStop) {
  tbb::task_arena arena(2);
  auto team = std::make_shared<LingeringTeam>(1, seconds(30), std::chrono::microseconds(20));
  const auto enqueue = [&](std::function<void()> task) { arena.enqueue(std::move(task)); };
  team->KeepLingering(enqueue);
  ASSERT_TRUE(WaitFor([&] { return team->lingering() == 1; }, seconds(10)));
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::vector<std::atomic<int>> hits(8);
  ASSERT_TRUE(team->TryRun(8, [&](int p) {
    SpinFor(std::chrono::microseconds(2000));
    hits[p].fetch_add(1);
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
  }));
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_EQ(threads.size(), 2u) << "the worker took some of the 8 pieces of 2 ms";
  EXPECT_EQ(team->loops_run(), 1);
  EXPECT_EQ(team->lingering(), 1) << "still there for the next loop";
  {
    // A loop through oneTBB in another arena: oneTBB's workers serve every arena.
    auto other = std::make_shared<LingeringTeam>(1, seconds(30), std::chrono::microseconds(20));
    LingeringTeam::OneTbbLoop loop(other.get());
    EXPECT_TRUE(WaitFor([&] { return team->unfinished() == 0; }, seconds(5)));
    EXPECT_EQ(team->lingering(), 0);
    team->KeepLingering(enqueue);
    EXPECT_EQ(team->unfinished(), 0) << "no worker lingers while a oneTBB loop runs";
  }
  team->KeepLingering(enqueue);
  ASSERT_TRUE(WaitFor([&] { return team->lingering() == 1; }, seconds(10)));
  team->Stop();
  EXPECT_TRUE(WaitFor([&] { return team->unfinished() == 0; }, seconds(5)));
  EXPECT_EQ(team->lingering(), 0);
  team->KeepLingering(enqueue);
  EXPECT_EQ(team->unfinished(), 0) << "none after Stop";
}

// Workers on plain threads (no oneTBB frames, which the tsan preset's suppressions skip): their
// plain writes in pieces are the caller's to read when TryRun returns, loop after loop.
TEST(LingeringTeam, PiecesWrittenByWorkersAreVisibleToTheCaller) {
  auto team = std::make_shared<LingeringTeam>(2, seconds(30), std::chrono::microseconds(20));
  std::vector<std::thread> threads;
  team->KeepLingering([&](std::function<void()> task) { threads.emplace_back(std::move(task)); });
  ASSERT_EQ(threads.size(), 2u);
  ASSERT_TRUE(WaitFor([&] { return team->lingering() == 2; }, seconds(10)));
  constexpr int kPieces = 3, kPerPiece = 64;
  std::vector<int> values(kPieces * kPerPiece, 0);  // plain ints: TSan checks the hand-over
  int64_t on_workers = 0;
  for (int loop = 1; loop <= 500; ++loop) {
    std::atomic<int> by_workers{0};
    const std::thread::id caller = std::this_thread::get_id();
    ASSERT_TRUE(team->TryRun(kPieces, [&](int p) {
      for (int i = 0; i < kPerPiece; ++i) values[p * kPerPiece + i] = loop * 1000 + p;
      if (std::this_thread::get_id() != caller) by_workers.fetch_add(1);
    }));
    for (int p = 0; p < kPieces; ++p) {
      for (int i = 0; i < kPerPiece; ++i) ASSERT_EQ(values[p * kPerPiece + i], loop * 1000 + p);
    }
    on_workers += by_workers.load();
  }
  EXPECT_GT(on_workers, 0) << "the workers took pieces";
  EXPECT_EQ(team->loops_run(), 500);
  team->Stop();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(team->unfinished(), 0);
  EXPECT_EQ(team->lingering(), 0);
}

TEST(LingeringTeam, WorkersLeaveWhenTheirLingerIsUp) {
  ThreadArena arena(2);
  const int64_t extent[2] = {64, 1}, grain[2] = {1, 1};
  std::atomic<int> units{0};
  arena.ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
    units.fetch_add(static_cast<int>(hi[0] - lo[0]));
  });
  EXPECT_EQ(units.load(), 64);
  // Lingers for ThreadArena::kWorkerLinger (0.2 ms) after the loop, then leaves.
  EXPECT_TRUE(WaitFor([&] { return arena.lingering_workers() == 0; }, seconds(10)));
}

// Back to back, loops reach the lingering worker: both threads run pieces of one loop.
TEST(ThreadArenaLingering, BackToBackLoopsRunOnTheLingeringWorker) {
  ThreadArena arena(2);
  const int64_t extent[2] = {4, 6}, grain[2] = {1, 1};
  bool both = false;
  const auto until = steady_clock::now() + seconds(20);
  while (!both && steady_clock::now() < until) {
    const int64_t before = arena.loops_on_lingering_workers();
    std::mutex mu;
    std::set<std::thread::id> threads;
    std::vector<std::atomic<int>> hits(24);
    arena.ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
      SpinFor(std::chrono::microseconds(100));
      for (int64_t r = lo[0]; r < hi[0]; ++r) {
        for (int64_t c = lo[1]; c < hi[1]; ++c) hits[r * 6 + c].fetch_add(1);
      }
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
    both = arena.loops_on_lingering_workers() > before && threads.size() == 2;
  }
  EXPECT_TRUE(both) << "no loop in 20 s ran on the caller and a lingering worker";
}

// A loop is cut into the same pieces whether oneTBB or the lingering workers run it, so its
// results do not depend on the path (the first loop finds no worker lingering).
TEST(ThreadArenaLingering, PiecesAreTheSameOnEitherPath) {
  ThreadArena arena(2);
  const int64_t extent[2] = {50, 7}, grain[2] = {3, 2};
  const auto pieces_of_a_loop = [&] {
    std::mutex mu;
    std::set<std::vector<int64_t>> pieces;
    arena.ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
      std::lock_guard<std::mutex> lock(mu);
      pieces.insert({lo[0], lo[1], hi[0], hi[1]});
    });
    return pieces;
  };
  const std::set<std::vector<int64_t>> first = pieces_of_a_loop();
  ASSERT_EQ(arena.loops_on_lingering_workers(), 0) << "the first loop ran through oneTBB";
  const std::set<std::vector<int64_t>> halves = {{0, 0, 24, 7}, {24, 0, 50, 7}};
  EXPECT_EQ(first, halves) << "17 units of 3 rows: 8 and 9 of them";
  const auto until = steady_clock::now() + seconds(20);
  while (arena.loops_on_lingering_workers() == 0 && steady_clock::now() < until) {
    ASSERT_EQ(pieces_of_a_loop(), first);
  }
  EXPECT_GT(arena.loops_on_lingering_workers(), 0);
}

// While one caller keeps the worker lingering with loop after loop, two other callers' loops
// (through oneTBB whenever the team is busy) each cover their range once, and finish.
TEST(ThreadArenaLingering, CallersBesideABusyOneCoverTheirRangesAndFinish) {
  ThreadArena arena(2);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> busy_loops{0};
  std::thread busy([&] {
    const int64_t extent[2] = {2, 1}, grain[2] = {1, 1};
    while (!stop.load()) {
      arena.ParallelFor2D(extent, grain, [&](const int64_t*, const int64_t*) {
        SpinFor(std::chrono::microseconds(20));
      });
      busy_loops.fetch_add(1);
    }
  });
  ASSERT_TRUE(WaitFor([&] { return busy_loops.load() > 100; }, seconds(20)));
  const auto start = steady_clock::now();
  std::atomic<int> wrong{0};
  std::vector<std::thread> others;
  for (int t = 0; t < 2; ++t) {
    others.emplace_back([&] {
      const int64_t extent[2] = {97, 13}, grain[2] = {3, 4};
      for (int rep = 0; rep < 50; ++rep) {
        std::vector<std::atomic<int>> hits(97 * 13);
        arena.ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
          SpinFor(std::chrono::microseconds(5));
          for (int64_t r = lo[0]; r < hi[0]; ++r) {
            for (int64_t c = lo[1]; c < hi[1]; ++c) hits[r * 13 + c].fetch_add(1);
          }
        });
        for (const auto& h : hits) wrong += h.load() != 1;
      }
    });
  }
  for (std::thread& t : others) t.join();
  const double seconds_taken = std::chrono::duration<double>(steady_clock::now() - start).count();
  stop.store(true);
  busy.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LT(seconds_taken, 20.0);
}

// Arenas made and dropped right after a loop, workers still lingering: no hang, no leak.
TEST(ThreadArenaLingering, AnArenaDroppedWhileItsWorkersLingerEndsThem) {
  for (int i = 0; i < 50; ++i) {
    ThreadArena arena(i % 2 == 0 ? 2 : 3);
    const int64_t extent[2] = {8, 8}, grain[2] = {1, 1};
    std::atomic<int> units{0};
    for (int rep = 0; rep < 3; ++rep) {
      arena.ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
        units.fetch_add(static_cast<int>((hi[0] - lo[0]) * (hi[1] - lo[1])));
      });
    }
    ASSERT_EQ(units.load(), 3 * 64);
  }
}

}  // namespace
}  // namespace pto::device
