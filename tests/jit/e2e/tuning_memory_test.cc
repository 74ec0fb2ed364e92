// Memory stays flat however long tuning runs: 1,000 candidates of a kernel
// are built, checked, timed and dropped, and afterwards the process's resident memory has not
// grown with them, and the compiler's memo holds only what is live. Each losing candidate's
// plan is freed at the end of its trial, its code with it (one ORC ResourceTracker per kernel);
// the search is repeated (exhaustive, space after space) so code is compiled and freed again.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/device_info.h"
#include "device/release_memory.h"
#include "device/sanitizers.h"
#include "device/thread_arena.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "jit/trace.h"
#include "jit/tuning/kernel_tuning_job.h"
#include "jit/tuning/tuning_program.h"
#include "tests/jit/e2e/test_util.h"

#if PTO_UNDER_ASAN
// In GCC's and clang's ASan runtimes; GCC 12 ships no header that declares it.
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace pto {
namespace {

// The memory that stays with the process. Under ASan, resident memory grows with its shadow
// and quarantine whatever pto frees, so the heap that is still allocated is measured instead
// (it leaves out the JIT's mmapped code, which the other builds cover).
int64_t MemoryInUse() {
#if PTO_UNDER_ASAN
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
#endif
}

// The tuning program of `program` over static `shapes` (its kernels' calls: `calls`).
std::shared_ptr<jit::TuningProgram> StaticTuningProgram(
    const std::string& name, const TraceFn& program,
    const std::vector<std::vector<int64_t>>& shapes, size_t calls) {
  std::vector<jit::TraceInput> inputs;
  for (const auto& s : shapes) {
    jit::TraceInput in;
    for (int64_t d : s) in.shape.push_back(ir::SymExpr(d));
    inputs.push_back(in);
  }
  absl::StatusOr<ir::Graph> traced = jit::Trace(program, inputs, {});
  EXPECT_TRUE(traced.ok()) << traced.status();
  absl::StatusOr<jit::LoweredProgram> lowered = testing::LowerStatic(program, shapes);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!traced.ok() || !lowered.ok()) return nullptr;
  EXPECT_EQ(lowered->tiles.calls.size(), calls);
  return std::make_shared<jit::TuningProgram>(name, "static", *traced, jit::ShapeClass{}, *lowered,
                                              std::vector<int64_t>{});
}

// The cheapest measurement that still runs every part of a trial.
jit::KernelTuningJobOptions CheapestTrials() {
  jit::KernelTuningJobOptions options;
  options.min_sample_seconds = 0;
  options.compare.warmup_runs = 0;
  options.compare.pairs = 1;
  options.measure.warmup_runs = 0;
  options.measure.min_runs = 1;
  options.measure.max_runs = 1;
  options.rotation_bytes = 0;
  return options;
}

TEST(TuningMemory, StaysFlatOverAThousandCandidates) {
  const TraceFn program = [](std::span<const Value> v) {
    return std::vector<Value>{gelu(v[0] * v[1] + v[0])};
  };
  const std::shared_ptr<jit::TuningProgram> tuning =
      StaticTuningProgram("memory", program, {{64, 96}, {64, 96}}, 1);
  ASSERT_NE(tuning, nullptr);
  const device::DeviceInfo device = device::DetectHost();
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device);
  ASSERT_TRUE(compiler.ok());
  device::ThreadArena threads(2);
  jit::KernelTuningJobOptions options = CheapestTrials();
  options.strategy = tuner::StrategyKind::kExhaustive;
  options.max_trials = 0;  // the whole space

  int64_t trials = 0, failed = 0;
  int64_t baseline_bytes = 0;
  int searches = 0;
  size_t max_memo = 0;
  while (trials < 1000) {
    jit::KernelTuningJob job(tuning, 0, compiler->get(), device, &threads, options, nullptr,
                             nullptr, nullptr);
    std::atomic<bool> stop{false};
    while (!job.Step(stop)) {
    }
    job.Finish(tuner::JobEnd::kCompleted);
    ASSERT_GT(job.state().trials, 10) << job.state().ended;
    trials += job.state().trials;
    failed += job.state().failed;
    max_memo = std::max(max_memo, (*compiler)->memo_size());
    // The first search brings every code path, allocator arena and LLVM table in.
    if (++searches == 1) baseline_bytes = MemoryInUse();
  }
  const int64_t growth = MemoryInUse() - baseline_bytes;
  std::printf(
      "[ memory   ] %lld candidates in %d searches (%lld failed): memory in use %+.1f MiB "
      "after the first search; compiler memo at most %zu entries; %lld LLVM compiles\n",
      static_cast<long long>(trials), searches, static_cast<long long>(failed), growth / 1048576.0,
      max_memo, static_cast<long long>((*compiler)->codegen_runs()));
  EXPECT_EQ(failed, 0);
  EXPECT_LT(growth, int64_t{16} << 20);
  EXPECT_LE(max_memo, 128u);
  // Code was compiled again in every search: freed in between.
  EXPECT_GE((*compiler)->codegen_runs(), searches);
}

// A tuning job runs its candidates' whole program, whose intermediates (here a 32 MiB product
// between two matmuls) go into a buffer of the job's, not into the tuning thread's own arena:
// once the job is gone, the thread that ran it holds none of that memory.
TEST(TuningMemory, AJobsIntermediatesLeaveWithIt) {
  const TraceFn program = [](std::span<const Value> v) {
    return std::vector<Value>{matmul(matmul(v[0], v[1]), v[2])};
  };
  const std::shared_ptr<jit::TuningProgram> tuning =
      StaticTuningProgram("intermediates", program, {{2048, 8}, {8, 4096}, {4096, 8}}, 2);
  ASSERT_NE(tuning, nullptr);
  const device::DeviceInfo device = device::DetectHost();
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device);
  ASSERT_TRUE(compiler.ok());
  jit::KernelTuningJobOptions options = CheapestTrials();
  options.max_trials = 3;
  auto run_job = [&](int call) {
    jit::KernelTuningJob job(tuning, call, compiler->get(), device, nullptr, options, nullptr,
                             nullptr, nullptr);
    std::atomic<bool> stop{false};
    while (!job.Step(stop)) {
    }
    job.Finish(tuner::JobEnd::kCompleted);
    EXPECT_GT(job.state().trials, 0) << job.state().ended;
  };
  // The first job brings LLVM's tables and the code paths in, on this thread.
  run_job(1);
  device::ReleaseFreedHeapMemory();
  int64_t growth = 0;
  // A thread of its own, whose arena starts empty, as a tuning thread's does.
  std::thread([&] {
    const int64_t before = MemoryInUse();
    run_job(0);
    device::ReleaseFreedHeapMemory();
    growth = MemoryInUse() - before;
  }).join();
  std::printf("[ memory   ] a tuning job over 32 MiB of intermediates: %+.1f MiB in use after it\n",
              growth / 1048576.0);
  EXPECT_LT(growth, int64_t{16} << 20);
}

}  // namespace
}  // namespace pto
