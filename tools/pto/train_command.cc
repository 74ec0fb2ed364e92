// `pto train`: trains the demo's transformer block (causal) with a classifier head on a
// synthetic task, with AdamW and varying batch sizes, as one compiled training step
// (Runtime::JitTrainStep). The task: `classes` random prototype sequences; each example is one
// of them plus uniform noise, labelled with its prototype. Prints a line per step (batch, loss,
// step time, compiles so far), checks the first steps' losses against the same run in PyTorch
// (tools/pto/train_torch_check.py, when Debian's python3-torch is installed) and requires the
// mean loss of the last 10 steps to fall below --target. `--record-workload FILE` writes the
// step's shape classes for `pto tune --workload FILE` (a training step tunes like any Function).
// Exit codes: 0 the target is met and the torch check agrees (or could not run), 1 otherwise, 2 a
// usage error.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ops/host_tensor.h"
#include "pto/pto.h"
#include "tools/npy.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/transformer_block.h"
#include "tools/subprocess.h"

namespace pto::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct TrainOptions {
  int steps = 200;
  int64_t seq = 32;
  int64_t classes = 8;
  float noise = 3.0f;
  float lr = 1e-3f;
  float weight_decay = 0.01f;
  float target = 0.25f;
  int torch_steps = 5;
  std::string workload_path;
  RuntimeOptions runtime;
};

// Each step's batch size, cycled: shape classes serve them.
constexpr int64_t kBatches[] = {8, 16, 32, 12};
// The torch check: each of the first steps' losses within this of torch's (relative). Both
// sides compute in f32 (docs/training.md: the comparison tests hold 1e-5 on these programs).
constexpr double kTorchRtol = 1e-4;

// The parameter names of tests/training/torch_reference.py's block program, in the lambda's
// order: the block's weights, then the head.
const char* const kNames[] = {"ln1_w", "ln1_b", "qkv_w", "qkv_b",  "proj_w", "proj_b", "ln2_w",
                              "ln2_b", "up_w",  "up_b",  "down_w", "down_b", "head_w", "head_b"};

std::vector<ops::HostTensor> InitialWeights(const BlockDims& dims, int64_t classes) {
  std::vector<std::vector<int64_t>> shapes = WeightShapes(dims);
  shapes.push_back({classes, dims.model});
  shapes.push_back({classes});
  std::vector<ops::HostTensor> w;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = kNames[i];
    const std::vector<int64_t>& s = shapes[i];
    if (s.size() == 2) {  // a linear weight [out, in]: PyTorch's default scale
      const float bound = 1.0f / std::sqrt(static_cast<float>(s[1]));
      w.push_back(ops::HostTensor::Random(s, 200 + i, -bound, bound));
    } else if (name.starts_with("ln") && name.ends_with("_w")) {
      w.push_back(ops::HostTensor::Filled(s, 1.0f));
    } else {
      w.push_back(ops::HostTensor::Filled(s, 0.0f));
    }
  }
  return w;
}

struct Batch {
  ops::HostTensor x;
  std::vector<int32_t> labels;
};

// Examples of the task: prototype[label] + noise, uniform in [-noise, noise).
class Task {
 public:
  Task(const TrainOptions& o, int64_t model)
      : o_(o), model_(model), prototypes_(ops::HostTensor::Random({o.classes, o.seq, model}, 7)) {}

  Batch Next(int64_t batch) {
    Batch b;
    b.x.shape = {batch, o_.seq, model_};
    const int64_t row = o_.seq * model_;
    std::uniform_int_distribution<int32_t> label(0, static_cast<int32_t>(o_.classes) - 1);
    std::uniform_real_distribution<float> noise(-o_.noise, o_.noise);
    for (int64_t i = 0; i < batch; ++i) {
      const int32_t c = label(rng_);
      b.labels.push_back(c);
      for (int64_t e = 0; e < row; ++e)
        b.x.data.push_back(prototypes_.data[c * row + e] + noise(rng_));
    }
    return b;
  }

 private:
  const TrainOptions& o_;
  int64_t model_;
  ops::HostTensor prototypes_;
  std::mt19937 rng_{1234};
};

