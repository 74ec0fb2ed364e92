// Whole training programs against PyTorch 1.13: pto's JitGrad loss and the gradient of every
// parameter (and of the input) compared with torch.autograd's, both in float32; and pto's
// training step (JitTrainStep) over 20 steps against torch.optim's (foreach=True), the loss of
// every step and every parameter after the last (torch_optimizer_reference.py). The weights and
// inputs are generated here (fixed seeds), written as .npy files, and
// tests/training/torch_reference.py builds the same program in torch from them (run by
// Debian's python3, the path CMake found: PTO_DEBIAN_PYTHON), writing its loss and gradients as
// .npy files that are read back here.
//
// Tolerances (both sides compute in f32, with different summation orders, blockings and
// transcendental implementations, so they agree to f32 rounding accumulated over the program,
// not bit for bit):
//   loss:     |pto - torch| <= 1e-5 |torch|;
//   gradient: max |pto - torch| <= 1e-5 max |torch| + 1e-8 over each tensor. A gradient element
//             sums up to a few thousand products (tokens times widths, <= 4096 here); an f32 sum
//             of n terms errs by about sqrt(n) 2^-24 (4e-6 at n = 4096) of the terms' scale, so
//             1e-5 of the tensor's scale holds with margin (docs/training.md has the measured
//             errors), while a wrong rule (a missing term, a transposed operand, a wrong scale)
//             errs by the order of the gradient itself. The 1e-8 only matters for a tensor whose
//             gradient is nearly all zeros, which the test refuses anyway.
// The test prints each tensor's max errors (absolute, and relative to max |torch|).
// It fails (never skips) when torch cannot be imported: tools/setup.sh installs python3-torch.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/host_tensor.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"
#include "tools/npy.h"
#include "tools/pto/transformer_block.h"
#include "tools/subprocess.h"

namespace pto::testing {
namespace {

using ops::HostTensor;

constexpr double kLossRtol = 1e-5;
constexpr double kGradRtol = 1e-5;  // of max |torch gradient| over the tensor
constexpr double kGradAtol = 1e-8;
constexpr int64_t kClasses = 10;
// Training: each step's loss, and each parameter after the last step against max |torch| over
// the tensor (kParamRtol), plus kAdamNoise x lr for Adam and AdamW. Twenty steps compound
// the gradients' f32 differences (above) through the optimizer's state. Adam divides by
// sqrt(v): gradient elements near zero (more of them once the loss has nearly vanished, as
// when the block fits its one batch) are mostly rounding, which Adam scales up to as much as
// lr per step, differently on each side; the formulas themselves (weight decay, bias
// correction) are checked exactly in tests/jit/e2e/train_step_test.cc. Elements whose gradient is
// zero in exact arithmetic (the attention's key bias: softmax does not see it) are trained on
// rounding alone: they are only checked to move at most lr per step, as Adam's steps are bounded.
constexpr double kTrainLossRtol = 1e-5;
constexpr double kParamRtol = 1e-5;
constexpr double kAdamNoise = 0.05;

struct Named {
  std::string name;
  HostTensor tensor;
};

// A program: its inputs in the lambda's order (names as torch_reference.py knows them), the
// indices of the inputs to differentiate, and the lambda.
struct Program {
  std::string name;
  std::vector<Named> inputs;
  std::vector<int> wrt;
  TraceFn loss;
  // Elements [begin, end) of an input whose gradient is zero in exact arithmetic.
  struct Range {
    std::string name;
    int64_t begin = 0, end = 0;
  };
  std::vector<Range> zero_gradient;
};

// Labels in [0, kClasses) from mt19937 (its output sequence is specified by the standard, so
// the labels are the same everywhere).
HostTensor Labels(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<int32_t>(rng() % kClasses));
  return HostTensor::I32({n}, v);
}

// Uniform in +-1/sqrt(fan_in), PyTorch's default initialization scale for a linear layer.
HostTensor LinearWeight(int64_t out, int64_t in, uint64_t seed) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  return HostTensor::Random({out, in}, seed, -bound, bound);
}

Program Mlp() {
  const int64_t batch = 32;
  Program p;
  p.name = "mlp";
  p.inputs = {{"x", HostTensor::Random({batch, 64}, 1)},
              {"w1", LinearWeight(128, 64, 2)},
              {"b1", HostTensor::Random({128}, 3, -0.1f, 0.1f)},
              {"w2", LinearWeight(kClasses, 128, 4)},
              {"b2", HostTensor::Random({kClasses}, 5, -0.1f, 0.1f)},
              {"labels", Labels(batch, 6)}};
  p.wrt = {0, 1, 2, 3, 4};
  p.loss = [](std::span<const Value> v) {
    Value logits = linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]);
    return std::vector<Value>{cross_entropy(logits, v[5])};
  };
  return p;
}

