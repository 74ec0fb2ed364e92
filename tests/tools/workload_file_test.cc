#include "tools/pto/workload_file.h"

#include <sys/resource.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_text.h"

namespace pto::tools {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class WorkloadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("workload_file_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteText(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  fs::path dir_;
};

// The graph `pto dump` writes for the CLI tests: x[batch, 12] and three constant weights.
proto::GraphDef SmallMlp() {
  absl::StatusOr<ir::Graph> graph =
      graph::LoadGraphFile(PTO_SOURCE_DIR "/tests/tools/data/small_mlp.pbtxt");
  EXPECT_TRUE(graph.ok()) << graph.status();
  proto::GraphDef def = graph::ToGraphDef(*graph);
  def.set_name("small_mlp");
  return def;
}

proto::Workload RecordedWorkload() {
  proto::Workload w;
  w.set_schema_version(kWorkloadSchemaVersion);
  w.set_description("recorded by workload_file_test");
  proto::WorkloadEntry* e = w.add_entries();
  e->set_name("mlp");
  *e->mutable_graph() = SmallMlp();
  for (int c : {1, 2, 3}) e->add_constant_inputs(c);
  struct Class {
    const char* text;
    int64_t batch, calls;
    double seconds;
  };
  for (const Class& c : {Class{"in0.0=[8..15]", 9, 120, 0.25}, Class{"in0.0=1", 1, 3, 0.001}}) {
    proto::WorkloadShapeClass* cls = e->add_shape_classes();
    cls->set_shape_class(c.text);
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{c.batch, 12}, {12, 20}, {20}, {20, 12}}) {
      proto::WorkloadTensorShape* s = cls->add_input_shapes();
      for (int64_t d : shape) s->add_dims(d);
    }
    cls->set_calls(c.calls);
    cls->set_total_seconds(c.seconds);
  }
  return w;
}

TEST_F(WorkloadFileTest, RecordedWorkloadRoundTrips) {
  const proto::Workload written = RecordedWorkload();
  const std::string path = (dir_ / "recorded.pbtxt").string();
  ASSERT_TRUE(WriteWorkload(path, written).ok());

  // Written by rename: only the file itself is left in the directory.
  std::vector<std::string> files;
  for (const fs::directory_entry& f : fs::directory_iterator(dir_)) {
    files.push_back(f.path().filename().string());
  }
  EXPECT_THAT(files, ElementsAre("recorded.pbtxt"));
  absl::StatusOr<std::string> text = ReadTextFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, StartsWith("# proto-file: proto/workload.proto\n"));
  EXPECT_THAT(*text, HasSubstr("shape_class: \"in0.0=[8..15]\""));

  absl::StatusOr<proto::Workload> read = ReadWorkload(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, written))
      << read->DebugString();
  absl::StatusOr<ir::Graph> graph = graph::FromGraphDef(read->entries(0).graph());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph::GraphToText(*graph), graph::GraphToText(*graph::LoadGraphFile(
                                            PTO_SOURCE_DIR "/tests/tools/data/small_mlp.pbtxt")));

  // Recorded entries weigh by their seconds.
  proto::Workload two = written;
  proto::WorkloadEntry* other = two.add_entries();
  *other = written.entries(0);
  other->set_name("mlp2");
  other->mutable_shape_classes(0)->set_total_seconds(0.749);
  EXPECT_THAT(EntryShares(two), ElementsAre(testing::DoubleNear(0.251 / 1.001, 1e-12),
                                            testing::DoubleNear(0.750 / 1.001, 1e-12)));
}

constexpr char kHandWritten[] = R"pb(
  schema_version: 1
  entries {
    name: "block"
    model {
      name: "demo_block"
      params { name: "batch" size: 4 }
      params { name: "seq" min: 16 max: 512 }
    }
    weight: 3
  }
  entries {
    name: "mlp"
    graph_file: "small_mlp.pbtxt"
    constant_inputs: [ 1, 2, 3 ]
    shapes {
      inputs {
        dims { min: 1 max: 64 }
        dims { size: 12 }
      }
      inputs {
        dims { size: 12 }
        dims { size: 20 }
      }
      inputs { dims { size: 20 } }
      inputs {
        dims { size: 20 }
        dims { size: 12 }
      }
    }
    weight: 1
  }
)pb";

