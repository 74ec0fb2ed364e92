// `pto tune --workload FILE`: a warm-up tuning run. Builds each workload entry's Function (an
// embedded graph, a GraphDef file or a built-in model), tunes the kernels of every shape set the
// entry lists within a time budget, and leaves the tuned configs and the winners' object code in
// the cache. The workload is profiled once, then a task scheduler (tuner/task_scheduler.h)
// gives rounds of trials to the kernels by their expected saving of workload time; each round
// is a blocking Precompile in a Runtime of its own that tunes one kernel (TuningOptions::
// trials_now), resuming from its incomplete tuning record. Shows a progress line, then a table
// per kernel, the workload's estimated time before and after, and the tuning curves as an SVG
// picture. Ctrl-C stops cleanly; the next run with the same cache continues.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "jit/graph/graph_def.h"
#include "pto/pto.h"
#include "tools/pto/cache_dir.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/graph_program.h"
#include "tools/pto/transformer_block.h"
#include "tools/pto/tuning_report.h"
#include "tools/pto/workload_file.h"
#include "tuner/task_scheduler.h"

namespace pto::tools {
namespace {

constexpr char kDemoBlockModel[] = "demo_block";
// Calls of each shape set the profile that weighs the kernels times (after one untimed call).
constexpr int kProfileCalls = 5;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A workload that cannot be read or planned: exit 2, like a usage error, without the usage.
int WorkloadError(absl::string_view message) {
  std::fprintf(stderr, "pto tune: %.*s\n", static_cast<int>(message.size()), message.data());
  return kExitUsage;
}

// What the command line asks for.
struct TuneRequest {
  std::string workload_path;
  std::string cache_dir;
  LogLevel log_level = LogLevel::kWarning;  // PTO_LOG
  std::string svg_path;
  double budget_seconds = 600;
  TuningOptions tuning;
};

// The task scheduler's policy (tuner/task_scheduler_policy.h) with the request's trial cap.
tuner::TaskSchedulerPolicy SchedulerPolicy(const TuneRequest& request) {
  tuner::TaskSchedulerPolicy policy;
  policy.max_trials_per_task = request.tuning.trials_per_kernel;
  return policy;
}

// The flags as given: those that need no check are bound in `request`; CompleteRequest checks
// the others and fills in the defaults that depend on them.
struct TuneFlags {
  TuneRequest request;
  std::string budget;
  std::string strategy = "evolutionary";
};

absl::Status CompleteRequest(TuneFlags& flags) {
  TuneRequest& r = flags.request;
  if (r.workload_path.empty()) return absl::InvalidArgumentError("--workload FILE is required");
  const std::string& budget = flags.budget;
  if (!budget.empty() && (!absl::SimpleAtod(budget, &r.budget_seconds) || !(r.budget_seconds > 0) ||
                          r.budget_seconds > 1e9)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--budget expects a positive number of seconds, got '", budget, "'"));
  }
  if (r.tuning.trials_per_kernel < 1) {
    return absl::InvalidArgumentError("--trials-per-kernel must be at least 1");
  }
  if (r.tuning.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  const std::string& strategy = flags.strategy;
  if (strategy == "evolutionary") {
    r.tuning.strategy = TuningStrategy::kEvolutionary;
  } else if (strategy == "random") {
    r.tuning.strategy = TuningStrategy::kRandom;
  } else if (strategy == "exhaustive") {
    r.tuning.strategy = TuningStrategy::kExhaustive;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--strategy '", strategy, "' is not one of evolutionary, random, exhaustive"));
  }
  // PTO_CACHE_DIR and PTO_LOG as an embedder's users would set them; --cache wins.
  absl::StatusOr<RuntimeOptions> env = RuntimeOptions::FromEnvironment();
  if (!env.ok()) return env.status();
  r.log_level = env->log_level;
  if (r.cache_dir.empty()) r.cache_dir = env->cache_path;
  if (r.cache_dir.empty()) {
    absl::StatusOr<std::string> dir = DefaultCacheDir();
    if (!dir.ok()) return dir.status();
    r.cache_dir = *dir;
  }
  if (r.svg_path.empty()) r.svg_path = r.cache_dir + "/tuning_curves.svg";
  return absl::OkStatus();
}

// One workload entry made ready to tune: its shape sets and how to build its Function.
struct EntryPlan {
  std::string name;
  double share = 1;  // of the workload's time (EntryShares: WorkloadEntry.weight's rule)
  std::vector<ShapeSet> sets;
  std::vector<std::string> set_labels;  // for messages
  std::vector<double> set_calls;        // per set: its recorded calls, else 1
  std::vector<int64_t> kernels;         // per set (counted before tuning)
  std::vector<DType> input_dtypes;      // per input (empty: every input f32)
  // Builds the Function that is tuned at sets[set].
  std::function<absl::StatusOr<std::unique_ptr<Function>>(Runtime&, size_t set)> make;
};

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

std::string SetLabel(const ShapeSet& set) {
  std::vector<std::string> shapes;
  for (const std::vector<int64_t>& s : set) shapes.push_back(ShapeText(s));
  std::string label = absl::StrJoin(shapes, " ");
  constexpr size_t kMaxLabel = 60;
  if (label.size() > kMaxLabel) label = label.substr(0, kMaxLabel - 3) + "...";
  return label;
}

void AddSet(EntryPlan& plan, ShapeSet set, std::string label, double calls = 1) {
  if (std::find(plan.sets.begin(), plan.sets.end(), set) != plan.sets.end()) return;
  plan.sets.push_back(std::move(set));
  plan.set_labels.push_back(std::move(label));
  plan.set_calls.push_back(calls);
}

// The demo's transformer block (tools/pto/transformer_block.h), with the demo's dynamic dims
// and constant weights, so the kernels tuned are the ones `pto demo` runs.
absl::StatusOr<EntryPlan> DemoBlockPlan(const proto::WorkloadEntry& entry,
                                        const std::string& label) {
  static const std::vector<std::string> kParams = {"batch", "seq", "d_model", "heads", "ff"};
  std::set<std::string> given;
  for (const proto::WorkloadDim& p : entry.model().params()) {
    if (std::find(kParams.begin(), kParams.end(), p.name()) == kParams.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": model ", kDemoBlockModel, " has no param '", p.name(),
                       "' (it has: ", absl::StrJoin(kParams, ", "), ")"));
    }
    given.insert(p.name());
  }
  if (!given.contains("batch") || !given.contains("seq")) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": model ", kDemoBlockModel, " needs params batch and seq"));
  }
  absl::StatusOr<std::vector<std::map<std::string, int64_t>>> params =
      ModelParamRepresentatives(entry.model());
  if (!params.ok()) return params.status();
  EntryPlan plan;
  std::vector<BlockDims> dims;
  int64_t max_batch = 64, max_seq = 1024;  // pto demo's ranges, widened if need be
  for (const std::map<std::string, int64_t>& p : *params) {
    BlockDims d;
    if (p.contains("d_model")) d.model = p.at("d_model");
    if (p.contains("heads")) d.heads = p.at("heads");
    if (p.contains("ff")) d.ff = p.at("ff");
    if (d.model % d.heads != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": d_model ", d.model, " is not a multiple of heads ", d.heads));
    }
    const int64_t batch = p.at("batch"), seq = p.at("seq");
    max_batch = std::max(max_batch, batch);
    max_seq = std::max(max_seq, seq);
    ShapeSet set = {{batch, seq, d.model}};
    for (std::vector<int64_t>& w : WeightShapes(d)) set.push_back(std::move(w));
    std::vector<std::string> parts;
    for (const auto& [name, value] : p) parts.push_back(absl::StrCat(name, "=", value));
    const size_t before = plan.sets.size();
    AddSet(plan, std::move(set), absl::StrJoin(parts, " "));
    if (plan.sets.size() > before) dims.push_back(d);
  }
  FunctionOptions options;
  options.dynamic = {{0, 0, Dim("batch", 1, max_batch)}, {0, 1, Dim("seq", 1, max_seq)}};
  const int num_inputs = 1 + static_cast<int>(WeightShapes(BlockDims{}).size());
  for (int i = 1; i < num_inputs; ++i) options.constant_inputs.push_back(i);
  plan.make = [name = entry.name(), dims, options, num_inputs](Runtime& rt, size_t set) {
    return rt.JitTraced(name, num_inputs, TransformerBlock(dims[set]), options);
  };
  return plan;
}

