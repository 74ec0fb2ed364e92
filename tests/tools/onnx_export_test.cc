// The kernel bench's ONNX Runtime column, the parts that need no ONNX Runtime: the case
// directory the bench writes (WriteOnnxCase) and tools/bench/onnx_export.py run on it for real
// with Debian's python3-torch (it checks the module it exports against float64 math of pto's
// definition of the graph before it writes the model), its refusals, and StartOnnxRuntime's
// refusals when the case has no graph or onnxruntime-node is not installed.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/buffers.h"
#include "tools/bench/onnx_runtime_baseline.h"
#include "tools/npy.h"
#include "tools/subprocess.h"

namespace pto::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class OnnxExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("pto_onnx_export_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes the case and runs the exporter on it: its exit status, and what it printed.
  int Export(const CaseSpec& spec, std::string& said) {
    OperandSets operands(spec, 1);
    EXPECT_TRUE(WriteOnnxCase(spec, operands, dir_).ok());
    return tools::RunCommand(DefaultOnnxRuntimeCommands().exporter + " --dir '" + dir_ + "'", said);
  }

  std::string dir_;
};

CaseSpec Chain(const std::string& graph, const std::string& params,
               std::vector<std::vector<int64_t>> inputs) {
  CaseSpec c;
  c.name = graph;
  for (auto& shape : inputs) c.inputs.push_back({shape});
  c.outputs = {c.inputs[0].shape};
  c.onnx = {graph, params};
  return c;
}

// A block as the bench's (weights constant), small: model 16, 2 heads, MLP 32, batch 2, seq 8.
CaseSpec SmallBlock() {
  CaseSpec c;
  c.name = "block";
  const int64_t m = 16, ff = 32;
  c.inputs = {{{2, 8, m}}};
  const std::vector<std::vector<int64_t>> weights = {{m}, {m}, {3 * m, m}, {3 * m}, {m, m},  {m},
                                                     {m}, {m}, {ff, m},    {ff},    {m, ff}, {m}};
  for (size_t i = 0; i < weights.size(); ++i) {
    const bool norm = i == 0 || i == 6;
    c.inputs.push_back({weights[i], norm ? 0.9f : -0.2f, norm ? 1.1f : 0.2f});
    c.constant_inputs.push_back(static_cast<int>(i) + 1);
  }
  c.outputs = {{2, 8, m}};
  c.onnx = {"block", R"({"model": 16, "heads": 2, "ff": 32, "eps": 1e-5})"};
  return c;
}

TEST_F(OnnxExport, TheCaseDirectoryHoldsTheGraphAndCopyZerosInputs) {
  const CaseSpec spec = Chain("softmax_scale_mask", R"({"scale": 0.125})", {{4, 8}, {4, 8}});
  OperandSets operands(spec, 2);
  ASSERT_TRUE(WriteOnnxCase(spec, operands, dir_).ok());
  std::ifstream json(dir_ + "/case.json");
  std::stringstream text;
  text << json.rdbuf();
  EXPECT_EQ(text.str(), R"({"graph": "softmax_scale_mask", "params": {"scale": 0.125}, "inputs": [)"
                        R"({"name": "in0", "file": "in0.npy", "constant": false}, )"
                        R"({"name": "in1", "file": "in1.npy", "constant": false}], )"
                        R"("outputs": [{"name": "out0", "shape": [4, 8]}]})"
                        "\n");
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<tools::NpyArray> in = tools::ReadNpy(dir_ + "/in" + std::to_string(i) + ".npy");
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_EQ(in->shape, (std::vector<int64_t>{4, 8}));
    EXPECT_EQ(in->data,
              std::vector<float>(operands.sets()[0].inputs[i], operands.sets()[0].inputs[i] + 32));
  }
}

TEST_F(OnnxExport, ExportsEachChainAfterCheckingItAgainstTheMath) {
  const std::vector<CaseSpec> chains = {
      Chain("bias_gelu_residual", "{}", {{6, 20}, {20}, {6, 20}}),
      Chain("layernorm_scale_shift", R"({"eps": 1e-5})", {{6, 20}, {20}, {20}, {20}, {20}}),
      Chain("softmax_scale_mask", R"({"scale": 0.125})", {{6, 20}, {6, 20}}),
  };
  for (const CaseSpec& spec : chains) {
    SCOPED_TRACE(spec.onnx.graph);
    std::filesystem::remove(dir_ + "/model.onnx");
    std::string said;
    ASSERT_EQ(Export(spec, said), 0) << said;
    EXPECT_THAT(said, StartsWith("EXPORTED torch 1.13"));
    EXPECT_THAT(said, HasSubstr("opset 17 literal"));
    EXPECT_GT(std::filesystem::file_size(dir_ + "/model.onnx"), 0u);
  }
}

