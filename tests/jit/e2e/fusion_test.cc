// Fusion: kernel counts of common blocks, and fused graphs against composed references.
#include <vector>

#include "device/device_info.h"
#include "gtest/gtest.h"
#include "jit/pipeline.h"
#include "jit/trace.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

// Kernels per call of `trace` on static shapes.
int KernelCount(const TraceFn& trace, const std::vector<std::vector<int64_t>>& shapes) {
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(trace, shapes);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? static_cast<int>(p->tiles.calls.size()) : -1;
}

const TraceFn kMlp = [](std::span<const Value> v) {
  // x [n, 64]; w1 [256, 64]; b1 [256]; w2 [64, 256]; b2 [64]
  Value h = gelu(linear(v[0], v[1], v[2]));
  return std::vector<Value>{linear(h, v[3], v[4]) + v[0]};
};

const TraceFn kMlpKn = [](std::span<const Value> v) {
  // weights stored [in, out]
  Value h = gelu(matmul(v[0], v[1]) + v[2]);
  return std::vector<Value>{matmul(h, v[3]) + v[4] + v[0]};
};

const TraceFn kAttention = [](std::span<const Value> v) {
  // q, k, v: [heads, seq, 16]
  Value scores = matmul(v[0], v[1], {.transpose_b = true}) * (1.0f / 4.0f);
  return std::vector<Value>{matmul(softmax(scores), v[2])};
};

TEST(Fusion, MlpBlockIsTwoKernels) {
  EXPECT_EQ(KernelCount(kMlpKn, {{8, 64}, {64, 256}, {256}, {256, 64}, {64}}), 2);
}

TEST(Fusion, AttentionIsAtMostThreeKernels) {
  EXPECT_LE(KernelCount(kAttention, {{2, 10, 16}, {2, 10, 16}, {2, 10, 16}}), 3);
}

TEST(Fusion, ElementwiseChainIsOneKernel) {
  TraceFn chain = [](std::span<const Value> v) {
    return std::vector<Value>{pto::exp(v[0] * 2.0f + v[1]) - pto::tanh(v[0])};
  };
  EXPECT_EQ(KernelCount(chain, {{7, 33}, {33}}), 1);
}

TEST(Fusion, ProducerFusesIntoRowOp) {
  TraceFn scaled_masked_softmax = [](std::span<const Value> v) {
    return std::vector<Value>{softmax(v[0] * 0.125f + v[1])};
  };
  EXPECT_EQ(KernelCount(scaled_masked_softmax, {{4, 9, 9}, {9, 9}}), 1);
}

// Attention's heads merged back: p.v [b, h, s, d] transposed to [b, s, h, d] and reshaped to
// [b, s, h * d] for the output projection. The p.v matmul stores straight into the merged
// layout, so no copy kernel runs between the two matmuls.
const TraceFn kHeadsMerge = [](std::span<const Value> v) {
  // p [2, 3, 5, 5]; v [2, 3, 5, 4]; w [12, 7]
  Value merged = reshape(transpose(matmul(v[0], v[1]), {0, 2, 1, 3}), {0, 0, 12});
  return std::vector<Value>{matmul(merged, v[2])};
};
const std::vector<std::vector<int64_t>> kHeadsMergeShapes = {{2, 3, 5, 5}, {2, 3, 5, 4}, {12, 7}};

// Two sets of per-head results merged back and concatenated (attention's dq and dk into the
// gradient of a fused projection).
const TraceFn kHeadsConcat = [](std::span<const Value> v) {
  auto merged = [](Value heads) { return reshape(transpose(heads, {0, 2, 1, 3}), {0, 0, 12}); };
  return std::vector<Value>{concat({merged(matmul(v[0], v[1])), merged(matmul(v[0], v[2]))}, 2) +
                            1.0f};
};
const std::vector<std::vector<int64_t>> kHeadsConcatShapes = {
    {2, 3, 5, 5}, {2, 3, 5, 4}, {2, 3, 5, 4}};

TEST(Fusion, HeadsMergeIsStoredByTheMatmul) {
  EXPECT_EQ(KernelCount(kHeadsMerge, kHeadsMergeShapes), 2);
  // The p.v result used a second time, or a graph output itself, keeps its contiguous buffer
  // and the copy (FusedGraphsMatchComposedReference checks the values of all three).
  EXPECT_EQ(KernelCount(
                [](std::span<const Value> v) {
                  Value pv = matmul(v[0], v[1]);
                  Value merged = reshape(transpose(pv, {0, 2, 1, 3}), {0, 0, 12});
                  return std::vector<Value>{matmul(merged, v[2]), pv};
                },
                kHeadsMergeShapes),
            3);
}

