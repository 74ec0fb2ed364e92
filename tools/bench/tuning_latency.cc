// pto_bench_tuning_latency: the caller's loop latency with background tuning on against off
// (target: p99 with tuning on at most 1.25x off). See docs/tuning.md.
//
//   pto_bench_tuning_latency [--batch 4] [--seq 128] [--seconds 20] [--warmup-seconds 2]
//       [--interval-us 0] [--threads 0] [--phases off,on,off] [--tune-trials 24]
//       [--tune-seconds 10] [--tuner-threads 1]
//
// Each phase opens a fresh Runtime with a memory-only cache (so every phase compiles from
// scratch), makes the demo's transformer block (tools/pto/demo_command.cc: same weights, same
// dynamic batch and seq dims), calls it once (the compile: excluded), calls it for
// --warmup-seconds (excluded), then calls it for --seconds of wall time and records each call's
// latency (steady_clock, from the call's start to its return). "on" phases use background
// tuning: the first call queues the block's kernels and the tuner searches while the loop runs.
// --interval-us paces the loop like a server: a call starts every interval (a call that overruns
// its slot delays the next one; missed slots are not made up in a burst); 0 is back-to-back.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "device/device_info.h"
#include "jit/reference_runner.h"
#include "jit/runtime_impl.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"
#include "tools/pto/transformer_block.h"
#include "tools/pto/tuning_report.h"

namespace pto::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Distinct x inputs the loop rotates through (the weights are constant inputs).
constexpr int kInputSets = 4;

struct Flags {
  int64_t batch = 4, seq = 128;
  double seconds = 20, warmup_seconds = 2;
  int64_t interval_us = 0;
  int threads = 0;                                  // RuntimeOptions::intra_op_threads
  std::vector<bool> phases = {false, true, false};  // background tuning on?
  int64_t tune_trials = 24;
  double tune_seconds = 10;
  int tuner_threads = 1;
};

bool ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string value = i + 1 < argc ? argv[++i] : "";
    int64_t n = 0;
    if (arg == "--batch") {
      if (!absl::SimpleAtoi(value, &f.batch) || f.batch < 1 || f.batch > 64) return false;
    } else if (arg == "--seq") {
      if (!absl::SimpleAtoi(value, &f.seq) || f.seq < 1 || f.seq > 1024) return false;
    } else if (arg == "--seconds") {
      if (!absl::SimpleAtod(value, &f.seconds) || !(f.seconds > 0)) return false;
    } else if (arg == "--warmup-seconds") {
      if (!absl::SimpleAtod(value, &f.warmup_seconds) || !(f.warmup_seconds >= 0)) return false;
    } else if (arg == "--interval-us") {
      if (!absl::SimpleAtoi(value, &f.interval_us) || f.interval_us < 0) return false;
    } else if (arg == "--threads") {
      if (!absl::SimpleAtoi(value, &n) || n < 0) return false;
      f.threads = static_cast<int>(n);
    } else if (arg == "--phases") {
      f.phases.clear();
      for (absl::string_view p : absl::StrSplit(value, ',')) {
        if (p != "on" && p != "off") return false;
        f.phases.push_back(p == "on");
      }
    } else if (arg == "--tune-trials") {
      if (!absl::SimpleAtoi(value, &f.tune_trials) || f.tune_trials < 1) return false;
    } else if (arg == "--tune-seconds") {
      if (!absl::SimpleAtod(value, &f.tune_seconds) || !(f.tune_seconds >= 0)) return false;
    } else if (arg == "--tuner-threads") {
      if (!absl::SimpleAtoi(value, &n) || n < 1) return false;
      f.tuner_threads = static_cast<int>(n);
    } else {
      return false;
    }
  }
  return true;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double LoadAverage() {
  double load = -1;
  return getloadavg(&load, 1) == 1 ? load : -1;
}

int64_t TotalTrials(const std::vector<KernelTuning>& results) {
  int64_t trials = 0;
  for (const KernelTuning& k : results) trials += k.trials;
  return trials;
}

