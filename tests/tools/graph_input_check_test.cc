// Inputs against a GraphDef's declared inputs: CheckGraphInputs (tools/pto/graph_input_check.h)
// before anything runs, and the graph program's replay refusing them at trace time too.
#include "tools/pto/graph_input_check.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/graph/graph_text.h"
#include "tools/pto/graph_program.h"

namespace pto::tools {
namespace {

using ::testing::HasSubstr;

// x [batch, 2*batch] + m [batch, 1], batch in [1, 8]; an unnamed input.
constexpr char kSymbolic[] = R"pb(
  num_inputs: 2
  symbols { name: "batch" min: 1 max: 8 }
  nodes {
    name: "x"
    op: OP_INPUT
    index: 0
    shape { terms { coeff: 1 symbols: 0 } }
    shape { terms { coeff: 2 symbols: 0 } }
  }
  nodes {
    op: OP_INPUT
    index: 1
    shape { terms { coeff: 1 symbols: 0 } }
    shape { terms { coeff: 1 } }
  }
  nodes {
    op: OP_ADD
    inputs: 0
    inputs: 1
    shape { terms { coeff: 1 symbols: 0 } }
    shape { terms { coeff: 2 symbols: 0 } }
  }
  outputs: 2
)pb";

GraphProgram Program(const char* text) {
  absl::StatusOr<ir::Graph> g = graph::ParseGraphText(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return GraphProgramFromGraph(g.ok() ? *std::move(g) : ir::Graph());
}

// tests/tools/data/matmul_23x29.pbtxt: x [23, 29] · w [29, 31].
GraphProgram MatMul() {
  absl::StatusOr<GraphProgram> p =
      LoadGraphProgram(std::string(PTO_SOURCE_DIR) + "/tests/tools/data/matmul_23x29.pbtxt");
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : GraphProgram();
}

absl::Status Check(const GraphProgram& p, std::vector<std::vector<int64_t>> shapes) {
  std::vector<GivenInput> given;
  for (auto& s : shapes) given.push_back({std::move(s), ir::DType::kF32});
  return CheckGraphInputs(p.graph, p.input_names, given);
}

TEST(GraphInputCheck, AcceptsTheDeclaredShapes) {
  EXPECT_TRUE(Check(MatMul(), {{23, 29}, {29, 31}}).ok());
  EXPECT_TRUE(Check(Program(kSymbolic), {{3, 6}, {3, 1}}).ok());
  EXPECT_TRUE(Check(Program(kSymbolic), {{8, 16}, {8, 1}}).ok());
}

TEST(GraphInputCheck, AConstantDimThatDiffers) {
  absl::Status s = Check(MatMul(), {{24, 29}, {29, 31}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "input 0 (x): shape [24, 29] does not match the declared shape [23, 29]: dim 0 is 24, "
            "declared 23");
  s = Check(MatMul(), {{23, 29}, {29, 32}});
  EXPECT_EQ(s.message(),
            "input 1 (w): shape [29, 32] does not match the declared shape [29, 31]: dim 1 is 32, "
            "declared 31");
}

TEST(GraphInputCheck, ARankThatDiffers) {
  absl::Status s = Check(MatMul(), {{29}, {29, 31}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "input 0 (x): shape [29] does not match the declared shape [23, 29]: rank 1, "
            "declared 2");
}

TEST(GraphInputCheck, ASymbolMustAgreeAcrossInputsAndStayInItsRange) {
  absl::Status s = Check(Program(kSymbolic), {{3, 6}, {4, 1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "input 1 (input1): shape [4, 1] does not match the declared shape [batch, 1]: dim 0 "
            "is 4, but batch is 3 (dim 0 of input 0 (x))");
  s = Check(Program(kSymbolic), {{9, 18}, {9, 1}});
  EXPECT_EQ(s.message(),
            "input 0 (x): shape [9, 18] does not match the declared shape [batch, 2*batch]: dim 0 "
            "is 9, outside batch's range [1, 8]");
  s = Check(Program(kSymbolic), {{3, 7}, {3, 1}});
  EXPECT_EQ(s.message(),
            "input 0 (x): shape [3, 7] does not match the declared shape [batch, 2*batch]: dim 1 "
            "is 7, declared 2*batch = 6");
}

TEST(GraphInputCheck, TheInputCountAndDtype) {
  std::vector<GivenInput> one = {{{23, 29}, ir::DType::kF32}};
  const GraphProgram p = MatMul();
  absl::Status s = CheckGraphInputs(p.graph, p.input_names, one);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "the graph has 2 inputs; 1 were given");
  std::vector<GivenInput> bf16 = {{{23, 29}, ir::DType::kBF16}, {{29, 31}, ir::DType::kF32}};
  s = CheckGraphInputs(p.graph, p.input_names, bf16);
  EXPECT_EQ(s.message(), "input 0 (x): dtype bf16, declared f32 ('<f4' in a .npy file)");
  // An f64 array (an '<f8' file) is refused for an f32 input, saying what is expected.
  std::vector<GivenInput> f64 = {{{23, 29}, ir::DType::kF64}, {{29, 31}, ir::DType::kF32}};
  s = CheckGraphInputs(p.graph, p.input_names, f64);
  EXPECT_EQ(
      s, absl::InvalidArgumentError("input 0 (x): dtype f64, declared f32 ('<f4' in a .npy file)"));
}

// An i32 declaration takes i32 arrays (an '<i4' file) and nothing else.
TEST(GraphInputCheck, AnI32Input) {
  GraphProgram p = MatMul();
  for (ir::Node& n : p.graph.nodes) {
    if (n.op == ir::OpKind::kInput && n.attrs.index == 1) n.dtype = ir::DType::kI32;
  }
  std::vector<GivenInput> ok = {{{23, 29}, ir::DType::kF32}, {{29, 31}, ir::DType::kI32}};
  EXPECT_TRUE(CheckGraphInputs(p.graph, p.input_names, ok).ok());
  std::vector<GivenInput> f32 = {{{23, 29}, ir::DType::kF32}, {{29, 31}, ir::DType::kF32}};
  EXPECT_EQ(
      CheckGraphInputs(p.graph, p.input_names, f32),
      absl::InvalidArgumentError("input 1 (w): dtype f32, declared i32 ('<i4' in a .npy file)"));
  std::vector<GivenInput> i32 = {{{23, 29}, ir::DType::kI32}, {{29, 31}, ir::DType::kI32}};
  EXPECT_EQ(
      CheckGraphInputs(p.graph, p.input_names, i32),
      absl::InvalidArgumentError("input 0 (x): dtype i32, declared f32 ('<f4' in a .npy file)"));
}

// An embedder calling the program directly: the replay refuses what the declaration does not
// allow instead of broadcasting it or computing another shape.
TEST(GraphProgramTrace, RefusesAWrongRankOrConstantDim) {
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open({});
  ASSERT_TRUE(rt.ok()) << rt.status();
  const GraphProgram p = MatMul();
  absl::StatusOr<std::unique_ptr<Function>> fn = (*rt)->JitTraced("matmul", 2, p.trace, p.options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> x(24 * 29, 1.0f), w(29 * 31, 1.0f);
  const std::vector<int64_t> x_shape = {24, 29}, w_shape = {29, 31};
  absl::StatusOr<std::vector<Tensor>> out =
      (**fn)({TensorView::Dense(x.data(), x_shape), TensorView::Dense(w.data(), w_shape)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("input 0 (x): shape [24, 29] does not match the declared shape "
                        "[23, 29]: dim 0 is 24, declared 23"));
  const std::vector<int64_t> flat = {29};
  out = (**fn)({TensorView::Dense(x.data(), flat), TensorView::Dense(w.data(), w_shape)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("input 0 (x): shape [29] does not match the declared shape [23, 29]: "
                        "rank 1, declared 2"));
  // The declared shapes still run.
  const std::vector<int64_t> good = {23, 29};
  out = (**fn)({TensorView::Dense(x.data(), good), TensorView::Dense(w.data(), w_shape)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(std::vector<int64_t>((*out)[0].dims().begin(), (*out)[0].dims().end()),
            (std::vector<int64_t>{23, 31}));
  EXPECT_EQ((*out)[0].data()[0], 29.0f);
}

}  // namespace
}  // namespace pto::tools