// An entry with an embedded graph or a GraphDef file.
absl::StatusOr<EntryPlan> GraphPlan(const proto::WorkloadEntry& entry, const std::string& label,
                                    const std::string& workload_path) {
  absl::StatusOr<GraphProgram> program;
  if (entry.has_graph()) {
    absl::StatusOr<ir::Graph> graph = graph::FromGraphDef(entry.graph());
    if (!graph.ok()) return graph.status();
    program = GraphProgramFromGraph(*std::move(graph));
  } else {
    program = LoadGraphProgram(ResolveGraphFile(workload_path, entry.graph_file()));
  }
  if (!program.ok()) {
    return absl::Status(program.status().code(),
                        absl::StrCat(label, ": ", program.status().message()));
  }
  const int num_inputs = program->graph.num_inputs;
  FunctionOptions options = program->options;
  for (int c : entry.constant_inputs()) {
    if (c >= num_inputs) {
      return absl::InvalidArgumentError(absl::StrCat(
          label, ": constant input ", c, " is not below the graph's ", num_inputs, " inputs"));
    }
    options.constant_inputs.push_back(c);
  }
  EntryPlan plan;
  plan.input_dtypes = options.input_dtypes;
  for (const proto::WorkloadShapeClass& cls : entry.shape_classes()) {
    ShapeSet set;
    for (const proto::WorkloadTensorShape& shape : cls.input_shapes()) {
      set.emplace_back(shape.dims().begin(), shape.dims().end());
    }
    AddSet(plan, std::move(set), cls.shape_class(),
           cls.calls() > 0 ? static_cast<double>(cls.calls()) : 1);
  }
  for (int k = 0; k < entry.shapes_size(); ++k) {
    absl::StatusOr<std::vector<ShapeSet>> sets = BucketRepresentatives(entry.shapes(k));
    if (!sets.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": shapes[", k, "]: ", sets.status().message()));
    }
    for (ShapeSet& set : *sets) {
      std::string text = SetLabel(set);
      AddSet(plan, std::move(set), std::move(text));
    }
  }
  if (plan.sets.empty()) {  // a static graph, tuned at its own shapes
    ShapeSet set(num_inputs);
    for (const ir::Node& n : program->graph.nodes) {
      if (n.op != ir::OpKind::kInput) continue;
      for (const ir::SymExpr& d : n.shape) {
        const std::optional<int64_t> size = d.AsConstant();
        if (!size.has_value()) {
          return absl::InvalidArgumentError(absl::StrCat(
              label, ": the graph has dynamic dims but no shapes or shape_classes to tune at"));
        }
        set[n.attrs.index].push_back(*size);
      }
    }
    AddSet(plan, std::move(set), "static");
  }
  plan.make = [name = entry.name(), num_inputs, trace = program->trace, options](
                  Runtime& rt, size_t) { return rt.JitTraced(name, num_inputs, trace, options); };
  return plan;
}

