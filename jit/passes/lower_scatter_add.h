// Pass (level 1, tensor graph): each scatter_add(like, updates, indices, axis) becomes a sum
// over the index positions of a select, which fusion makes one reduction kernel:
//   like [pre..., n, post...], updates viewed as [pre..., 1, m, post...], indices as
//   [1..., 1, m, 1...] (m index positions):
//   out[p, j, q] = reduce_sum over i of where(indices[i] == j, updates[p, i, q], 0)
// (pre and post flattened to one dim each, and the sum reshaped to like's shape, when post is
// empty or the domain would have more than kMaxRank dims). `like` is never read (only an iota of
// the [P, n, m, Q] domain compares against the indices). The reduced axis is never the last (Q >= 1
// stays a dim), so the reduction kernel walks it in order for each column: every output element is
// the sum of its updates in the order of the index positions (the zeros added for other positions
// change no sum), whatever the thread count; an out-of-range index matches no j and is dropped. Its
// cost is n * m * P * Q selects: a dedicated kernel that walks the positions once (m * P * Q adds)
// is the faster form for large vocabularies.
#ifndef PTO_JIT_PASSES_LOWER_SCATTER_ADD_H_
#define PTO_JIT_PASSES_LOWER_SCATTER_ADD_H_

#include "absl/status/status.h"
#include "jit/ir/graph.h"

namespace pto::jit {

absl::Status LowerScatterAdd(ir::Graph& graph);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_LOWER_SCATTER_ADD_H_
