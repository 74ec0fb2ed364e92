// The two training steps of the training-step bench, built from oneDNN primitives into a Step:
//   mlp:   x [64, 1024] -> linear 1024->4096 (+bias, w stored [in, out]) -> gelu (erf) ->
//          linear 4096->1024 (+bias) -> cross-entropy over 1024 classes, int labels [64].
//   block: the demo's pre-norm transformer block (tools/pto/transformer_block.cc with
//          BlockDims{.causal = true}: model 128, 4 heads, MLP 512, weights [out, in]) on
//          x [16, 128, 128], then the mean over the sequence -> linear 128->10 (+bias) ->
//          cross-entropy with int labels [16].
// Parameters and the synthetic batches are filled by FillUniform with the seeds and bounds that
// tools/bench/train_step_torch.py uses, so both baselines compute the same numbers (their losses
// agree step by step).
#ifndef PTO_TOOLS_BENCH_TRAIN_ONEDNN_MODELS_H_
#define PTO_TOOLS_BENCH_TRAIN_ONEDNN_MODELS_H_

#include "tools/bench/train_onednn_layers.h"
#include "tools/bench/train_onednn_step.h"

namespace pto::bench::train {

// The batch a step trains on: its input and labels, refilled in place between steps.
struct Batch {
  Tensor x;
  Labels labels;
  int classes = 0;
};

// Writes batch `index` into `batch`: x uniform in +-sqrt(3) (variance 1), labels uniform over
// the classes. Batch 0 (x seed 1, labels seed 2) is the fixed batch the loss check trains on;
// batch k >= 1 (seeds 1000 + 2k and 1001 + 2k) is the fresh batch of timed step k.
void FillBatch(const Batch& batch, int64_t index);

// Build the step (batch 0 filled in) and return its batch.
Batch BuildMlp(Step& step);
Batch BuildBlock(Step& step);

}  // namespace pto::bench::train

#endif  // PTO_TOOLS_BENCH_TRAIN_ONEDNN_MODELS_H_