// Every entry's plan, each shape set lowered once (without compiling), so
// that workload errors show before any tuning starts. InvalidArgument for workload errors.
absl::StatusOr<std::vector<EntryPlan>> PlanWorkload(const proto::Workload& workload,
                                                    const std::string& workload_path) {
  std::vector<EntryPlan> plans;
  const std::vector<double> shares = EntryShares(workload);
  for (int i = 0; i < workload.entries_size(); ++i) {
    const proto::WorkloadEntry& entry = workload.entries(i);
    const std::string label = absl::StrCat("entry '", entry.name(), "'");
    absl::StatusOr<EntryPlan> plan;
    if (entry.has_model()) {
      if (entry.model().name() != kDemoBlockModel) {
        return absl::InvalidArgumentError(absl::StrCat(label, ": unknown model '",
                                                       entry.model().name(),
                                                       "' (known models: ", kDemoBlockModel, ")"));
      }
      plan = DemoBlockPlan(entry, label);
    } else {
      plan = GraphPlan(entry, label, workload_path);
    }
    if (!plan.ok()) return plan.status();
    plan->name = entry.name();
    plan->share = shares[i];
    plans.push_back(*std::move(plan));
  }
  RuntimeOptions options;  // memory only, no tuning: lowering needs no cache
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) return rt.status();
  for (EntryPlan& plan : plans) {
    for (size_t s = 0; s < plan.sets.size(); ++s) {
      absl::StatusOr<std::unique_ptr<Function>> fn = plan.make(**rt, s);
      absl::StatusOr<std::string> block =
          fn.ok() ? (*fn)->Dump(Stage::kBlock, plan.sets[s]) : fn.status();
      if (!block.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "entry '", plan.name, "' at ", plan.set_labels[s], ": ", block.status().message()));
      }
    }
  }
  return plans;
}

// The progress line on stderr: redrawn in place on a terminal, otherwise one line per kernel
// as it ends. Tuner threads report to it; one lock keeps their lines (and log messages) whole.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(::isatty(STDERR_FILENO) == 1) {}

  // Tuning starts: `kernels` to tune (those without a complete record) within
  // `budget_seconds`.
  void Start(int64_t kernels, double budget_seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    start_ = Clock::now();
    kernels_ = kernels;
    budget_seconds_ = budget_seconds;
  }

  // A round of the `kernel`th kernel to be tuned in this run starts.
  void StartKernel(int64_t kernel) {
    std::lock_guard<std::mutex> lock(mu_);
    kernel_ = kernel;
  }

  void Update(const KernelTuning& k) {
    std::lock_guard<std::mutex> lock(mu_);
    TuningProgress p;
    p.kernel = kernel_;
    p.kernels = std::max(p.kernel, kernels_);
    p.name = KernelLabel(k);
    p.trial = k.trials;
    p.trials = k.max_trials;
    p.best_speedup =
        k.default_seconds > 0 && k.best_seconds > 0 ? k.default_seconds / k.best_seconds : 0;
    p.elapsed_seconds = SecondsSince(start_);
    p.budget_seconds = budget_seconds_;
    line_ = FormatProgressLine(p);
    if (tty_) {
      std::fprintf(stderr, "\r%s\033[K", line_.c_str());
    } else if (k.finished) {
      std::fprintf(stderr, "%s (%s)\n", line_.c_str(), k.ended.c_str());
    }
    std::fflush(stderr);
  }

  // A whole line above the progress line.
  void Print(std::string_view message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (tty_ && !line_.empty()) {
      std::fprintf(stderr, "\r\033[K%.*s\n%s", static_cast<int>(message.size()), message.data(),
                   line_.c_str());
    } else {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
    }
    std::fflush(stderr);
  }

  // Ends the progress line (before the report goes to stdout).
  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (tty_ && !line_.empty()) std::fputs("\n", stderr);
    line_.clear();
  }

 private:
  const bool tty_;
  std::mutex mu_;
  Clock::time_point start_ = Clock::now();
  int64_t kernels_ = 0;  // to tune in the whole run (without a complete record)
  double budget_seconds_ = 0;
  int64_t kernel_ = 1;  // the one being tuned, from 1
  std::string line_;    // shown on the terminal now
};

