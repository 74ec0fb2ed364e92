#include "jit/tuning/kernel_tuning_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "device/yield_point.h"
#include "jit/tuning/kernel_space.h"
#include "jit/tuning/yield_to_calls.h"

namespace pto::jit {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int kMaxRepsPerSample = 256;

}  // namespace

KernelTuningJob::KernelTuningJob(std::shared_ptr<TuningProgram> program, int call,
                                 KernelCompiler* compiler, const device::DeviceInfo& device,
                                 device::ThreadArena* threads, KernelTuningJobOptions options,
                                 Publish publish, Progress progress, Done done)
    : program_(std::move(program)),
      call_(call),
      compiler_(compiler),
      device_(device),
      threads_(threads),
      options_(std::move(options)),
      publish_(std::move(publish)),
      progress_(std::move(progress)),
      done_(std::move(done)) {
  const ir::Kernel& kernel = program_->program().tiles.calls[call_].kernel;
  state_.function = program_->function();
  state_.shape_class = program_->shape_class();
  state_.kernel = kernel.name;
  ir::Kernel untuned = kernel;
  if (options_.space_default.has_value()) untuned.config = *options_.space_default;
  state_.symbol = compiler_->SymbolOf(untuned);
  state_.max_trials = options_.max_trials;
  state_.trials = options_.resumed_trials;
  state_.call = call_;
}

KernelTuningJob::~KernelTuningJob() = default;

absl::StatusOr<std::unique_ptr<Plan>> KernelTuningJob::BuildFor(const ir::TileConfig& config) {
  LoweredProgram program = program_->program();
  program.tiles.calls[call_].kernel.config = config;
  BuildPlanOptions build;
  build.origin.graph_name = program_->function();
  build.origin.shape_class = program_->shape_class();
  build.persist = false;
  absl::StatusOr<BuiltPlan> built = BuildPlan(program, *compiler_, build);
  if (!built.ok()) return built.status();
  if (incumbent_plan_ != nullptr) built->plan->SharePackedOf(*incumbent_plan_);
  return std::move(built->plan);
}

absl::StatusOr<double> KernelTuningJob::Sample(const Plan& plan, const std::atomic<bool>& stop,
                                               double* plan_seconds) {
  kernel_seconds_.resize(plan.kernels.size());
  double* times = kernel_seconds_.data();
  double total = 0;
  for (int r = 0; r < reps_; ++r) {
    if (stop.load(std::memory_order_relaxed)) return absl::CancelledError("tuning stopped");
    ProgramData& data = timing_[next_set_++ % timing_.size()];
    void* in[kMaxKernelBuffers];
    void* out[kMaxKernelBuffers];
    for (size_t i = 0; i < data.inputs.size(); ++i) in[i] = data.InputBuffer(i);
    for (size_t o = 0; o < data.outputs.size(); ++o) out[o] = data.outputs[o].data.data();
    if (absl::Status s =
            plan.Run(data.symbols, in, out, threads_, times, /*observer=*/nullptr, &intermediates_);
        !s.ok()) {
      return s;
    }
    total += times[call_];
    if (plan_seconds != nullptr) {
      for (size_t k = 0; k < plan.kernels.size(); ++k) *plan_seconds += times[k];
    }
  }
  return total;
}

absl::Status KernelTuningJob::Start(const std::atomic<bool>& stop) {
  const ir::Kernel& kernel = program_->program().tiles.calls[call_].kernel;
  ir::Kernel around = kernel;
  if (options_.space_default.has_value()) around.config = *options_.space_default;
  absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(around, device_);
  if (!space.ok()) return space.status();
  space_.emplace(*std::move(space));
  incumbent_tile_ = kernel.config;
  incumbent_config_ = ToSpaceConfig(*space_, kernel.config);
  absl::StatusOr<std::unique_ptr<Plan>> plan = BuildFor(incumbent_tile_);
  if (!plan.ok()) return plan.status();
  incumbent_plan_ = *std::move(plan);

  absl::StatusOr<std::vector<ProgramData>> timing = program_->TimingData(options_.rotation_bytes);
  if (!timing.ok()) return timing.status();
  timing_ = *std::move(timing);

  // One warm run, then as many runs of the program per sample as make it min_sample_seconds
  // long (counted in whole-program time: every run runs every kernel).
  reps_ = 1;
  absl::StatusOr<double> once = Sample(*incumbent_plan_, stop);
  if (!once.ok()) return once.status();
  double plan_seconds = 0;
  once = Sample(*incumbent_plan_, stop, &plan_seconds);
  if (!once.ok()) return once.status();
  reps_ = static_cast<int>(std::clamp<double>(
      std::ceil(options_.min_sample_seconds / std::max(plan_seconds, 1e-9)), 1, kMaxRepsPerSample));

  // The untuned default is the anchor every reported time is a side-by-side ratio to (an
  // incumbent's time estimated from a chain of ratios would compound their errors).
  default_config_ = ToSpaceConfig(*space_, around.config);
  default_tile_ = around.config;
  if (default_config_ != incumbent_config_) {
    absl::StatusOr<std::unique_ptr<Plan>> default_plan = BuildFor(around.config);
    if (!default_plan.ok()) return default_plan.status();
    default_plan_ = *std::move(default_plan);
  }
  absl::StatusOr<tuner::Timing> timing_default =
      tuner::Measure(*space_, Objective(stop), default_config_, options_.measure);
  if (!timing_default.ok()) return timing_default.status();
  default_seconds_ = timing_default->median_seconds;
  incumbent_seconds_ = default_seconds_;
  if (default_plan_ != nullptr) {  // resuming from a tuned config
    absl::StatusOr<double> anchored = AnchoredSeconds(stop);
    if (!anchored.ok()) return anchored.status();
    incumbent_seconds_ = *anchored;
  }
  state_.default_seconds = default_seconds_ / reps_;
  state_.best_seconds = incumbent_seconds_ / reps_;
  state_.best_config = space_->ToString(incumbent_config_);

  start_seconds_ = Now();
  const int64_t trials_left = options_.max_trials - options_.resumed_trials;
  if (options_.max_trials > 0 && trials_left <= 0) return absl::OkStatus();  // nothing left
  strategy_ = tuner::MakeStrategy(options_.strategy);
  tuner::Budget budget;
  budget.max_trials = options_.max_trials > 0 ? trials_left : 0;
  budget.max_seconds = options_.max_seconds;
  strategy_->Start(*space_, budget, options_.seed);
  // The incumbent's time is known: it is never proposed, and it is Best until beaten.
  strategy_->Report({{incumbent_config_, incumbent_seconds_}});
  return absl::OkStatus();
}