// The block's weights become the model's initializers: the file holds at least their bytes.
TEST_F(OnnxExport, ExportsTheBlockWithItsWeightsInTheModel) {
  const CaseSpec spec = SmallBlock();
  std::string said;
  ASSERT_EQ(Export(spec, said), 0) << said;
  EXPECT_THAT(said, StartsWith("EXPORTED torch 1.13"));
  EXPECT_THAT(said, HasSubstr("encoder_layer"));
  int64_t weight_bytes = 0;
  for (size_t i = 1; i < spec.inputs.size(); ++i) {
    weight_bytes += Elements(spec.inputs[i].shape) * 4;
  }
  EXPECT_GE(std::filesystem::file_size(dir_ + "/model.onnx"), static_cast<uintmax_t>(weight_bytes));
}

TEST_F(OnnxExport, RefusesABlockWithAWeightThatIsAnInputAndAnUnknownGraph) {
  CaseSpec block = SmallBlock();
  block.constant_inputs.pop_back();  // the MLP's down bias: a graph input
  std::string said;
  EXPECT_EQ(Export(block, said), 1);
  EXPECT_THAT(said, HasSubstr("block: every input but x must be constant"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/model.onnx"));
  said.clear();
  EXPECT_EQ(Export(Chain("nope", "{}", {{2, 2}}), said), 1);
  EXPECT_THAT(said, HasSubstr("unknown graph 'nope'"));
}

// With a package directory in place: no node, no python3, an exporter without torch (its exit
// status 3) and an export that fails each say so, before any process of ONNX Runtime starts.
TEST_F(OnnxExport, StartOnnxRuntimeSaysWhatIsMissingAndWhyTheExportFailed) {
  std::ofstream(dir_ + "/package.json") << "{}\n";
  const CaseSpec spec = Chain("nope", "{}", {{2, 4}});
  OperandSets operands(spec, 1);
  OnnxRuntimeCommands commands = DefaultOnnxRuntimeCommands();
  commands.module_dir = dir_;
  commands.node = "";
  absl::StatusOr<OnnxRuntimeProcess> started =
      StartOnnxRuntime(spec, operands, 1, 1, TimingOptions{}, commands);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(started.status().message(), "node (Node.js) not found");
  commands.node = "/usr/bin/node";
  const std::string exporter = commands.exporter;
  commands.exporter = "";
  started = StartOnnxRuntime(spec, operands, 1, 1, TimingOptions{}, commands);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(started.status().message(), "/usr/bin/python3 not found");
  commands.exporter = "f() { echo 'MISSING No module named torch'; exit 3; }; f";
  started = StartOnnxRuntime(spec, operands, 1, 1, TimingOptions{}, commands);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(started.status().message(), "MISSING No module named torch");
  commands.exporter = exporter;
  started = StartOnnxRuntime(spec, operands, 1, 1, TimingOptions{}, commands);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(started.status().message(),
            "onnx_export.py failed: onnx_export: ValueError: unknown graph 'nope'");
}

TEST(StartOnnxRuntime, RefusesACaseWithoutAGraphAndAMissingPackage) {
  CaseSpec spec = Chain("bias_gelu_residual", "{}", {{2, 4}, {4}, {2, 4}});
  OperandSets operands(spec, 1);
  OnnxRuntimeCommands commands = DefaultOnnxRuntimeCommands();
  commands.node = "/usr/bin/node";
  commands.module_dir = "/nonexistent/onnxruntime-node";
  absl::StatusOr<OnnxRuntimeProcess> started =
      StartOnnxRuntime(spec, operands, 1, 1, TimingOptions{}, commands);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(started.status().message(),
            "onnxruntime-node is not installed at '/nonexistent/onnxruntime-node' "
            "(tools/bench/install_onnxruntime.sh installs it)");
  spec.onnx.graph.clear();
  started = StartOnnxRuntime(spec, operands, 1, 1, TimingOptions{}, commands);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(started.status().message(), "no ONNX graph for this case");
}

}  // namespace
}  // namespace pto::bench
