// FormFusionGroups (jit/passes/fusion_groups.h) alone, on traced graphs: single-use
// elementwise ops are inlined into their consumer; a matmul, reduction or row op absorbs the
// chain of single-use elementwise consumers of its shape as its epilogue; transposes, slices
// and reshapes are views; what a matmul or a reshape reads, and what is read more than once
// (also through views) or is an output, gets a buffer; and no kernel's expression costs more
// than FusionOptions::max_group_cost: the largest inlined input is cut out, or the epilogue
// ends early.
#include "jit/passes/fusion_groups.h"

#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::OpKind;
using testing::TraceGraph;

const char* RoleName(NodeRole role) {
  switch (role) {
    case NodeRole::kInput:
      return "input";
    case NodeRole::kConstant:
      return "constant";
    case NodeRole::kInline:
      return "inline";
    case NodeRole::kView:
      return "view";
    case NodeRole::kRoot:
      return "root";
    case NodeRole::kFusedAnchor:
      return "fused_anchor";
    case NodeRole::kAbsorbed:
      return "absorbed";
    case NodeRole::kStoredInline:
      return "stored_inline";
  }
  return "?";
}

// One line per node: "%3 mul: inline cost 7", "%5 add: absorbed of %4".
std::string Roles(const ir::Graph& g, const FusionOptions& options = {}) {
  const FusionGroups f = FormFusionGroups(g, options);
  EXPECT_EQ(f.max_group_cost, options.max_group_cost);
  std::string out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    out += "%" + std::to_string(i) + " " + ir::OpName(g.nodes[i].op) + ": " + RoleName(f.role[i]);
    if (f.anchor[i] >= 0) out += " of %" + std::to_string(f.anchor[i]);
    if (f.role[i] == NodeRole::kInline || f.role[i] == NodeRole::kView) {
      out += " cost " + std::to_string(f.inline_cost[i]);
    }
    if (f.beside[i]) out += ", beside";
    if (f.stored[i]) out += ", stored";
    out += "\n";
  }
  return out;
}

TEST(FusionGroupsTest, SingleUseElementwiseChainsInline) {
  // exp(x) * 2 + x over a symbolic dim: one kernel, the add's.
  const ir::Graph g =
      TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[0]) * 2.f + v[0]}; },
                 {{"n", 3}}, {{"n", 1, 16}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 exp: inline cost 5\n"
            "%2 constant: constant\n"
            "%3 mul: inline cost 7\n"
            "%4 add: root\n");
}

// An optimizer's shape: m and v are outputs read once, by the parameters' update (also an
// output, of their shape): its kernel computes and stores them (stored_inline). An output read
// by a consumer of another shape, or read twice, keeps a kernel of its own.
TEST(FusionGroupsTest, SiblingOutputsAreStoredByTheirConsumer) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        const Value m = v[1] * 0.9f + v[0];
        const Value s = v[2] + v[0] * v[0];
        const Value p = v[3] - m / sqrt(s);
        const Value twice = exp(v[0]);
        return std::vector{p, m, s, twice, twice * twice, reduce_sum(p, 0)};
      },
      {{8}, {8}, {8}, {8}});
  const std::string roles = Roles(g);
  EXPECT_NE(roles.find("%6 add: stored_inline"), std::string::npos) << roles;  // m
  EXPECT_NE(roles.find("%8 add: stored_inline"), std::string::npos) << roles;  // s
  EXPECT_NE(roles.find("%11 sub: root"), std::string::npos) << roles;          // p
  EXPECT_NE(roles.find("%12 exp: root"), std::string::npos) << roles;          // read twice
}

TEST(FusionGroupsTest, ValuesReadTwiceOrOutputsGetBuffers) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value e = exp(v[0]);   // read twice by the mul
        Value t = tanh(v[0]);  // an output, read by the add only: the add's kernel stores it
        return std::vector{e * e + t, t};
      },
      {{4}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 exp: root\n"
            "%2 tanh: stored_inline\n"
            "%3 mul: inline cost 3\n"
            "%4 add: root\n");
}

