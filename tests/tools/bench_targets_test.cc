// The bench's check of its targets (docs/performance.md): which rows each target covers, its
// bar, the rows below it, and rows without a measurement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/bench/targets.h"

namespace pto::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Row MatmulRow(std::string name, TargetClass target, double pto, double onednn, double limit_share) {
  Row r;
  r.name = std::move(name);
  r.target = target;
  r.pto = pto;
  r.baseline[static_cast<int>(Column::kOnednn)] = onednn;
  r.case_limit_share = limit_share;
  return r;
}

const TargetResult* Find(const std::vector<TargetResult>& results, const std::string& text) {
  for (const TargetResult& r : results) {
    if (r.text == text) return &r;
  }
  return nullptr;
}

// The target `text` is among `results` with exactly one case below its bar: `name` at `value`.
void ExpectOneMiss(const std::vector<TargetResult>& results, const std::string& text,
                   const std::string& name, double value) {
  const TargetResult* t = Find(results, text);
  ASSERT_NE(t, nullptr) << text;
  ASSERT_EQ(t->misses.size(), 1u) << text;
  EXPECT_EQ(t->misses[0].name, name) << text;
  EXPECT_NEAR(t->misses[0].value, value, 1e-12) << text;
}

std::string Printed(const std::vector<TargetResult>& results) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  PrintTargets(out, 2, results);
  std::fclose(out);
  std::string s(text, size);
  std::free(text);
  return s;
}

// A large matmul holds at 1.0x oneDNN, or at 85% of the peak when oneDNN is faster.
TEST(BenchTargets, LargeMatmulsAgainstOnednnOrThePeak) {
  const std::vector<Row> rows = {
      MatmulRow("matmul 256x256x256", TargetClass::kLargeMatmul, 94, 100, 0.50),
      MatmulRow("matmul 1024x1024x1024", TargetClass::kLargeMatmul, 95, 100, 0.85),
      MatmulRow("matmul 2048x2048x2048", TargetClass::kLargeMatmul, 110, 100, 0.69),
      MatmulRow("matmul 384x64x384", TargetClass::kLargeMatmul, 99, 100, 0.84),
  };
  const std::vector<TargetResult> results = EvaluateTargets(rows);
  ASSERT_EQ(results.size(), 1u);  // the one target that covers these rows
  const TargetResult& t = results[0];
  EXPECT_EQ(t.text, "matmul M >= 128: >= 1.0x oneDNN, or >= 85% of peak (%lim)");
  EXPECT_EQ(t.measured, 4);
  ASSERT_EQ(t.misses.size(), 2u);                           // 1024^3 holds by its 85% of the peak
  EXPECT_EQ(t.misses[0].name, "matmul 256x256x256 (50%)");  // lowest ratio first
  EXPECT_DOUBLE_EQ(t.misses[0].value, 0.94);
  EXPECT_EQ(t.misses[1].name, "matmul 384x64x384 (84%)");
  EXPECT_DOUBLE_EQ(t.lo, 0.94);
  EXPECT_DOUBLE_EQ(t.hi, 1.10);
  const std::string text = Printed(results);
  EXPECT_THAT(text, HasSubstr("2/4"));
  EXPECT_THAT(text, HasSubstr("0.94x-1.10x"));
  EXPECT_THAT(text, HasSubstr("matmul 256x256x256 (50%) 0.94x, matmul 384x64x384 (84%) 0.99x"));
  EXPECT_THAT(text, Not(HasSubstr("M <= 32")));
  // One value, or several equal, print once.
  const std::string one = Printed(EvaluateTargets({rows[0]}));
  EXPECT_THAT(one, HasSubstr(" 0.94x "));
  EXPECT_THAT(one, Not(HasSubstr("0.94x-")));
  // No target of these rows is set at 1 thread.
  EXPECT_TRUE(EvaluateTargets(rows, 1).empty());
}