Program Block() {
  const int64_t batch = 2, seq = 16;
  const tools::BlockDims dims{.causal = true};
  const char* names[] = {"ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b",
                         "ln2_w", "ln2_b", "up_w",  "up_b",  "down_w", "down_b"};
  Program p;
  p.name = "block";
  p.inputs = {{"x", HostTensor::Random({batch, seq, dims.model}, 10)}};
  const std::vector<std::vector<int64_t>> shapes = tools::WeightShapes(dims);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::vector<int64_t>& s = shapes[i];
    const uint64_t seed = 11 + i;
    const std::string name = names[i];
    HostTensor t = s.size() == 2 ? LinearWeight(s[0], s[1], seed)
                   : name.starts_with("ln") && name.ends_with("_w")
                       ? HostTensor::Random(s, seed, 0.9f, 1.1f)
                       : HostTensor::Random(s, seed, -0.1f, 0.1f);
    p.inputs.push_back({name, std::move(t)});
  }
  p.inputs.push_back({"head_w", LinearWeight(kClasses, dims.model, 30)});
  p.inputs.push_back({"head_b", HostTensor::Random({kClasses}, 31, -0.1f, 0.1f)});
  p.inputs.push_back({"labels", Labels(batch, 32)});
  for (int i = 0; i + 1 < static_cast<int>(p.inputs.size()); ++i) p.wrt.push_back(i);
  // The key part of the QKV bias: it adds the same value to every score of a row.
  p.zero_gradient = {{"qkv_b", dims.model, 2 * dims.model}};
  const TraceFn block = tools::TransformerBlock(dims);
  const int n_block = 1 + static_cast<int>(shapes.size());
  p.loss = [block, n_block](std::span<const Value> v) {
    Value out = block(v.first(n_block))[0];  // [batch, seq, model]
    Value logits = linear(reduce_mean(out, 1), v[n_block], v[n_block + 1]);
    return std::vector<Value>{cross_entropy(logits, v[n_block + 2])};
  };
  return p;
}

tools::NpyArray ToNpy(const HostTensor& t) {
  tools::NpyArray a;
  a.shape = t.shape;
  for (int64_t i = 0; i < t.NumElements(); ++i) a.data.push_back(static_cast<float>(t.at(i)));
  return a;
}

