// Plan::Run (jit/plan.h) over hand-built plans whose kernels are plain C++ functions with the
// kernel ABI: kernel symbols from the call's (divided, or constant), buffers bound by kind,
// arena slots sized from their largest member at the call's values and laid out 64-byte
// aligned, grids evaluated and split on grain multiples only when the work reaches
// parallel_threshold, scratch, kernel_seconds, size overflow, a RunObserver (kernels, pieces, its
// errors), prepacked constant operands packed once per source and shared by SharePackedOf, and
// the single launch of a one-kernel static plan (the same launches as the general path).
#include "jit/plan.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/thread_arena.h"
#include "gtest/gtest.h"

namespace pto::jit {
namespace {

using ir::BufferKind;
using ir::SymExpr;

// What a recording kernel saw in one launch.
struct Launch {
  int64_t lo[2], hi[2];
  std::vector<void*> buffers;  // its slots after the first
  std::vector<int64_t> symbols;
  bool scratch = false;
};

// Passed to a recording kernel as its slot 0 (an input of the plan).
struct Recorder {
  int buffers = 0;  // slots to record after slot 0
  int symbols = 0;
  std::mutex mu;
  std::vector<Launch> launches;
};

void RecordLaunch(const pto_kernel_args* args, const int64_t lo[2], const int64_t hi[2],
                  void* scratch) {
  auto* r = static_cast<Recorder*>(args->buffers[0]);
  Launch l{{lo[0], lo[1]}, {hi[0], hi[1]}, {}, {}, scratch != nullptr};
  for (int b = 1; b <= r->buffers; ++b) l.buffers.push_back(args->buffers[b]);
  for (int s = 0; s < r->symbols; ++s) l.symbols.push_back(args->symbols[s]);
  std::lock_guard<std::mutex> lock(r->mu);
  r->launches.push_back(std::move(l));
}

// Slot 0: out[i] = i over rows [lo, hi) of a {n, 1} grid.
void FillIndex(const pto_kernel_args* args, const int64_t lo[2], const int64_t hi[2], void*) {
  auto* out = static_cast<float*>(args->buffers[0]);
  for (int64_t i = lo[0]; i < hi[0]; ++i) out[i] = static_cast<float>(i);
}

// Slot 1 = 2 * slot 0 over rows [lo, hi).
void Double(const pto_kernel_args* args, const int64_t lo[2], const int64_t hi[2], void*) {
  const auto* in = static_cast<const float*>(args->buffers[0]);
  auto* out = static_cast<float*>(args->buffers[1]);
  for (int64_t i = lo[0]; i < hi[0]; ++i) out[i] = 2 * in[i];
}

void Sleep20ms(const pto_kernel_args*, const int64_t*, const int64_t*, void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

PlanKernel Kernel(pto_kernel_fn fn, std::vector<BufferRef> buffers, SymExpr rows = 1,
                  SymExpr cols = 1) {
  PlanKernel k;
  k.fn = fn;
  k.name = "test";
  k.grid = {std::move(rows), std::move(cols)};
  k.buffers = std::move(buffers);
  return k;
}

constexpr BufferRef kRecorder{BufferKind::kInput, 0};

TEST(PlanTest, KernelSymbolsComeFromTheCallsOrConstant) {
  Plan plan;
  // Kernel symbols: call symbol 0, call symbol 1, the constant 7.
  plan.symbols = {{0, 0}, {1, 0}, {-1, 7}};
  plan.kernels.push_back(Kernel(RecordLaunch, {kRecorder}, SymExpr::Symbol(0),
                                SymExpr::Symbol(1) * SymExpr::Symbol(2)));
  Recorder r;
  r.symbols = 3;
  void* inputs[] = {&r};
  const int64_t call[] = {5, 8};
  ASSERT_TRUE(plan.Run(call, inputs, nullptr, nullptr).ok());
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].symbols, (std::vector<int64_t>{5, 8, 7}));
  // The grid, at the kernel's symbol values: one launch over all of it.
  EXPECT_EQ(r.launches[0].lo[0], 0);
  EXPECT_EQ(r.launches[0].lo[1], 0);
  EXPECT_EQ(r.launches[0].hi[0], 5);
  EXPECT_EQ(r.launches[0].hi[1], 56);
}

TEST(PlanTest, BuffersAreBoundByKind) {
  Plan plan;
  plan.slot_sizes = {{SymExpr(16)}};
  plan.kernels.push_back(Kernel(RecordLaunch, {kRecorder,
                                               {BufferKind::kOutput, 1},
                                               {BufferKind::kInput, 1},
                                               {BufferKind::kOutput, 0},
                                               {BufferKind::kTemp, 0}}));
  Recorder r;
  r.buffers = 4;
  float in1[4], out0[4], out1[4];
  void* inputs[] = {&r, in1};
  void* outputs[] = {out0, out1};
  ASSERT_TRUE(plan.Run({}, inputs, outputs, nullptr).ok());
  ASSERT_EQ(r.launches.size(), 1u);
  const std::vector<void*>& b = r.launches[0].buffers;
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0], out1);
  EXPECT_EQ(b[1], in1);
  EXPECT_EQ(b[2], out0);
  EXPECT_NE(b[3], nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b[3]) % 64, 0u);
}

