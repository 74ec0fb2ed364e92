#include "jit/tuning/function_tuning.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/plan_records.h"
#include "jit/tuning/kernel_tuning_job.h"
#include "jit/tuning/tuning_program.h"
#include "jit/tuning/tuning_record.h"

namespace pto::detail {

FunctionTuning::FunctionTuning(RuntimeImpl& runtime, std::string function, std::mutex& mu)
    : runtime_(runtime), function_(std::move(function)), mu_(mu) {}

FunctionTuning::~FunctionTuning() {
  tuner::TuningService* service = runtime_.tuning_service();
  if (service == nullptr) return;
  std::vector<uint64_t> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs = jobs_;
  }
  for (uint64_t id : jobs) service->Cancel(id);
  for (uint64_t id : jobs) service->Wait(id, std::numeric_limits<double>::infinity());
}

void FunctionTuning::Queue(CompiledClass& cls, std::span<const int64_t> values,
                           const jit::AppliedTuning& applied, std::vector<uint64_t>* queued) {
  tuner::TuningService* service = runtime_.tuning_service();
  if (service == nullptr) return;
  const TuningOptions& t = runtime_.options().tuning;
  auto program = std::make_shared<jit::TuningProgram>(
      function_, cls.label, cls.variant->graph, cls.cls, cls.program,
      std::vector<int64_t>(values.begin(), values.end()));
  const std::vector<int64_t> kernel_symbols = jit::ProgramSymbolValues(cls.program, values);
  // The overall budget is shared by each kernel's share of the work, with a floor: a small
  // kernel still needs the time to measure its default and try a few candidates.
  std::vector<double> work;
  for (const ir::KernelCall& call : cls.program.tiles.calls) {
    work.push_back(static_cast<double>(jit::KernelWork(call, kernel_symbols)));
  }
  const double floor = std::max(1.0, *std::max_element(work.begin(), work.end()) / 10);
  for (size_t c = 0; c < cls.program.tiles.calls.size(); ++c) {
    const ir::KernelCall& call = cls.program.tiles.calls[c];
    const std::optional<proto::TuningRecord>& record = applied.records[c];
    if (record.has_value() && record->complete()) continue;  // tuned already (kernels_tuned_cached)
    jit::KernelTuningJobOptions o;
    o.strategy = static_cast<tuner::StrategyKind>(t.strategy);
    o.max_trials = t.trials_per_kernel;  // seconds: the service's allowance (JobEnd::kBudgetSpent)
    o.space_default = cls.default_configs[c];
    o.compare.min_improvement = t.min_improvement;
    if (record.has_value()) o.resumed_trials = record->trials();
    // A resumed search starts from another seed, so it does not propose the first's configs
    // again.
    o.seed = t.seed + c + static_cast<uint64_t>(o.resumed_trials);
    o.yield_to_calls = runtime_.calls_to_yield_to();
    o.logger = &runtime_.logger();
    KernelTuning initial;
    initial.function = function_;
    initial.shape_class = cls.label;
    initial.kernel = call.kernel.name;
    ir::Kernel untuned = call.kernel;
    untuned.config = cls.default_configs[c];
    initial.symbol = runtime_.compiler().SymbolOf(untuned);
    initial.max_trials = t.trials_per_kernel;
    initial.call = static_cast<int>(c);
    if (t.trials_now) {
      initial.trials = o.resumed_trials;
      const int64_t now = t.trials_now(initial);
      if (now <= 0) continue;
      o.max_trials = std::min(t.trials_per_kernel, o.resumed_trials + now);
      initial.max_trials = o.max_trials;
    }
    const int index = runtime_.AddTuning(initial);
    CompiledClass* e = &cls;
    RuntimeImpl* rt = &runtime_;
    const int ci = static_cast<int>(c);
    auto job = std::make_unique<jit::KernelTuningJob>(
        program, ci, &runtime_.compiler(), runtime_.device(), runtime_.tuning_threads(), o,
        [this, e](int k, const ir::TileConfig& config) { Publish(*e, k, config); },
        [rt, index](const KernelTuning& state) { rt->UpdateTuning(index, state); },
        [this, e, ci, all = t.trials_per_kernel](const KernelTuning& result,
                                                 const ir::TileConfig& best, tuner::JobEnd end) {
          // Complete: every trial made, or the space ran out before the job's own cap.
          const bool complete = end == tuner::JobEnd::kCompleted &&
                                (result.trials >= all || result.trials < result.max_trials);
          if (result.default_seconds > 0) WriteRecord(*e, ci, result, best, complete);
        });
    const uint64_t id = service->Submit(std::move(job), std::max(work[c], floor));
    if (id == 0) continue;
    jobs_.push_back(id);
    if (queued != nullptr) queued->push_back(id);
  }
}