// SIGINT and SIGTERM, taken by a thread of their own (sigwait), so that the first one stops the
// tuning cleanly and a second one exits at once. The signals are blocked in the constructing
// thread and so in every thread started after it (LLVM's, oneTBB's, the tuner's).
class InterruptWatcher {
 public:
  explicit InterruptWatcher(ProgressPrinter* printer) : printer_(printer) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
    thread_ = std::thread([this] { Run(); });
  }
  ~InterruptWatcher() {
    done_.store(true);
    pthread_kill(thread_.native_handle(), SIGTERM);  // wakes the sigwait
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }

  bool interrupted() const { return interrupted_.load(); }

  // The Runtime whose tuning an interrupt stops (null: none). Set before its first Precompile,
  // cleared before it is destroyed.
  void Watch(Runtime* rt) {
    std::lock_guard<std::mutex> lock(mu_);
    runtime_ = rt;
    if (rt != nullptr && interrupted_.load()) StopTuning(rt);
  }

 private:
  // Ends the Runtime's tuning jobs now: a blocked Precompile returns, and every job writes what
  // it found (an incomplete record the next run resumes).
  static void StopTuning(Runtime* rt) { rt->StopTuning(); }

  void Run() {
    while (true) {
      int signal = 0;
      if (sigwait(&signals_, &signal) != 0) continue;
      if (done_.load()) return;
      if (interrupted_.load()) {
        // The same interrupt may come twice (`timeout` signals the command, then its process
        // group): only a later one means "quit now".
        if (SecondsSince(first_signal_) < kRepeatSeconds) continue;
        static constexpr char kQuit[] = "\npto tune: interrupted again: exiting now\n";
        [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kQuit, sizeof kQuit - 1);
        ::_exit(130);
      }
      first_signal_ = Clock::now();
      interrupted_.store(true);
      printer_->Print(
          "pto tune: interrupted: stopping and keeping what was found (interrupt again to quit "
          "at once)");
      std::lock_guard<std::mutex> lock(mu_);
      if (runtime_ != nullptr) StopTuning(runtime_);
    }
  }

  static constexpr double kRepeatSeconds = 1;
  ProgressPrinter* printer_;
  sigset_t signals_, old_mask_;
  Clock::time_point first_signal_;  // the watcher thread's own
  std::atomic<bool> done_{false}, interrupted_{false};
  std::mutex mu_;
  Runtime* runtime_ = nullptr;
  std::thread thread_;
};

// One kernel of the workload: kernel `call` of a shape set's plan, as profiled.
struct WorkloadKernel {
  size_t entry = 0, set = 0;
  int call = 0;
  std::string symbol;  // as profiled (its current config)
  double seconds = 0;  // per call, median of the profile
  double calls = 1;    // per pass over the workload: its set's, weighed by its entry's share
  int64_t trials_before = 0;
  bool complete = false;  // a complete tuning record: not tuned again
};

// What the run did, for the report.
struct TuneOutcome {
  std::vector<KernelTuning> tuned;  // per kernel tuned (its rounds merged), in first-round order
  int64_t kernels = 0;              // in the workload
  int64_t already_tuned = 0;        // kernels with complete records, not queued
  int64_t left = 0;                 // kernels with trials left (tuned or not) at the end
  double estimated_before = 0, estimated_after = 0;       // the workload's, per pass
  std::vector<std::pair<double, double>> estimate_curve;  // (wall seconds, estimate)
  bool failed = false;  // a shape set could not be compiled, profiled or tuned
};

// A Runtime on the request's cache with blocking tuning; null (and a message) when the cache
// cannot hold tuning results.
std::unique_ptr<Runtime> OpenTuningRuntime(const TuneRequest& request, TuningOptions tuning,
                                           ProgressPrinter& printer) {
  RuntimeOptions options;
  options.cache_path = request.cache_dir;
  options.tuning = std::move(tuning);
  options.tuning.mode = TuningMode::kBlocking;
  options.tuning.seconds_total = 0;
  options.log_level = request.log_level;
  options.log_sink = [&printer](LogLevel, std::string_view message) { printer.Print(message); };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok() || !(*rt)->stats().cache.persistent) {
    printer.Print(absl::StrCat("pto tune: ",
                               rt.ok() ? absl::StrCat("the cache at ", request.cache_dir,
                                                      " cannot be used: tuning results would be "
                                                      "lost")
                                       : rt.status().message()));
    return nullptr;
  }
  return *std::move(rt);
}