// The byte offsets of temp slots 1 and 2 from slot 0 at these call symbols.
std::vector<int64_t> SlotOffsets(const Plan& plan, std::vector<int64_t> call) {
  Recorder r;
  r.buffers = 3;
  void* inputs[] = {&r};
  EXPECT_TRUE(plan.Run(call, inputs, nullptr, nullptr).ok());
  if (r.launches.size() != 1) return {};
  const std::vector<void*>& b = r.launches[0].buffers;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b[0]) % 64, 0u);
  return {static_cast<char*>(b[1]) - static_cast<char*>(b[0]),
          static_cast<char*>(b[2]) - static_cast<char*>(b[0])};
}

TEST(PlanTest, SlotsTakeTheirLargestMemberAtTheCallsSizes) {
  Plan plan;
  plan.symbols = {{0, 0}};
  const SymExpr n = SymExpr::Symbol(0);
  plan.slot_sizes = {{n}, {SymExpr(10), n * 2}, {SymExpr(3)}};
  plan.kernels.push_back(
      Kernel(RecordLaunch,
             {kRecorder, {BufferKind::kTemp, 0}, {BufferKind::kTemp, 1}, {BufferKind::kTemp, 2}}));
  // n = 100: 400 bytes (448 aligned), then max(40, 800) = 800 bytes (832 aligned).
  EXPECT_EQ(SlotOffsets(plan, {100}), (std::vector<int64_t>{448, 448 + 832}));
  // n = 4: 16 bytes, then max(40, 32) = 40 bytes: 64 each once aligned.
  EXPECT_EQ(SlotOffsets(plan, {4}), (std::vector<int64_t>{64, 128}));
}

// Two kernels over a {n, 1} grid in grains of 8 rows, split at any size: out = 2 * index,
// through an arena slot of n floats.
Plan FillThenDouble() {
  Plan plan;
  plan.symbols = {{0, 0}};
  const SymExpr n = SymExpr::Symbol(0);
  plan.slot_sizes = {{n}};
  plan.kernels.push_back(Kernel(FillIndex, {{BufferKind::kTemp, 0}}, n));
  plan.kernels.push_back(Kernel(Double, {{BufferKind::kTemp, 0}, {BufferKind::kOutput, 0}}, n));
  plan.parallel_threshold = 0;
  for (PlanKernel& k : plan.kernels) k.grain[0] = 8;
  return plan;
}

TEST(PlanTest, ValuesFlowThroughTheArena) {
  const Plan plan = FillThenDouble();
  device::ThreadArena two(2);
  for (device::ThreadArena* threads : {static_cast<device::ThreadArena*>(nullptr), &two}) {
    std::vector<float> out(100, -1);
    void* outputs[] = {out.data()};
    const int64_t call[] = {100};
    ASSERT_TRUE(plan.Run(call, nullptr, outputs, threads).ok());
    for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], 2.f * i) << i;
  }
}