tuner::Measurement KernelTuningJob::Trial(const tuner::Config& config,
                                          const std::atomic<bool>& stop) {
  tuner::Measurement m{config, absl::UnknownError("")};
  absl::StatusOr<ir::TileConfig> tile = ApplySpaceConfig(*space_, config, incumbent_tile_);
  if (!tile.ok()) {
    m.seconds = tile.status();
    return m;
  }
  absl::StatusOr<std::unique_ptr<Plan>> plan = BuildFor(*tile);
  if (!plan.ok()) {
    m.seconds = absl::Status(plan.status().code(),
                             absl::StrCat("does not compile: ", plan.status().message()));
    return m;
  }
  {
    std::lock_guard<std::mutex> lock(program_->check_mutex());
    absl::StatusOr<std::vector<ProgramData>*> checks = program_->CheckData();
    if (!checks.ok()) {
      m.seconds = checks.status();
      return m;
    }
    for (ProgramData& data : **checks) {
      if (stop.load(std::memory_order_relaxed)) {
        m.seconds = absl::CancelledError("tuning stopped");
        return m;
      }
      if (data.baseline_errors.empty()) {
        if (absl::Status s = MeasureBaseline(*incumbent_plan_, data, threads_, &intermediates_);
            !s.ok()) {
          m.seconds = s;
          return m;
        }
      }
      if (absl::Status s = CheckPlan(**plan, data, threads_, &intermediates_); !s.ok()) {
        m.seconds = s;
        return m;
      }
    }
  }
  candidate_config_ = config;
  candidate_plan_ = plan->get();
  absl::StatusOr<tuner::Comparison> cmp = tuner::CompareInterleaved(
      *space_, Objective(stop), config, incumbent_config_, options_.compare);
  candidate_plan_ = nullptr;
  if (!cmp.ok()) {
    m.seconds = cmp.status();
    return m;
  }
  if (cmp->verdict == tuner::Verdict::kCandidateFailed) {
    m.seconds = cmp->candidate_status;
    return m;
  }
  m.seconds = cmp->ratio * incumbent_seconds_;
  if (cmp->verdict != tuner::Verdict::kCandidateWins) return m;
  // A winner is timed against the default too (the anchor of every reported time), and kept
  // only if that also says it beats the incumbent by min_improvement: one noisy comparison
  // does not make a swap.
  std::unique_ptr<Plan> previous_plan = std::move(incumbent_plan_);
  const tuner::Config previous_config = incumbent_config_;
  const ir::TileConfig previous_tile = incumbent_tile_;
  const bool previous_is_default = previous_config == default_config_;
  if (previous_is_default) default_plan_ = std::move(previous_plan);
  incumbent_plan_ = *std::move(plan);
  incumbent_config_ = config;
  incumbent_tile_ = *tile;
  absl::StatusOr<double> anchored = AnchoredSeconds(stop);
  if (!anchored.ok() || *anchored > incumbent_seconds_ * (1 - options_.compare.min_improvement)) {
    incumbent_plan_ = previous_is_default ? std::move(default_plan_) : std::move(previous_plan);
    incumbent_config_ = previous_config;
    incumbent_tile_ = previous_tile;
    m.seconds = anchored;
    return m;
  }
  m.seconds = *anchored;
  incumbent_seconds_ = *anchored;
  state_.best_seconds = incumbent_seconds_ / reps_;
  state_.best_config = space_->ToString(config);
  if (publish_) publish_(call_, *tile);
  return m;
}