// Small matmuls are held to LIBXSMM at 1 thread (its dispatch model), not at 2.
TEST(BenchTargets, SmallMatmulsAgainstLibxsmmAtOneThread) {
  Row small = MatmulRow("matmul 17x33x65", TargetClass::kSmallOdd, 42.7, 36, 0.41);
  small.baseline[static_cast<int>(Column::kLibxsmm)] = 65.4;
  Row odd = MatmulRow("matmul 23x29x31", TargetClass::kSmallOdd, 40.8, 26.9, 0.39);
  odd.baseline[static_cast<int>(Column::kLibxsmm)] = 33.1;
  EXPECT_TRUE(EvaluateTargets({small, odd}, 2).empty());
  const std::vector<TargetResult> results = EvaluateTargets({small, odd}, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].text, "small matmuls at 1 thread: >= 1.0x LIBXSMM");
  EXPECT_EQ(results[0].measured, 2);
  ASSERT_EQ(results[0].misses.size(), 1u);
  EXPECT_EQ(results[0].misses[0].name, "matmul 17x33x65");
  EXPECT_NEAR(results[0].misses[0].value, 42.7 / 65.4, 1e-12);
}

TEST(BenchTargets, MissingBaselineOrFailedPtoIsNotMeasured) {
  const std::vector<Row> rows = {
      MatmulRow("linear 8x768x768", TargetClass::kFewRowsLinear, 150, -1, 0.5),   // no oneDNN
      MatmulRow("linear 32x768x768", TargetClass::kFewRowsLinear, -1, 100, 0.5),  // pto failed
      MatmulRow("linear 8x768x3072", TargetClass::kFewRowsLinear, 130, 100, 0.5),
      MatmulRow("bmm 12x128x64x128", TargetClass::kNone, 1, 100, 0.1),  // held to nothing
  };
  const std::vector<TargetResult> results = EvaluateTargets(rows);
  ASSERT_EQ(results.size(), 1u);
  const TargetResult& r = results[0];
  EXPECT_EQ(r.text, "M <= 32, W constant: >= 1.2x oneDNN, or >= 90% (%roof)");
  EXPECT_EQ(r.measured, 1);
  EXPECT_TRUE(r.misses.empty());
  EXPECT_EQ(r.unmeasured, (std::vector<std::string>{"linear 8x768x768", "linear 32x768x768"}));
  EXPECT_THAT(Printed(results), HasSubstr("1/1"));
  EXPECT_THAT(Printed(results), HasSubstr("2 not measured (linear 8x768x768, ...)"));
}

TEST(BenchTargets, MemoryChainsCountTowardBothMemoryTargets) {
  Row op = MatmulRow("gelu 4096x4096", TargetClass::kMemoryOp, 20, 15, 0.79);
  Row chain = MatmulRow("softmax(x*s+mask) 4096x4096", TargetClass::kMemoryChain, 20, 11, 0.85);
  const std::vector<TargetResult> results = EvaluateTargets({op, chain});
  const TargetResult* bandwidth =
      Find(results, "memory-bound ops and chains: >= 80% of the bandwidth (%lim)");
  ASSERT_NE(bandwidth, nullptr);
  EXPECT_EQ(bandwidth->measured, 2);
  ASSERT_EQ(bandwidth->misses.size(), 1u);
  EXPECT_EQ(bandwidth->misses[0].name, "gelu 4096x4096");
  const TargetResult* unfused =
      Find(results, "memory-bound chains: >= 2x the unfused oneDNN chain");
  ASSERT_NE(unfused, nullptr);
  EXPECT_EQ(unfused->measured, 1);  // the op is not a chain
  ASSERT_EQ(unfused->misses.size(), 1u);
  EXPECT_NEAR(unfused->misses[0].value, 20.0 / 11, 1e-12);
}