void FunctionTuning::Publish(CompiledClass& cls, int call, const ir::TileConfig& config) {
  std::lock_guard<std::mutex> lock(mu_);
  ir::Kernel& kernel = cls.program.tiles.calls[call].kernel;
  const ir::TileConfig previous = kernel.config;
  kernel.config = config;
  jit::BuildPlanOptions build;
  build.origin.graph_name = function_;
  build.origin.shape_class = cls.label;
  build.persist = false;
  absl::StatusOr<jit::BuiltPlan> built = jit::BuildPlan(cls.program, runtime_.compiler(), build);
  if (!built.ok()) {
    kernel.config = previous;
    runtime_.logger().Log(LogLevel::kWarning,
                          absl::StrCat("pto: cannot swap in the tuned kernel ", kernel.name,
                                       " of '", function_, "': ", built.status().ToString()));
    return;
  }
  std::unique_ptr<jit::Plan>& plan = built->plan;
  // Candidates compile without being cached; the winner is written now for the next process.
  runtime_.compiler().Persist(
      kernel, *std::static_pointer_cast<const jit::CompiledKernel>(plan->code[call]), build.origin);
  plan->SharePackedOf(*cls.current);
  WritePlanRecord(runtime_.store(), runtime_.logger(), function_, cls.variant->graph_hash,
                  cls.shape_class, std::move(built->kernel_keys));
  std::unique_ptr<const jit::Plan> old = std::move(cls.current);
  cls.current = std::move(plan);
  cls.plan.store(cls.current.get(), std::memory_order_release);
  cls.generation.fetch_add(1, std::memory_order_release);
  runtime_.plan_epochs().Retire(std::move(old));
  plans_swapped_.fetch_add(1);
  runtime_.logger().Log(LogLevel::kInfo, absl::StrCat("pto: swapped in a tuned ", kernel.name,
                                                      " for '", function_, "' ", cls.label));
}

void FunctionTuning::WriteRecord(const CompiledClass& cls, int call, const KernelTuning& result,
                                 const ir::TileConfig& best, bool complete) {
  ir::Kernel kernel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    kernel = cls.program.tiles.calls[call].kernel;
    kernel.config = cls.default_configs[call];
  }
  const TuningOptions& t = runtime_.options().tuning;
  const std::string found_by =
      absl::StrCat(tuner::StrategyName(static_cast<tuner::StrategyKind>(t.strategy)),
                   " seed=", t.seed + static_cast<uint64_t>(call), " trials=", result.trials, "/",
                   result.max_trials, " ended=", result.ended);
  absl::StatusOr<proto::TuningRecord> record =
      jit::MakeTuningRecord(kernel, cls.shape_class, runtime_.performance_fingerprint(),
                            runtime_.device(), best, result, found_by, complete);
  if (!record.ok()) return;
  if (absl::Status s = runtime_.store().PutTuning(*record); !s.ok()) {
    runtime_.logger().Log(LogLevel::kWarning,
                          absl::StrCat("pto: cannot write the tuning record of ", kernel.name,
                                       " of '", function_, "': ", s.ToString()));
  }
}

void FunctionTuning::Wait(const std::vector<uint64_t>& jobs) {
  tuner::TuningService* service = runtime_.tuning_service();
  if (service == nullptr || runtime_.options().tuning.mode != TuningMode::kBlocking) return;
  for (uint64_t id : jobs) service->Wait(id, std::numeric_limits<double>::infinity());
}

}  // namespace pto::detail