TEST_F(WorkloadFileTest, HandWrittenWorkloadWithModelAndRanges) {
  const std::string path = WriteText("hand.pbtxt", kHandWritten);
  absl::StatusOr<proto::Workload> w = ReadWorkload(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->entries_size(), 2);
  EXPECT_EQ(w->entries(0).model().name(), "demo_block");
  EXPECT_THAT(EntryShares(*w), ElementsAre(0.75, 0.25));
  EXPECT_EQ(ResolveGraphFile(path, w->entries(1).graph_file()),
            (dir_ / "small_mlp.pbtxt").string());
  EXPECT_EQ(ResolveGraphFile(path, "/abs/g.pbtxt"), "/abs/g.pbtxt");
  EXPECT_EQ(ResolveGraphFile("w.pbtxt", "g.pbtxt"), "g.pbtxt");

  absl::StatusOr<std::vector<std::map<std::string, int64_t>>> params =
      ModelParamRepresentatives(w->entries(0).model());
  ASSERT_TRUE(params.ok()) << params.status();
  std::vector<int64_t> seqs;
  for (const auto& p : *params) {
    EXPECT_EQ(p.at("batch"), 4);
    seqs.push_back(p.at("seq"));
  }
  // Buckets 16..31, 32..63, ..., 512..1023 (its middle 724 clipped to 512).
  EXPECT_THAT(seqs, ElementsAre(23, 45, 91, 181, 362, 512));

  absl::StatusOr<std::vector<ShapeSet>> sets = BucketRepresentatives(w->entries(1).shapes(0));
  ASSERT_TRUE(sets.ok()) << sets.status();
  std::vector<int64_t> batches;
  for (const ShapeSet& set : *sets) {
    ASSERT_EQ(set.size(), 4u);
    EXPECT_THAT(set[1], ElementsAre(12, 20));
    EXPECT_THAT(set[2], ElementsAre(20));
    batches.push_back(set[0][0]);
  }
  EXPECT_THAT(batches, ElementsAre(1, 3, 6, 11, 23, 45, 64));
  EXPECT_THAT((*sets)[0], ElementsAre(ElementsAre(1, 12), ElementsAre(12, 20), ElementsAre(20),
                                      ElementsAre(20, 12)));
}