// Compiles (or loads) shape set `set` of `plan` and times each kernel of its plan over
// `calls` calls on zero inputs; appends its kernels to `kernels`. Kernels with a complete
// tuning record are marked so; the others carry the trials earlier runs made.
absl::Status ProfileSet(const TuneRequest& request, const std::vector<EntryPlan>& plans,
                        size_t entry, size_t set, int calls, ProgressPrinter& printer,
                        InterruptWatcher& watcher, std::vector<WorkloadKernel>& kernels) {
  const EntryPlan& plan = plans[entry];
  std::map<int, int64_t> open;  // call -> trials before, for kernels without a complete record
  std::mutex open_mu;
  TuningOptions tuning = request.tuning;
  tuning.trials_now = [&open, &open_mu](const KernelTuning& k) -> int64_t {
    std::lock_guard<std::mutex> lock(open_mu);
    open[k.call] = k.trials;
    return 0;  // nothing is tuned while profiling
  };
  std::unique_ptr<Runtime> rt = OpenTuningRuntime(request, std::move(tuning), printer);
  if (rt == nullptr) return absl::FailedPreconditionError("the cache cannot be used");
  watcher.Watch(rt.get());
  absl::StatusOr<std::unique_ptr<Function>> fn = plan.make(*rt, set);
  absl::Status status = fn.ok() ? (*fn)->Precompile(plan.sets[set]) : fn.status();
  absl::StatusOr<std::vector<KernelProfile>> profile;
  if (status.ok()) {
    std::vector<Tensor> inputs, outputs;
    std::vector<TensorView> in, out;
    for (size_t i = 0; i < plan.sets[set].size(); ++i) {
      const DType dtype = i < plan.input_dtypes.size() ? plan.input_dtypes[i] : DType::kF32;
      inputs.push_back(Tensor::Allocate(plan.sets[set][i], dtype));
    }
    absl::StatusOr<std::vector<std::vector<int64_t>>> shapes = (*fn)->OutputShapes(plan.sets[set]);
    if (shapes.ok()) {
      for (const std::vector<int64_t>& shape : *shapes) outputs.push_back(Tensor::Allocate(shape));
      for (Tensor& t : inputs) {  // zeros: valid values of either dtype (0 as an index too)
        std::memset(t.view().data, 0, static_cast<size_t>(t.num_elements()) * 4);
        in.push_back(t.view());
      }
      for (Tensor& t : outputs) out.push_back(t.view());
      profile = (*fn)->Profile(in, out, calls);
    } else {
      profile = shapes.status();
    }
    if (!profile.ok()) status = profile.status();
  }
  watcher.Watch(nullptr);
  if (!status.ok()) return status;
  for (size_t k = 0; k < profile->size(); ++k) {
    WorkloadKernel w;
    w.entry = entry;
    w.set = set;
    w.call = static_cast<int>(k);
    w.symbol = (*profile)[k].kernel;
    w.seconds = (*profile)[k].seconds;
    w.calls = plan.set_calls[set];
    const auto it = open.find(w.call);
    w.complete = it == open.end();
    if (!w.complete) w.trials_before = it->second;
    kernels.push_back(std::move(w));
  }
  return absl::OkStatus();
}

// A round's end state, and the kernel's best time when its trials began (the incumbent's, on
// the round's own default measurement).
struct RoundOutcome {
  KernelTuning state;
  double start_seconds = 0;
};

// One round of the scheduler's: `trials` more trials of one kernel, within `seconds`. None
// when it was not queued (tuned already).
std::optional<RoundOutcome> TuneRound(const TuneRequest& request, const EntryPlan& plan,
                                      const WorkloadKernel& kernel, int64_t trials, double seconds,
                                      ProgressPrinter& printer, InterruptWatcher& watcher,
                                      bool& failed) {
  std::mutex mu;
  double start_seconds = 0;
  TuningOptions tuning = request.tuning;
  tuning.seconds_per_kernel = seconds;
  tuning.progress = [&printer, &mu, &start_seconds](const KernelTuning& k) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (start_seconds <= 0 && k.curve.empty()) start_seconds = k.best_seconds;
    }
    printer.Update(k);
  };
  tuning.trials_now = [call = kernel.call, trials](const KernelTuning& k) -> int64_t {
    return k.call == call ? trials : 0;
  };
  std::unique_ptr<Runtime> rt = OpenTuningRuntime(request, std::move(tuning), printer);
  if (rt == nullptr) {
    failed = true;
    return std::nullopt;
  }
  watcher.Watch(rt.get());
  absl::StatusOr<std::unique_ptr<Function>> fn = plan.make(*rt, kernel.set);
  absl::Status status = fn.ok() ? (*fn)->Precompile(plan.sets[kernel.set]) : fn.status();
  const std::vector<KernelTuning> results = rt->tuning_results();
  watcher.Watch(nullptr);
  fn = nullptr;
  rt.reset();
  if (!status.ok()) {
    printer.Print(absl::StrCat("pto tune: entry '", plan.name, "' at ", plan.set_labels[kernel.set],
                               ": ", status.message()));
    failed = true;
  }
  for (const KernelTuning& k : results) {
    if (k.call != kernel.call) continue;
    std::lock_guard<std::mutex> lock(mu);
    return RoundOutcome{k, start_seconds > 0 ? start_seconds : k.default_seconds};
  }
  return std::nullopt;
}