// PyTorch's losses of the first `batches`, or an empty vector (and why, in `why`) when the check
// cannot run.
std::vector<float> TorchLosses(const TrainOptions& o, const std::vector<ops::HostTensor>& weights,
                               const std::vector<Batch>& batches, std::string& why) {
  const std::string python = PTO_DEBIAN_PYTHON;
  if (python.empty() || ::access(python.c_str(), X_OK) != 0) {
    why = "Debian's python3 was not found (tools/setup.sh installs it with python3-torch)";
    return {};
  }
  std::string dir = "/tmp/pto_train_XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    why = "cannot make a temporary directory";
    return {};
  }
  bool written = true;
  for (size_t i = 0; i < weights.size(); ++i) {
    written &= WriteNpy(dir + "/" + kNames[i] + ".npy", weights[i]).ok();
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    written &= WriteNpy(dir + "/x_" + std::to_string(i) + ".npy", batches[i].x).ok();
    NpyArray labels;
    labels.shape = {static_cast<int64_t>(batches[i].labels.size())};
    for (int32_t l : batches[i].labels) labels.data.push_back(static_cast<float>(l));
    written &= WriteNpy(dir + "/labels_" + std::to_string(i) + ".npy", labels).ok();
  }
  std::vector<float> losses;
  if (!written) {
    why = "cannot write the inputs to " + dir;
  } else {
    char flags[160];
    std::snprintf(flags, sizeof flags, " --steps %zu --lr %.9g --weight_decay %.9g", batches.size(),
                  o.lr, o.weight_decay);
    std::string output;
    const int rc =
        RunCommand("'" + python + "' '" PTO_SOURCE_DIR "/tools/pto/train_torch_check.py' --dir '" +
                       dir + "'" + flags,
                   output);
    absl::StatusOr<NpyArray> got = ReadNpy(dir + "/torch_losses.npy");
    if (rc != 0 || !got.ok()) {
      why =
          "train_torch_check.py failed (is python3-torch installed? tools/setup.sh installs "
          "it): " +
          output.substr(0, 400);
    } else {
      losses = got->data;
    }
  }
  std::system(("rm -rf '" + dir + "'").c_str());
  return losses;
}