TEST(DimRepresentativesTest, OneGeometricMiddlePerBucketClippedToTheRange) {
  EXPECT_THAT(DimRepresentatives(3, 40), ElementsAre(3, 6, 11, 23, 40));
  EXPECT_THAT(DimRepresentatives(1, 1), ElementsAre(1));
  EXPECT_THAT(DimRepresentatives(7, 7), ElementsAre(7));
  // Inside one bucket (64..127, middle 91): the middle, or the range's nearest end.
  EXPECT_THAT(DimRepresentatives(70, 100), ElementsAre(91));
  EXPECT_THAT(DimRepresentatives(100, 120), ElementsAre(100));
  EXPECT_THAT(DimRepresentatives(64, 127), ElementsAre(91));
  EXPECT_THAT(DimRepresentatives(512, 1023), ElementsAre(724));
  // No overflow at the top: 63 buckets, ascending, within the range.
  const int64_t max = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> all = DimRepresentatives(1, max);
  ASSERT_EQ(all.size(), 63u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_GT(all[i], all[i - 1]);
  EXPECT_GE(all.back(), int64_t{1} << 62);
  EXPECT_TRUE(DimRepresentatives(5, 4).empty());
}

proto::WorkloadDim Size(int64_t size, const std::string& name = "") {
  proto::WorkloadDim d;
  d.set_name(name);
  d.set_size(size);
  return d;
}
proto::WorkloadDim Range(int64_t min, int64_t max, const std::string& name = "") {
  proto::WorkloadDim d;
  d.set_name(name);
  d.set_min(min);
  d.set_max(max);
  return d;
}
proto::WorkloadDim Named(const std::string& name) {
  proto::WorkloadDim d;
  d.set_name(name);
  return d;
}
proto::WorkloadShapes Shapes(const std::vector<std::vector<proto::WorkloadDim>>& inputs) {
  proto::WorkloadShapes shapes;
  for (const auto& dims : inputs) {
    proto::WorkloadInput* input = shapes.add_inputs();
    for (const proto::WorkloadDim& d : dims) *input->add_dims() = d;
  }
  return shapes;
}

TEST(BucketRepresentativesTest, RangeOverSeveralBuckets) {
  absl::StatusOr<std::vector<ShapeSet>> sets =
      BucketRepresentatives(Shapes({{Size(2), Range(3, 40)}, {Size(5)}}));
  ASSERT_TRUE(sets.ok()) << sets.status();
  EXPECT_THAT(*sets, ElementsAre(ElementsAre(ElementsAre(2, 3), ElementsAre(5)),
                                 ElementsAre(ElementsAre(2, 6), ElementsAre(5)),
                                 ElementsAre(ElementsAre(2, 11), ElementsAre(5)),
                                 ElementsAre(ElementsAre(2, 23), ElementsAre(5)),
                                 ElementsAre(ElementsAre(2, 40), ElementsAre(5))));
}

TEST(BucketRepresentativesTest, RangeInsideOneBucketIsOneSet) {
  absl::StatusOr<std::vector<ShapeSet>> sets =
      BucketRepresentatives(Shapes({{Range(70, 100), Size(8)}}));
  ASSERT_TRUE(sets.ok()) << sets.status();
  EXPECT_THAT(*sets, ElementsAre(ElementsAre(ElementsAre(91, 8))));
}

TEST(BucketRepresentativesTest, NamedDimsShareOneValueAndRangesNestInOrder) {
  // n (first seen at input 0) is the outer loop, the unnamed range of input 1 the inner one.
  absl::StatusOr<std::vector<ShapeSet>> sets =
      BucketRepresentatives(Shapes({{Range(1, 3, "n"), Size(8)}, {Range(4, 8), Named("n")}}));
  ASSERT_TRUE(sets.ok()) << sets.status();
  EXPECT_THAT(*sets, ElementsAre(ElementsAre(ElementsAre(1, 8), ElementsAre(6, 1)),
                                 ElementsAre(ElementsAre(1, 8), ElementsAre(8, 1)),
                                 ElementsAre(ElementsAre(3, 8), ElementsAre(6, 3)),
                                 ElementsAre(ElementsAre(3, 8), ElementsAre(8, 3))));
}

TEST(BucketRepresentativesTest, TooManyCombinationsIsAnError) {
  absl::StatusOr<std::vector<ShapeSet>> sets =
      BucketRepresentatives(Shapes({{Range(1, 4096), Range(1, 4096)}}));
  EXPECT_EQ(sets.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sets.status().message(),
            "shapes: the ranges touch 13 x 13 power-of-two buckets: 169 combinations, more than "
            "the 64 tuned per entry; narrow or split the ranges");
  EXPECT_TRUE(BucketRepresentatives(Shapes({{Range(1, 4096), Range(1, 4)}})).ok());
  EXPECT_EQ(BucketRepresentatives(Shapes({{Range(1, 8)}}), /*max_sets=*/3).status().code(),
            absl::StatusCode::kInvalidArgument);

  proto::WorkloadModel model;
  *model.add_params() = Range(1, 4096, "batch");
  *model.add_params() = Range(1, 4096, "seq");
  EXPECT_THAT(std::string(ModelParamRepresentatives(model).status().message()),
              StartsWith("params: the ranges touch 13 x 13 power-of-two buckets"));
}

TEST(BucketRepresentativesTest, InvalidShapesAreErrors) {
  EXPECT_EQ(BucketRepresentatives(Shapes({{Named("n")}})).status().message(),
            "inputs[0].dims[0]: dim 'n' has no size or range at any of its uses");
  EXPECT_EQ(
      BucketRepresentatives(Shapes({{Range(1, 4, "n")}, {Range(1, 8, "n")}})).status().message(),
      "inputs[1].dims[0]: dim 'n' is [1..8] here but [1..4] at inputs[0].dims[0]");
}

struct BadCase {
  const char* entry;  // an entry's fields, or a whole workload when `whole`
  const char* message;
  bool whole = false;
};

class WorkloadValidationTest : public WorkloadFileTest,
                               public ::testing::WithParamInterface<BadCase> {};

TEST_P(WorkloadValidationTest, IsInvalidArgumentNamingEntryAndField) {
  const BadCase& c = GetParam();
  const std::string text =
      c.whole ? c.entry : absl::StrCat("schema_version: 1\nentries {\n", c.entry, "\n}\n");
  const std::string path = WriteText("bad.pbtxt", text);
  absl::StatusOr<proto::Workload> w = ReadWorkload(path);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
  EXPECT_EQ(w.status().message(), absl::StrCat(path, ": ", c.message));
}

constexpr char kTwoInputGraph[] = R"pb(
  graph {
    num_inputs: 2
    symbols { name: "n" }
    nodes {
      op: OP_INPUT
      index: 0
      shape { terms { coeff: 1 symbols: 0 } }
    }
    nodes {
      op: OP_INPUT
      index: 1
      shape { terms { coeff: 1 symbols: 0 } }
    }
    nodes {
      op: OP_ADD
      inputs: [ 0, 1 ]
      shape { terms { coeff: 1 symbols: 0 } }
    }
    outputs: 2
  })pb";