const Plan& KernelTuningJob::PlanOf(const tuner::Config& config) const {
  if (candidate_plan_ != nullptr && config == candidate_config_) return *candidate_plan_;
  if (default_plan_ != nullptr && config == default_config_ && config != incumbent_config_) {
    return *default_plan_;
  }
  return *incumbent_plan_;
}

tuner::Objective KernelTuningJob::Objective(const std::atomic<bool>& stop) {
  return [this, &stop](const tuner::Config& config) { return Sample(PlanOf(config), stop); };
}

absl::StatusOr<double> KernelTuningJob::AnchoredSeconds(const std::atomic<bool>& stop) {
  if (incumbent_config_ == default_config_) return default_seconds_;
  if (default_plan_ == nullptr) {
    absl::StatusOr<std::unique_ptr<Plan>> plan = BuildFor(default_tile_);
    if (!plan.ok()) return plan.status();
    default_plan_ = *std::move(plan);
  }
  tuner::CompareOptions compare = options_.compare;
  compare.min_improvement = 0;
  absl::StatusOr<tuner::Comparison> cmp = tuner::CompareInterleaved(
      *space_, Objective(stop), incumbent_config_, default_config_, compare);
  if (!cmp.ok()) return cmp.status();
  if (cmp->verdict == tuner::Verdict::kCandidateFailed) return cmp->candidate_status;
  return cmp->ratio * default_seconds_;
}

std::string KernelTuningJob::name() const {
  return absl::StrCat(state_.function, " ", state_.shape_class, " ", state_.kernel);
}

void KernelTuningJob::ReportProgress() {
  state_.elapsed_seconds = started_ ? Now() - start_seconds_ : 0;
  if (progress_) progress_(state_);
}

std::unique_ptr<device::ScopedYieldTimer> KernelTuningJob::StartYieldTimer() {
  if (options_.yield_to_calls == nullptr) return nullptr;
  absl::StatusOr<std::unique_ptr<device::ScopedYieldTimer>> timer =
      device::ScopedYieldTimer::Start(options_.yield_timer_period);
  if (timer.ok()) return *std::move(timer);
  if (!yield_timer_reported_ && options_.logger != nullptr) {
    options_.logger->Log(LogLevel::kWarning,
                         absl::StrCat("pto: background tuning yields to calls at its yield points "
                                      "only: ",
                                      timer.status().message()));
  }
  yield_timer_reported_ = true;
  return nullptr;
}

bool KernelTuningJob::Step(const std::atomic<bool>& stop) {
  if (finished_) return true;
  // The step's work (compiles, plan runs, reference ops) waits at its yield points while calls
  // run.
  YieldToCalls yield(options_.yield_to_calls, stop, options_.yield_patience_seconds,
                     options_.yield_burst_cpu_seconds);
  const std::function<void()> hook = [&yield] { yield.Wait(); };
  const device::ScopedYieldHook hook_scope(options_.yield_to_calls != nullptr ? &hook : nullptr);
  const std::unique_ptr<device::ScopedYieldTimer> timer = StartYieldTimer();
  if (!started_) {
    started_ = true;
    if (absl::Status s = Start(stop); !s.ok()) {
      strategy_.reset();
      if (stop.load()) return false;  // cut short: the service says why the job ends
      state_.ended = absl::StrCat("failed: ", s.message());
      return true;
    }
    ReportProgress();
    return strategy_ == nullptr || strategy_->Done();
  }
  if (strategy_ == nullptr || strategy_->Done()) return true;
  std::vector<tuner::Config> batch = strategy_->Propose(1);
  if (batch.empty()) return true;
  tuner::Measurement m = Trial(batch[0], stop);
  if (stop.load() && !m.seconds.ok() && absl::IsCancelled(m.seconds.status())) {
    return false;  // cut short by the service (which says why the job ends): not a result
  }
  ++state_.trials;
  if (!m.seconds.ok()) ++state_.failed;
  strategy_->Report({m});
  state_.curve.push_back(state_.best_seconds);
  ReportProgress();
  return strategy_->Done();
}

void KernelTuningJob::Finish(tuner::JobEnd end) {
  if (finished_) return;
  finished_ = true;
  state_.finished = true;
  if (state_.ended.empty()) {
    switch (end) {
      case tuner::JobEnd::kCompleted:
        state_.ended = "completed";
        break;
      case tuner::JobEnd::kBudgetSpent:
        state_.ended = "budget";
        break;
      case tuner::JobEnd::kCancelled:
        state_.ended = "cancelled";
        break;
      case tuner::JobEnd::kShutdown:
        state_.ended = "shutdown";
        break;
    }
  }
  ReportProgress();
  if (done_) done_(state_, incumbent_tile_, end);
  // The plans and the data go now, not when the service drops the job.
  incumbent_plan_.reset();
  default_plan_.reset();
  timing_.clear();
}

}  // namespace pto::jit