// A causal mask from two iotas reads no memory: each of its consumers (here two softmaxes'
// inputs) computes it again rather than read 4 bytes per element from a buffer. A value that
// reads an input is still a root when read twice.
TEST(FusionGroupsTest, ValuesReadingNoMemoryInlineIntoEveryConsumer) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        const Value mask = ge(iota(v[0], 0), iota(v[0], 1));
        const Value shifted = v[0] + 1.f;
        const Value twice = exp(v[0]);
        return std::vector{softmax(where(mask, v[0], v[0] * 0.f)),
                           softmax(where(mask, shifted, twice)), softmax(twice)};
      },
      {{8, 8}});
  const std::string roles = Roles(g);
  EXPECT_NE(roles.find("%1 iota: inline"), std::string::npos) << roles;
  EXPECT_NE(roles.find("%2 iota: inline"), std::string::npos) << roles;
  EXPECT_NE(roles.find("%3 ge: inline"), std::string::npos) << roles;
  EXPECT_NE(roles.find(" exp: root"), std::string::npos) << roles;
}

TEST(FusionGroupsTest, UsesThroughSlicesCount) {
  // Slices recompute their input per use: exp read through two slices is read twice.
  const ir::Graph twice = TraceGraph(
      [](std::span<const Value> v) {
        Value e = exp(v[0]);
        Value a = slice(e, 0, 0, 2);
        Value b = slice(e, 0, 2, 4);
        return std::vector{a + b};
      },
      {{4}});
  EXPECT_EQ(Roles(twice),
            "%0 input: input\n"
            "%1 exp: root\n"
            "%2 slice: view cost 1\n"
            "%3 slice: view cost 1\n"
            "%4 add: root\n");
  const ir::Graph once = TraceGraph(
      [](std::span<const Value> v) { return std::vector{slice(exp(v[0]), 0, 0, 2) + 1.f}; }, {{4}});
  EXPECT_EQ(Roles(once),
            "%0 input: input\n"
            "%1 exp: inline cost 5\n"
            "%2 slice: view cost 5\n"
            "%3 constant: constant\n"
            "%4 add: root\n");
}

TEST(FusionGroupsTest, MatMulOperandsAndReshapeInputsNeedBuffers) {
  // exp(x) feeds a matmul through a transpose; tanh(y) a reshape.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value a = transpose(exp(v[0]), {1, 0});
        Value r = reshape(tanh(v[1]), {8});
        return std::vector{matmul(a, v[1]), r};
      },
      {{4, 2}, {4, 2}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 exp: root\n"
            "%3 transpose: view cost 1\n"
            "%4 tanh: root\n"
            "%5 reshape: view cost 1\n"
            "%6 matmul: root of %6\n");
}

TEST(FusionGroupsTest, MatMulAbsorbsItsElementwiseEpilogue) {
  // gelu(x · w + b): one group; the gelu is stored, the matmul and add never are.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{gelu(matmul(v[0], v[1]) + v[2])}; },
      {{"m", 4}, {4, 8}, {8}}, {{"m", 1, 512}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 input: input\n"
            "%3 matmul: fused_anchor of %3\n"
            "%4 add: absorbed of %3\n"
            "%5 gelu_erf: root of %3\n");
}

TEST(FusionGroupsTest, EpilogueStopsAtAShapeChangeOrASecondUse) {
  // The add broadcasts [2, 4] up to [3, 2, 4]: not the matmul's shape.
  const ir::Graph broadcast =
      TraceGraph([](std::span<const Value> v) { return std::vector{matmul(v[0], v[1]) + v[2]}; },
                 {{2, 4}, {4, 4}, {3, 2, 4}});
  EXPECT_EQ(Roles(broadcast),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 input: input\n"
            "%3 matmul: root of %3\n"
            "%4 add: root\n");
  // relu(y) is read twice: the group ends with it, stored.
  const ir::Graph shared = TraceGraph(
      [](std::span<const Value> v) {
        Value r = relu(matmul(v[0], v[1]));
        return std::vector{r * r};
      },
      {{2, 4}, {4, 4}});
  EXPECT_EQ(Roles(shared),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 matmul: fused_anchor of %2\n"
            "%3 relu: root of %2\n"
            "%4 mul: root\n");
}