// The block's inputs: kInputSets x tensors, the demo's weights, and one output per set.
struct Operands {
  std::vector<ops::HostTensor> xs, weights, outputs;
  std::vector<std::vector<TensorView>> in_views;
  std::vector<TensorView> out_views;
};

Operands MakeOperands(const tools::BlockDims& dims, int64_t batch, int64_t seq) {
  Operands o;
  const std::vector<std::vector<int64_t>> weight_shapes = tools::WeightShapes(dims);
  for (size_t i = 0; i < weight_shapes.size(); ++i) {
    const bool norm_weight = i == 0 || i == 6;  // as pto demo draws them
    o.weights.push_back(norm_weight
                            ? ops::HostTensor::Random(weight_shapes[i], 100 + i, 0.9f, 1.1f)
                            : ops::HostTensor::Random(weight_shapes[i], 100 + i, -0.1f, 0.1f));
  }
  for (int s = 0; s < kInputSets; ++s) {
    o.xs.push_back(ops::HostTensor::Random({batch, seq, dims.model}, s));
    o.outputs.push_back(ops::HostTensor::Filled({batch, seq, dims.model}, 0));
  }
  for (int s = 0; s < kInputSets; ++s) {
    std::vector<TensorView> views = {TensorView::Dense(o.xs[s].data.data(), o.xs[s].shape)};
    for (const ops::HostTensor& w : o.weights)
      views.push_back(TensorView::Dense(w.data.data(), w.shape));
    o.in_views.push_back(std::move(views));
    o.out_views.push_back(TensorView::Dense(o.outputs[s].data.data(), o.outputs[s].shape));
  }
  return o;
}

struct Phase {
  bool tuning = false;
  double first_call_seconds = 0;
  int64_t warmup_calls = 0;
  std::vector<double> latencies;  // seconds, in call order
  std::vector<double> starts;     // each call's start, seconds from the window's start
  double window_seconds = 0;
  double load_before = -1, load_after = -1;
  // Background tuning, inside the measured window.
  int64_t swaps_before = 0, swaps_in_window = 0;
  int64_t trials_before = 0, trials_in_window = 0;
  int kernels_queued = 0, kernels_finished = 0;  // at the window's end
  // The last progress report, seconds from the window's start (negative: before it).
  std::optional<double> tuner_last_event;
  std::vector<KernelTuning> results;  // at the window's end
  std::string idle_priority;          // what the tuner service says about SCHED_IDLE
  std::string check;                  // the output check after the window
};

// Sorted copy's value at quantile q (nearest rank).
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string IdlePriorityText(Runtime& rt) {
  tuner::TuningService* service = rt.impl()->tuning_service();
  if (service == nullptr) return "no tuner service";
  const tuner::ServiceStats s = service->stats();
  char text[256];
  std::snprintf(text, sizeof text, "%s (%lld thread entries switched to SCHED_IDLE, %lld not)%s%s",
                s.idle_priority ? "yes" : "no", static_cast<long long>(s.idle_priority_threads),
                static_cast<long long>(s.idle_priority_failures),
                s.idle_priority_error.empty() ? "" : ": ", s.idle_priority_error.c_str());
  return text;
}

// Compares set 0's output with the ops/ reference, as pto demo does.
std::string CheckOutput(const tools::BlockDims& dims, const Operands& operands,
                        const ops::HostTensor& want) {
  const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, dims.ff),
                                          ops::OpTolerance(ir::OpKind::kLayerNorm, dims.model));
  std::string mismatch;
  if (!ops::AllClose(operands.outputs[0], want, tol, &mismatch)) return "FAIL: " + mismatch;
  return "ok";
}

