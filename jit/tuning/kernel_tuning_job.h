// Tunes one kernel of a compiled shape class: a tuner::TuningJob the service steps through.
//
// Each step tries one candidate config proposed by the strategy:
//   1. the program with the kernel's config replaced is built into a Plan (only this kernel
//      compiles; the others are live already); a compile error is a failed trial;
//   2. the plan is checked against the ops/ reference at the class's smallest and largest
//      sizes and at one that is no multiple of the tiles (tuning_data.h), with a tolerance
//      widened to what the plan tuned from misses by (MeasureBaseline); a wrong answer is a
//      failed trial;
//   3. candidate and incumbent plans run interleaved (I C I C ... I) on rotated inputs at the
//      measured size, timing the kernel inside its program (Plan::Run's per-kernel times), and
//      the verdict rests on the median ratio (tuner/measure.h CompareInterleaved). A winner
//      becomes the incumbent and is published (the Function swaps a new Plan in).
// The strategy learns each trial's time as ratio x the incumbent's time. Losing candidates'
// plans and code are freed at the end of their step.
#ifndef PTO_JIT_TUNING_KERNEL_TUNING_JOB_H_
#define PTO_JIT_TUNING_KERNEL_TUNING_JOB_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "device/aligned_buffer.h"
#include "device/epoch.h"
#include "device/thread_arena.h"
#include "device/yield_point.h"
#include "jit/ir/tile_ir.h"
#include "jit/kernel_compiler.h"
#include "jit/logger.h"
#include "jit/plan.h"
#include "jit/tuning/tuning_program.h"
#include "pto/options.h"
#include "tuner/measure.h"
#include "tuner/search_space.h"
#include "tuner/service.h"
#include "tuner/strategy.h"

namespace pto::jit {

struct KernelTuningJobOptions {
  tuner::StrategyKind strategy = tuner::StrategyKind::kEvolutionary;
  uint64_t seed = 1;
  int64_t max_trials = 64;
  double max_seconds = 0;  // 0: none (the service's allowance still applies)
  // A trial's timing sample runs the program this many seconds at least (small kernels are
  // repeated inside a sample).
  double min_sample_seconds = 0.002;
  tuner::CompareOptions compare;
  tuner::MeasureOptions measure;
  // Bytes of rotated input sets at least (so operands are not all cache-resident;
  // TuningProgram::TimingData bounds it).
  int64_t rotation_bytes = int64_t{64} << 20;
  // The config the search space is built around (the kernel's untuned default); the kernel's
  // own config (a tuned one from the cache, when resuming) starts as the incumbent. Empty: the
  // kernel's config.
  std::optional<ir::TileConfig> space_default;
  // Resuming an interrupted search (an incomplete tuning record): trials already spent.
  int64_t resumed_trials = 0;
  // Background tuning: the callers' calls run inside this domain's guards, and the job's work
  // waits at its yield points while one runs (yield_to_calls.h). Null: never waits.
  const device::EpochDomain* yield_to_calls = nullptr;
  double yield_patience_seconds = 0.05;
  double yield_burst_cpu_seconds = 0.02;
  // With yield_to_calls, a timer also runs the wait every period between yield points (inside
  // a long LLVM pass or reference op; device/yield_point.h ScopedYieldTimer).
  std::chrono::microseconds yield_timer_period{250};
  // Where a yield timer that cannot start is reported (once per job). Null: not reported.
  const Logger* logger = nullptr;
};

class KernelTuningJob : public tuner::TuningJob {
 public:
  // A faster verified config: the Function rebuilds its plan with it. Called from the job's
  // thread.
  using Publish = std::function<void(int call, const ir::TileConfig& config)>;
  // After every trial and at the end.
  using Progress = std::function<void(const KernelTuning& state)>;
  // Once, at the end, with the best config found (the default if nothing beat it).
  using Done = std::function<void(const KernelTuning& result, const ir::TileConfig& best,
                                  tuner::JobEnd end)>;

  KernelTuningJob(std::shared_ptr<TuningProgram> program, int call, KernelCompiler* compiler,
                  const device::DeviceInfo& device, device::ThreadArena* threads,
                  KernelTuningJobOptions options, Publish publish, Progress progress, Done done);
  ~KernelTuningJob() override;

  bool Step(const std::atomic<bool>& stop) override;
  void Finish(tuner::JobEnd end) override;
  std::string name() const override;

  // The state so far (for tests and reports).
  const KernelTuning& state() const { return state_; }

 private:
  struct Candidate;
  absl::Status Start(const std::atomic<bool>& stop);
  // The step's yield timer (null without yield_to_calls, or when it cannot start).
  std::unique_ptr<device::ScopedYieldTimer> StartYieldTimer();
  // Builds, checks and times one config; the measurement the strategy gets.
  tuner::Measurement Trial(const tuner::Config& config, const std::atomic<bool>& stop);
  absl::StatusOr<std::unique_ptr<Plan>> BuildFor(const ir::TileConfig& config);
  // One timing sample of `plan`: the kernel's seconds over `reps_` runs on rotated inputs;
  // `plan_seconds` (may be null) accumulates every kernel's.
  absl::StatusOr<double> Sample(const Plan& plan, const std::atomic<bool>& stop,
                                double* plan_seconds = nullptr);
  // The plan a config names in a comparison: the candidate, the default or the incumbent.
  const Plan& PlanOf(const tuner::Config& config) const;
  tuner::Objective Objective(const std::atomic<bool>& stop);
  // The incumbent's time per sample as its ratio to the default, timed side by side.
  absl::StatusOr<double> AnchoredSeconds(const std::atomic<bool>& stop);
  void ReportProgress();

  std::shared_ptr<TuningProgram> program_;
  int call_;
  KernelCompiler* compiler_;
  const device::DeviceInfo& device_;
  device::ThreadArena* threads_;
  KernelTuningJobOptions options_;
  Publish publish_;
  Progress progress_;
  Done done_;

  bool started_ = false;
  bool finished_ = false;
  bool yield_timer_reported_ = false;
  std::optional<tuner::SearchSpace> space_;
  std::unique_ptr<tuner::SearchStrategy> strategy_;
  tuner::Config incumbent_config_;
  ir::TileConfig incumbent_tile_;
  std::unique_ptr<Plan> incumbent_plan_;
  double incumbent_seconds_ = 0;  // per sample: default_seconds_ x its ratio to the default
  tuner::Config default_config_;
  ir::TileConfig default_tile_;
  std::unique_ptr<Plan> default_plan_;  // while the incumbent is not the default
  double default_seconds_ = 0;          // per sample (median)
  tuner::Config candidate_config_;
  const Plan* candidate_plan_ = nullptr;  // during a comparison
  std::vector<ProgramData> timing_;
  std::vector<double> kernel_seconds_;  // Plan::Run's per-kernel times, reused by Sample
  // The candidates' intermediate buffers: a plan's run would otherwise grow the tuning thread's
  // own arena to the whole program's intermediates and keep it after the job.
  device::AlignedBuffer intermediates_;
  size_t next_set_ = 0;
  int reps_ = 1;
  double start_seconds_ = 0;
  KernelTuning state_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_KERNEL_TUNING_JOB_H_
