// The limits of jit/graph/limits.h as FromGraphDef and LoadGraphFile enforce them: each
// violation is InvalidArgument naming the value and the limit, found before anything
// proportional to the value is allocated; values at the limits are accepted.
#include "jit/graph/limits.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_text.h"
#include "proto/graph.pb.h"

namespace pto::graph {
namespace {

proto::DimDef Constant(int64_t c) {
  proto::DimDef d;
  d.add_terms()->set_coeff(c);
  return d;
}

// s0^degree (degree repeats of symbol 0).
proto::TermDef Power(int degree) {
  proto::TermDef t;
  t.set_coeff(1);
  for (int i = 0; i < degree; ++i) t.add_symbols(0);
  return t;
}

// num_inputs 1, symbol n, input x [n, 4] and y = exp(x) as the output.
proto::GraphDef SmallGraph() {
  proto::GraphDef def;
  def.set_num_inputs(1);
  def.add_symbols()->set_name("n");
  for (proto::OpKind op : {proto::OP_INPUT, proto::OP_EXP}) {
    proto::NodeDef* node = def.add_nodes();
    node->set_op(op);
    if (op != proto::OP_INPUT) node->add_inputs(0);
    *node->add_shape()->add_terms() = Power(1);
    *node->add_shape() = Constant(4);
  }
  def.add_outputs(1);
  return def;
}

void ExpectInvalid(const proto::GraphDef& def, const std::string& message) {
  absl::StatusOr<ir::Graph> g = FromGraphDef(def);
  ASSERT_FALSE(g.ok()) << "expected: " << message;
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(), message);
}

TEST(GraphLimitsTest, SmallGraphIsValid) {
  absl::StatusOr<ir::Graph> g = FromGraphDef(SmallGraph());
  EXPECT_TRUE(g.ok()) << g.status();
}

// The reproducer: 2^31 - 1 inputs aborted with std::bad_alloc in `pto run`.
TEST(GraphLimitsTest, NumInputs) {
  absl::StatusOr<ir::Graph> g = ParseGraphText("num_inputs: 2147483647\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(), "num_inputs 2147483647 exceeds the limit kMaxInputs = 64");
  proto::GraphDef def = SmallGraph();
  def.set_num_inputs(kMaxInputs + 1);
  ExpectInvalid(def, "num_inputs 65 exceeds the limit kMaxInputs = 64");
}

TEST(GraphLimitsTest, NodeCount) {
  proto::GraphDef def;
  def.mutable_nodes()->Reserve(kMaxNodes + 1);
  for (int64_t i = 0; i <= kMaxNodes; ++i) def.add_nodes();
  ExpectInvalid(def, "node count 1048577 exceeds the limit kMaxNodes = 1048576");
}

TEST(GraphLimitsTest, OutputCount) {
  proto::GraphDef def = SmallGraph();
  for (int i = 0; i < kMaxOutputs; ++i) def.add_outputs(1);
  ExpectInvalid(def, "output count 65 exceeds the limit kMaxOutputs = 64");
}

TEST(GraphLimitsTest, SymbolCount) {
  proto::GraphDef def = SmallGraph();
  for (int i = 0; i < kMaxSymbols; ++i) def.add_symbols()->set_name(absl::StrCat("s", i));
  ExpectInvalid(def, "symbol count 33 exceeds the limit kMaxSymbols = 32");
}

TEST(GraphLimitsTest, ConcatInputs) {
  proto::GraphDef def = SmallGraph();
  proto::NodeDef* concat = def.add_nodes();
  concat->set_op(proto::OP_CONCAT);
  for (int64_t i = 0; i <= kMaxConcatInputs; ++i) concat->add_inputs(1);
  ExpectInvalid(def,
                "node 2 (concat): input count 16385 exceeds the limit kMaxConcatInputs = 16384");
}

TEST(GraphLimitsTest, Ints) {
  proto::GraphDef def = SmallGraph();
  proto::NodeDef* reshape = def.add_nodes();
  reshape->set_op(proto::OP_RESHAPE);
  reshape->add_inputs(1);
  for (int i = 0; i <= kMaxRank; ++i) reshape->add_ints(1);
  ExpectInvalid(def, "node 2 (reshape): ints count 9 exceeds the limit kMaxRank = 8");
}

TEST(GraphLimitsTest, Rank) {
  proto::GraphDef def = SmallGraph();
  for (int i = 0; i < kMaxRank - 1; ++i) *def.mutable_nodes(0)->add_shape() = Constant(1);
  ExpectInvalid(def, "node 0 (input): rank 9 exceeds the limit kMaxRank = 8");
}

TEST(GraphLimitsTest, TermsOfADim) {
  proto::GraphDef def = SmallGraph();
  proto::DimDef* dim = def.mutable_nodes(1)->mutable_shape(1);
  for (int i = 0; i < kMaxDimTerms; ++i) dim->add_terms()->set_coeff(1);
  ExpectInvalid(def,
                "node 1 (exp): shape dim 1: term count 17 exceeds the limit kMaxDimTerms = 16");
}

TEST(GraphLimitsTest, DegreeOfATerm) {
  proto::GraphDef def = SmallGraph();
  *def.mutable_nodes(1)->mutable_shape(0)->mutable_terms(0) = Power(kMaxTermDegree + 1);
  ExpectInvalid(def,
                "node 1 (exp): shape dim 0: term degree 9 exceeds the limit kMaxTermDegree = 8");
}

// Three dims of 7 terms each (1 + n + ... + n^6): their product would have 343 terms.
TEST(GraphLimitsTest, TermsOfAShape) {
  proto::GraphDef def = SmallGraph();
  proto::NodeDef* input = def.mutable_nodes(0);
  input->clear_shape();
  for (int d = 0; d < 3; ++d) {
    proto::DimDef* dim = input->add_shape();
    for (int degree = 0; degree < 7; ++degree) *dim->add_terms() = Power(degree);
  }
  ExpectInvalid(def,
                "node 0 (input): product of the dims' term counts 343 exceeds the limit "
                "kMaxShapeTerms = 256");
}

TEST(GraphLimitsTest, StaticElements) {
  proto::GraphDef def = SmallGraph();
  *def.mutable_nodes(0)->mutable_shape(0) = Constant(int64_t{1} << 30);
  *def.mutable_nodes(0)->mutable_shape(1) = Constant(int64_t{1} << 30);
  ExpectInvalid(def,
                "node 0 (input): static element count 1152921504606846976 exceeds the limit "
                "kMaxStaticElements = 281474976710656");
  // A coefficient whose magnitude does not fit int64 saturates instead of overflowing.
  def = SmallGraph();
  def.mutable_nodes(1)->mutable_shape(0)->mutable_terms(0)->set_coeff(
      std::numeric_limits<int64_t>::min());
  ExpectInvalid(def,
                "node 1 (exp): static element count 9223372036854775807 exceeds the limit "
                "kMaxStaticElements = 281474976710656");
}

TEST(GraphLimitsTest, EverythingAtTheLimitsIsAccepted) {
  proto::GraphDef def = SmallGraph();
  def.set_num_inputs(kMaxInputs);
  for (int i = 1; i < kMaxSymbols; ++i) def.add_symbols()->set_name(absl::StrCat("s", i));
  for (int i = 1; i < kMaxOutputs; ++i) def.add_outputs(1);
  proto::NodeDef* input = def.mutable_nodes(0);
  for (int i = 2; i < kMaxRank; ++i) *input->add_shape() = Constant(1);
  // 16 distinct terms s0^a * s1^b (a < 8, b < 2), of degree up to 8.
  proto::DimDef* dim = input->mutable_shape(1);
  dim->clear_terms();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 2; ++b) {
      proto::TermDef* t = dim->add_terms();
      *t = Power(a);
      if (b == 1) t->add_symbols(1);
    }
  }
  absl::StatusOr<ir::Graph> g = FromGraphDef(def);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->nodes[0].shape.size(), static_cast<size_t>(kMaxRank));
  EXPECT_EQ(g->nodes[0].shape[1].terms().size(), static_cast<size_t>(kMaxDimTerms));
}

// A file over the size limit is refused from its size, without being read (this one is
// sparse: it takes no disk space).
TEST(GraphLimitsTest, GraphFileSize) {
  const std::string path = ::testing::TempDir() + "/too_large.pbtxt";
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, kMaxGraphTextBytes + 1), 0);
  close(fd);
  absl::StatusOr<ir::Graph> g = LoadGraphFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(),
            path + ": size in bytes 268435457 exceeds the limit kMaxGraphTextBytes = 268435456");
  unlink(path.c_str());
}

}  // namespace
}  // namespace pto::graph