// Records what a RunObserver is told; fails AfterKernel of kernel `fail_after` when >= 0.
class RecordingObserver : public RunObserver {
 public:
  explicit RecordingObserver(bool pieces, int fail_after = -1)
      : pieces_(pieces), fail_after_(fail_after) {}
  absl::Status BeforeKernel(const KernelLaunch& launch) override {
    events.push_back(absl::StrCat("before ", launch.index, " extent ", launch.extent[0], "x",
                                  launch.extent[1], " buffers ", launch.buffers.size()));
    return absl::OkStatus();
  }
  absl::Status AfterKernel(const KernelLaunch& launch) override {
    const float* out = static_cast<const float*>(launch.buffers.back());
    events.push_back(absl::StrCat("after ", launch.index, " last ", out[launch.extent[0] - 1]));
    if (launch.index == fail_after_) return absl::DataLossError("observer stops the run");
    return absl::OkStatus();
  }
  bool wants_pieces() const override { return pieces_; }
  void OnPiece(int kernel, const int64_t lo[2], const int64_t hi[2], int thread,
               std::chrono::steady_clock::time_point start,
               std::chrono::steady_clock::time_point end) override {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_LE(start, end);
    EXPECT_GE(thread, 0);
    rows[kernel] += hi[0] - lo[0];
    ++piece_count;
  }
  std::vector<std::string> events;
  std::mutex mu;
  int64_t rows[2] = {0, 0};
  int piece_count = 0;

 private:
  bool pieces_;
  int fail_after_;
};

TEST(PlanTest, AnObserverSeesEachKernelAndEachPieceOfItsGrid) {
  const Plan plan = FillThenDouble();
  device::ThreadArena two(2);
  for (device::ThreadArena* threads : {static_cast<device::ThreadArena*>(nullptr), &two}) {
    for (bool pieces : {false, true}) {
      std::vector<float> out(100, -1);
      void* outputs[] = {out.data()};
      const int64_t call[] = {100};
      RecordingObserver observer(pieces);
      ASSERT_TRUE(plan.Run(call, nullptr, outputs, threads, nullptr, &observer).ok());
      // AfterKernel sees every piece's writes.
      EXPECT_EQ(observer.events,
                (std::vector<std::string>{"before 0 extent 100x1 buffers 1", "after 0 last 99",
                                          "before 1 extent 100x1 buffers 2", "after 1 last 198"}));
      EXPECT_EQ(observer.rows[0], pieces ? 100 : 0);
      EXPECT_EQ(observer.rows[1], pieces ? 100 : 0);
      if (pieces && threads != nullptr) {
        EXPECT_GT(observer.piece_count, 2);
      }
    }
  }
}

TEST(PlanTest, AnObserversErrorEndsTheRun) {
  Plan plan;
  plan.kernels.push_back(Kernel(FillIndex, {{BufferKind::kOutput, 0}}, SymExpr(4)));
  plan.kernels.push_back(
      Kernel(Double, {{BufferKind::kOutput, 0}, {BufferKind::kOutput, 1}}, SymExpr(4)));
  std::vector<float> out0(4, -1), out1(4, -1);
  void* outputs[] = {out0.data(), out1.data()};
  RecordingObserver observer(false, /*fail_after=*/0);
  const absl::Status s = plan.Run({}, nullptr, outputs, nullptr, nullptr, &observer);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "observer stops the run");
  EXPECT_EQ(observer.events.size(), 2u);  // the second kernel never started
  EXPECT_EQ(out1[0], -1);
}

TEST(PlanTest, AnObserverPairForwardsToBothAndStopsAtTheFirstError) {
  RecordingObserver pieces(true), plain(false), failing(false, /*fail_after=*/0);
  EXPECT_EQ(RunObserverPair(nullptr, nullptr).single_or_self(), nullptr);
  EXPECT_EQ(RunObserverPair(&pieces, nullptr).single_or_self(), &pieces);
  EXPECT_EQ(RunObserverPair(nullptr, &plain).single_or_self(), &plain);
  RunObserverPair both(&pieces, &plain);
  ASSERT_EQ(both.single_or_self(), &both);
  EXPECT_TRUE(both.wants_pieces());
  Plan plan;
  plan.kernels.push_back(Kernel(FillIndex, {{BufferKind::kOutput, 0}}, SymExpr(4)));
  plan.kernels.push_back(
      Kernel(Double, {{BufferKind::kOutput, 0}, {BufferKind::kOutput, 1}}, SymExpr(4)));
  std::vector<float> out0(4, -1), out1(4, -1);
  void* outputs[] = {out0.data(), out1.data()};
  ASSERT_TRUE(plan.Run({}, nullptr, outputs, nullptr, nullptr, &both).ok());
  EXPECT_EQ(pieces.events, plain.events);
  EXPECT_EQ(plain.events.size(), 4u);
  EXPECT_EQ(pieces.rows[0] + pieces.rows[1], 8);  // only the observer that wants pieces
  EXPECT_EQ(plain.piece_count, 0);
  // The first's error ends the run before the second sees that kernel's end.
  RecordingObserver second(false);
  RunObserverPair stops(&failing, &second);
  const absl::Status s = plan.Run({}, nullptr, outputs, nullptr, nullptr, &stops);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(second.events, (std::vector<std::string>{"before 0 extent 4x1 buffers 1"}));
}

