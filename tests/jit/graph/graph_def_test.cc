#include "jit/graph/graph_def.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "tests/jit/graph/test_graphs.h"

namespace pto::graph {
namespace {

using ::pto::graph::testing::Difference;
using ::pto::graph::testing::MakeBranches;
using ::pto::graph::testing::MakeMlp;
using ::testing::HasSubstr;

ir::Graph RoundTrip(const ir::Graph& g) {
  absl::StatusOr<ir::Graph> back = FromGraphDef(ToGraphDef(g));
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *back : ir::Graph{};
}

TEST(GraphDefTest, RoundTripMlp) {
  ir::Graph g = MakeMlp();
  ir::Graph back = RoundTrip(g);
  EXPECT_EQ(back.ToString(), g.ToString());
  EXPECT_EQ(Difference(back, g), "");
}

TEST(GraphDefTest, RoundTripBranches) {
  ir::Graph g = MakeBranches();
  EXPECT_EQ(Difference(RoundTrip(g), g), "");
}

TEST(GraphDefTest, RoundTripEveryAttrAndPolynomialDims) {
  ir::Graph g;
  g.symbols = {{"b", 1, 8}, {"s", 0, std::numeric_limits<int64_t>::max()}};
  g.num_inputs = 1;
  const ir::SymExpr b = ir::SymExpr::Symbol(0), s = ir::SymExpr::Symbol(1);
  ir::Node in;
  in.op = ir::OpKind::kInput;
  in.shape = {b * s + 3, b * b * 2 - s, 0};
  g.nodes.push_back(in);
  ir::Node n;
  n.op = ir::OpKind::kSlice;
  n.inputs = {0};
  // dtype and attrs.dtype stay f32, the only dtype FromGraphDef accepts (UnsupportedDType).
  n.shape = {b * s * 64};
  n.attrs.index = -7;
  n.attrs.scalar = -0.0;
  n.attrs.axis = -1;
  n.attrs.keepdims = true;
  n.attrs.transpose_a = true;
  n.attrs.transpose_b = true;
  n.attrs.eps = 0.0f;  // differs from the default: must not come back as 1e-5
  n.attrs.start = 5;
  n.attrs.end = -2;
  n.attrs.step = 0;  // likewise for step's default 1
  n.attrs.ints = {3, -1, 0};
  g.nodes.push_back(n);
  n.attrs.scalar = std::nan("");
  n.attrs.eps = -0.0f;
  n.attrs.step = -3;
  g.nodes.push_back(n);
  g.outputs = {1, 2, 1};
  EXPECT_EQ(Difference(RoundTrip(g), g), "");
}

// A symbol derived by a slice keeps its derivation (kind, dim, bounds, step).
TEST(GraphDefTest, RoundTripDerivedSymbols) {
  ir::Graph g;
  g.symbols = {{"rows", 0, 4096}, {"cols", 1, 64}};
  const ir::SymExpr rows = ir::SymExpr::Symbol(0), cols = ir::SymExpr::Symbol(1);
  ir::SymbolInfo start{"(rows*cols)[-5:-1:2].start", 0, 262144};
  start.derived = ir::DerivedSymbol{ir::DerivedSymbol::Kind::kSliceStart, rows * cols, -5, -1, 2};
  ir::SymbolInfo length{"(rows*cols)[-5:-1:2]", 0, 131072};
  length.derived = ir::DerivedSymbol{ir::DerivedSymbol::Kind::kSliceLength, rows * cols, -5, -1, 2};
  g.symbols.push_back(start);
  g.symbols.push_back(length);
  g.num_inputs = 1;
  ir::Node in;
  in.op = ir::OpKind::kInput;
  in.shape = {rows * cols};
  g.nodes.push_back(in);
  ir::Node n;
  n.op = ir::OpKind::kSlice;
  n.inputs = {0};
  n.shape = {ir::SymExpr::Symbol(3)};
  n.attrs.start = -5;
  n.attrs.end = -1;
  n.attrs.step = 2;
  g.nodes.push_back(n);
  g.outputs = {1};
  EXPECT_EQ(Difference(RoundTrip(g), g), "");
}

TEST(GraphDefTest, DefaultsOfAbsentFields) {
  proto::GraphDef def;
  def.set_num_inputs(1);
  def.add_symbols()->set_name("n");
  proto::NodeDef* n = def.add_nodes();
  n->set_op(proto::OP_INPUT);
  n->add_shape()->add_terms()->add_symbols(0);
  absl::StatusOr<ir::Graph> g = FromGraphDef(def);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->symbols[0].min, 1);
  EXPECT_EQ(g->symbols[0].max, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(g->nodes[0].attrs, ir::Attrs{});
  // A term without coeff is 0: the dim is the constant 0.
  EXPECT_EQ(g->nodes[0].shape[0], ir::SymExpr(0));
}

TEST(GraphDefTest, ProtoEnumsMirrorIr) {
  const google::protobuf::EnumDescriptor* ops = proto::OpKind_descriptor();
  for (int i = 0; i < ops->value_count(); ++i) {
    const int number = ops->value(i)->number();
    std::string expected = "OP_" + std::string(ir::OpName(static_cast<ir::OpKind>(number)));
    for (char& c : expected) c = static_cast<char>(std::toupper(c));
    EXPECT_EQ(ops->value(i)->name(), expected) << number;
  }
  // Every ir op (OpName knows it) is in the proto enum.
  int ir_ops = 0;
  for (int v = 0; v < 256; ++v) {
    if (std::string_view(ir::OpName(static_cast<ir::OpKind>(v))) == "unknown") continue;
    ++ir_ops;
    EXPECT_TRUE(proto::OpKind_IsValid(v)) << v;
  }
  EXPECT_EQ(ir_ops, ops->value_count());
  const google::protobuf::EnumDescriptor* dtypes = proto::DType_descriptor();
  for (int i = 0; i < dtypes->value_count(); ++i) {
    const int number = dtypes->value(i)->number();
    std::string expected = "DT_" + std::string(ir::DTypeName(static_cast<ir::DType>(number)));
    for (char& c : expected) c = static_cast<char>(std::toupper(c));
    EXPECT_EQ(dtypes->value(i)->name(), expected) << number;
  }
  EXPECT_EQ(dtypes->value_count(), 5);
}

// A valid def to break one field at a time: the MLP.
class GraphDefValidationTest : public ::testing::Test {
 protected:
  void ExpectInvalid(const std::string& substring) {
    absl::StatusOr<ir::Graph> g = FromGraphDef(def_);
    ASSERT_FALSE(g.ok()) << "expected an error containing: " << substring;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(substring));
  }

