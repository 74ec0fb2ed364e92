// pto_bench_train: the training step of two models (the MLP 64 x 1024 -> 4096 -> 1024 with
// cross-entropy, and the causal demo block at batch 16, sequence 128 with a classifier head),
// AdamW, time per step and peak memory, pto against (a) the same step built from oneDNN
// primitives (pto_bench_train_onednn) and (b) PyTorch eager (tools/bench/train_step_torch.py),
// each in its own process with its own default threading, and (c) a roofline floor (matmul
// FLOPs at the measured peak plus the optimizer's bytes at the measured bandwidth).
//
//   pto_bench_train [--threads 2] [--steps 30] [--warmup 5] [--alone-steps 10]
//                   [--models mlp,block] [--layers L] [--tune-trials N]
//   pto_bench_train --side pto --model mlp|block [--threads N] [--steps S] [--warmup W]
//                   [--checkpoint] [--profile] [--dump STAGE] [--trace FILE] [--layers L]
//                   [--tune-trials N] [--cache DIR] [--turns]
//
// --tune-trials N: pto's Runtime tunes every kernel of the step (N trials each, blocking) at
// its first step, as a user tunes before deploying (tools/bench/pto_runner.h); pto's side
// prints what the tuner measured for each kernel.
// --cache DIR (pto's side): the Runtime's kernel cache is the database at DIR instead of memory
// only, so a run can reuse the kernels and tuning records an earlier run left there.
//
// --layers L: the block model is L demo blocks in a row (pto only, with and without
// checkpointing: the baselines build one block).
//
// The first form runs every side as a child process and prints the table; the second is pto's
// child (every side prints one line `RESULT {json}`). The children of a model run at once and
// take turns: each warms up alone, then the timed steps go round by round, one side's step at a
// time (the others wait on their stdin), so noise on a shared machine hits every side alike.
// Then each side takes --alone-steps more steps back to back, the others idle, as a training
// loop runs them: between turns every side finds its data evicted by the others' steps, while
// back to back it finds it in the caches. The table's step times are the turns'; the
// back-to-back median stands beside them.
// Peak memory (each side the same way, in its own process): the high-water mark of the
// resident set during the timed steps (reset through /proc/self/clear_refs after the warm-up)
// minus the resident set after the warm-up: what a step allocates beyond what the process keeps
// between steps; and beside it that high-water mark minus the resident set once the parameters
// and the optimizer state are allocated: the step's whole working set, arenas and caches a side
// keeps included. Warm-up steps train on one batch; each timed step gets a fresh one. The analytic
// floor: parameters, gradients, optimizer state and the activations saved for the backward pass.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "device/device_info.h"
#include "pto/pto.h"
#include "tools/bench/process_memory.h"
#include "tools/bench/pto_runner.h"
#include "tools/bench/roofline.h"
#include "tools/bench/turn_order.h"
#include "tools/pto/transformer_block.h"
#include "tools/subprocess.h"

namespace pto::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string side;  // "" (the driver) or "pto"
  std::string model = "mlp";
  std::vector<std::string> models = {"mlp", "block"};
  int threads = 2;
  int steps = 30;
  int warmup = 5;
  int alone_steps = 10;  // the driver: each side's steps back to back, after the turns
  bool checkpoint = false;
  bool profile = false;  // pto's side: each kernel of the step with its median time
  std::string dump;      // pto's side: a pipeline level of the step (Function::Dump) to stdout
  std::string trace;     // pto's side: a Chrome trace of the timed steps to this file
  bool turns = false;    // pto's side: take turns with the other sides (the driver's protocol)
  int layers = 1;        // the block model: blocks in a row
  PtoTuning tuning;      // pto's side: blocking tuning at the first step (0 trials: off)
  std::string cache;     // pto's side: the kernel cache's directory ("" : memory only)
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