// A linear layer's output read by its activation and by a later kernel (as a training step's
// backward pass reads it): the epilogue runs on through the activation and stores the
// output too, when K is at most kMaxStoredEpilogueK; with a longer K the group ends at it.
TEST(FusionGroupsTest, EpilogueRunsPastAValueReadLaterAndStoresIt) {
  auto graph = [](int64_t k) {
    return TraceGraph(
        [](std::span<const Value> v) {
          Value h = matmul(v[0], v[1]) + v[2];
          return std::vector{matmul(gelu(h), v[3]) + h};
        },
        {{2, k}, {k, 4}, {4}, {4, 4}});
  };
  EXPECT_EQ(Roles(graph(kMaxStoredEpilogueK)),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 input: input\n"
            "%3 input: input\n"
            "%4 matmul: fused_anchor of %4\n"
            "%5 add: absorbed of %4, stored\n"
            "%6 gelu_erf: root of %4\n"
            "%7 matmul: fused_anchor of %7\n"
            "%8 add: root of %7\n");
  EXPECT_EQ(Roles(graph(kMaxStoredEpilogueK + 1)),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 input: input\n"
            "%3 input: input\n"
            "%4 matmul: fused_anchor of %4\n"
            "%5 add: root of %4\n"
            "%6 gelu_erf: root\n"
            "%7 matmul: fused_anchor of %7\n"
            "%8 add: root of %7\n");
}

// When the value's one other reader is a unary op of it (a gelu's derivative, read by the
// backward pass), the group computes that too and stores it instead of the value. Past the
// cost cap the op leaves the group, whose epilogue ends at the value, its root now (stored
// before the op's kernel reads it); the op is computed where it is read.
TEST(FusionGroupsTest, AUnaryOpOfTheValueIsComputedBesideTheEpilogue) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value h = matmul(v[0], v[1]) + v[2];
        Value out = matmul(gelu(h), v[3]);
        return std::vector{out * exp(h)};
      },
      {{2, 4}, {4, 4}, {4}, {4, 4}});
  const std::string inputs =
      "%0 input: input\n"
      "%1 input: input\n"
      "%2 input: input\n"
      "%3 input: input\n";
  EXPECT_EQ(Roles(g), inputs +
                          "%4 matmul: fused_anchor of %4\n"
                          "%5 add: absorbed of %4\n"
                          "%6 gelu_erf: root of %4\n"
                          "%7 matmul: fused_anchor of %7\n"
                          "%8 exp: absorbed of %4, beside, stored\n"
                          "%9 mul: root of %7\n");
  FusionOptions options;
  options.max_group_cost = 10;  // the matmul, the bias add and the gelu fit; the exp does not
  EXPECT_EQ(Roles(g, options), inputs +
                                   "%4 matmul: fused_anchor of %4\n"
                                   "%5 add: root of %4\n"
                                   "%6 gelu_erf: root\n"
                                   "%7 matmul: fused_anchor of %7\n"
                                   "%8 exp: inline cost 5\n"
                                   "%9 mul: root of %7\n");
}

// A reader of the value that comes before the group's root (its kernel would run first): the
// group ends at the value.
TEST(FusionGroupsTest, EpilogueEndsAtAValueReadBeforeItsRoot) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value h = matmul(v[0], v[1]) + v[2];
        Value s = reduce_sum(h, 1);
        return std::vector{gelu(h), s};
      },
      {{2, 4}, {4, 4}, {4}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 input: input\n"
            "%3 matmul: fused_anchor of %3\n"
            "%4 add: root of %3\n"
            "%5 reduce_sum: root of %5\n"
            "%6 gelu_erf: root\n");
}

