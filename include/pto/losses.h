// Losses for training, written as compositions of pto ops (so their gradients come from the
// ops' vector-Jacobian rules). Each returns a scalar (shape []) f32 Value, the mean over the
// batch, as PyTorch's losses with reduction='mean'. Bad shapes or dtypes are recorded in the
// trace and reported by the first call as InvalidArgument, like any op's shape error.
#ifndef PTO_LOSSES_H_
#define PTO_LOSSES_H_

#include "pto/value.h"

namespace pto {

// Cross-entropy of `logits` [batch, classes] (f32) against integer `labels` [batch] (i32):
// mean over the batch of -log_softmax(logits)[n, labels[n]]. The class dim must be static; the
// batch dim may be symbolic. A label outside [0, classes) picks no class (that example's loss is
// 0), where torch.nn.functional.cross_entropy raises.
Value cross_entropy(Value logits, Value labels);

// Cross-entropy against soft targets `probs` (f32, the same shape as `logits`, [batch,
// classes]): mean over the batch of -sum_c probs[n, c] * log_softmax(logits)[n, c].
Value cross_entropy_probs(Value logits, Value probs);

// Mean squared error: the mean over every element of (a - b)^2 (a and b f32, broadcast
// together as by operator-).
Value mse(Value a, Value b);

}  // namespace pto

#endif  // PTO_LOSSES_H_