// The LIBXSMM and ONNX Runtime columns count for the best baseline; a row starts with every
// baseline unmeasured.
TEST(BenchTargets, TheBestBaselineIncludesLibxsmmAndOnnxRuntime) {
  Row r;
  for (double b : r.baseline) EXPECT_EQ(b, -1);
  EXPECT_EQ(BestBaseline(r), -1);
  r.baseline[static_cast<int>(Column::kOpenblas)] = 58;
  r.baseline[static_cast<int>(Column::kLibxsmm)] = 86.6;
  EXPECT_EQ(BestBaseline(r), 86.6);
  r.baseline[static_cast<int>(Column::kOnnxRuntime)] = 90;
  EXPECT_EQ(BestBaseline(r), 90);
}

// The block is held to ONNX Runtime, to the faster oneDNN chain (ONNX Runtime, faster here than
// both, does not raise that bar) and to the unfused chain's memory.
TEST(BenchTargets, BlockAgainstOnnxRuntimeTheOnednnChainsAndTheUnfusedMemory) {
  constexpr int kOrt = static_cast<int>(Column::kOnnxRuntime);
  Row small = MatmulRow("block b1 s128 d128", TargetClass::kBlock, 140, 100, 0.4);
  small.baseline[static_cast<int>(Column::kOnednnFused)] = 105;  // the faster oneDNN chain
  small.baseline[kOrt] = 60;                                     // 2.33x
  small.pto_intermediate_bytes = 7 << 20;
  small.baseline_intermediate_bytes = 11 << 20;  // 36% less
  Row large = small;
  large.name = "block b16 s128 d128";
  large.pto = 130;                         // 1.24x the faster oneDNN chain
  large.baseline[kOrt] = 120;              // 1.08x
  large.pto_intermediate_bytes = 8 << 20;  // 27% less
  const std::vector<TargetResult> results = EvaluateTargets({small, large});
  ASSERT_EQ(results.size(), 3u);
  ExpectOneMiss(results, "demo block: >= 2x ONNX Runtime", "block b16 s128 d128", 130.0 / 120);
  const TargetResult* ort = Find(results, "demo block: >= 2x ONNX Runtime");
  ASSERT_NE(ort, nullptr);
  EXPECT_EQ(ort->measured, 2);
  ExpectOneMiss(results, "demo block: >= 1.3x the faster oneDNN chain", "block b16 s128 d128",
                130.0 / 105);
  ExpectOneMiss(results, "demo block: >= 30% less intermediate memory than unfused",
                "block b16 s128 d128", 1 - 8.0 / 11);
  EXPECT_THAT(Printed(results), HasSubstr("block b16 s128 d128 27%"));
}

// A memory-bound chain is held to the faster of ONNX Runtime's timed calls and its own time; one
// without an ONNX Runtime figure (the package missing) is counted as not measured by that
// target, and still held to the others.
TEST(BenchTargets, MemoryChainsAgainstOnnxRuntime) {
  Row fast = MatmulRow("bias+gelu+residual 4096x4096", TargetClass::kMemoryChain, 24, 10, 0.85);
  fast.baseline[static_cast<int>(Column::kOnnxRuntime)] = 12;  // 2x
  fast.onnx_runtime_own = 10;  // slower than through Node (profiling costs): not the bar
  Row slow = fast;
  slow.name = "softmax(x*s+mask) 4096x4096";
  slow.baseline[static_cast<int>(Column::kOnnxRuntime)] = 20;  // through Node: 1.2x
  slow.onnx_runtime_own = 22;  // its own time, faster: the bar (1.09x)
  Row unmeasured = fast;
  unmeasured.name = "layernorm*scale+shift 4096x4096";
  unmeasured.baseline[static_cast<int>(Column::kOnnxRuntime)] = -1;
  const std::vector<TargetResult> results = EvaluateTargets({fast, slow, unmeasured});
  ExpectOneMiss(results, "memory-bound chains: >= 1.5x ONNX Runtime", "softmax(x*s+mask) 4096x4096",
                24.0 / 22);
  const TargetResult* ort = Find(results, "memory-bound chains: >= 1.5x ONNX Runtime");
  ASSERT_NE(ort, nullptr);
  EXPECT_EQ(ort->measured, 2);
  EXPECT_EQ(ort->unmeasured, std::vector<std::string>{"layernorm*scale+shift 4096x4096"});
  const TargetResult* unfused =
      Find(results, "memory-bound chains: >= 2x the unfused oneDNN chain");
  ASSERT_NE(unfused, nullptr);
  EXPECT_EQ(unfused->measured, 3);
  EXPECT_TRUE(unfused->misses.empty());
}