int RunTrain(const CLI::App& command, TrainOptions& o) {
  if (o.steps < 10 || o.seq < 1 || o.classes < 2 || o.torch_steps < 0 || o.torch_steps > o.steps) {
    return UsageError(command,
                      "--steps must be >= 10, --seq >= 1, --classes >= 2 and --torch-steps in "
                      "[0, steps]");
  }
  o.runtime.record_workload = !o.workload_path.empty();
  o.runtime.log_sink = [](LogLevel, std::string_view message) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(o.runtime);
  if (!rt.ok()) {
    std::fprintf(stderr, "pto train: %s\n", std::string(rt.status().message()).c_str());
    return 1;
  }
  const BlockDims dims{.causal = true};
  const TraceFn block = TransformerBlock(dims);
  const int n_block = 1 + static_cast<int>(WeightShapes(dims).size());
  const std::vector<ops::HostTensor> weights = InitialWeights(dims, o.classes);
  std::vector<TensorView> init;
  std::vector<int> parameters;
  for (size_t i = 0; i < weights.size(); ++i) {
    init.push_back(TensorView::Dense(weights[i].data.data(), weights[i].shape));
    parameters.push_back(1 + static_cast<int>(i));
  }
  const int num_inputs = n_block + 3;  // x, the block's weights, head_w, head_b, labels
  Dim batch("batch", 1, 256);
  absl::StatusOr<std::unique_ptr<TrainStep>> step = (*rt)->JitTrainStepTraced(
      "train", num_inputs,
      [block, n_block](std::span<const Value> v) {
        const Value out = block(v.first(n_block))[0];
        const Value logits = linear(reduce_mean(out, 1), v[n_block], v[n_block + 1]);
        return std::vector<Value>{cross_entropy(logits, v[n_block + 2])};
      },
      init,
      {.parameters = parameters,
       .optimizer = {.kind = Optimizer::Kind::kAdamW, .lr = o.lr, .weight_decay = o.weight_decay}},
      {.dynamic = {{0, 0, batch}, {num_inputs - 1, 0, batch}}});
  if (!step.ok()) {
    std::fprintf(stderr, "pto train: %s\n", std::string(step.status().message()).c_str());
    return 1;
  }
  std::printf(
      "pto train: causal transformer block (model %lld, heads %lld, mlp %lld) + head, %lld "
      "classes, seq %lld, AdamW lr %g, %d steps, batches",
      static_cast<long long>(dims.model), static_cast<long long>(dims.heads),
      static_cast<long long>(dims.ff), static_cast<long long>(o.classes),
      static_cast<long long>(o.seq), o.lr, o.steps);
  for (int64_t b : kBatches) std::printf(" %lld", static_cast<long long>(b));
  std::printf("\n");

  Task task(o, dims.model);
  std::vector<Batch> first;
  for (int i = 0; i < o.torch_steps; ++i) {
    first.push_back(task.Next(kBatches[i % std::size(kBatches)]));
  }
  std::string why;
  const std::vector<float> torch_losses =
      o.torch_steps > 0 ? TorchLosses(o, weights, first, why) : std::vector<float>{};

  std::vector<float> losses;
  std::vector<double> ms;
  for (int s = 0; s < o.steps; ++s) {
    const int64_t b = kBatches[s % std::size(kBatches)];
    const Batch data = s < o.torch_steps ? first[s] : task.Next(b);
    const TensorView views[2] = {TensorView::Dense(data.x.data.data(), data.x.shape),
                                 TensorView::Dense(data.labels.data(), {b})};
    const Clock::time_point start = Clock::now();
    absl::StatusOr<float> loss = (**step)(views);
    const double took = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!loss.ok()) {
      std::fprintf(stderr, "pto train: step %d: %s\n", s + 1,
                   std::string(loss.status().message()).c_str());
      return 1;
    }
    losses.push_back(*loss);
    ms.push_back(took);
    const FunctionStats st = (*step)->function().stats();
    std::printf("step %4d/%d  batch %3lld  loss %.6f  %8.2f ms  compiles %lld (kernels %lld)\n",
                s + 1, o.steps, static_cast<long long>(b), *loss, took,
                static_cast<long long>(st.compiles),
                static_cast<long long>(st.kernels_compiled + st.kernels_loaded));
  }

  bool ok = true;
  if (o.torch_steps > 0) {
    if (torch_losses.size() != static_cast<size_t>(o.torch_steps)) {
      std::printf("torch check            : not run: %s\n", why.c_str());
    } else {
      double worst = 0;
      for (int i = 0; i < o.torch_steps; ++i) {
        worst = std::max(worst, std::fabs(static_cast<double>(losses[i]) - torch_losses[i]) /
                                    std::fabs(static_cast<double>(torch_losses[i])));
      }
      const bool agree = worst <= kTorchRtol;
      ok &= agree;
      std::printf(
          "torch check            : first %d losses within %.1e of torch's (worst %.2g): %s\n",
          o.torch_steps, kTorchRtol, worst, agree ? "agree" : "DIFFER");
    }
  }
  std::vector<double> warm(ms.begin() + std::min<size_t>(ms.size(), std::size(kBatches)), ms.end());
  std::sort(warm.begin(), warm.end());
  double tail = 0;
  for (int i = o.steps - 10; i < o.steps; ++i) tail += losses[i] / 10;
  const FunctionStats st = (*step)->function().stats();
  std::printf("loss                   : %.4f at step 1, %.4f mean of the last 10 (target < %g)\n",
              losses[0], tail, o.target);
  if (!warm.empty()) {
    std::printf("step time              : median %.2f ms after the first %zu steps\n",
                warm[warm.size() / 2], std::size(kBatches));
  }
  std::printf("compiles               : %lld shape classes, %lld kernels compiled, %lld loaded\n",
              static_cast<long long>(st.compiles), static_cast<long long>(st.kernels_compiled),
              static_cast<long long>(st.kernels_loaded));
  ok &= tail < o.target;
  if (!o.workload_path.empty()) {
    if (absl::Status s = (*rt)->WriteWorkload(o.workload_path); !s.ok()) {
      std::fprintf(stderr, "pto train: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("workload written to    : %s (pto tune --workload %s)\n", o.workload_path.c_str(),
                o.workload_path.c_str());
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace

void AddTrainCommand(CommandLine& cli) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* train = cli.AddCommand(
      cli.root(), "train", "train the demo block with a classifier head on a synthetic task",
      [o](const CLI::App& command) { return RunTrain(command, *o); });
  train->footer(
      "Trains the causal demo block plus a classifier head (AdamW, batch sizes 8, 16, 32, 12\n"
      "in turn) to tell which of --classes random prototype sequences a noisy sequence came\n"
      "from. Prints each step's loss and time and the compiles so far, checks the first\n"
      "--torch-steps losses against PyTorch (when python3-torch is installed) and requires the\n"
      "mean loss of the last 10 steps below --target. Exit codes: 0 passed, 1 failed, 2 a usage\n"
      "error.");
  train->add_option("--steps", o->steps, "training steps (default 200)")->type_name("N");
  train->add_option("--seq", o->seq, "sequence length (default 32)")->type_name("N");
  train->add_option("--classes", o->classes, "prototypes to tell apart (default 8)")
      ->type_name("N");
  train->add_option("--noise", o->noise, "noise amplitude (default 3)")->type_name("X");
  train->add_option("--lr", o->lr, "AdamW's learning rate (default 1e-3)")->type_name("X");
  train
      ->add_option("--target", o->target,
                   "the mean loss of the last 10 steps must fall below this (default 0.25;\nchance "
                   "is ln(classes): 2.08 for 8)")
      ->type_name("X");
  train
      ->add_option("--torch-steps", o->torch_steps,
                   "steps checked against PyTorch (default 5; 0: none)")
      ->type_name("N");
  train
      ->add_option("--threads", o->runtime.intra_op_threads,
                   "threads a step runs on (default 0: all the process may use)")
      ->type_name("N");
  train
      ->add_option("--cache", o->runtime.cache_path,
                   "the kernel cache directory (default: memory only)")
      ->type_name("DIR");
  train
      ->add_option("--record-workload", o->workload_path,
                   "write the training step's shape classes, with their call counts and\n"
                   "times, as a workload file for `pto tune --workload FILE`")
      ->type_name("FILE");
}

}  // namespace pto::tools