  proto::GraphDef def_ = ToGraphDef(MakeMlp());
};

TEST_F(GraphDefValidationTest, ValidAsIs) { EXPECT_TRUE(FromGraphDef(def_).ok()); }

TEST_F(GraphDefValidationTest, NegativeNumInputs) {
  def_.set_num_inputs(-1);
  ExpectInvalid("num_inputs is -1, must not be negative");
}

TEST_F(GraphDefValidationTest, SymbolWithoutName) {
  def_.mutable_symbols(0)->clear_name();
  ExpectInvalid("symbol 0: name is empty");
}

TEST_F(GraphDefValidationTest, DuplicateSymbolName) {
  def_.add_symbols()->set_name("batch");
  ExpectInvalid("symbol 1 (\"batch\"): name is already used by symbol 0");
}

TEST_F(GraphDefValidationTest, NegativeSymbolMin) {
  def_.mutable_symbols(0)->set_min(-2);
  ExpectInvalid("symbol 0 (\"batch\"): min is -2, must not be negative");
}

TEST_F(GraphDefValidationTest, SymbolMinAboveMax) {
  def_.mutable_symbols(0)->set_min(5000);
  ExpectInvalid("symbol 0 (\"batch\"): min 5000 is greater than max 4096");
}

TEST_F(GraphDefValidationTest, UnknownOp) {
  def_.mutable_nodes(5)->set_op(static_cast<proto::OpKind>(23));
  ExpectInvalid("node 5: op 23 is not a known OpKind");
}

TEST_F(GraphDefValidationTest, UnknownDType) {
  def_.mutable_nodes(5)->set_dtype(static_cast<proto::DType>(9));
  ExpectInvalid("node 5 (add): dtype 9 is not a known DType");
}

// ir::DType::kF64 (5) is the reference implementation's wide type: it has no proto number.
TEST_F(GraphDefValidationTest, ReferenceOnlyF64IsNotADType) {
  def_.mutable_nodes(5)->set_dtype(static_cast<proto::DType>(ir::DType::kF64));
  ExpectInvalid("node 5 (add): dtype 5 is not a known DType");
}

TEST_F(GraphDefValidationTest, UnknownCastDType) {
  def_.mutable_nodes(6)->set_cast_dtype(static_cast<proto::DType>(-1));
  ExpectInvalid("node 6 (gelu_erf): cast_dtype -1 is not a known DType");
}

// Only f32 is compiled today: another dtype is rejected, not ignored (the tracer would
// otherwise infer f32 and run the node as f32).
TEST_F(GraphDefValidationTest, UnsupportedDType) {
  def_.mutable_nodes(6)->set_dtype(proto::DT_F16);
  ExpectInvalid("node 6 (gelu_erf): dtype DT_F16 is not supported (only DT_F32 and DT_I32 are)");
}

TEST_F(GraphDefValidationTest, UnsupportedInputDType) {
  def_.mutable_nodes(0)->set_dtype(proto::DT_I8);
  ExpectInvalid("node 0 (input): dtype DT_I8 is not supported (only DT_F32 and DT_I32 are)");
}

TEST_F(GraphDefValidationTest, UnsupportedCastDType) {
  def_.mutable_nodes(6)->set_op(proto::OP_CAST);
  def_.mutable_nodes(6)->set_cast_dtype(proto::DT_BF16);
  ExpectInvalid("node 6 (cast): cast_dtype DT_BF16 is not supported (only DT_F32 and DT_I32 are)");
}

TEST_F(GraphDefValidationTest, InputDefinedLater) {
  def_.mutable_nodes(5)->set_inputs(1, 7);
  ExpectInvalid("node 5 (add): input 1 refers to node 7, which is not defined before it");
}

TEST_F(GraphDefValidationTest, InputIsItself) {
  def_.mutable_nodes(6)->set_inputs(0, 6);
  ExpectInvalid("node 6 (gelu_erf): input 0 refers to node 6, which is not defined before it");
}

TEST_F(GraphDefValidationTest, NegativeInput) {
  def_.mutable_nodes(4)->set_inputs(0, -1);
  ExpectInvalid("node 4 (matmul): input 0 refers to node -1, which is not defined before it");
}

TEST_F(GraphDefValidationTest, TooFewInputs) {
  def_.mutable_nodes(5)->mutable_inputs()->RemoveLast();
  ExpectInvalid("node 5 (add): has 1 inputs, expected 2");
}

TEST_F(GraphDefValidationTest, TooManyInputs) {
  def_.mutable_nodes(6)->add_inputs(0);
  ExpectInvalid("node 6 (gelu_erf): has 2 inputs, expected 1");
}

TEST_F(GraphDefValidationTest, InputNodeWithInputs) {
  def_.mutable_nodes(1)->add_inputs(0);
  ExpectInvalid("node 1 (input): has 1 inputs, expected 0");
}

TEST_F(GraphDefValidationTest, ConcatWithoutInputs) {
  def_.mutable_nodes(6)->set_op(proto::OP_CONCAT);
  def_.mutable_nodes(6)->clear_inputs();
  ExpectInvalid("node 6 (concat): has 0 inputs, expected at least 1");
}

TEST_F(GraphDefValidationTest, BackwardRowOpsTakeTheirInputCounts) {
  def_.mutable_nodes(6)->set_op(proto::OP_LAYER_NORM_GRAD);
  ExpectInvalid("node 6 (layer_norm_grad): has 1 inputs, expected 3");
  def_.mutable_nodes(6)->set_op(proto::OP_RMS_NORM_GRAD);
  ExpectInvalid("node 6 (rms_norm_grad): has 1 inputs, expected 3");
  def_.mutable_nodes(6)->set_op(proto::OP_SOFTMAX_GRAD);
  ExpectInvalid("node 6 (softmax_grad): has 1 inputs, expected 2");
  def_.mutable_nodes(6)->set_op(proto::OP_LOG_SOFTMAX_GRAD);
  ExpectInvalid("node 6 (log_softmax_grad): has 1 inputs, expected 2");
}

TEST_F(GraphDefValidationTest, InputIndexOutOfRange) {
  def_.mutable_nodes(3)->set_index(4);
  ExpectInvalid("node 3 (input): index 4 is out of range [0, 4)");
}

TEST_F(GraphDefValidationTest, NegativeInputIndex) {
  def_.mutable_nodes(0)->set_index(-1);
  ExpectInvalid("node 0 (input): index -1 is out of range [0, 4)");
}

TEST_F(GraphDefValidationTest, DuplicateInputIndex) {
  def_.mutable_nodes(2)->set_index(0);
  ExpectInvalid("node 2 (input): index 0 is already used by node 0");
}

TEST_F(GraphDefValidationTest, UndefinedSymbolInShape) {
  def_.mutable_nodes(4)->mutable_shape(0)->mutable_terms(0)->set_symbols(0, 1);
  ExpectInvalid("node 4 (matmul): shape dim 0 term 0 uses symbol 1, but the graph has 1 symbols");
}

TEST_F(GraphDefValidationTest, DerivedSymbolUsesALaterSymbol) {
  proto::SymbolDef* first = def_.mutable_symbols(0);
  *def_.add_symbols() = *first;
  def_.mutable_symbols(1)->set_name("later");
  proto::DerivedSymbolDef* d = first->mutable_derived();
  d->set_step(1);
  d->mutable_dim()->add_terms()->add_symbols(1);
  d->mutable_dim()->mutable_terms(0)->set_coeff(1);
  ExpectInvalid(absl::StrCat("symbol 0 (\"", first->name(),
                             "\"): derived dim term 0 uses symbol 1, but the graph has 0 symbols"));
}

TEST_F(GraphDefValidationTest, DerivedSymbolStepBelowOne) {
  def_.mutable_symbols(0)->mutable_derived()->set_step(0);
  ExpectInvalid("): derived slice step is 0, must be >= 1");
}

TEST_F(GraphDefValidationTest, DerivedSymbolUnknownKind) {
  proto::DerivedSymbolDef* d = def_.mutable_symbols(0)->mutable_derived();
  d->set_kind(static_cast<proto::DerivedSymbolDef::Kind>(7));
  d->set_step(1);
  ExpectInvalid("): derived kind 7 is not a known kind");
}

TEST_F(GraphDefValidationTest, RepeatedMonomialInDim) {
  proto::TermDef* t = def_.mutable_nodes(4)->mutable_shape(0)->add_terms();
  t->set_coeff(2);
  t->add_symbols(0);
  ExpectInvalid("node 4 (matmul): shape dim 0 term 1 repeats the symbols of an earlier term");
}

TEST_F(GraphDefValidationTest, NegativeConstantDim) {
  def_.mutable_nodes(1)->mutable_shape(1)->mutable_terms(0)->set_coeff(-3);
  ExpectInvalid("node 1 (input): shape dim 1 is -3, must not be negative");
}

TEST_F(GraphDefValidationTest, OutputOutOfRange) {
  def_.add_outputs(9);
  ExpectInvalid("output 1 refers to node 9, but the graph has 9 nodes");
}

TEST_F(GraphDefValidationTest, NegativeOutput) {
  def_.set_outputs(0, -1);
  ExpectInvalid("output 0 refers to node -1, but the graph has 9 nodes");
}

}  // namespace
}  // namespace pto::graph
