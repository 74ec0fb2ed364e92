// Reference ops checked against each other on random shapes and values (sizes 0, 1 and odd
// tails included): identities that must hold whatever the shape.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "ops/reference.h"
#include "ops/tolerance.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using testing::Eval;

HostTensor MustEval(OpKind op, const ir::Attrs& attrs, const std::vector<HostTensor>& inputs) {
  absl::StatusOr<HostTensor> r = Eval(op, attrs, inputs);
  EXPECT_TRUE(r.ok()) << ir::OpName(op) << ": " << r.status();
  return r.ok() ? *std::move(r) : HostTensor{};
}

void ExpectClose(const HostTensor& got, const HostTensor& want, double tol) {
  std::string why;
  EXPECT_TRUE(AllClose(got, want, {tol, tol}, &why)) << why;
}

TEST(ReferencePropertyTest, MatMulTransposeFlagsEqualExplicitTranspose) {
  std::mt19937_64 gen(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t batch = gen() % 3, m = gen() % 5, k = gen() % 6, n = 1 + gen() % 4;
    const HostTensor a = HostTensor::Random({batch, m, k}, trial);
    const HostTensor b = HostTensor::Random({k, n}, 100 + trial);
    const HostTensor want = MustEval(OpKind::kMatMul, {}, {a, b});
    ir::Attrs swap3, swap2;
    swap3.ints = {0, 2, 1};
    swap2.ints = {1, 0};
    const HostTensor at = MustEval(OpKind::kTranspose, swap3, {a});
    const HostTensor bt = MustEval(OpKind::kTranspose, swap2, {b});
    ir::Attrs flags;
    flags.transpose_a = flags.transpose_b = true;
    ExpectClose(MustEval(OpKind::kMatMul, flags, {at, bt}), want, 0);
  }
}

TEST(ReferencePropertyTest, SoftmaxRowsSumToOneAndMatchLogSoftmax) {
  for (int64_t len : {1, 2, 17, 100}) {
    const HostTensor x = HostTensor::Random({3, len}, len, -20, 20);
    const HostTensor sm = MustEval(OpKind::kSoftmax, {}, {x});
    ir::Attrs last;
    last.axis = -1;
    const HostTensor sums = MustEval(OpKind::kReduceSum, last, {sm});
    ExpectClose(sums, HostTensor::Filled({3}, 1), 1e-6);
    const HostTensor log_sm = MustEval(OpKind::kLogSoftmax, {}, {x});
    ExpectClose(MustEval(OpKind::kExp, {}, {log_sm}), sm, 1e-6);
  }
}

TEST(ReferencePropertyTest, LayerNormNormalizesAndRmsNormMatchesZeroMeanRows) {
  for (int64_t len : {2, 7, 64, 333}) {
    HostTensor x = HostTensor::Random({4, len}, len, -3, 5);
    const HostTensor ones = HostTensor::Filled({len}, 1), zeros = HostTensor::Filled({len}, 0);
    ir::Attrs attrs;
    attrs.eps = 0;
    const HostTensor y = MustEval(OpKind::kLayerNorm, attrs, {x, ones, zeros});
    ir::Attrs last;
    last.axis = -1;
    ExpectClose(MustEval(OpKind::kReduceMean, last, {y}), HostTensor::Filled({4}, 0), 1e-6);
    const HostTensor sq = MustEval(OpKind::kMul, {}, {y, y});
    ExpectClose(MustEval(OpKind::kReduceMean, last, {sq}), HostTensor::Filled({4}, 1), 1e-5);
    // For a row with zero mean, rms_norm equals layer_norm.
    ExpectClose(MustEval(OpKind::kRmsNorm, attrs, {y, ones}), y, 1e-5);
  }
}

TEST(ReferencePropertyTest, SliceAndConcatRoundTrip) {
  std::mt19937_64 gen(11);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t rows = gen() % 4, cols = gen() % 9;
    const HostTensor x = HostTensor::Random({rows, cols}, trial);
    const int64_t cut = cols == 0 ? 0 : static_cast<int64_t>(gen() % (cols + 1));
    ir::Attrs head, tail;
    head.axis = tail.axis = 1;
    head.start = 0;
    head.end = cut;
    tail.start = cut;
    tail.end = std::numeric_limits<int64_t>::max();
    const HostTensor a = MustEval(OpKind::kSlice, head, {x});
    const HostTensor b = MustEval(OpKind::kSlice, tail, {x});
    ir::Attrs axis;
    axis.axis = -1;
    ExpectClose(MustEval(OpKind::kConcat, axis, {a, b}), x, 0);
  }
}

TEST(ReferencePropertyTest, BroadcastEqualsExplicitExpansion) {
  // a [r, 1] + b [c] == a [r, c] (tiled via concat) + b [1, c] (via reshape) .
  for (int64_t r : {0, 1, 3}) {
    for (int64_t c : {1, 5}) {
      const HostTensor a = HostTensor::Random({r, 1}, r), b = HostTensor::Random({c}, c + 10);
      std::vector<HostTensor> copies(c, a);
      ir::Attrs axis;
      axis.axis = 1;
      const HostTensor a_wide = MustEval(OpKind::kConcat, axis, copies);
      ir::Attrs spec;
      spec.ints = {1, -1};
      const HostTensor b_row = MustEval(OpKind::kReshape, spec, {b});
      ExpectClose(MustEval(OpKind::kAdd, {}, {a_wide, b_row}), MustEval(OpKind::kAdd, {}, {a, b}),
                  0);
    }
  }
}

}  // namespace
}  // namespace pto::ops