// The launches of one recording kernel over a {rows, 1} grid in grains of `grain` rows.
std::vector<Launch> Launches(int64_t rows, int64_t grain, int64_t threshold,
                             device::ThreadArena* threads, int64_t scratch_bytes = 0) {
  Plan plan;
  plan.parallel_threshold = threshold;
  PlanKernel k = Kernel(RecordLaunch, {kRecorder}, rows);
  k.grain[0] = grain;
  k.grain[1] = 0;
  k.scratch_bytes = scratch_bytes;
  plan.kernels.push_back(std::move(k));
  Recorder r;
  void* inputs[] = {&r};
  EXPECT_TRUE(plan.Run({}, inputs, nullptr, threads).ok());
  std::sort(r.launches.begin(), r.launches.end(),
            [](const Launch& a, const Launch& b) { return a.lo[0] < b.lo[0]; });
  return std::move(r.launches);
}

TEST(PlanTest, WorkBelowTheThresholdRunsAsOneLaunch) {
  device::ThreadArena threads(2);
  // 64 rows of work 1: below the default threshold.
  const std::vector<Launch> l = Launches(64, 8, Plan{}.parallel_threshold, &threads);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].lo[0], 0);
  EXPECT_EQ(l[0].hi[0], 64);
  EXPECT_EQ(l[0].hi[1], 1);
}

TEST(PlanTest, WorkAtTheThresholdSplitsOnGrainMultiples) {
  device::ThreadArena threads(2);
  const std::vector<Launch> l = Launches(64, 8, 64, &threads);
  ASSERT_GE(l.size(), 2u);
  int64_t next = 0;
  for (const Launch& x : l) {
    EXPECT_EQ(x.lo[0], next);
    EXPECT_EQ(x.lo[0] % 8, 0);
    EXPECT_GT(x.hi[0], x.lo[0]);
    EXPECT_EQ(x.lo[1], 0);
    EXPECT_EQ(x.hi[1], 1);
    next = x.hi[0];
  }
  EXPECT_EQ(next, 64);
  // One thread, no arena, or a grid of one grain: one launch whatever the work.
  device::ThreadArena one(1);
  EXPECT_EQ(Launches(64, 8, 0, &one).size(), 1u);
  EXPECT_EQ(Launches(64, 8, 0, nullptr).size(), 1u);
  EXPECT_EQ(Launches(64, 64, 0, &threads).size(), 1u);
  EXPECT_EQ(Launches(64, 0, 0, &threads).size(), 1u);
}

// The caller's CPUs after each kernel, as the run's caller sees them.
class AffinityObserver : public RunObserver {
 public:
  absl::Status AfterKernel(const KernelLaunch&) override {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return absl::InternalError("getaffinity");
    counts.push_back(CPU_COUNT(&set));
    if (CPU_COUNT(&set) == 1) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
      }
    }
    return absl::OkStatus();
  }
  std::vector<int> counts;
  std::vector<int> cpus;  // the one CPU, after each kernel run on one
};

// Runs recording kernels of `rows` x 1 cells each, in grains of 8 rows, parallel from 64 cells
// and pinning the caller from 256, on `threads`; `observer` sees the caller after each.
absl::Status RunPinningPlan(std::vector<int64_t> rows, device::ThreadArena* threads,
                            AffinityObserver* observer) {
  Plan plan;
  plan.parallel_threshold = 64;
  plan.pin_caller_threshold = 256;
  for (int64_t n : rows) {
    PlanKernel k = Kernel(RecordLaunch, {kRecorder}, n);
    k.grain[0] = 8;
    k.grain[1] = 0;
    plan.kernels.push_back(std::move(k));
  }
  Recorder r;
  void* inputs[] = {&r};
  return plan.Run({}, inputs, nullptr, threads, nullptr, observer);
}