INSTANTIATE_TEST_SUITE_P(
    Cases, WorkloadValidationTest,
    ::testing::Values(
        BadCase{"entries { name: \"a\" graph_file: \"g\" }",
                "schema_version 0 (absent) is not known: this pto reads version 1", true},
        BadCase{"schema_version: 2", "schema_version 2 is not known: this pto reads version 1",
                true},
        BadCase{"graph_file: \"g\"", "entry 0: name is empty"},
        BadCase{"schema_version: 1 entries { name: \"a\" graph_file: \"g\" } "
                "entries { name: \"a\" graph_file: \"h\" }",
                "entry 'a': the name is used by entries 0 and 1", true},
        BadCase{"name: \"a\"",
                "entry 'a': has no graph source: give one of graph, graph_file or model"},
        BadCase{"name: \"a\" graph_file: \"\"", "entry 'a': graph_file: is empty"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { dims { size: 4 } dims { size: 0 "
                "} } }",
                "entry 'a': shapes[0].inputs[0].dims[1]: size 0 is not positive"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { dims { min: 0 max: 4 } } }",
                "entry 'a': shapes[0].inputs[0].dims[0]: range min 0 is not positive"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { } inputs { dims { min: 64 max: "
                "16 } } }",
                "entry 'a': shapes[0].inputs[1].dims[0]: range min 64 > max 16"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { dims { min: 4 } } }",
                "entry 'a': shapes[0].inputs[0].dims[0]: a range needs both min and max"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { dims { size: 4 max: 8 } } }",
                "entry 'a': shapes[0].inputs[0].dims[0]: gives both a size and a range"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { dims { } } }",
                "entry 'a': shapes[0].inputs[0].dims[0]: gives no size or range"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { } shapes { inputs { dims { name: \"n\" } "
                "} }",
                "entry 'a': shapes[1].inputs[0].dims[0]: dim 'n' has no size or range at any of "
                "its uses"},
        BadCase{"name: \"a\" graph_file: \"g\" shapes { inputs { dims { min: 1 max: 4096 } dims "
                "{ min: 1 max: 4096 } } }",
                "entry 'a': shapes[0]: the ranges touch 13 x 13 power-of-two buckets: 169 "
                "combinations, more than the 64 tuned per entry; narrow or split the ranges"},
        BadCase{"name: \"a\" graph_file: \"g\" shape_classes { shape_class: \"static\" calls: -1 "
                "}",
                "entry 'a': shape_classes[0].calls: -1 is negative"},
        BadCase{"name: \"a\" graph_file: \"g\" shape_classes { shape_class: \"static\" "
                "total_seconds: -0.5 }",
                "entry 'a': shape_classes[0].total_seconds: -0.5 is not a non-negative number"},
        BadCase{"name: \"a\" graph_file: \"g\" shape_classes { calls: 1 }",
                "entry 'a': shape_classes[0].shape_class: is empty"},
        BadCase{"name: \"a\" graph_file: \"g\" shape_classes { shape_class: \"static\" "
                "input_shapes { dims: [ 4, 0 ] } }",
                "entry 'a': shape_classes[0].input_shapes[0].dims[1]: size 0 is not positive"},
        BadCase{"name: \"a\" graph_file: \"g\" weight: -1",
                "entry 'a': weight: -1 is not a non-negative number"},
        BadCase{"name: \"a\" graph_file: \"g\" constant_inputs: [ 1, 1 ]",
                "entry 'a': constant_inputs[1]: input 1 is listed twice"},
        BadCase{"name: \"a\" graph_file: \"g\" constant_inputs: [ -1 ]",
                "entry 'a': constant_inputs[0]: input -1 is negative"},
        BadCase{"name: \"a\" model { }", "entry 'a': model.name: is empty"},
        BadCase{"name: \"a\" model { name: \"demo_block\" params { size: 4 } }",
                "entry 'a': model.params[0]: has no name"},
        BadCase{"name: \"a\" model { name: \"demo_block\" params { name: \"seq\" size: 4 } "
                "params { name: \"seq\" size: 8 } }",
                "entry 'a': model.params[1]: param 'seq' is given twice"},
        BadCase{"name: \"a\" model { name: \"demo_block\" params { name: \"seq\" } }",
                "entry 'a': model.params[0]: gives no size or range"},
        BadCase{"name: \"a\" model { name: \"demo_block\" } shapes { }",
                "entry 'a': shapes: a model's shapes come from its params"},
        BadCase{"name: \"a\" model { name: \"demo_block\" } constant_inputs: 0",
                "entry 'a': constant_inputs: a model declares its own"},
        BadCase{"name: \"a\" graph { num_inputs: 1 nodes { op: OP_INPUT index: 0 } nodes { op: "
                "OP_NEG inputs: 2 } }",
                "entry 'a': graph: node 1 (neg): input 0 refers to node 2, which is not defined "
                "before it"}));

// Checks against an embedded graph (kTwoInputGraph is appended to each entry).
TEST_F(WorkloadFileTest, EmbeddedGraphChecks) {
  const std::vector<BadCase> cases = {
      {"name: \"a\"",
       "entry 'a': the graph has dynamic dims but no shapes or shape_classes to tune at"},
      {"name: \"a\" shapes { inputs { dims { size: 4 } } }",
       "entry 'a': shapes[0]: gives 1 inputs but the graph has 2 inputs"},
      {"name: \"a\" shapes { inputs { dims { size: 4 } } inputs { dims { size: 4 } dims { size: "
       "1 } } }",
       "entry 'a': shapes[0]: inputs[1] has 2 dims but graph input 1 has 1"},
      {"name: \"a\" shape_classes { shape_class: \"in0.0=4\" input_shapes { dims: 4 } "
       "input_shapes { } }",
       "entry 'a': shape_classes[0]: input_shapes[1] has 0 dims but graph input 1 has 1"},
      {"name: \"a\" constant_inputs: 2 shapes { inputs { dims { size: 4 } } inputs { dims { "
       "size: 4 } } }",
       "entry 'a': constant_inputs[0]: input 2 is not below the graph's 2 inputs"},
  };
  for (const BadCase& c : cases) {
    const std::string path =
        WriteText("graph.pbtxt",
                  absl::StrCat("schema_version: 1\nentries {\n", c.entry, kTwoInputGraph, "\n}\n"));
    absl::StatusOr<proto::Workload> w = ReadWorkload(path);
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
    EXPECT_EQ(w.status().message(), absl::StrCat(path, ": ", c.message));
  }
  // The same graph with matching shapes reads.
  const std::string path = WriteText(
      "good.pbtxt",
      absl::StrCat("schema_version: 1\nentries {\nname: \"a\" shapes { inputs { dims { name: "
                   "\"n\" min: 1 max: 9 } } inputs { dims { name: \"n\" } } }",
                   kTwoInputGraph, "\n}\n"));
  EXPECT_TRUE(ReadWorkload(path).ok()) << ReadWorkload(path).status();
}

// An embedded graph's num_inputs is whatever the file says: it is checked without memory per
// input (2^31 - 1 inputs took 8 GB).
TEST_F(WorkloadFileTest, HugeInputCountIsCheckedWithoutMemoryPerInput) {
  const std::string path = WriteText(
      "huge.pbtxt",
      "schema_version: 1\nentries { name: \"a\" graph { num_inputs: 2147483647 } shapes { inputs "
      "{ dims { size: 4 } } } }\n");
  absl::StatusOr<proto::Workload> w = ReadWorkload(path);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
  EXPECT_THAT(std::string(w.status().message()), HasSubstr("2147483647"));
  rusage usage;
  ASSERT_EQ(getrusage(RUSAGE_SELF, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 1 << 20) << "peak RSS in KiB";
}

TEST_F(WorkloadFileTest, SyntaxErrorNamesLineAndColumn) {
  const std::string path =
      WriteText("syntax.pbtxt", "schema_version: 1\nentries {\n  name: \"a\"\n  graph_file: }\n");
  absl::StatusOr<proto::Workload> w = ReadWorkload(path);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(w.status().message()),
              StartsWith(absl::StrCat(path, ": line 4, column 15: ")));
}

TEST_F(WorkloadFileTest, TwoGraphSourcesAreASyntaxError) {
  const std::string path = WriteText(
      "two.pbtxt",
      "schema_version: 1\nentries {\n  name: \"a\"\n  graph_file: \"g\"\n  model { name: \"m\" "
      "}\n}\n");
  absl::StatusOr<proto::Workload> w = ReadWorkload(path);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(w.status().message()),
              StartsWith(absl::StrCat(path, ": line 5, column ")));
  EXPECT_THAT(std::string(w.status().message()), HasSubstr("oneof"));
}

TEST_F(WorkloadFileTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = (dir_ / "absent.pbtxt").string();
  absl::StatusOr<proto::Workload> w = ReadWorkload(path);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(w.status().message()), HasSubstr(path));
}

TEST_F(WorkloadFileTest, WriteRejectsInvalidWorkloadsAndUnwritablePaths) {
  proto::Workload w = RecordedWorkload();
  w.mutable_entries(0)->mutable_shape_classes(0)->set_calls(-3);
  const std::string path = (dir_ / "w.pbtxt").string();
  absl::Status s = WriteWorkload(path, w);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "entry 'mlp': shape_classes[0].calls: -3 is negative");
  EXPECT_FALSE(fs::exists(path));

  const std::string unwritable = (dir_ / "no_such_dir" / "w.pbtxt").string();
  s = WriteWorkload(unwritable, RecordedWorkload());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr(unwritable));
}

TEST_F(WorkloadFileTest, WriteTextFileReplacesTheFile) {
  const std::string path = (dir_ / "f.txt").string();
  ASSERT_TRUE(WriteTextFile(path, "first, longer contents").ok());
  ASSERT_TRUE(WriteTextFile(path, "second").ok());
  EXPECT_EQ(*ReadTextFile(path), "second");
}

}  // namespace
}  // namespace pto::tools