absl::StatusOr<Phase> RunPhase(const Flags& flags, bool tuning, Operands& operands,
                               const ops::HostTensor& want) {
  Phase phase;
  phase.tuning = tuning;
  std::atomic<int64_t> last_event_ns{-1};
  RuntimeOptions options;  // cache_path empty: memory-only, so every phase compiles from scratch
  options.intra_op_threads = flags.threads;
  if (tuning) {
    TuningOptions& t = options.tuning;
    t.mode = TuningMode::kBackground;
    t.trials_per_kernel = flags.tune_trials;
    t.seconds_per_kernel = flags.tune_seconds;
    t.threads = flags.tuner_threads;
    t.progress = [&last_event_ns](const KernelTuning&) {
      last_event_ns.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    };
  }
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) return rt.status();
  const tools::BlockDims dims;
  const TraceFn block = tools::TransformerBlock(dims);
  FunctionOptions fopts;  // as pto demo makes it
  fopts.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, 1024)}};
  for (int i = 1; i <= static_cast<int>(operands.weights.size()); ++i)
    fopts.constant_inputs.push_back(i);
  absl::StatusOr<std::unique_ptr<Function>> fn = (*rt)->JitTraced(
      "transformer_block", 1 + static_cast<int>(operands.weights.size()), block, fopts);
  if (!fn.ok()) return fn.status();
  auto call = [&](int set) {
    return (**fn)(operands.in_views[set], {&operands.out_views[set], 1});
  };

  phase.load_before = LoadAverage();
  const Clock::time_point first = Clock::now();
  if (absl::Status s = call(0); !s.ok()) return s;
  phase.first_call_seconds = Seconds(Clock::now() - first);
  const Clock::time_point warm_end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(flags.warmup_seconds));
  while (Clock::now() < warm_end) {
    if (absl::Status s = call(phase.warmup_calls % kInputSets); !s.ok()) return s;
    ++phase.warmup_calls;
  }

  phase.swaps_before = (*fn)->stats().plans_swapped;
  phase.trials_before = TotalTrials((*rt)->tuning_results());
  const auto interval = std::chrono::microseconds(flags.interval_us);
  const auto window =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.seconds));
  phase.latencies.reserve(1 << 20);
  phase.starts.reserve(1 << 20);
  const Clock::time_point start = Clock::now();
  Clock::time_point next = start;
  for (int64_t i = 0;; ++i) {
    if (flags.interval_us > 0) {
      std::this_thread::sleep_until(next);
      // The next slot; after an overrun past it, one interval after this call's start.
      const Clock::time_point now = Clock::now();
      next += interval;
      if (next <= now) next = now + interval;
    }
    const Clock::time_point t0 = Clock::now();
    if (t0 - start >= window) break;
    const absl::Status s = call(static_cast<int>(i % kInputSets));
    const Clock::time_point t1 = Clock::now();
    if (!s.ok()) return s;
    phase.latencies.push_back(Seconds(t1 - t0));
    phase.starts.push_back(Seconds(t0 - start));
  }
  const Clock::time_point end = Clock::now();
  phase.window_seconds = Seconds(end - start);
  phase.results = (*rt)->tuning_results();
  phase.swaps_in_window = (*fn)->stats().plans_swapped - phase.swaps_before;
  phase.trials_in_window = TotalTrials(phase.results) - phase.trials_before;
  phase.load_after = LoadAverage();
  for (const KernelTuning& k : phase.results) phase.kernels_finished += k.finished ? 1 : 0;
  phase.kernels_queued = static_cast<int>(phase.results.size());
  const int64_t last_ns = last_event_ns.load();
  if (last_ns >= 0) {
    phase.tuner_last_event = Seconds(Clock::time_point(Clock::duration(last_ns)) - start);
  }
  if (tuning) phase.idle_priority = IdlePriorityText(**rt);

  std::fill(operands.outputs[0].data.begin(), operands.outputs[0].data.end(), 0.0f);
  if (absl::Status s = call(0); !s.ok()) return s;
  phase.check = CheckOutput(dims, operands, want);
  return phase;  // the Runtime goes here: a tuner still running is stopped
}

std::string Ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

void PrintRow(const char* label, const std::vector<double>& latencies) {
  if (latencies.empty()) {
    std::printf("  %-26s %8d\n", label, 0);
    return;
  }
  std::printf("  %-26s %8zu %10s %10s %10s %10s\n", label, latencies.size(),
              Ms(Quantile(latencies, 0.5)).c_str(), Ms(Quantile(latencies, 0.9)).c_str(),
              Ms(Quantile(latencies, 0.99)).c_str(),
              Ms(*std::max_element(latencies.begin(), latencies.end())).c_str());
}

