// The two training steps of the training-step bench, built from oneDNN primitives into a Step:
//   mlp:   x [64, 1024] -> linear 1024->4096 (+bias, w stored [in, out]) -> gelu (erf) ->
//          linear 4096->1024 (+bias) -> cross-entropy over 1024 classes, int labels [64].
//   block: the demo's pre-norm transformer block (tools/pto/transformer_block.cc with
//          BlockDims{.causal = true}: model 128, 4 heads, MLP 512, weights [out, in]) on
//          x [16, 128, 128], then the mean over the sequence -> linear 128->10 (+bias) ->
//          cross-entropy with int labels [16].
// Parameters and the synthetic batch are filled by FillUniform with the seeds and bounds that
// tools/bench/train_step_torch.py uses, so both baselines start from the same numbers (the
// first loss agrees).
#ifndef PTO_TOOLS_BENCH_TRAIN_ONEDNN_MODELS_H_
#define PTO_TOOLS_BENCH_TRAIN_ONEDNN_MODELS_H_

#include "tools/bench/train_onednn_step.h"

namespace pto::bench::train {

void BuildMlp(Step& step);
void BuildBlock(Step& step);

}  // namespace pto::bench::train

#endif  // PTO_TOOLS_BENCH_TRAIN_ONEDNN_MODELS_H_