// On a pinning arena the caller is pinned at the first parallel kernel with at least
// pin_caller_threshold of work, for the rest of the run, and has its own affinity back after
// it.
TEST(PlanTest, TheCallerJoinsAPinningArenaAtTheFirstLongKernel) {
  device::ThreadArena threads(2, /*pin=*/true);
  cpu_set_t own;
  CPU_ZERO(&own);
  ASSERT_EQ(sched_getaffinity(0, sizeof own, &own), 0);
  AffinityObserver observer;
  ASSERT_TRUE(RunPinningPlan({64, 256, 64}, &threads, &observer).ok());
  const int all = CPU_COUNT(&own);
  const int pinned = threads.pins() ? 1 : all;
  // After the short kernel the caller is still free unless it ran on the worker's CPU, which
  // the next test covers; the long kernel pins it for the rest of the run.
  ASSERT_EQ(observer.counts.size(), 3u);
  EXPECT_EQ(observer.counts[1], pinned);
  EXPECT_EQ(observer.counts[2], pinned);
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&own, &after));
  EXPECT_EQ(threads.pins(), all >= 2);
}

// A caller on a worker's CPU joins slot 0's CPU at its first parallel kernel, however short,
// rather than share a core with the worker; afterwards its own affinity is back.
TEST(PlanTest, ACallerOnAWorkersCpuMovesAtAShortKernel) {
  device::ThreadArena threads(2, /*pin=*/true);
  if (!threads.pins()) {
    EXPECT_LT(device::ThreadArena::AllowedCpuCount(), 2);
    return;
  }
  cpu_set_t own;
  CPU_ZERO(&own);
  ASSERT_EQ(sched_getaffinity(0, sizeof own, &own), 0);
  cpu_set_t on_worker;
  CPU_ZERO(&on_worker);
  CPU_SET(threads.cpus()[1], &on_worker);
  ASSERT_EQ(sched_setaffinity(0, sizeof on_worker, &on_worker), 0);
  EXPECT_TRUE(threads.OnWorkerCpu());
  AffinityObserver observer;
  ASSERT_TRUE(RunPinningPlan({64}, &threads, &observer).ok());
  EXPECT_EQ(observer.counts, std::vector<int>{1});
  EXPECT_EQ(observer.cpus, std::vector<int>{threads.cpus()[0]});
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&on_worker, &after));
  ASSERT_EQ(sched_setaffinity(0, sizeof own, &own), 0);
}

TEST(PlanTest, EmptyGridLaunchesNothing) { EXPECT_TRUE(Launches(0, 8, 0, nullptr).empty()); }

TEST(PlanTest, ScratchOnlyWhenAsked) {
  const std::vector<Launch> with = Launches(4, 0, 0, nullptr, 4096);
  ASSERT_EQ(with.size(), 1u);
  EXPECT_TRUE(with[0].scratch);
  const std::vector<Launch> without = Launches(4, 0, 0, nullptr, 0);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_FALSE(without[0].scratch);
}

TEST(PlanTest, KernelSecondsTimeEachKernel) {
  Plan plan;
  Recorder r;
  plan.kernels.push_back(Kernel(RecordLaunch, {kRecorder}));
  plan.kernels.push_back(Kernel(Sleep20ms, {}));
  void* inputs[] = {&r};
  double seconds[2] = {-1, -1};
  ASSERT_TRUE(plan.Run({}, inputs, nullptr, nullptr, seconds).ok());
  EXPECT_GE(seconds[0], 0);
  EXPECT_LT(seconds[0], 0.015);
  EXPECT_GE(seconds[1], 0.019);
}

TEST(PlanTest, SlotSizesThatOverflowAreRefused) {
  Plan plan;
  plan.symbols = {{0, 0}};
  const SymExpr n = SymExpr::Symbol(0);
  plan.slot_sizes = {{n * n * n}};
  plan.kernels.push_back(Kernel(RecordLaunch, {kRecorder, {BufferKind::kTemp, 0}}));
  Recorder r;
  r.buffers = 1;
  void* inputs[] = {&r};
  for (int64_t value : {int64_t{1} << 22, int64_t{1} << 20}) {  // 2^66; 2^60 elements
    const int64_t call[] = {value};
    const absl::Status s = plan.Run(call, inputs, nullptr, nullptr);
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_NE(s.message().find("overflows"), std::string::npos) << s;
  }
  EXPECT_TRUE(r.launches.empty());
  const int64_t small[] = {4};
  EXPECT_TRUE(plan.Run(small, inputs, nullptr, nullptr).ok());
}

