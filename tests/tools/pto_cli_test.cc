// The `pto` program as a user runs it: run, dump, demo, and their error messages.
#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>

#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/graph/graph_text.h"
#include "ops/reference.h"
#include "ops/tolerance.h"
#include "tests/tools/run_pto.h"
#include "tools/npy.h"

namespace pto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Result = testing::PtoResult;

Result RunPto(const std::string& args) { return testing::RunPtoBinary(PTO_CLI_PATH, args); }

class PtoCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pto_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  std::string Graph() { return std::string(PTO_SOURCE_DIR) + "/tests/tools/data/small_mlp.pbtxt"; }
  // Writes .npy inputs for Graph() (x of 3 rows); returns their --input flags.
  std::string WriteSmallMlpInputs() {
    const std::vector<std::vector<int64_t>> shapes = {{3, 12}, {12, 20}, {20}, {20, 12}};
    std::string inputs;
    int i = 0;
    for (const char* n : {"x", "w1", "b1", "w2"}) {
      EXPECT_TRUE(
          tools::WriteNpy(Path(std::string(n) + ".npy"),
                          {shapes[i], std::vector<float>(ops::NumElements(shapes[i]), 0.5f)})
              .ok());
      inputs += std::string(" --input ") + n + "=" + Path(std::string(n) + ".npy");
      ++i;
    }
    return inputs;
  }
  std::filesystem::path dir_;
};

// A short `pto train`: the loss falls below the target, the first steps agree with PyTorch
// (tools/setup.sh installs python3-torch), four batch sizes fall in three shape classes.
TEST_F(PtoCli, TrainLearnsTheTaskAndAgreesWithTorch) {
  Result r = RunPto("train --steps 24 --classes 4 --noise 1 --target 0.5 --torch-steps 3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("step   24/24"));
  EXPECT_THAT(r.output, HasSubstr("torch check            : first 3 losses within 1.0e-04"));
  EXPECT_THAT(r.output, HasSubstr(": agree"));
  EXPECT_THAT(r.output, HasSubstr("compiles               : 3 shape classes"));
  EXPECT_THAT(r.output, HasSubstr("PASS"));
  r = RunPto("train --steps 5");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--steps must be >= 10"));
}

TEST_F(PtoCli, RunMatchesReference) {
  const std::vector<std::vector<int64_t>> shapes = {{5, 12}, {12, 20}, {20}, {20, 12}};
  const std::vector<std::string> names = {"x", "w1", "b1", "w2"};
  std::vector<ops::HostTensor> inputs;
  std::string args = "run " + Graph();
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(ops::HostTensor::Random(shapes[i], 40 + i));
    ASSERT_TRUE(tools::WriteNpy(Path(names[i] + ".npy"), {shapes[i], inputs.back().data}).ok());
    args += " --input " + names[i] + "=" + Path(names[i] + ".npy");
  }
  args += " --output y=" + Path("y.npy");
  Result r = RunPto(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  absl::StatusOr<tools::NpyArray> y = tools::ReadNpy(Path("y.npy"));
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<ir::Graph> graph = graph::LoadGraphFile(Graph());
  ASSERT_TRUE(graph.ok());
  absl::StatusOr<std::vector<ops::HostTensor>> want = ops::RunReference(*graph, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  std::string mismatch;
  EXPECT_TRUE(ops::AllClose({y->shape, y->data}, (*want)[0],
                            ops::OpTolerance(ir::OpKind::kMatMul, 20), &mismatch))
      << mismatch;
}

// Each --input takes one value: the graph after it stays positional.
TEST_F(PtoCli, RunTakesTheGraphAfterItsFlags) {
  const std::string inputs = WriteSmallMlpInputs();
  Result r = RunPto("run" + inputs + " --output y=" + Path("y.npy") + " --threads 1 " + Graph());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  absl::StatusOr<tools::NpyArray> y = tools::ReadNpy(Path("y.npy"));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape, (std::vector<int64_t>{3, 12}));
}

TEST_F(PtoCli, RunWithoutAGraphOrWithTwoIsAUsageError) {
  Result r = RunPto("run --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto run: expected GRAPH.pbtxt\n"));
  EXPECT_THAT(r.output, HasSubstr("Usage: pto run [OPTIONS] [GRAPH.pbtxt]"));
  r = RunPto("run " + Graph() + " " + Graph());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto run: unexpected argument '" + Graph() + "'"));
  r = RunPto("run " + Graph() + " --threads two");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto run: Could not convert: --threads = two"));
}