// A miss of a target relative to a baseline says what its bar asks of the machine: the bar's
// rate over the limit measured around the case. Share targets, and cases without a measured
// limit, say nothing of it.
TEST(BenchTargets, AMissSaysWhatItsBarAsksOfTheMeasuredLimit) {
  constexpr int kOrt = static_cast<int>(Column::kOnnxRuntime);
  Row beyond = MatmulRow("block b4 s128 d128", TargetClass::kBlock, 165, 130, 0.72);
  beyond.case_limit = 229;      // pto's 165 GFLOP/s is 72% of it
  beyond.baseline[kOrt] = 137;  // 1.20x; 2x is 274 GFLOP/s, 120% of the limit
  Row within = beyond;
  within.name = "block b1 s128 d128";
  within.pto = 130;
  within.baseline[kOrt] = 80;  // 1.63x; 2x is 160 GFLOP/s, 70% of the limit
  Row unmeasured = beyond;
  unmeasured.name = "block b16 s128 d128";
  unmeasured.case_limit = -1;
  const std::vector<TargetResult> results = EvaluateTargets({beyond, within, unmeasured});
  const TargetResult* ort = Find(results, "demo block: >= 2x ONNX Runtime");
  ASSERT_NE(ort, nullptr);
  ASSERT_EQ(ort->misses.size(), 3u);
  EXPECT_EQ(ort->misses[0].name, "block b4 s128 d128");  // lowest ratio first
  EXPECT_NEAR(ort->misses[0].bar_over_limit, 2 * 137.0 / 229, 1e-12);
  EXPECT_EQ(ort->misses[2].name, "block b1 s128 d128");
  EXPECT_NEAR(ort->misses[2].bar_over_limit, 2 * 80.0 / 229, 1e-12);
  EXPECT_EQ(ort->misses[1].bar_over_limit, -1);
  const std::string text = Printed(results);
  EXPECT_THAT(text, HasSubstr("block b4 s128 d128 1.20x (bar 120% lim), block b16 s128 d128 "
                              "1.20x, block b1 s128 d128 1.62x (bar 70% lim)"));
  const std::string memory =
      Printed(EvaluateTargets({MatmulRow("gelu 4096x4096", TargetClass::kMemoryOp, 20, 15, 0.79)}));
  EXPECT_THAT(memory, HasSubstr("gelu 4096x4096 79%\n"));  // a share target: no bar figure
}

TEST(BenchTargets, ManyMissesAreCounted) {
  std::vector<Row> rows;
  for (int i = 0; i < 6; ++i) {
    rows.push_back(
        MatmulRow("linear " + std::to_string(i), TargetClass::kFewRowsLinear, 100 + i, 100, 0.5));
    rows.back().roofline_share = 0.5;
  }
  const std::string text = Printed(EvaluateTargets(rows));
  EXPECT_THAT(text, HasSubstr("0/6"));
  EXPECT_THAT(text, HasSubstr("linear 0 (50%) 1.00x, linear 1 (50%) 1.01x, linear 2 (50%) 1.02x, "
                              "linear 3 (50%) 1.03x and 2 more"));
}

TEST(BenchTargets, NoCoveredRowsPrintsNothing) {
  const std::vector<TargetResult> results =
      EvaluateTargets({MatmulRow("bmm 12x128x64x128", TargetClass::kNone, 1, 100, 0.1)});
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(Printed(results), "");
}

}  // namespace
}  // namespace pto::bench