// B [2, 5] (K x N, row-major) packed in column blocks of 2: the two full blocks, each block's
// K rows contiguous; column 4 stays in the input.
constexpr ir::PackedB kLayout{
    .k = 2, .n = 5, .offset = 0, .stride_k = 5, .stride_n = 1, .block = 2};

// The packed copy a one-kernel plan over `layout` passes its kernel for input 1 = `b`.
const float* PackedArgument(const Plan& plan, float* b) {
  Recorder r;
  r.buffers = 1;
  void* inputs[] = {&r, b};
  EXPECT_TRUE(plan.Run({}, inputs, nullptr, nullptr).ok());
  return r.launches.size() == 1 ? static_cast<const float*>(r.launches[0].buffers[0]) : nullptr;
}

Plan PackedPlan(int input, const ir::PackedB& layout) {
  Plan plan;
  plan.packed.emplace_back(input, layout);
  plan.kernels.push_back(Kernel(RecordLaunch, {kRecorder, {BufferKind::kPacked, 0}}));
  return plan;
}

TEST(PlanTest, PackedOperandIsPackedOncePerSource) {
  const Plan plan = PackedPlan(1, kLayout);
  float b[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float* packed = PackedArgument(plan, b);
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(kLayout.elements(), 8);
  EXPECT_EQ(std::vector<float>(packed, packed + 8), (std::vector<float>{0, 1, 5, 6, 2, 3, 7, 8}));
  // The same source: the same copy, not packed again (its changes are not seen).
  b[0] = 100;
  EXPECT_EQ(PackedArgument(plan, b), packed);
  EXPECT_EQ(packed[0], 0);
  // Another source has a copy of its own; the first is kept.
  float c[10] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const float* other = PackedArgument(plan, c);
  ASSERT_NE(other, packed);
  EXPECT_EQ(other[2], 15);
  EXPECT_EQ(PackedArgument(plan, b), packed);
}

TEST(PlanTest, SharePackedOfSharesOnlyTheSameInputAndLayout) {
  const Plan first = PackedPlan(1, kLayout);
  float b[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float* packed = PackedArgument(first, b);

  Plan same = PackedPlan(1, kLayout);
  same.SharePackedOf(first);
  EXPECT_EQ(PackedArgument(same, b), packed);

  ir::PackedB narrower = kLayout;
  narrower.block = 1;
  Plan other_layout = PackedPlan(1, narrower);
  other_layout.SharePackedOf(first);
  const float* repacked = PackedArgument(other_layout, b);
  EXPECT_NE(repacked, packed);
  EXPECT_EQ(std::vector<float>(repacked, repacked + 10),
            (std::vector<float>{0, 5, 1, 6, 2, 7, 3, 8, 4, 9}));

  Plan other_input = PackedPlan(2, kLayout);
  other_input.SharePackedOf(first);
  Recorder r;
  r.buffers = 1;
  void* inputs[] = {&r, nullptr, b};
  ASSERT_TRUE(other_input.Run({}, inputs, nullptr, nullptr).ok());
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_NE(r.launches[0].buffers[0], packed);
}

// A plan of one recording kernel over an {n, 1} grid, in grains of 8 rows, with the
// constant kernel symbols {3, 4} and buffers: the recorder, output 0, input 1.
Plan OneKernelPlan(SymExpr rows) {
  Plan plan;
  plan.symbols = {{-1, 3}, {-1, 4}};
  PlanKernel k =
      Kernel(RecordLaunch, {kRecorder, {BufferKind::kOutput, 0}, {BufferKind::kInput, 1}},
             std::move(rows));
  k.grain[0] = 8;
  k.grain[1] = 0;
  k.scratch_bytes = 64;
  plan.kernels.push_back(std::move(k));
  return plan;
}

// The launches of one run, sorted by their first row; `timed` asks for kernel_seconds, which
// takes the general path.
std::vector<Launch> RunRecorded(const Plan& plan, device::ThreadArena* threads, bool timed,
                                void* out, void* in) {
  Recorder r;
  r.buffers = 2;
  r.symbols = 2;
  void* inputs[] = {&r, in};
  void* outputs[] = {out};
  double seconds[1];
  EXPECT_TRUE(plan.Run({}, inputs, outputs, threads, timed ? seconds : nullptr).ok());
  std::sort(r.launches.begin(), r.launches.end(),
            [](const Launch& a, const Launch& b) { return a.lo[0] < b.lo[0]; });
  return std::move(r.launches);
}

TEST(PlanTest, SingleLaunchOnlyForOneStaticKernelOverInputsAndOutputs) {
  Plan plan = OneKernelPlan(64);
  plan.SetSingleLaunch();
  EXPECT_TRUE(plan.single.valid);
  EXPECT_EQ(plan.single.extent[0], 64);
  EXPECT_EQ(plan.single.extent[1], 1);
  EXPECT_EQ(plan.single.work, 64);
  EXPECT_EQ(plan.single.num_buffers, 3);
  EXPECT_EQ(plan.single.symbols[1], 4);

  Plan symbolic_grid = OneKernelPlan(SymExpr::Symbol(0));
  symbolic_grid.SetSingleLaunch();
  EXPECT_FALSE(symbolic_grid.single.valid);

  Plan call_symbol = OneKernelPlan(64);
  call_symbol.symbols[0] = {0, 0};
  call_symbol.SetSingleLaunch();
  EXPECT_FALSE(call_symbol.single.valid);

  Plan symbolic_work = OneKernelPlan(64);
  symbolic_work.kernels[0].work_per_cell = SymExpr::Symbol(1);
  symbolic_work.SetSingleLaunch();
  EXPECT_FALSE(symbolic_work.single.valid);

  Plan with_temp = OneKernelPlan(64);
  with_temp.slot_sizes = {{SymExpr(16)}};
  with_temp.kernels[0].buffers.push_back({BufferKind::kTemp, 0});
  with_temp.SetSingleLaunch();
  EXPECT_FALSE(with_temp.single.valid);

  Plan two = OneKernelPlan(64);
  two.kernels.push_back(two.kernels[0]);
  two.SetSingleLaunch();
  EXPECT_FALSE(two.single.valid);

  Plan too_many_symbols = OneKernelPlan(64);
  too_many_symbols.symbols.assign(Plan::SingleLaunch::kMaxSymbols + 1, {-1, 1});
  too_many_symbols.SetSingleLaunch();
  EXPECT_FALSE(too_many_symbols.single.valid);
}

TEST(PlanTest, ASingleLaunchRunsAsTheGeneralPathDoes) {
  device::ThreadArena threads(2);
  float out[4], in[4];
  for (const bool parallel : {false, true}) {
    Plan plan = OneKernelPlan(64);
    if (parallel) plan.parallel_threshold = 64;
    plan.SetSingleLaunch();
    ASSERT_TRUE(plan.single.valid);
    const std::vector<Launch> single = RunRecorded(plan, &threads, /*timed=*/false, out, in);
    const std::vector<Launch> general = RunRecorded(plan, &threads, /*timed=*/true, out, in);
    ASSERT_EQ(single.size(), general.size()) << "parallel " << parallel;
    EXPECT_EQ(single.size() > 1, parallel);
    for (size_t i = 0; i < single.size(); ++i) {
      EXPECT_EQ(single[i].lo[0], general[i].lo[0]);
      EXPECT_EQ(single[i].hi[0], general[i].hi[0]);
      EXPECT_EQ(single[i].hi[1], general[i].hi[1]);
      EXPECT_EQ(single[i].buffers, general[i].buffers);
      EXPECT_EQ(single[i].buffers, (std::vector<void*>{out, in}));
      EXPECT_EQ(single[i].symbols, (std::vector<int64_t>{3, 4}));
      EXPECT_TRUE(single[i].scratch);
    }
  }
  // An empty grid launches nothing either way.
  Plan empty = OneKernelPlan(0);
  empty.SetSingleLaunch();
  ASSERT_TRUE(empty.single.valid);
  EXPECT_TRUE(RunRecorded(empty, &threads, false, out, in).empty());
}

TEST(PlanTest, ASingleLaunchReadsAPackedOperandsCopy) {
  Plan plan = PackedPlan(1, kLayout);
  plan.SetSingleLaunch();
  ASSERT_TRUE(plan.single.valid);
  float b[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float* packed = PackedArgument(plan, b);
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(std::vector<float>(packed, packed + 8), (std::vector<float>{0, 1, 5, 6, 2, 3, 7, 8}));
}

}  // namespace
}  // namespace pto::jit