// A linear layer's output that a later kernel reads too is stored by its epilogue, which runs
// on through the gelu (or computes the later reader, a unary op of it, beside the gelu):
// two kernels, not three. Merged heads concatenated are stored into their windows: no concat
// kernel. FusedGraphsMatchComposedReference checks the values.
TEST(Fusion, EpilogueValuesAndConcatWindowsSaveKernels) {
  const std::vector<std::vector<int64_t>> mlp = {{9, 64}, {64, 32}, {32}, {32, 32}};
  EXPECT_EQ(KernelCount(
                [](std::span<const Value> v) {
                  Value h = matmul(v[0], v[1]) + v[2];
                  return std::vector<Value>{matmul(gelu(h), v[3]) + h};
                },
                mlp),
            2);
  EXPECT_EQ(KernelCount(
                [](std::span<const Value> v) {
                  Value h = matmul(v[0], v[1]) + v[2];
                  return std::vector<Value>{matmul(gelu(h), v[3]) * exp(h)};
                },
                mlp),
            2);
  EXPECT_EQ(KernelCount(kHeadsConcat, kHeadsConcatShapes), 3);
}

TEST(Fusion, FusedGraphsMatchComposedReference) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  struct Case {
    const char* name;
    TraceFn trace;
    std::vector<std::vector<int64_t>> shapes;
    int64_t k;
  };
  std::vector<Case> cases = {
      {"mlp_nk", kMlp, {{9, 64}, {256, 64}, {256}, {64, 256}, {64}}, 256},
      {"mlp_kn", kMlpKn, {{9, 64}, {64, 256}, {256}, {256, 64}, {64}}, 256},
      {"attention", kAttention, {{2, 10, 16}, {2, 10, 16}, {2, 10, 16}}, 16},
      {"heads_merge", kHeadsMerge, kHeadsMergeShapes, 12},
      {"heads_merge_pv_out",
       [](std::span<const Value> v) {
         Value pv = matmul(v[0], v[1]);
         Value merged = reshape(transpose(pv, {0, 2, 1, 3}), {0, 0, 12});
         return std::vector<Value>{matmul(merged, v[2]), pv};
       },
       kHeadsMergeShapes, 12},
      {"heads_merge_twice",
       [](std::span<const Value> v) {
         Value pv = matmul(v[0], v[1]);
         Value a = reshape(transpose(pv, {0, 2, 1, 3}), {0, 0, 12});
         Value b = reshape(transpose(pv * 2.0f, {0, 2, 1, 3}), {0, 0, 12});
         return std::vector<Value>{matmul(a, v[2]) + matmul(b, v[2])};
       },
       kHeadsMergeShapes, 12},
      {"heads_merge_merged_out",
       [](std::span<const Value> v) {
         return std::vector<Value>{
             reshape(transpose(matmul(v[0], v[1]), {0, 2, 1, 3}), {0, 0, 12})};
       },
       kHeadsMergeShapes, 5},
      // A linear layer's output read by its gelu and later again: stored by the epilogue
      // that runs on through the gelu; read later through a unary op: that op computed
      // beside the epilogue instead.
      {"epilogue_stores_value",
       [](std::span<const Value> v) {
         Value h = matmul(v[0], v[1]) + v[2];
         return std::vector<Value>{matmul(gelu(h), v[3]) + h};
       },
       {{9, 64}, {64, 32}, {32}, {32, 32}},
       64},
      {"epilogue_beside",
       [](std::span<const Value> v) {
         Value h = matmul(v[0], v[1]) + v[2];
         return std::vector<Value>{matmul(gelu(h), v[3]) * exp(h)};
       },
       {{9, 64}, {64, 32}, {32}, {32, 32}},
       64},
      // Merged heads concatenated: each matmul stores into its window of the concat.
      {"heads_concat", kHeadsConcat, kHeadsConcatShapes, 5},
      {"norm_chain",
       [](std::span<const Value> v) {
         return std::vector<Value>{rms_norm(layer_norm(v[0], v[1], v[2]) * 3.0f + 1.0f, v[1]) -
                                   v[0]};
       },
       {{5, 37}, {37}, {37}},
       37},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<HostTensor> in;
    for (size_t i = 0; i < c.shapes.size(); ++i)
      in.push_back(HostTensor::Random(c.shapes[i], 7 + i));
    auto fn = rt->JitTraced(c.name, static_cast<int>(c.shapes.size()), c.trace, {});
    ASSERT_TRUE(fn.ok());
    auto got = testing::RunPto(**fn, in);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = testing::RunReference(c.trace, in);
    ASSERT_TRUE(want.ok()) << want.status();
    const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, c.k),
                                            ops::OpTolerance(ir::OpKind::kLayerNorm, c.k));
    EXPECT_EQ(testing::Compare(*got, *want, tol), "");
  }
}

}  // namespace
}  // namespace pto