TEST(FusionGroupsTest, EpilogueOfAnEarlierAnchorIsNotTakenAgain) {
  // (a · b) * (c · d): the first matmul's epilogue is the mul; the second keeps its buffer.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value p = matmul(v[0], v[1]);
        Value q = matmul(v[0], v[1]);
        return std::vector{p * q};
      },
      {{2, 2}, {2, 2}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 matmul: fused_anchor of %2\n"
            "%3 matmul: root of %3\n"
            "%4 mul: root of %2\n");
}

TEST(FusionGroupsTest, ReductionsAndRowOpsAnchorGroupsAndConcatIsARoot) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value s = reduce_sum(exp(v[0]), 1) * 2.f;
        Value n = softmax(v[0]);
        return std::vector{concat({n, n}, 0), s};
      },
      {{2, 3}});
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 exp: inline cost 5\n"
            "%2 reduce_sum: fused_anchor of %2\n"
            "%3 constant: constant\n"
            "%4 mul: root of %2\n"
            "%5 softmax: root of %5\n"
            "%6 concat: root\n");
}

TEST(FusionGroupsTest, CapCutsTheLargestInlinedInput) {
  // Four exps (4 each, plus the load of x): 5, 9, then 13 > 10, so the second exp gets a
  // buffer and the third costs 4 + 1.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{exp(exp(exp(exp(v[0]))))}; }, {{8}});
  const FusionOptions cap{.max_group_cost = 10, .transcendental_cost = 4};
  EXPECT_EQ(Roles(g, cap),
            "%0 input: input\n"
            "%1 exp: inline cost 5\n"
            "%2 exp: root\n"
            "%3 exp: inline cost 5\n"
            "%4 exp: root\n");
  // Under the default cap the chain is one kernel.
  EXPECT_EQ(Roles(g),
            "%0 input: input\n"
            "%1 exp: inline cost 5\n"
            "%2 exp: inline cost 9\n"
            "%3 exp: inline cost 13\n"
            "%4 exp: root\n");
}

TEST(FusionGroupsTest, CapEndsAnEpilogueEarly) {
  // The matmul costs 3 (itself and two loads); each exp 2 more: 5, 7, then 9 > 8.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{exp(exp(exp(matmul(v[0], v[1]))))}; },
      {{2, 2}, {2, 2}});
  EXPECT_EQ(Roles(g, {.max_group_cost = 8, .transcendental_cost = 2}),
            "%0 input: input\n"
            "%1 input: input\n"
            "%2 matmul: fused_anchor of %2\n"
            "%3 exp: absorbed of %2\n"
            "%4 exp: root of %2\n"
            "%5 exp: root\n");
}

TEST(FusionGroupsTest, OpCostsAndAnchors) {
  const FusionOptions options{.max_group_cost = 100, .transcendental_cost = 7};
  EXPECT_EQ(OpCost(OpKind::kAdd, options), 1);
  EXPECT_EQ(OpCost(OpKind::kExp, options), 7);
  EXPECT_EQ(OpCost(OpKind::kGeluTanh, options), 7);
  EXPECT_EQ(OpCost(OpKind::kRelu, options), 1);
  EXPECT_EQ(OpCost(OpKind::kLayerNorm, options), 3);
  EXPECT_EQ(OpCost(OpKind::kRmsNorm, options), 2);
  for (OpKind op : {OpKind::kMatMul, OpKind::kReduceSum, OpKind::kReduceMax, OpKind::kReduceMean,
                    OpKind::kSoftmax, OpKind::kLogSoftmax, OpKind::kLayerNorm, OpKind::kRmsNorm}) {
    EXPECT_TRUE(IsAnchorOp(op)) << ir::OpName(op);
  }
  for (OpKind op : {OpKind::kAdd, OpKind::kExp, OpKind::kConcat, OpKind::kTranspose, OpKind::kInput,
                    OpKind::kConstant}) {
    EXPECT_FALSE(IsAnchorOp(op)) << ir::OpName(op);
  }
}

}  // namespace
}  // namespace pto::jit
