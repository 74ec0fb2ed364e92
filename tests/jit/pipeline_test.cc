// The pipeline (jit/pipeline.h): its named steps, their timing and log, and `Dump` of a step
// or a level.
#include "jit/pipeline.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// An MLP with a residual: matmuls, an epilogue, an elementwise chain and a temporary buffer.
std::vector<Value> Mlp(std::span<const Value> v) {
  return {linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]) + v[0]};
}
const std::vector<std::vector<int64_t>> kMlpShapes = {{32, 64}, {256, 64}, {256}, {64, 256}, {64}};

// The debug log of one compile with log_passes: per step, the text after "after STEP (T ms):".
struct StepLog {
  std::vector<std::string> names;
  std::vector<std::string> texts;
};

StepLog LoggedSteps(const std::vector<std::string>& messages) {
  StepLog log;
  for (const std::string& m : messages) {
    if (m.rfind("after ", 0) != 0) continue;
    const size_t paren = m.find(" (");
    const size_t colon = m.find("):\n");
    if (paren == std::string::npos || colon == std::string::npos) continue;
    log.names.push_back(m.substr(6, paren - 6));
    log.texts.push_back(m.substr(colon + 3));
  }
  return log;
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions options;
    options.log_sink = [this](LogLevel, std::string_view m) { messages_.emplace_back(m); };
    options.log_level = LogLevel::kDebug;
    options.log_passes = true;
    rt_ = testing::OpenRuntime(options);
    absl::StatusOr<std::unique_ptr<Function>> fn = rt_->JitTraced("mlp", 5, Mlp, FunctionOptions{});
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *std::move(fn);
  }
  std::vector<std::string> messages_;
  std::unique_ptr<Runtime> rt_;
  std::unique_ptr<Function> fn_;
};

TEST_F(PipelineTest, EveryStepIsLoggedInOrderUnderItsName) {
  ASSERT_TRUE(fn_->Precompile(kMlpShapes).ok());
  const StepLog log = LoggedSteps(messages_);
  const std::span<const std::string_view> steps = jit::PipelineStepNames();
  EXPECT_THAT(log.names, ElementsAreArray(std::vector<std::string>(steps.begin(), steps.end())));
  // The info line says where the compile's time went.
  bool summary = false;
  for (const std::string& m : messages_) {
    summary = summary || (m.find("pto: compiled 'mlp'") != std::string::npos &&
                          m.find("compile_kernels") != std::string::npos);
  }
  EXPECT_TRUE(summary);
}

TEST_F(PipelineTest, DumpOfAStepPrintsWhatTheLogPrintsAfterIt) {
  ASSERT_TRUE(fn_->Precompile(kMlpShapes).ok());
  const StepLog log = LoggedSteps(messages_);
  ASSERT_EQ(log.names.size(), jit::PipelineStepNames().size());
  for (size_t s = 0; s < log.names.size(); ++s) {
    absl::StatusOr<std::string> dump = fn_->Dump(std::string_view(log.names[s]), kMlpShapes);
    ASSERT_TRUE(dump.ok()) << log.names[s] << ": " << dump.status();
    EXPECT_EQ(*dump, log.texts[s]) << log.names[s];
    EXPECT_FALSE(dump->empty()) << log.names[s];
  }
}

TEST_F(PipelineTest, LevelsByNameAreTheStageDumps) {
  const std::pair<std::string_view, Stage> levels[] = {{"tensor", Stage::kTensor},
                                                       {"tile", Stage::kTile},
                                                       {"block", Stage::kBlock},
                                                       {"exec", Stage::kExec},
                                                       {"asm", Stage::kAsm}};
  for (const auto& [name, stage] : levels) {
    absl::StatusOr<std::string> by_name = fn_->Dump(name, kMlpShapes);
    absl::StatusOr<std::string> by_stage = fn_->Dump(stage, kMlpShapes);
    ASSERT_TRUE(by_name.ok() && by_stage.ok()) << name;
    EXPECT_EQ(*by_name, *by_stage) << name;
  }
  // The block level: one line per kernel (pto tune counts kernels by it).
  absl::StatusOr<std::string> block = fn_->Dump(Stage::kBlock, kMlpShapes);
  absl::StatusOr<std::string> kernels = fn_->Dump(std::string_view("compile_kernels"), kMlpShapes);
  ASSERT_TRUE(block.ok() && kernels.ok());
  EXPECT_EQ(std::count(block->begin(), block->end(), '\n'),
            std::count(kernels->begin(), kernels->end(), '\n'));
}

TEST_F(PipelineTest, AnUnknownStageNamesTheStagesThereAre) {
  absl::StatusOr<std::string> dump = fn_->Dump(std::string_view("schedule"), kMlpShapes);
  ASSERT_FALSE(dump.ok());
  EXPECT_EQ(dump.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dump.status().message(), HasSubstr("unknown stage 'schedule'"));
  EXPECT_THAT(dump.status().message(), HasSubstr("choose_tile_configs"));
  EXPECT_THAT(dump.status().message(), HasSubstr("tensor, tile, block, exec, llvm, asm"));
}

TEST(Pipeline, LowerTimesEachStepOfLevelsOneToFour) {
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(Mlp, kMlpShapes);
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<std::string> names;
  for (const jit::StepTime& t : p->steps) {
    names.push_back(t.step);
    EXPECT_GE(t.seconds, 0);
  }
  const std::span<const std::string_view> steps = jit::PipelineStepNames();
  EXPECT_THAT(names, ElementsAreArray(std::vector<std::string>(
                         steps.begin(), std::find(steps.begin(), steps.end(),
                                                  std::string_view("apply_tuning_records")))));
}

TEST(Pipeline, BuildPlanReportsKeysAndCompiles) {
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(Mlp, kMlpShapes);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device::DetectHost());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::StatusOr<jit::BuiltPlan> built = jit::BuildPlan(*p, **compiler);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->plan->kernels.size(), p->tiles.calls.size());
  EXPECT_EQ(built->kernel_keys.size(), p->tiles.calls.size());
  EXPECT_EQ(built->kernels_compiled, static_cast<int64_t>(p->tiles.calls.size()));
  // Built again: every kernel from the compiler's memo, none compiled.
  absl::StatusOr<jit::BuiltPlan> again = jit::BuildPlan(*p, **compiler);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->kernels_compiled, 0);
  EXPECT_EQ(again->kernel_keys, built->kernel_keys);
}

}  // namespace
}  // namespace pto
