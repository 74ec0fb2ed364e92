// pto_bench_train_onednn: the oneDNN baseline of the training-step bench (docs/training.md,
// "Training-step bench: baselines"). One training step (forward, backward, AdamW) of the MLP
// or the demo's transformer block with a classifier head (train_onednn_models.h), composed of
// oneDNN 2.6 primitives created once, each writing its result to memory, plus plain OpenMP
// loops for cross-entropy, the sequence mean's gradient and AdamW (train_onednn_layers.h).
//
//   pto_bench_train_onednn --model mlp|block [--threads N] [--steps S] [--warmup W] [--check]
//                          [--turns]
//
// --turns: for a driver that alternates programs step by step (so noise on a shared machine
// hits all alike): after the warm-up the program prints `READY`, before each timed step it waits
// for a line on stdin, after it prints `STEP <index> <ms> <loss>` (flushed), and after the last
// one it waits for one more line (or the end of input) before it goes on. End of input before
// the last step is an error.
//
// Threads: oneDNN's own OpenMP runtime with its default wait policy; the thread count is set
// with omp_set_num_threads(N) before any primitive is created (OMP_NUM_THREADS is not needed).
// Steps: W warm-up steps (at least 2) on one fixed synthetic batch, whose loss must fall (the
// losses are printed; a loss that does not fall is an error), then S timed steps, each on a
// fresh synthetic batch written into the input buffers before the step (untimed, as a data
// loader would). On the fixed batch the MLP's loss reaches 1e-11 within 15 steps and its
// gradients go subnormal, which slows every step: fresh batches keep the numbers those of
// training. --check first compares every parameter's gradient with a central finite
// difference of the loss along the gradient's direction.
// Memory: VmRSS after the parameters are in memory, after the warm-up, and VmHWM during the
// timed steps (reset first by writing "5" to /proc/self/clear_refs).
// The last line is `RESULT {json}` for the bench that drives this program.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dnnl.hpp"
#include "tools/bench/process_memory.h"
#include "tools/bench/train_onednn_models.h"

namespace pto::bench::train {
namespace {

struct Flags {
  std::string model;
  int threads = 2, steps = 20, warmup = 3;
  bool check = false;
  bool turns = false;
};

bool ParseInt(const char* s, int min, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < min || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--check") {
      f->check = true;
    } else if (a == "--turns") {
      f->turns = true;
    } else if (a == "--model" && has_value) {
      f->model = argv[++i];
    } else if (a == "--threads" && has_value) {
      if (!ParseInt(argv[++i], 1, &f->threads)) return false;
    } else if (a == "--steps" && has_value) {
      if (!ParseInt(argv[++i], 1, &f->steps)) return false;
    } else if (a == "--warmup" && has_value) {
      if (!ParseInt(argv[++i], 2, &f->warmup)) return false;
    } else {
      return false;
    }
  }
  return f->model == "mlp" || f->model == "block";
}

double Norm(const float* p, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(p[i]) * p[i];
  return std::sqrt(s);
}

