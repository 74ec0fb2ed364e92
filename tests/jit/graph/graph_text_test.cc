#include "jit/graph/graph_text.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/graph/test_graphs.h"

namespace pto::graph {
namespace {

using ::pto::graph::testing::Difference;
using ::pto::graph::testing::MakeBranches;
using ::pto::graph::testing::MakeMlp;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kGoldenMlp = std::string(PTO_SOURCE_DIR) + "/tests/data/golden_mlp.pbtxt";

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr) << path;
  if (f != nullptr) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return path;
}

TEST(GraphTextTest, RoundTrip) {
  for (const ir::Graph& g : {MakeMlp(), MakeBranches()}) {
    absl::StatusOr<ir::Graph> back = ParseGraphText(GraphToText(g));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->ToString(), g.ToString());
    EXPECT_EQ(Difference(*back, g), "");
    EXPECT_EQ(GraphToText(*back), GraphToText(g));
  }
}

TEST(GraphTextTest, GoldenFileIsTheMlp) {
  absl::StatusOr<ir::Graph> g = LoadGraphFile(kGoldenMlp);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Difference(*g, MakeMlp()), "");
}

TEST(GraphTextTest, HandWrittenText) {
  absl::StatusOr<ir::Graph> g = ParseGraphText(R"pb(
    symbols { name: "n" min: 2 max: 16 }
    nodes {
      op: OP_INPUT
      shape { terms { coeff: 1 symbols: 0 } }
      shape { terms { coeff: 4 } }
    }
    nodes {
      op: OP_SOFTMAX
      inputs: 0
      shape { terms { coeff: 1 symbols: 0 } }
      shape { terms { coeff: 4 } }
    }
    outputs: 1
    num_inputs: 1
  )pb");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ToString(),
            "%0 = input() index=0 : f32[n, 4]\n"
            "%1 = softmax(%0) : f32[n, 4]\n"
            "outputs: %1\n");
}

TEST(GraphTextTest, MalformedTextNamesLineAndColumn) {
  absl::StatusOr<ir::Graph> g = ParseGraphText("num_inputs: 1\nnodes {\n  op: OP_INPUT\n  }}\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), StartsWith("line 4, column 4: "));
}

TEST(GraphTextTest, UnknownFieldNamesLine) {
  absl::StatusOr<ir::Graph> g = ParseGraphText("num_inputs: 0\n\n  colour: 3\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), StartsWith("line 3, column "));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("colour"));
}

TEST(GraphTextTest, UnknownEnumNameNamesLine) {
  absl::StatusOr<ir::Graph> g = ParseGraphText("nodes {\n  op: OP_CONVOLUTION }\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  // protobuf reports the position just after the bad value.
  EXPECT_THAT(std::string(g.status().message()), StartsWith("line 2, column 22: "));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("OP_CONVOLUTION"));
}

TEST(GraphTextTest, ValidationErrorsPassThrough) {
  absl::StatusOr<ir::Graph> g = ParseGraphText("nodes { op: OP_INPUT index: 2 }\nnum_inputs: 1\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(), "node 0 (input): index 2 is out of range [0, 1)");
}

TEST(GraphTextTest, LoadMissingFileIsNotFound) {
  const std::string path = ::testing::TempDir() + "/no_such_graph.pbtxt";
  absl::StatusOr<ir::Graph> g = LoadGraphFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr(path));
}

TEST(GraphTextTest, LoadErrorsNameThePath) {
  const std::string path = WriteTemp("bad_graph.pbtxt", "num_inputs: 1\nnodes { op: }\n");
  absl::StatusOr<ir::Graph> g = LoadGraphFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), StartsWith(path + ": line 2, column 13: "));
}

TEST(GraphTextTest, LoadWrittenText) {
  const std::string path = WriteTemp("branches.pbtxt", GraphToText(MakeBranches()));
  absl::StatusOr<ir::Graph> g = LoadGraphFile(path);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Difference(*g, MakeBranches()), "");
}

}  // namespace
}  // namespace pto::graph