// Adds a round's state to the kernel's merged state: trials and curve go on, times stay
// relative to the first round's default (each round times its own default, side by side).
void MergeRound(const KernelTuning& round, KernelTuning& merged, bool first) {
  if (first) {
    merged = round;
    return;
  }
  const double scale = round.default_seconds > 0 && merged.default_seconds > 0
                           ? merged.default_seconds / round.default_seconds
                           : 1;
  for (double c : round.curve) merged.curve.push_back(c * scale);
  merged.trials = round.trials;
  merged.failed += round.failed;
  merged.max_trials = round.max_trials;
  if (round.best_seconds > 0) merged.best_seconds = round.best_seconds * scale;
  merged.best_config = round.best_config;
  merged.elapsed_seconds += round.elapsed_seconds;
  merged.ended = round.ended;
  merged.finished = round.finished;
}

// Scales each entry's calls so that its share of the workload's profiled time is its share
// (WorkloadEntry.weight), the total kept. One entry: nothing changes.
void WeighEntries(const std::vector<EntryPlan>& plans, std::vector<WorkloadKernel>& kernels) {
  if (plans.size() < 2) return;
  std::vector<double> entry_seconds(plans.size(), 0);
  double total = 0;
  for (const WorkloadKernel& k : kernels) {
    entry_seconds[k.entry] += k.seconds * k.calls;
    total += k.seconds * k.calls;
  }
  double shares = 0;  // of the entries that were profiled
  for (size_t e = 0; e < plans.size(); ++e) shares += entry_seconds[e] > 0 ? plans[e].share : 0;
  if (!(total > 0) || !(shares > 0)) return;
  for (WorkloadKernel& k : kernels) {
    k.calls *= plans[k.entry].share / shares * total / entry_seconds[k.entry];
  }
}

// "; heaviest: 31% f32_matmul_... (train at [16,128] [128,10], 16 trials before), ..." for
// the kernels with the largest shares of the workload's estimated time: each with its entry
// and shape set, as one kernel's symbol can serve several sets (one per shape class).
std::string HeaviestKernels(const std::vector<EntryPlan>& plans,
                            const std::vector<WorkloadKernel>& kernels, double total) {
  constexpr size_t kShown = 3;
  std::vector<size_t> order(kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto share = [&](size_t i) { return kernels[i].seconds * kernels[i].calls; };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return share(a) > share(b); });
  std::vector<std::string> parts;
  for (size_t i = 0; i < std::min(kShown, order.size()) && total > 0; ++i) {
    const WorkloadKernel& k = kernels[order[i]];
    const EntryPlan& plan = plans[k.entry];
    parts.push_back(absl::StrFormat("%.0f%% %s (%s at %s%s)", 100 * share(order[i]) / total,
                                    k.symbol, plan.name, plan.set_labels[k.set],
                                    k.complete ? ", tuned"
                                    : k.trials_before > 0
                                        ? absl::StrCat(", ", k.trials_before, " trials before")
                                        : ""));
  }
  return parts.empty() ? "" : absl::StrCat("; heaviest: ", absl::StrJoin(parts, ", "));
}