// A model: its loss lambda over (data..., parameters...), the parameters' shapes, the data.
struct Model {
  std::string name;
  int num_inputs = 0;
  std::vector<int> parameters;  // lambda input indices
  std::vector<std::vector<int64_t>> parameter_shapes;
  TraceFn loss;
  // Data: the f32 input and the i32 labels.
  std::vector<int64_t> x_shape;
  int64_t classes = 0;
  double step_flops = 0;   // matmul FLOPs of forward and backward
  double saved_bytes = 0;  // activations the backward pass reads (analytic floor)
};

Model Mlp(bool checkpointed) {
  Model m;
  m.name = "mlp";
  const int64_t b = 64, d = 1024, h = 4096;
  m.num_inputs = 6;  // x, w1, b1, w2, b2, labels
  m.parameters = {1, 2, 3, 4};
  m.parameter_shapes = {{h, d}, {h}, {d, h}, {d}};
  m.loss = [](std::span<const Value> v) {
    return std::vector<Value>{
        cross_entropy(linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]), v[5])};
  };
  m.x_shape = {b, d};
  m.classes = d;
  // Forward: two matmuls; backward: both weight gradients and the hidden layer's data gradient
  // (x is data: no layer computes its gradient).
  m.step_flops = 5.0 * 2.0 * b * d * h;
  // x, the hidden pre-activation and its gelu, the logits' softmax.
  m.saved_bytes = 4.0 * (b * d + 2.0 * b * h + b * d);
  return m;
}

// `layers` demo blocks in a row (each with its own weights), then the head.
Model Block(bool checkpointed, int layers) {
  Model m;
  m.name = layers == 1 ? "block" : "block x" + std::to_string(layers);
  const tools::BlockDims dims{.causal = true, .checkpoint_sublayers = checkpointed};
  const int64_t batch = 16, seq = 128, classes = 10;
  const TraceFn block = tools::TransformerBlock(dims);
  const std::vector<std::vector<int64_t>> shapes = tools::WeightShapes(dims);
  const int per_block = static_cast<int>(shapes.size());
  const int n_weights = layers * per_block;
  m.num_inputs = 1 + n_weights + 3;  // x, the blocks' weights, head_w, head_b, labels
  for (int i = 1; i < 1 + n_weights + 2; ++i) m.parameters.push_back(i);
  for (int l = 0; l < layers; ++l) {
    m.parameter_shapes.insert(m.parameter_shapes.end(), shapes.begin(), shapes.end());
  }
  m.parameter_shapes.push_back({classes, dims.model});
  m.parameter_shapes.push_back({classes});
  m.loss = [block, per_block, layers](std::span<const Value> v) {
    Value h = v[0];
    for (int l = 0; l < layers; ++l) {
      std::vector<Value> in = {h};
      in.insert(in.end(), v.begin() + 1 + l * per_block, v.begin() + 1 + (l + 1) * per_block);
      h = block(in)[0];
    }
    const int head = 1 + layers * per_block;
    const Value logits = linear(reduce_mean(h, 1), v[head], v[head + 1]);
    return std::vector<Value>{cross_entropy(logits, v[head + 2])};
  };
  m.x_shape = {batch, seq, dims.model};
  m.classes = classes;
  const double tokens = batch * seq, d = dims.model, ff = dims.ff;
  const double linear_flops = 2 * tokens * (d * 3 * d + d * d + 2 * d * ff);
  const double attention_flops = 2 * 2 * batch * seq * seq * d;
  m.step_flops = 3 * layers * (linear_flops + attention_flops);
  // Per token: the two norms' inputs, q k v, the attention output, the MLP's hidden (twice),
  // the residual; per head the softmax of the scores.
  m.saved_bytes =
      4.0 * layers * (tokens * (2 * d + 3 * d + d + 2 * ff + d) + batch * dims.heads * seq * seq);
  return m;
}

Model ModelNamed(const std::string& name, bool checkpointed = false, int layers = 1) {
  return name == "mlp" ? Mlp(checkpointed) : Block(checkpointed, layers);
}