class TorchComparison : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "pto_torch_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // Compares pto with torch on `p`; prints the table of errors.
  void Compare(const Program& p) {
    // torch's side.
    for (const Named& in : p.inputs) {
      ASSERT_TRUE(tools::WriteNpy(dir_ + "/" + in.name + ".npy", ToNpy(in.tensor)).ok());
    }
    const std::string python = PTO_DEBIAN_PYTHON;
    ASSERT_EQ(::access(python.c_str(), X_OK), 0)
        << "Debian's python3 was not found at configure time (" << python
        << "): run tools/setup.sh (it installs python3-torch), then configure again";
    std::string output;
    const int rc = tools::RunCommand(
        "'" + python + "' '" PTO_SOURCE_DIR "/tests/training/torch_reference.py'" + " --program " +
            p.name + " --inputs '" + dir_ + "' --outputs '" + dir_ + "/torch'",
        output);
    ASSERT_EQ(rc, 0) << "torch_reference.py failed (run tools/setup.sh to install "
                        "python3-torch):\n"
                     << output;
    std::printf("%s", output.c_str());

    // pto's side.
    std::unique_ptr<Runtime> rt = OpenRuntime();
    absl::StatusOr<std::unique_ptr<Function>> fn =
        rt->JitGradTraced(p.name, static_cast<int>(p.inputs.size()), p.loss, {.wrt = p.wrt}, {});
    ASSERT_TRUE(fn.ok()) << fn.status();
    std::vector<HostTensor> inputs;
    for (const Named& in : p.inputs) inputs.push_back(in.tensor);
    absl::StatusOr<std::vector<HostTensor>> got = RunPto(**fn, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1 + p.wrt.size());

    absl::StatusOr<tools::NpyArray> loss = tools::ReadNpy(dir_ + "/torch/loss.npy");
    ASSERT_TRUE(loss.ok()) << loss.status();
    ASSERT_EQ(loss->data.size(), 1u);
    const double want_loss = loss->data[0], got_loss = (*got)[0].at(0);
    std::printf("%s: loss pto %.9g torch %.9g, |diff| %.3g (relative %.3g, tolerance %.0e)\n",
                p.name.c_str(), got_loss, want_loss, std::fabs(got_loss - want_loss),
                std::fabs(got_loss - want_loss) / std::fabs(want_loss), kLossRtol);
    EXPECT_LE(std::fabs(got_loss - want_loss), kLossRtol * std::fabs(want_loss));

    std::printf("%-8s %-14s %12s %12s %12s %10s\n", p.name.c_str(), "gradient", "elements",
                "max|torch|", "max|diff|", "relative");
    for (size_t w = 0; w < p.wrt.size(); ++w) {
      const Named& in = p.inputs[p.wrt[w]];
      const HostTensor& g = (*got)[1 + w];
      absl::StatusOr<tools::NpyArray> want =
          tools::ReadNpy(dir_ + "/torch/grad_" + in.name + ".npy");
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_EQ(want->shape, in.tensor.shape) << in.name;
      ASSERT_EQ(g.shape, in.tensor.shape) << in.name;
      double scale = 0, diff = 0;
      for (size_t i = 0; i < want->data.size(); ++i) {
        scale = std::max(scale, std::fabs(static_cast<double>(want->data[i])));
        const double d = std::fabs(g.at(i) - want->data[i]);
        diff = std::isnan(d) ? INFINITY : std::max(diff, d);
      }
      std::printf("%-8s %-14s %12zu %12.4g %12.4g %10.3g\n", "", in.name.c_str(), want->data.size(),
                  scale, diff, diff / scale);
      EXPECT_GT(scale, 0) << in.name << ": torch's gradient is all zeros (a dead program?)";
      EXPECT_LE(diff, kGradRtol * scale + kGradAtol) << in.name << " max |torch| " << scale;
    }
  }

  // Trains every parameter of `p` (its differentiated inputs but x) for `steps` steps on its
  // one batch with `o`, in pto and in torch; compares each step's loss and the parameters
  // after the last step.
  void CompareTraining(const Program& p, const Optimizer& o, int steps) {
    for (const Named& in : p.inputs) {
      ASSERT_TRUE(tools::WriteNpy(dir_ + "/" + in.name + ".npy", ToNpy(in.tensor)).ok());
    }
    const char* kinds[] = {"sgd", "adam", "adamw"};
    char flags[512];
    std::snprintf(flags, sizeof(flags),
                  " --optimizer %s --steps %d --lr %.9g --momentum %.9g --dampening %.9g%s "
                  "--beta1 %.9g --beta2 %.9g --eps %.9g --weight_decay %.9g --max_grad_norm %.9g",
                  kinds[static_cast<int>(o.kind)], steps, o.lr, o.momentum, o.dampening,
                  o.nesterov ? " --nesterov" : "", o.beta1, o.beta2, o.eps, o.weight_decay,
                  o.max_grad_norm);
    std::string output;
    const int rc = tools::RunCommand("'" PTO_DEBIAN_PYTHON "' '" PTO_SOURCE_DIR
                                     "/tests/training/torch_optimizer_reference.py' --program " +
                                         p.name + " --inputs '" + dir_ + "' --outputs '" + dir_ +
                                         "/torch'" + flags,
                                     output);
    ASSERT_EQ(rc, 0) << "torch_optimizer_reference.py failed:\n" << output;
    std::printf("%s", output.c_str());

    std::unique_ptr<Runtime> rt = OpenRuntime();
    std::vector<int> parameters;
    std::vector<TensorView> initial, data;
    std::vector<std::vector<int32_t>> labels;  // i32 inputs' values, alive for the views
    labels.reserve(p.inputs.size());
    for (int i = 0; i < static_cast<int>(p.inputs.size()); ++i) {
      const bool trained = i != 0 && std::find(p.wrt.begin(), p.wrt.end(), i) != p.wrt.end();
      const HostTensor& t = p.inputs[i].tensor;
      if (trained) parameters.push_back(i);
      if (t.dtype == ir::DType::kI32) {
        labels.push_back(t.I32Values());
        data.push_back(TensorView::Dense(labels.back().data(), t.shape));
      } else {
        (trained ? initial : data).push_back(TensorView::Dense(t.data.data(), t.shape));
      }
    }
    absl::StatusOr<std::unique_ptr<TrainStep>> step =
        rt->JitTrainStepTraced(p.name, static_cast<int>(p.inputs.size()), p.loss, initial,
                               {.parameters = parameters, .optimizer = o}, {});
    ASSERT_TRUE(step.ok()) << step.status();
    absl::StatusOr<tools::NpyArray> losses = tools::ReadNpy(dir_ + "/torch/losses.npy");
    ASSERT_TRUE(losses.ok()) << losses.status();
    ASSERT_EQ(losses->data.size(), static_cast<size_t>(steps));
    double worst_loss = 0;
    for (int s = 0; s < steps; ++s) {
      absl::StatusOr<float> loss = (**step)(data);
      ASSERT_TRUE(loss.ok()) << loss.status();
      const double want = losses->data[s];
      worst_loss = std::max(worst_loss, std::fabs(*loss - want) / std::fabs(want));
      EXPECT_LE(std::fabs(*loss - want), kTrainLossRtol * std::fabs(want)) << "step " << s;
    }
    std::printf("%s %s: %d steps, loss %.6g -> %.6g, max relative loss error %.3g\n",
                p.name.c_str(), kinds[static_cast<int>(o.kind)], steps, losses->data[0],
                losses->data[steps - 1], worst_loss);
    std::printf("%-8s %-14s %12s %12s %12s %10s\n", p.name.c_str(), "parameter", "elements",
                "max|torch|", "max|diff|", "relative");
    for (size_t k = 0; k < parameters.size(); ++k) {
      const Named& in = p.inputs[parameters[k]];
      absl::StatusOr<tools::NpyArray> want =
          tools::ReadNpy(dir_ + "/torch/param_" + in.name + ".npy");
      ASSERT_TRUE(want.ok()) << want.status();
      const TensorView got = (*step)->parameter(static_cast<int>(k));
      ASSERT_EQ(static_cast<size_t>(got.num_elements()), want->data.size()) << in.name;
      const float* g = static_cast<const float*>(got.data);
      auto noise = [&](int64_t i) {
        for (const Program::Range& r : p.zero_gradient) {
          if (r.name == in.name && i >= r.begin && i < r.end) return true;
        }
        return false;
      };
      double scale = 0, diff = 0, moved = 0, noise_moved = 0;
      for (size_t i = 0; i < want->data.size(); ++i) {
        const double start = in.tensor.at(static_cast<int64_t>(i));
        if (noise(static_cast<int64_t>(i))) {
          noise_moved = std::max(noise_moved, std::fabs(static_cast<double>(g[i]) - start));
          continue;
        }
        scale = std::max(scale, std::fabs(static_cast<double>(want->data[i])));
        diff = std::max(diff, std::fabs(static_cast<double>(g[i]) - want->data[i]));
        moved = std::max(moved, std::fabs(static_cast<double>(want->data[i]) - start));
      }
      std::printf("%-8s %-14s %12zu %12.4g %12.4g %10.3g\n", "", in.name.c_str(), want->data.size(),
                  scale, diff, diff / scale);
      EXPECT_GT(moved, 0) << in.name << ": torch did not move it (a dead parameter?)";
      const double adam = o.kind == Optimizer::Kind::kSgd ? 0.0 : kAdamNoise * o.lr;
      EXPECT_LE(diff, kParamRtol * scale + adam) << in.name;
      // Adam moves an element by lr * m / (sqrt(v) + eps), about lr at most, per step.
      EXPECT_LE(noise_moved, 1.01 * o.lr * steps) << in.name << " (zero-gradient elements)";
    }
  }

  std::string dir_;
};