TuneOutcome TuneWorkload(const TuneRequest& request, const std::vector<EntryPlan>& plans,
                         ProgressPrinter& printer, InterruptWatcher& watcher) {
  TuneOutcome outcome;
  const Clock::time_point start = Clock::now();
  const tuner::TaskSchedulerPolicy policy = SchedulerPolicy(request);
  // Profile once: each kernel's time per call, and its calls per pass over the workload.
  std::vector<WorkloadKernel> kernels;
  for (size_t e = 0; e < plans.size(); ++e) {
    for (size_t s = 0; s < plans[e].sets.size(); ++s) {
      if (watcher.interrupted()) return outcome;
      if (absl::Status st =
              ProfileSet(request, plans, e, s, kProfileCalls, printer, watcher, kernels);
          !st.ok()) {
        printer.Print(absl::StrCat("pto tune: entry '", plans[e].name, "' at ",
                                   plans[e].set_labels[s], ": ", st.message()));
        outcome.failed = true;
      }
    }
  }
  WeighEntries(plans, kernels);
  std::vector<tuner::SchedulerTask> tasks;
  for (const WorkloadKernel& k : kernels) {
    tuner::SchedulerTask t;
    t.seconds = k.complete ? 0 : k.seconds;  // 0: not scheduled
    t.calls = k.calls;
    t.trials_before = k.trials_before;
    tasks.push_back(t);
    outcome.already_tuned += k.complete;
    outcome.estimated_before += k.seconds * k.calls;
  }
  outcome.kernels = static_cast<int64_t>(kernels.size());
  tuner::TaskScheduler scheduler(tasks, policy);
  const double complete_seconds = outcome.estimated_before - scheduler.EstimatedSeconds();
  outcome.estimate_curve.emplace_back(SecondsSince(start), outcome.estimated_before);
  printer.Print(absl::StrCat("pto tune: ", kernels.size(), " kernels profiled in ",
                             FormatElapsed(SecondsSince(start)), "; estimated workload time ",
                             FormatSeconds(outcome.estimated_before),
                             HeaviestKernels(plans, kernels, outcome.estimated_before)));
  printer.Start(static_cast<int64_t>(kernels.size()) - outcome.already_tuned,
                request.budget_seconds);
  std::map<int, size_t> merged;  // task -> index in outcome.tuned
  while (!watcher.interrupted()) {
    const tuner::Round round = scheduler.Next(request.budget_seconds - SecondsSince(start));
    if (round.task < 0) break;
    const WorkloadKernel& k = kernels[round.task];
    const bool first = !merged.contains(round.task);
    if (first) {
      merged[round.task] = outcome.tuned.size();
      outcome.tuned.emplace_back();
    }
    printer.StartKernel(static_cast<int64_t>(merged.size()));
    const Clock::time_point round_start = Clock::now();
    const std::optional<RoundOutcome> result =
        TuneRound(request, plans[k.entry], k, round.trials, round.max_seconds, printer, watcher,
                  outcome.failed);
    tuner::RoundResult r;
    r.wall_seconds = SecondsSince(round_start);
    if (!result.has_value()) {
      r.finished = true;  // tuned already (a kernel with the same record), or it failed
      if (first) {
        merged.erase(round.task);
        outcome.tuned.pop_back();
      }
    } else {
      const KernelTuning& state = result->state;
      KernelTuning& m = outcome.tuned[merged[round.task]];
      r.trials = state.trials - (first ? k.trials_before : m.trials);
      r.seconds_before = result->start_seconds;
      r.seconds_after = state.best_seconds;
      // Failed, every trial made, or its space ran out before the round's trials (a round
      // cut short by the budget or an interrupt is not the kernel's end).
      r.finished = state.ended.rfind("failed", 0) == 0 ||
                   state.trials >= request.tuning.trials_per_kernel ||
                   (state.ended == "completed" && state.trials < state.max_trials);
      MergeRound(state, m, first);
      // A first round cut before its first trial ended tuned nothing: not a row of the table.
      if (first && r.trials == 0 && state.ended.rfind("failed", 0) != 0) {
        merged.erase(round.task);
        outcome.tuned.pop_back();
      }
    }
    scheduler.Report(round.task, r);
    outcome.estimate_curve.emplace_back(SecondsSince(start),
                                        scheduler.EstimatedSeconds() + complete_seconds);
  }
  outcome.estimated_after = scheduler.EstimatedSeconds() + complete_seconds;
  for (const tuner::TaskScheduler::TaskState& s : scheduler.tasks()) {
    outcome.left += s.task.seconds > 0 && !s.finished;
  }
  return outcome;
}

int Report(const TuneRequest& request, const TuneOutcome& outcome, bool interrupted) {
  std::vector<KernelTuningResult> results;
  for (const KernelTuning& k : outcome.tuned) results.push_back(ResultOf(k));
  if (!results.empty()) std::fputs(FormatTuningTable(results).c_str(), stdout);
  for (const KernelTuning& k : outcome.tuned) {
    if (k.ended.rfind("failed", 0) == 0) {
      const std::string& kernel = k.symbol.empty() ? k.kernel : k.symbol;
      std::printf("tuning %s of %s at %s: %s\n", kernel.c_str(), k.function.c_str(),
                  k.shape_class.c_str(), k.ended.c_str());
    }
  }
  if (outcome.kernels > 0) {
    WorkloadEstimate estimate;
    estimate.before_seconds = outcome.estimated_before;
    estimate.after_seconds = outcome.estimated_after;
    estimate.kernels_tuned = static_cast<int64_t>(outcome.tuned.size());
    estimate.kernels = outcome.kernels;
    std::printf("%s", FormatWorkloadEstimate(estimate).c_str());
  }
  if (outcome.already_tuned > 0) {
    std::printf("%lld kernels already tuned in %s (use --retune to tune them again)\n",
                static_cast<long long>(outcome.already_tuned), request.cache_dir.c_str());
  }
  if (results.empty() && !interrupted) {
    if (outcome.left == 0) {
      std::printf("nothing to tune\n");
    } else {
      std::printf("the budget of %gs ended before a kernel's first trial: give it more\n",
                  request.budget_seconds);
    }
  }
  if (outcome.left > 0) {
    std::printf("%lld kernels have trials left: run the same command again to continue\n",
                static_cast<long long>(outcome.left));
  }
  std::string curves = "no tuning curves (nothing was tuned)";
  if (!results.empty()) {
    absl::Status written = WriteTextFile(
        request.svg_path, TuningCurvesSvg(results,
                                          absl::StrCat("pto tune ", request.workload_path,
                                                       ": speed-up over the default by trial"),
                                          outcome.estimate_curve));
    if (!written.ok()) {
      std::fprintf(stderr, "pto tune: %s\n", std::string(written.message()).c_str());
      return 1;
    }
    curves = "tuning curves: " + request.svg_path;
  }
  std::printf("tuning records: %s (pto cache ls --cache %s); %s\n", request.cache_dir.c_str(),
              request.cache_dir.c_str(), curves.c_str());
  std::fflush(stdout);
  if (interrupted) return 130;
  return outcome.failed ? 1 : 0;
}