int64_t ParameterCount(const Model& m) {
  int64_t n = 0;
  for (const auto& s : m.parameter_shapes) {
    int64_t e = 1;
    for (int64_t d : s) e *= d;
    n += e;
  }
  return n;
}

// pto's side: prints RESULT {json}.
int RunPtoSide(const Options& o) {
  const Model m = ModelNamed(o.model, false, o.layers);
  RuntimeOptions options = PtoRuntimeOptions(o.threads, o.tuning);
  options.cache_path = o.cache;
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) {
    std::fprintf(stderr, "pto_bench_train: %s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::vector<float>> params;
  std::vector<TensorView> init;
  for (const auto& s : m.parameter_shapes) {
    int64_t e = 1;
    for (int64_t d : s) e *= d;
    const float scale = s.size() == 2 ? 1.0f / std::sqrt(static_cast<float>(s[1])) : 0.1f;
    params.emplace_back(e);
    for (float& v : params.back()) v = uniform(rng) * scale;
    init.push_back(TensorView::Dense(params.back().data(), s));
  }
  int64_t xn = 1;
  for (int64_t d : m.x_shape) xn *= d;
  std::vector<float> x(xn);
  for (float& v : x) v = uniform(rng);
  std::vector<int32_t> labels(m.x_shape[0]);
  for (int32_t& l : labels) l = static_cast<int32_t>(rng() % m.classes);
  const TensorView data[2] = {TensorView::Dense(x.data(), m.x_shape),
                              TensorView::Dense(labels.data(), {m.x_shape[0]})};
  // Checkpointed: the block's attention and MLP sublayers, the MLP's hidden layer, each one
  // segment recomputed in the backward pass.
  const TraceFn loss =
      o.checkpoint ? ModelNamed(o.model, /*checkpointed=*/true, o.layers).loss : m.loss;
  absl::StatusOr<std::unique_ptr<TrainStep>> step = (*rt)->JitTrainStepTraced(
      m.name, m.num_inputs, loss, init,
      {.parameters = m.parameters,
       .optimizer = {.kind = Optimizer::Kind::kAdamW, .lr = 1e-3f, .weight_decay = 0.01f}},
      {});
  if (!step.ok()) {
    std::fprintf(stderr, "pto_bench_train: %s\n", std::string(step.status().message()).c_str());
    return 1;
  }
  const int64_t rss_params = ProcStatusBytes("VmRSS");
  float loss_first = 0, loss_last = 0;
  for (int i = 0; i < o.warmup; ++i) {
    absl::StatusOr<float> l = (**step)(data);
    if (!l.ok()) {
      std::fprintf(stderr, "pto_bench_train: %s\n", std::string(l.status().message()).c_str());
      return 1;
    }
    if (i == 0) loss_first = *l;
  }
  const int64_t rss_warm = ProcStatusBytes("VmRSS");
  if (o.tuning.trials_per_kernel > 0) {
    std::fprintf(stderr,
                 "tuning of the step's kernels (default -> tuned, as the tuner timed them):\n%s",
                 TuningSummary((*rt)->tuning_results(), m.name).c_str());
  }
  if (!o.trace.empty()) {
    if (absl::Status s = (*rt)->StartTrace(o.trace); !s.ok()) {
      std::fprintf(stderr, "pto_bench_train: %s\n", std::string(s.message()).c_str());
      return 2;
    }
  }
  const bool reset = ResetPeakResident().empty();
  std::vector<double> ms;
  char line[64];
  if (o.turns) {
    std::printf("READY\n");
    std::fflush(stdout);
  }
  for (int i = 0; i < o.steps; ++i) {
    // A fresh batch per timed step, written before the clock starts: on the warm-up's one batch
    // the loss soon vanishes and subnormal gradients would slow every side.
    for (float& v : x) v = uniform(rng);
    for (int32_t& l : labels) l = static_cast<int32_t>(rng() % m.classes);
    if (o.turns && std::fgets(line, sizeof line, stdin) == nullptr) {
      std::fprintf(stderr, "pto_bench_train: --turns: stdin ended before step %d\n", i);
      return 1;
    }
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<float> l = (**step)(data);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!l.ok()) return 1;
    loss_last = *l;
    if (o.turns) {
      std::printf("STEP %d %.4f %.7f\n", i, ms.back(), loss_last);
      std::fflush(stdout);
    }
  }
  const int64_t hwm = ProcStatusBytes("VmHWM");
  if (o.turns && std::fgets(line, sizeof line, stdin) == nullptr) {
    // The end of input also lets the untimed rest go on.
  }
  if (!o.trace.empty()) {
    absl::StatusOr<TraceSummary> trace = (*rt)->StopTrace();
    if (!trace.ok()) return 1;
    double wall = 0;
    for (double t : ms) wall += t;
    std::printf("trace of the timed steps: %s (%.1f ms of steps)\n", trace->path.c_str(), wall);
    for (const TraceThread& t : trace->threads) {
      std::printf("  %-24s %6lld kernel pieces, %8.1f ms in kernels (%.0f%% of the steps)\n",
                  t.name.c_str(), static_cast<long long>(t.kernel_events), t.kernel_seconds * 1e3,
                  100 * t.kernel_seconds * 1e3 / wall);
    }
  }
  std::vector<std::vector<int64_t>> shapes = {m.x_shape, {m.x_shape[0]}};
  const int64_t total = ParameterCount(m);
  for (int k = 0; k < 3; ++k) shapes.push_back({total});  // parameters, AdamW's m and v
  shapes.push_back({4});                                  // the optimizer's scalars
  absl::StatusOr<std::string> exec = (*step)->function().Dump(Stage::kExec, shapes);
  const int64_t arena = exec.ok() ? ArenaBytesFromExecDump(*exec) : -1;
  if (!o.dump.empty()) {
    absl::StatusOr<std::string> level = (*step)->function().Dump(o.dump, shapes);
    if (!level.ok()) {
      std::fprintf(stderr, "pto_bench_train: %s\n", std::string(level.status().message()).c_str());
      return 2;
    }
    std::printf("%s\n", level->c_str());
  }
  if (o.profile) {
    std::printf("profile of one step (median of %d):\n", o.steps);
    absl::StatusOr<std::vector<KernelProfile>> prof = (*step)->Profile(data, o.steps);
    if (!prof.ok()) {
      std::fprintf(stderr, "pto_bench_train: %s\n", std::string(prof.status().message()).c_str());
      return 1;
    }
    for (const KernelProfile& k : *prof) {
      std::printf("  %-60s %9.1f us %5.1f%% %7.1f GFLOP/s %6.1f GB/s\n", k.kernel.c_str(),
                  k.seconds * 1e6, k.share * 100, k.gflops, k.gbs);
    }
  }

  // Forward alone and forward + backward (no optimizer), for backward / forward.
  std::vector<float> forward_out(1);
  std::vector<TensorView> inputs(m.num_inputs);
  inputs[0] = data[0];
  inputs[m.num_inputs - 1] = data[1];
  for (size_t k = 0; k < m.parameters.size(); ++k) inputs[m.parameters[k]] = (*step)->parameter(k);
  absl::StatusOr<std::unique_ptr<Function>> fwd =
      (*rt)->JitTraced(m.name + "_forward", m.num_inputs, m.loss, {});
  absl::StatusOr<std::unique_ptr<Function>> grad =
      (*rt)->JitGradTraced(m.name + "_grad", m.num_inputs, m.loss, {.wrt = m.parameters}, {});
  if (!fwd.ok() || !grad.ok()) return 1;
  std::vector<std::vector<float>> grads;
  std::vector<TensorView> grad_out = {
      TensorView::Dense(forward_out.data(), std::span<const int64_t>())};
  for (const auto& s : m.parameter_shapes) {
    int64_t e = 1;
    for (int64_t d : s) e *= d;
    grads.emplace_back(e);
    grad_out.push_back(TensorView::Dense(grads.back().data(), s));
  }
  auto time = [&](Function& f, std::span<const TensorView> out) {
    std::vector<double> t;
    for (int i = 0; i < o.warmup + o.steps; ++i) {
      const Clock::time_point t0 = Clock::now();
      if (!f(inputs, absl::MakeConstSpan(out.data(), out.size())).ok()) return -1.0;
      if (i >= o.warmup) {
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    }
    return Percentile(t, 0.5);
  };
  const double forward_ms = time(**fwd, std::span<const TensorView>(grad_out.data(), 1));
  const double grad_ms = time(**grad, grad_out);
  std::printf(
      "RESULT {\"side\": \"pto\", \"model\": \"%s\", \"threads\": %d, \"steps\": %d, "
      "\"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"peak_bytes\": %lld, "
      "\"working_set_bytes\": %lld, \"hwm_reset\": %s, \"loss_first\": %.6g, \"loss_last\": "
      "%.6g, \"forward_ms\": %.4f, \"grad_ms\": %.4f, \"checkpoint\": %s, \"arena_bytes\": %lld, "
      "\"version\": \"pto\"}\n",
      m.name.c_str(), o.threads, o.steps, Percentile(ms, 0.5), Percentile(ms, 0.1),
      Percentile(ms, 0.9), static_cast<long long>(hwm - rss_warm),
      static_cast<long long>(hwm - rss_params), reset ? "true" : "false", loss_first, loss_last,
      forward_ms, grad_ms, o.checkpoint ? "true" : "false", static_cast<long long>(arena));
  return 0;
}

// The value of "key" in a RESULT json line (numbers and strings), or "".
std::string Field(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  size_t at = json.find(k);
  if (at == std::string::npos) return "";
  at += k.size();
  if (json[at] == '"') {
    const size_t end = json.find('"', at + 1);
    return json.substr(at + 1, end - at - 1);
  }
  size_t end = at;
  while (end < json.size() && json[end] != ',' && json[end] != '}') ++end;
  return json.substr(at, end - at);
}
double Number(const std::string& json, const std::string& key) {
  const std::string v = Field(json, key);
  return v.empty() ? NAN : std::atof(v.c_str());
}

std::string Mib(double bytes) {
  if (std::isnan(bytes)) return "-";
  char s[32];
  std::snprintf(s, sizeof s, "%.1f", bytes / 1048576.0);
  return s;
}

// One side of the comparison, run as a child taking turns (--turns): its command, and after
// the run its RESULT json ("" when it failed), everything it printed, and how long its threads
// kept running after each of its steps (spinning before they sleep).
struct Side {
  std::string name;
  std::string command;
  std::string result;
  std::string log;
  std::vector<double> quiet_ms;
  std::vector<double> turn_ms;   // its steps taken in turns (the table's step times)
  std::vector<double> alone_ms;  // its steps back to back, the other sides idle
};

// The step time of a child's `STEP <index> <ms> <loss>` line; NAN if it is not one.
double StepMs(const std::string& line) {
  int index = 0;
  double ms = NAN;
  return std::sscanf(line.c_str(), "STEP %d %lf", &index, &ms) == 2 ? ms : NAN;
}

// The children as tools::WaitForQuiet takes them (null: a side that dropped out).
std::vector<tools::Child*> Alive(const std::vector<std::unique_ptr<tools::Child>>& children) {
  std::vector<tools::Child*> alive;
  for (const auto& c : children) alive.push_back(c.get());
  return alive;
}

// Starts every side, lets each warm up (in turn, each alone on the machine), then runs the timed
// steps round by round, one side at a time, in the order TurnOrder gives each round (every side
// follows every other equally often), and after each step waits for quiet (tools::WaitForQuiet);
// then gives each side `alone` more steps back to back, as a training loop runs them (its data
// stays in the caches between steps); then lets each finish its untimed rest, one at a time. A
// side that fails drops out with what it printed. After each round, with every side quiet, one
// burst of `limit_burst` (the machine's FMA peak): its values, one per round, are returned, so
// that the floor is taken at the machine's speed while the steps ran.
std::vector<double> TakeTurns(std::vector<Side>& sides, int steps, int alone,
                              const std::function<double()>& limit_burst) {
  std::vector<double> bursts;
  std::vector<std::unique_ptr<tools::Child>> children(sides.size());
  std::string line;
  const auto drop_out = [&](size_t s) {
    children[s]->Finish();
    sides[s].log = children[s]->output();
    children[s].reset();
  };
  // One step of side s, its time added to `ms`; a side whose step fails drops out.
  const auto take_step = [&](size_t s, std::vector<double>& ms) {
    if (!children[s]->WriteLine("step") || !children[s]->ReadUntil("STEP ", line)) {
      drop_out(s);
    } else {
      ms.push_back(StepMs(line));
    }
  };
  for (size_t s = 0; s < sides.size(); ++s) {
    children[s] = tools::Child::Start(sides[s].command);
    if (children[s] != nullptr && !children[s]->ReadUntil("READY", line)) drop_out(s);
    tools::WaitForQuiet(Alive(children));
  }
  for (int i = 0; i < steps; ++i) {
    for (size_t s : TurnOrder(sides.size(), i)) {
      if (children[s] == nullptr) continue;
      take_step(s, sides[s].turn_ms);
      sides[s].quiet_ms.push_back(tools::WaitForQuiet(Alive(children)));
    }
    bursts.push_back(limit_burst());
  }
  for (size_t s = 0; s < sides.size(); ++s) {
    for (int i = 0; i < alone && children[s] != nullptr; ++i) take_step(s, sides[s].alone_ms);
    tools::WaitForQuiet(Alive(children));
  }
  for (size_t s = 0; s < sides.size(); ++s) {
    if (children[s] == nullptr) continue;
    children[s]->WriteLine("finish");
    const int rc = children[s]->Finish();
    sides[s].log = children[s]->output();
    const size_t at = sides[s].log.rfind("RESULT {");
    if (rc == 0 && at != std::string::npos) {
      sides[s].result = sides[s].log.substr(at + 7, sides[s].log.find('\n', at) - at - 7);
    }
  }
  return bursts;
}

int RunDriver(const Options& o) {
  const device::DeviceInfo host = device::DetectHost();
  const MachineLimits limits = MeasureLimits(host, o.threads, kBandwidthBurstBytes);
  std::printf("pto_bench_train: %d threads, %d timed steps after %d warm-up, AdamW%s\n", o.threads,
              o.steps, o.warmup,
              o.tuning.trials_per_kernel > 0
                  ? (", pto tuned: " + std::to_string(o.tuning.trials_per_kernel) +
                     " trials per kernel at its first step")
                        .c_str()
                  : "");
  std::printf("machine: fp32 peak %.1f GFLOP/s, bandwidth %.1f GB/s (measured now, %d threads)\n",
              limits.peak_gflops, limits.bandwidth_gbs, o.threads);
  std::printf("handoff before the turns: %s\n", HandoffSummary().c_str());
  const std::string dir = tools::ProgramDirectory();
  char common[128];
  std::snprintf(common, sizeof common, " --threads %d --steps %d --warmup %d", o.threads,
                o.steps + o.alone_steps, o.warmup);
  for (const std::string& name : o.models) {
    const Model m = ModelNamed(name, false, o.layers);
    const int64_t params = ParameterCount(m);
    std::map<std::string, std::string> results;
    const std::string model_flags = " --model " + name + common;
    const std::string pto_flags = model_flags + " --layers " + std::to_string(o.layers) +
                                  " --tune-trials " + std::to_string(o.tuning.trials_per_kernel);
    std::vector<Side> sides = {
        {"pto", "'" + dir + "/pto_bench_train' --side pto --turns" + pto_flags},
        {"pto checkpointed",
         "'" + dir + "/pto_bench_train' --side pto --turns --checkpoint" + pto_flags}};
    // The baselines build one block: --layers compares pto with itself (checkpointing).
    const bool baselines = name == "mlp" || o.layers == 1;
    const std::string onednn = dir + "/pto_bench_train_onednn";
    if (!baselines) {
      std::printf("%s: baselines not run (they build one block)\n", m.name.c_str());
    } else if (::access(onednn.c_str(), X_OK) == 0) {
      sides.push_back({"oneDNN", "'" + onednn + "' --turns" + model_flags});
    } else {
      std::printf("oneDNN: not built (libdnnl-dev missing)\n");
    }
    char env[160];
    std::snprintf(env, sizeof env, "OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d ", o.threads,
                  o.threads);
    if (baselines) {
      sides.push_back({"PyTorch", std::string(env) +
                                      "/usr/bin/python3 '" PTO_SOURCE_DIR
                                      "/tools/bench/train_step_torch.py' --turns" +
                                      model_flags});
    }
    const std::vector<double> bursts = TakeTurns(sides, o.steps, o.alone_steps, [&] {
      // Best of three: after the wait for quiet, an idle vCPU can start a burst late.
      return device::MeasurePeakGflops(host, o.threads, kPeakBurstIterations, 3);
    });
    // The peak while the steps ran: the median of the rounds' bursts (the start's figure when
    // there were none).
    const double peak_gflops = bursts.empty() ? limits.peak_gflops : Percentile(bursts, 0.5);
    std::map<std::string, const Side*> side_named;
    for (const Side& side : sides) {
      results[side.name] = side.result;
      side_named[side.name] = &side;
      if (side.result.empty()) {
        std::printf("%s failed:\n%s\n", side.name.c_str(), side.log.c_str());
      } else if (side.name == "PyTorch") {
        std::printf("PyTorch: %s\n", Field(side.result, "config").c_str());
      }
    }

    // The roofline floor: matmul FLOPs at the peak during the turns, AdamW's bytes at the
    // bandwidth (p, g, m, v read; p, m, v written).
    const double floor_ms = m.step_flops / (peak_gflops * 1e9) * 1e3 +
                            7.0 * 4 * params / (limits.bandwidth_gbs * 1e9) * 1e3;
    const double floor_bytes = 4.0 * params * 4 + m.saved_bytes;  // p, g, m, v + activations
    std::printf("\n%s: %lld parameters, %.2f GFLOP per step; floor %.2f ms, memory floor %s MiB\n",
                m.name.c_str(), static_cast<long long>(params), m.step_flops / 1e9, floor_ms,
                Mib(floor_bytes).c_str());
    if (!bursts.empty()) {
      std::printf(
          "  fp32 peak during the turns: %.1f GFLOP/s (median of %zu, each the best of three "
          "bursts after a round; p10 %.1f, p90 %.1f)\n",
          peak_gflops, bursts.size(), Percentile(bursts, 0.1), Percentile(bursts, 0.9));
    }
    std::printf("  %-18s %10s %10s %10s %9s %9s %9s %9s %12s %12s %8s %8s\n", "side", "ms/step",
                "p10", "p90", "pto/side", "floor/side", "alone ms", "floor/al.", "peak MiB",
                "working MiB", "bwd/fwd", "spin ms");
    const auto median = [](const std::vector<double>& v) {
      return v.empty() ? NAN : Percentile(v, 0.5);
    };
    // The side's timed steps in turns; none for a side that did not run or failed.
    const auto turns_of = [&](const std::string& side) {
      return results[side].empty() ? std::vector<double>{} : side_named.at(side)->turn_ms;
    };
    const double pto_ms = median(turns_of("pto"));
    for (const char* side : {"pto", "pto checkpointed", "oneDNN", "PyTorch"}) {
      const std::vector<double> t = turns_of(side);
      if (t.empty()) {
        std::printf("  %-18s %10s\n", side, "-");
        continue;
      }
      const std::string& r = results[side];
      const Side& sd = *side_named.at(side);
      const double med = Percentile(t, 0.5);
      const double alone = median(sd.alone_ms);
      // Backward over forward: pto's from its forward and forward + backward Functions, the
      // baselines' from their own breakdown of a step.
      const double f = Number(r, "forward_ms");
      const double b = std::string(side).starts_with("pto") ? Number(r, "grad_ms") - f
                                                            : Number(r, "backward_ms");
      std::printf("  %-18s %10.2f %10.2f %10.2f %8.2fx %8.2fx %9.2f %8.2fx %12s %12s %8.2f %8.1f\n",
                  side, med, Percentile(t, 0.1), Percentile(t, 0.9), med / pto_ms, floor_ms / med,
                  alone, floor_ms / alone, Mib(Number(r, "peak_bytes")).c_str(),
                  Mib(Number(r, "working_set_bytes")).c_str(), b / f, median(sd.quiet_ms));
    }
    std::printf(
        "  pto's planned intermediates (the arena of its exec plan): %s MiB, checkpointed %s MiB\n",
        Mib(Number(results["pto"], "arena_bytes")).c_str(),
        Mib(Number(results["pto checkpointed"], "arena_bytes")).c_str());
  }
  std::printf("handoff after the turns: %s\n", HandoffSummary().c_str());
  std::printf(
      "\n(pto/side > 1: pto is faster by that factor; floor/side: the share of the roofline floor\n"
      "the side reaches, the floor at the median FMA peak of bursts measured after each round\n"
      "of turns (a shared machine's speed moves during a run). peak: high-water mark during the\n"
      "timed steps minus the resident set after the warm-up; working: minus the resident set\n"
      "before the first step. The sides take turns, one step each, and after each step the\n"
      "driver waits until no side's threads run: spin ms is the median of that wait after the\n"
      "side's steps, how long its idle threads kept a core busy. alone ms: the median of the\n"
      "side's steps taken back to back after the turns, as a training loop runs them, its data\n"
      "staying in the caches; floor/al.: the floor's share of that.)\n");
  return 0;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) {
  pto::bench::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--side")
      o.side = next();
    else if (a == "--model")
      o.model = next();
    else if (a == "--models")
      o.models = pto::bench::Split(next());
    else if (a == "--threads")
      o.threads = std::atoi(next().c_str());
    else if (a == "--steps")
      o.steps = std::atoi(next().c_str());
    else if (a == "--warmup")
      o.warmup = std::atoi(next().c_str());
    else if (a == "--alone-steps")
      o.alone_steps = std::atoi(next().c_str());
    else if (a == "--checkpoint")
      o.checkpoint = true;
    else if (a == "--profile")
      o.profile = true;
    else if (a == "--dump")
      o.dump = next();
    else if (a == "--trace")
      o.trace = next();
    else if (a == "--turns")
      o.turns = true;
    else if (a == "--layers")
      o.layers = std::atoi(next().c_str());
    else if (a == "--tune-trials")
      o.tuning.trials_per_kernel = std::atoi(next().c_str());
    else if (a == "--cache")
      o.cache = next();
    else {
      std::fprintf(
          stderr,
          "usage: pto_bench_train [--threads N] [--steps S] [--warmup W] [--alone-steps A] "
          "[--models "
          "mlp,block] [--layers L] [--tune-trials N]\n       pto_bench_train --side pto --model "
          "mlp|block "
          "[--threads N] "
          "[--steps S] [--warmup W] [--checkpoint] [--profile] [--dump STAGE] [--trace FILE] "
          "[--layers L] [--tune-trials N] [--cache DIR] [--turns]\n");
      return 2;
    }
  }
  if (o.threads < 1 || o.steps < 1 || o.warmup < 1 || o.layers < 1 || o.alone_steps < 0 ||
      (o.model != "mlp" && o.model != "block")) {
    std::fprintf(stderr,
                 "pto_bench_train: --threads, --steps and --warmup must be >= 1, --alone-steps "
                 ">= 0, --model mlp or block\n");
    return 2;
  }
  return o.side == "pto" ? pto::bench::RunPtoSide(o) : pto::bench::RunDriver(o);
}