// For every parameter: the derivative of the loss along its gradient's direction u = g / |g|,
// by central differences, against the analytic |g|. Parameters are restored afterwards.
bool CheckGradients(Step& step) {
  step.RunForward();
  step.RunBackward();
  std::vector<std::vector<float>> grads;
  for (Parameter& p : step.params()) grads.emplace_back(p.grad.data, p.grad.data + p.grad.size());
  bool ok = true;
  std::printf("gradient check (central difference along each gradient's direction):\n");
  for (size_t i = 0; i < grads.size(); ++i) {
    Parameter& p = step.params()[i];
    const int64_t n = p.value.size();
    const double g_norm = Norm(grads[i].data(), n);
    if (!(g_norm > 0)) {
      std::printf("  %-8s gradient is zero or not finite (%g): FAIL\n", p.name.c_str(), g_norm);
      ok = false;
      continue;
    }
    // The step along u: 1e-2 of the parameter's norm (at least 1e-2).
    const double t = 1e-2 * std::max(1.0, Norm(p.value.data, n));
    const std::vector<float> saved(p.value.data, p.value.data + n);
    auto loss_at = [&](double s) {
      for (int64_t j = 0; j < n; ++j)
        p.value.data[j] = static_cast<float>(saved[j] + s * grads[i][j] / g_norm);
      return step.RunForward();
    };
    const double fd = (loss_at(t) - loss_at(-t)) / (2 * t);
    std::copy(saved.begin(), saved.end(), p.value.data);
    const double rel = std::abs(fd - g_norm) / g_norm;
    const bool pass = rel <= 5e-3;
    ok = ok && pass;
    std::printf("  %-8s |g| %.6e  finite difference %.6e  relative error %.1e  %s\n",
                p.name.c_str(), g_norm, fd, rel, pass ? "ok" : "FAIL");
  }
  return ok;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::string OnednnVersion() {
  const dnnl_version_t* v = dnnl_version();
  char buf[160];
  std::snprintf(buf, sizeof(buf), "oneDNN %d.%d.%d (%s, cpu runtime %s)", v->major, v->minor,
                v->patch, v->hash, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other");
  return buf;
}

// The warm-up steps on the fixed batch, then the timed steps on fresh batches, with the memory
// read around them.
struct Run {
  std::vector<double> warm_losses, timed_losses, ms;
  std::vector<double> forward_ms, backward_ms, update_ms;  // the parts of each timed step
  int64_t resident_after_warm = -1, hwm = -1;
  std::string reset_error;  // empty when the high-water mark was reset
  std::string error;        // why the timed steps stopped early
};

Run TrainAndTime(Step& step, const Batch& batch, const Flags& flags) {
  Run run;
  for (int i = 0; i < flags.warmup; ++i) run.warm_losses.push_back(step.Train());
  run.resident_after_warm = ProcStatusBytes("VmRSS");
  run.reset_error = ResetPeakResident();
  char line[64];
  if (flags.turns) {
    std::printf("READY\n");
    std::fflush(stdout);
  }
  for (int i = 0; i < flags.steps; ++i) {
    FillBatch(batch, i + 1);
    if (flags.turns) {
      if (std::fgets(line, sizeof(line), stdin) == nullptr) {
        run.error = "--turns: stdin ended before step " + std::to_string(i);
        return run;
      }
    }
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t) {
      return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    };
    const Clock::time_point start = Clock::now();
    run.timed_losses.push_back(step.RunForward());
    run.forward_ms.push_back(since(start));
    step.RunBackward();
    run.backward_ms.push_back(since(start) - run.forward_ms.back());
    step.RunUpdate();
    run.ms.push_back(since(start));
    run.update_ms.push_back(run.ms.back() - run.forward_ms.back() - run.backward_ms.back());
    if (flags.turns) {
      std::printf("STEP %d %.4f %.7f\n", i, run.ms.back(), run.timed_losses.back());
      std::fflush(stdout);
    }
  }
  run.hwm = ProcStatusBytes("VmHWM");
  if (flags.turns && std::fgets(line, sizeof(line), stdin) == nullptr) {
    // The end of input also lets it go on.
  }
  return run;
}

void Report(const Flags& flags, const Step& step, const Run& run, const std::string& version,
            const char* check) {
  const int64_t peak = run.hwm - run.resident_after_warm;
  const int64_t over_parameters = run.hwm - step.resident_after_parameters();
  const int64_t working_set = run.hwm - step.resident_after_state();
  if (!run.reset_error.empty()) std::printf("peak reset failed: %s\n", run.reset_error.c_str());
  std::printf("loss on the fixed batch, warm-up steps:");
  for (double l : run.warm_losses) std::printf(" %.6f", l);
  std::printf("\nloss on fresh batches, timed steps: first %.6f, last %.6f\n",
              run.timed_losses.front(), run.timed_losses.back());
  const double median = Percentile(run.ms, 0.5), p10 = Percentile(run.ms, 0.1),
               p90 = Percentile(run.ms, 0.9);
  const double forward = Percentile(run.forward_ms, 0.5),
               backward = Percentile(run.backward_ms, 0.5), update = Percentile(run.update_ms, 0.5);
  std::printf(
      "step time over %d steps: median %.3f ms (p10 %.3f, p90 %.3f); medians of its parts: "
      "forward %.3f, backward %.3f (%.2fx forward), update %.3f ms\n",
      flags.steps, median, p10, p90, forward, backward, backward / forward, update);
  std::printf(
      "memory: VmRSS after parameters %.1f MiB, after the warm-up %.1f MiB; VmHWM during the "
      "timed steps %.1f MiB: peak over the warm resident %.2f MiB, over the parameters' %.2f "
      "MiB\n",
      step.resident_after_parameters() / 1048576.0, run.resident_after_warm / 1048576.0,
      run.hwm / 1048576.0, peak / 1048576.0, over_parameters / 1048576.0);
  std::printf(
      "RESULT {\"baseline\": \"onednn\", \"model\": \"%s\", \"threads\": %d, \"steps\": %d, "
      "\"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"forward_ms\": %.4f, "
      "\"backward_ms\": %.4f, \"update_ms\": %.4f, \"peak_bytes\": %lld, "
      "\"resident_after_warm_bytes\": %lld, \"peak_over_parameters_bytes\": %lld, "
      "\"working_set_bytes\": %lld, "
      "\"peak_reset\": \"%s\", \"loss_first\": %.7f, \"loss_last\": %.7f, "
      "\"loss_timed_last\": %.7f, \"check\": \"%s\", \"version\": \"%s\"}\n",
      flags.model.c_str(), flags.threads, flags.steps, median, p10, p90, forward, backward, update,
      static_cast<long long>(peak), static_cast<long long>(run.resident_after_warm),
      static_cast<long long>(over_parameters), static_cast<long long>(working_set),
      run.reset_error.empty() ? "ok" : "failed", run.warm_losses.front(), run.warm_losses.back(),
      run.timed_losses.back(), check, version.c_str());
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: pto_bench_train_onednn --model mlp|block [--threads N>=1] [--steps S>=1] "
                 "[--warmup W>=2] [--check] [--turns]\n");
    return 2;
  }
  Step step(flags.threads, AdamWConfig{});
  Batch batch;
  try {
    batch = flags.model == "mlp" ? BuildMlp(step) : BuildBlock(step);
  } catch (const dnnl::error& e) {
    std::fprintf(stderr, "pto_bench_train_onednn: oneDNN: %s\n", e.what());
    return 1;
  }
  const std::string version = OnednnVersion();
  std::printf("%s; model %s; %d thread%s (omp_get_max_threads %d); OMP_WAIT_POLICY=%s\n",
              version.c_str(), flags.model.c_str(), flags.threads, flags.threads == 1 ? "" : "s",
              omp_get_max_threads(),
              std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "(default)");
  std::printf("parameters %.2f MiB, gradients + AdamW state %.2f MiB, workspace %.2f MiB\n",
              step.parameter_bytes() / 1048576.0, step.state_bytes() / 1048576.0,
              step.workspace_bytes() / 1048576.0);
  const bool check_ok = !flags.check || CheckGradients(step);
  const Run run = TrainAndTime(step, batch, flags);
  if (!run.error.empty()) {
    std::fprintf(stderr, "pto_bench_train_onednn: %s\n", run.error.c_str());
    return 2;
  }
  Report(flags, step, run, version, flags.check ? (check_ok ? "passed" : "failed") : "not run");
  const bool loss_fell = run.warm_losses.back() < run.warm_losses.front();
  if (!loss_fell) std::printf("ERROR: the loss did not fall on the fixed batch\n");
  if (!check_ok) std::printf("ERROR: the gradient check failed\n");
  return loss_fell && check_ok ? 0 : 1;
}

}  // namespace
}  // namespace pto::bench::train

int main(int argc, char** argv) { return pto::bench::train::Main(argc, argv); }