int RunTune(const CLI::App& command, TuneFlags& flags) {
  if (absl::Status s = CompleteRequest(flags); !s.ok()) {
    return UsageError(command, std::string(s.message()));
  }
  const TuneRequest& request = flags.request;
  // Before any thread starts: the watcher's signal mask is inherited by every thread.
  ProgressPrinter printer;
  InterruptWatcher watcher(&printer);
  absl::StatusOr<proto::Workload> workload = ReadWorkload(request.workload_path);
  if (!workload.ok()) return WorkloadError(workload.status().message());
  absl::StatusOr<std::vector<EntryPlan>> plans = PlanWorkload(*workload, request.workload_path);
  if (!plans.ok()) return WorkloadError(plans.status().message());
  const TuneOutcome outcome = TuneWorkload(request, *plans, printer, watcher);
  const bool interrupted = watcher.interrupted();
  printer.Finish();
  if (interrupted) {
    std::fprintf(stderr,
                 "pto tune: interrupted: run the same command again to continue where it "
                 "stopped\n");
  }
  return Report(request, outcome, interrupted);
}

}  // namespace

void AddTuneCommand(CommandLine& cli) {
  auto flags = std::make_shared<TuneFlags>();
  TuneRequest& r = flags->request;
  CLI::App* tune =
      cli.AddCommand(cli.root(), "tune", "tune a workload's kernels into the cache",
                     [flags](const CLI::App& command) { return RunTune(command, *flags); });
  tune->add_option("--workload", r.workload_path, "the workload file (protobuf text format)")
      ->type_name("FILE");
  tune->add_option("--cache", r.cache_dir,
                   "the cache to tune into (default $PTO_CACHE_DIR, else\n$HOME/.cache/pto)")
      ->type_name("DIR");
  tune->add_option("--budget", flags->budget,
                   "wall time for the whole run (default 600). The workload is\n"
                   "profiled first (each kernel's time x its shape set's calls is its\n"
                   "share of the workload's time); then rounds of a few trials go,\n"
                   "one at a time, to the kernel whose next round is expected to save\n"
                   "the most workload time per second: the heaviest first, and a\n"
                   "kernel that stops improving yields to the next. A later run\n"
                   "starts with the kernels earlier runs left untouched.")
      ->type_name("SECONDS");
  tune->add_option("--trials-per-kernel", r.tuning.trials_per_kernel,
                   "candidate configs tried per kernel at most (default 64)")
      ->type_name("N");
  tune->add_option("--strategy", flags->strategy,
                   "search strategy: evolutionary (default), random or exhaustive")
      ->type_name("S");
  tune->add_option("--seed", r.tuning.seed, "makes the search reproducible (default 1)")
      ->type_name("S");
  tune->add_flag("--retune", r.tuning.retune,
                 "tune kernels the cache holds complete tuning records for");
  tune->add_option("--svg", r.svg_path,
                   "where the tuning curves go (default DIR/tuning_curves.svg)")
      ->type_name("FILE");
  tune->add_option("--threads", r.tuning.threads,
                   "kernels tuned at once (default 1; each is timed on all cores,\n"
                   "so more than 1 makes timings noisier)")
      ->type_name("N");
  tune->footer(
      "Tunes the kernels of a workload (proto/workload.proto: one recorded by\n"
      "`pto demo --record-workload FILE`, or written by hand) and keeps the best configs\n"
      "and their code in the cache, where later runs find them at their first call.\n"
      "Shape sets: a recorded shape class is tuned at the shapes it was called with; a range\n"
      "is tuned at one size per power-of-two bucket it touches; a graph without shapes at its\n"
      "static shapes. Ctrl-C (or SIGTERM) stops cleanly, keeping what was found: run the same\n"
      "command again to continue where it stopped. Exit codes: 0 done, 1 a failure while\n"
      "tuning, 2 a usage or workload error, 130 interrupted.");
}

}  // namespace pto::tools