TEST_F(PtoCli, RunReportsMalformedGraphWithLine) {
  FILE* f = std::fopen(Path("bad.pbtxt").c_str(), "w");
  std::fputs("name: \"bad\"\nnum_inputs: 1\nnodes { op: OP_NOT_AN_OP }\n", f);
  std::fclose(f);
  Result r = RunPto("run " + Path("bad.pbtxt") + " --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("line 3"));
}

TEST_F(PtoCli, RunReportsUnknownInputName) {
  Result r = RunPto("run " + Graph() + " --input nope=" + Path("x.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(
      r.output,
      HasSubstr("--input nope: the graph has no input of that name (it has: x, w1, b1, w2)"));
}

TEST_F(PtoCli, RunReportsBadNpy) {
  FILE* f = std::fopen(Path("x.npy").c_str(), "w");
  std::fputs("not a numpy file", f);
  std::fclose(f);
  std::string args = "run " + Graph();
  for (const char* n : {"x", "w1", "b1", "w2"})
    args += std::string(" --input ") + n + "=" + Path("x.npy");
  Result r = RunPto(args + " --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr(Path("x.npy")));
}

// An '<f8' or '<i4' file for an f32 input is refused before anything runs, naming the dtype the
// graph declares.
TEST_F(PtoCli, RunRefusesAWrongDtype) {
  const std::string inputs = WriteSmallMlpInputs();
  ops::HostTensor wide = ops::HostTensor::Zeros({3, 12}, ir::DType::kF64);
  ASSERT_TRUE(tools::WriteNpy(Path("x.npy"), wide).ok());
  Result r = RunPto("run " + Graph() + inputs + " --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "pto run: input 0 (x): dtype f64, declared f32 ('<f4' in a .npy file)\n");
  ASSERT_TRUE(
      tools::WriteNpy(Path("x.npy"), ops::HostTensor::Zeros({3, 12}, ir::DType::kI32)).ok());
  r = RunPto("run " + Graph() + inputs + " --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "pto run: input 0 (x): dtype i32, declared f32 ('<f4' in a .npy file)\n");
  EXPECT_FALSE(std::filesystem::exists(Path("y.npy")));
}

TEST_F(PtoCli, DumpEveryStage) {
  const std::string inputs = WriteSmallMlpInputs();
  const std::vector<std::pair<std::string, std::string>> expect = {
      {"tensor", "gelu_tanh"},
      {"tile", "(matmul)"},
      {"block", "grid ["},
      {"exec", "calls:"},
      {"llvm", "define void @f32_matmul"},
      {"asm", "vfmadd"}};
  for (const auto& [stage, needle] : expect) {
    Result r = RunPto("dump --stage=" + stage + " " + Graph() + inputs);
    EXPECT_EQ(r.exit_code, 0) << stage << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(needle)) << stage;
  }
}

// A boolean flag takes no value after a space: the graph after it stays positional.
TEST_F(PtoCli, DumpCheckedKernelsBeforeTheGraph) {
  const std::string inputs = WriteSmallMlpInputs();
  Result r = RunPto("dump --stage=llvm --checked-kernels " + Graph() + inputs);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("call void @pto_kernel_bounds_fault("));
  r = RunPto("dump --stage=llvm --checked-kernels=false " + Graph() + inputs);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("define void @f32_matmul"));
  EXPECT_THAT(r.output, Not(HasSubstr("@pto_kernel_bounds_fault")));
}

TEST_F(PtoCli, MatmulAsmHasVectorFmasOfTheHostWidth) {
  Result r = RunPto("dump --stage=asm --example matmul");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const device::DeviceInfo host = device::DetectHost();
  const std::string reg = host.vector_bits == 512 ? "zmm" : host.vector_bits == 256 ? "ymm" : "xmm";
  EXPECT_THAT(r.output, ::testing::ContainsRegex("vfmadd[0-9]+ps.*%" + reg));
}

// --in-place declares outputs written over inputs; exec says how each is written and why.
TEST_F(PtoCli, DumpShowsInPlaceOutputs) {
  Result r = RunPto("dump --stage=exec --example sgd --in-place 0=0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("in-place outputs:\n  output 0 over input 0: in place ("));
  r = RunPto("dump --stage=exec --example mlp --in-place 0=0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("f32_in_place_copy(slot"));
  EXPECT_THAT(r.output, HasSubstr("output 0 over input 0: copied after the input's last reader ("));
  r = RunPto("dump --stage=exec --example sgd --in-place 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto dump: --in-place takes OUTPUT=INPUT (two indices), got 0"));
  r = RunPto("dump --stage=exec --example sgd --in-place 0=1 --in-place 0=0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(
      r.output,
      HasSubstr("pto dump: output 0 is declared in place twice (over input 1 and input 0)"));
}

TEST_F(PtoCli, UnknownStageAndCommand) {
  Result r = RunPto("dump --stage=bogus --example matmul");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto dump: unknown --stage=bogus (a level (tensor, tile,"));
  EXPECT_THAT(r.output, HasSubstr("Usage: pto dump [OPTIONS] [GRAPH.pbtxt]"));
  r = RunPto("dump --example conv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output,
              HasSubstr("pto dump: unknown --example=conv (matmul, mlp, attention, sgd, demo)"));
  r = RunPto("dump --stage=tile");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto dump: expected GRAPH.pbtxt or --example NAME"));
  r = RunPto("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto: unknown command 'frobnicate'"));
  EXPECT_THAT(r.output, HasSubstr("Usage: pto [OPTIONS]"));
}

// The same line of two outputs ("output checksum : ..."), for comparing them.
std::string LineStartingWith(const std::string& output, const std::string& prefix) {
  const size_t at = output.find(prefix);
  if (at == std::string::npos) return "";
  return output.substr(at, output.find('\n', at) - at);
}

// PTO_CACHE_DIR names the cache when --cache does not: a second demo warm-starts from it.
// PTO_LOG=info shows the compile messages; an unknown level is refused before anything runs.
TEST_F(PtoCli, DemoReadsTheCacheDirAndLogLevelFromTheEnvironment) {
  const std::string env = "PTO_CACHE_DIR='" + Path("env_cache") + "' PTO_LOG=info";
  Result cold = testing::RunPtoBinary(PTO_CLI_PATH, "demo --iterations 2", env);
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  EXPECT_THAT(cold.output, HasSubstr("pto: compiled '"));
  EXPECT_TRUE(std::filesystem::exists(Path("env_cache")));
  Result warm = testing::RunPtoBinary(PTO_CLI_PATH, "demo --iterations 2", env);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_THAT(warm.output,
              ::testing::ContainsRegex("kernels compiled: 0, loaded from cache: [1-9]"));
  Result bad = testing::RunPtoBinary(PTO_CLI_PATH, "demo --iterations 2", "PTO_LOG=loud");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output,
              HasSubstr("PTO_LOG must be one of debug, info, warning, error or off; got 'loud'"));
}

TEST_F(PtoCli, DemoWarmStartFromCacheCompilesNothing) {
  Result cold = RunPto("demo --iterations 6 --kernel-times --cache " + Path("cache"));
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  EXPECT_THAT(cold.output,
              ::testing::ContainsRegex("kernels compiled: [1-9][0-9]*, loaded from cache: 0"));
  EXPECT_THAT(cold.output,
              ::testing::ContainsRegex("llvm_codegen_runs [1-9][0-9]*, kernels_loaded 0"));
  EXPECT_THAT(cold.output, HasSubstr("cold compile"));
  EXPECT_THAT(cold.output, Not(HasSubstr("warm load")));
  Result warm = RunPto("demo --iterations 6 --kernel-times --cache " + Path("cache"));
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  std::cerr << warm.output;
  EXPECT_THAT(warm.output,
              ::testing::ContainsRegex("kernels compiled: 0, loaded from cache: [1-9]"));
  // A separate process: no LLVM code generation at all, every kernel loaded.
  EXPECT_THAT(warm.output, ::testing::ContainsRegex("llvm_codegen_runs 0, kernels_loaded [1-9]"));
  EXPECT_THAT(warm.output, HasSubstr("warm load"));
  EXPECT_THAT(warm.output, Not(HasSubstr("cold compile")));
  EXPECT_THAT(warm.output, HasSubstr("role writer, persistent"));
  // Bitwise the cold run's outputs.
  const std::string checksum = LineStartingWith(cold.output, "  output checksum");
  EXPECT_FALSE(checksum.empty()) << cold.output;
  EXPECT_EQ(LineStartingWith(warm.output, "  output checksum"), checksum);
  EXPECT_THAT(warm.output, HasSubstr("PASS"));
}

TEST_F(PtoCli, DemoRefusesAMalformedProfileShapeBeforeRunning) {
  Result r = RunPto("demo --iterations 1 --profile 4by128");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("pto demo: --profile expects BATCHxSEQ (e.g. 4x128), got '4by128'"));
  EXPECT_THAT(r.output, HasSubstr("Usage: pto demo [OPTIONS]"));
  EXPECT_THAT(r.output, Not(HasSubstr("pto demo: transformer block")));
}

TEST_F(PtoCli, DemoPassesItsReferenceCheck) {
  Result r = RunPto("demo --iterations 8");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("shape classes compiled"));
  EXPECT_THAT(r.output, HasSubstr("PASS"));
}

// What python3's json module reads in a trace file: its complete events, the threads that ran
// kernel pieces, and the categories ("events N kernel_threads T cats a,b,c").
Result ReadTraceWithPython(const std::string& path) {
  return testing::RunPtoBinary("python3",
                               "-c 'import json, sys\n"
                               "d = json.load(open(sys.argv[1]))\n"
                               "x = [e for e in d[\"traceEvents\"] if e[\"ph\"] == \"X\"]\n"
                               "k = set(e[\"tid\"] for e in x if e[\"cat\"] == \"kernel\")\n"
                               "print(\"events\", len(x), \"kernel_threads\", len(k), \"cats\", "
                               "\",\".join(sorted(set(e[\"cat\"] for e in x))))' " +
                                   path);
}

TEST_F(PtoCli, DemoWritesATraceAndProfilesWithRates) {
  // The profiled shape is the first iteration's (batch 1, seq 7): one shape class compiled.
  Result r = RunPto("demo --iterations 1 --profile 1x7 --trace " + Path("demo.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              ::testing::ContainsRegex(
                  "trace: " + Path("demo.json") +
                  ", [0-9]+ events \\(.*: [0-9]+.*\\); "
                  "open it at ui.perfetto.dev \\(Open trace file\\) or chrome://tracing"));
  EXPECT_THAT(r.output, HasSubstr("GFLOP/s"));
  EXPECT_THAT(r.output, HasSubstr("%roof"));
  Result json = ReadTraceWithPython(Path("demo.json"));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, ::testing::ContainsRegex("kernel_threads [1-9]"));
  EXPECT_THAT(json.output, HasSubstr("cats call,compile,kernel,shape_class"));
}

TEST_F(PtoCli, RunWritesATraceOrSaysWhyItCannot) {
  const std::string inputs = WriteSmallMlpInputs();
  Result r = RunPto("run " + Graph() + inputs + " --output y=" + Path("y.npy") + " --trace " +
                    Path("run.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("trace: " + Path("run.json") + ", "));
  Result json = ReadTraceWithPython(Path("run.json"));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, ::testing::ContainsRegex("kernel_threads [1-9]"));
  EXPECT_THAT(json.output, HasSubstr("call,compile,kernel"));
  r = RunPto("run " + Graph() + inputs + " --output y=" + Path("y.npy") + " --trace " +
             Path("missing/run.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("pto run: cannot write the trace to " + Path("missing/run.json") +
                                  ": No such file or directory"));
}

// --check-numerics (or PTO_CHECK_NUMERICS=1) fails at an input holding inf, naming it; without
// it the call runs and writes its (non-finite) result.
TEST_F(PtoCli, RunCheckNumericsNamesTheInputHoldingInf) {
  const std::string inputs = WriteSmallMlpInputs();
  std::vector<float> b1(20, 0.5f);
  b1[3] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(tools::WriteNpy(Path("b1.npy"), {{20}, b1}).ok());
  const std::string args = "run " + Graph() + inputs + " --output y=" + Path("y.npy");
  Result r = RunPto(args + " --check-numerics");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output, "pto run: check_numerics: input 2 holds inf at element 3 [3]\n");
  r = testing::RunPtoBinary(PTO_CLI_PATH, args, "PTO_CHECK_NUMERICS=1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output, "pto run: check_numerics: input 2 holds inf at element 3 [3]\n");
  r = RunPto(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(Path("y.npy")));
}

TEST_F(PtoCli, DemoPassesWithCheckNumerics) {
  Result r = RunPto("demo --iterations 3 --check-numerics");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("PASS"));
}

}  // namespace
}  // namespace pto