void PrintTuningResults(const Phase& p) {
  std::vector<tools::KernelTuningResult> rows;
  int completed = 0, budget = 0, running = 0, queued = 0, other = 0;
  for (const KernelTuning& k : p.results) {
    rows.push_back(tools::ResultOf(k));
    if (!k.finished) {
      (k.elapsed_seconds > 0 || k.default_seconds > 0 ? running : queued) += 1;
    } else if (k.ended == "completed") {
      ++completed;
    } else if (k.ended == "budget") {
      ++budget;
    } else {
      ++other;
    }
  }
  std::printf(
      "\nkernel tuning results at the end of the measured window (times measured by the tuner, "
      "beside the running loop):\n%s",
      tools::FormatTuningTable(rows).c_str());
  std::printf(
      "kernels: %d queued in all; %d completed, %d stopped by their budget, %d ended otherwise, "
      "%d still tuning, %d not started (the Runtime's end stops them)\n",
      p.kernels_queued, completed, budget, other, running, queued);
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags) || flags.phases.empty()) {
    std::fprintf(stderr,
                 "usage: pto_bench_tuning_latency [--batch 4] [--seq 128] [--seconds 20] "
                 "[--warmup-seconds 2] [--interval-us 0] [--threads 0] [--phases off,on,off] "
                 "[--tune-trials 24] [--tune-seconds 10] [--tuner-threads 1]\n");
    return 2;
  }
  const device::DeviceInfo device = device::DetectHost();
  const tools::BlockDims dims;
  std::printf("machine : %s, %s, %d cores usable by this process (%u online)\n",
              device.brand.c_str(), device::IsaName(device.isa), device.cores,
              std::thread::hardware_concurrency());
  std::printf(
      "program : demo transformer block (model %lld, heads %lld, mlp %lld), x [%lld, %lld, "
      "%lld]; dynamic batch and seq as in pto demo; %d x inputs rotated\n",
      static_cast<long long>(dims.model), static_cast<long long>(dims.heads),
      static_cast<long long>(dims.ff), static_cast<long long>(flags.batch),
      static_cast<long long>(flags.seq), static_cast<long long>(dims.model), kInputSets);
  std::printf(
      "loop    : %.0f s per phase after the first call (compile) and %.1f s of warm-up; %s; "
      "intra_op_threads %d%s; memory-only cache in every phase\n",
      flags.seconds, flags.warmup_seconds,
      flags.interval_us == 0
          ? "calls back-to-back (--interval-us 0)"
          : ("a call every " + std::to_string(flags.interval_us) + " us").c_str(),
      flags.threads, flags.threads == 0 ? " (every core)" : "");
  std::printf(
      "tuning  : background, evolutionary, %lld trials and %.0f s per kernel at most, %d tuner "
      "thread%s\n",
      static_cast<long long>(flags.tune_trials), flags.tune_seconds, flags.tuner_threads,
      flags.tuner_threads == 1 ? "" : "s");
  std::fflush(stdout);

  Operands operands = MakeOperands(dims, flags.batch, flags.seq);
  std::vector<ops::HostTensor> reference_inputs = {operands.xs[0]};
  reference_inputs.insert(reference_inputs.end(), operands.weights.begin(), operands.weights.end());
  absl::StatusOr<std::vector<ops::HostTensor>> want =
      jit::RunReferenceOf(tools::TransformerBlock(dims), reference_inputs);
  if (!want.ok()) {
    std::fprintf(stderr, "reference: %s\n", std::string(want.status().message()).c_str());
    return 1;
  }

  std::vector<Phase> phases;
  for (size_t i = 0; i < flags.phases.size(); ++i) {
    std::fprintf(stderr, "phase (%c) tuning %s ...\n", static_cast<char>('a' + i),
                 flags.phases[i] ? "on" : "off");
    absl::StatusOr<Phase> p = RunPhase(flags, flags.phases[i], operands, (*want)[0]);
    if (!p.ok()) {
      std::fprintf(stderr, "phase (%c): %s\n", static_cast<char>('a' + i),
                   std::string(p.status().message()).c_str());
      return 1;
    }
    phases.push_back(*std::move(p));
    if (phases.back().tuning) PrintTuningResults(phases.back());
  }

  std::printf("\nlatency per call in ms (from the call's start to its return):\n");
  std::printf("  %-26s %8s %10s %10s %10s %10s\n", "phase", "calls", "median", "p90", "p99", "max");
  bool failed = false;
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& p = phases[i];
    char label[64];
    std::snprintf(label, sizeof label, "(%c) tuning %s", static_cast<char>('a' + i),
                  p.tuning ? "on" : "off");
    PrintRow(label, p.latencies);
    // The part of the window the tuner was still reporting in: where it can disturb the loop.
    if (p.tuning && p.kernels_finished == p.kernels_queued && p.tuner_last_event.has_value() &&
        *p.tuner_last_event > 0 && *p.tuner_last_event < p.window_seconds) {
      std::vector<double> busy;
      for (size_t c = 0; c < p.latencies.size() && p.starts[c] <= *p.tuner_last_event; ++c)
        busy.push_back(p.latencies[c]);
      std::snprintf(label, sizeof label, "    first %.1f s (tuner on)", *p.tuner_last_event);
      PrintRow(label, busy);
    }
    failed |= p.check != "ok";
  }
  std::printf("\nper phase:\n");
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& p = phases[i];
    std::printf(
        "  (%c) first call (compile) %.0f ms, %lld warm-up calls, window %.1f s, load average "
        "%.2f -> %.2f, output check %s\n",
        static_cast<char>('a' + i), p.first_call_seconds * 1e3,
        static_cast<long long>(p.warmup_calls), p.window_seconds, p.load_before, p.load_after,
        p.check.c_str());
    if (!p.tuning) continue;
    char last[64] = "none";
    if (p.tuner_last_event.has_value() && *p.tuner_last_event >= 0) {
      std::snprintf(last, sizeof last, "at %.1f s of %.1f s", *p.tuner_last_event,
                    p.window_seconds);
    } else if (p.tuner_last_event.has_value()) {
      std::snprintf(last, sizeof last, "%.1f s before the window", -*p.tuner_last_event);
    }
    std::printf(
        "      tuner inside the window: %lld trials, %lld plans swapped (%lld trials and %lld "
        "swaps before it); %d of %d kernels finished by its end; last tuner report %s\n",
        static_cast<long long>(p.trials_in_window), static_cast<long long>(p.swaps_in_window),
        static_cast<long long>(p.trials_before), static_cast<long long>(p.swaps_before),
        p.kernels_finished, p.kernels_queued, last);
    std::printf("      tuner threads at idle priority: %s\n", p.idle_priority.c_str());
  }

  const bool both = std::count(flags.phases.begin(), flags.phases.end(), true) > 0 &&
                    std::count(flags.phases.begin(), flags.phases.end(), false) > 0;
  if (both) std::printf("\nratios tuning on / off (target: p99 at most 1.25x):\n");
  for (size_t on = 0; on < phases.size(); ++on) {
    if (!phases[on].tuning) continue;
    for (size_t off = 0; off < phases.size(); ++off) {
      if (phases[off].tuning) continue;
      const double median =
          Quantile(phases[on].latencies, 0.5) / Quantile(phases[off].latencies, 0.5);
      const double p99 =
          Quantile(phases[on].latencies, 0.99) / Quantile(phases[off].latencies, 0.99);
      std::printf("  (%c) / (%c): median %.2fx, p99 %.2fx  %s\n", static_cast<char>('a' + on),
                  static_cast<char>('a' + off), median, p99,
                  p99 <= 1.25 ? "(within 1.25x)" : "(ABOVE 1.25x)");
    }
  }
  std::printf("%s\n", failed ? "FAIL: an output check failed" : "outputs checked: ok");
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) { return pto::bench::Main(argc, argv); }