TEST_F(TorchComparison, MlpWithCrossEntropyOverIntegerLabels) { Compare(Mlp()); }

TEST_F(TorchComparison, CausalTransformerBlockWithClassifierHead) { Compare(Block()); }

TEST_F(TorchComparison, MlpTrainedWithAdamW) {
  CompareTraining(Mlp(), {.kind = Optimizer::Kind::kAdamW, .lr = 1e-3f, .weight_decay = 0.01f}, 20);
}

TEST_F(TorchComparison, MlpTrainedWithSgdNesterovAndClipping) {
  CompareTraining(Mlp(),
                  {.kind = Optimizer::Kind::kSgd,
                   .lr = 0.05f,
                   .momentum = 0.9f,
                   .nesterov = true,
                   .weight_decay = 1e-4f,
                   .max_grad_norm = 0.5f},
                  20);
}

TEST_F(TorchComparison, BlockTrainedWithAdamW) {
  CompareTraining(Block(), {.kind = Optimizer::Kind::kAdamW, .lr = 1e-3f, .weight_decay = 0.01f},
                  20);
}

TEST_F(TorchComparison, BlockTrainedWithAdamAndClipping) {
  CompareTraining(
      Block(),
      {.kind = Optimizer::Kind::kAdam, .lr = 1e-3f, .weight_decay = 0.01f, .max_grad_norm = 0.1f},
      20);
}

}  // namespace
}  // namespace pto::testing
