// pto_bench_baseline (tools/bench/baseline_child.cc), the kernel bench's baseline process, run
// for real: its refusals (an unknown case, a column the case has no baseline in, an operation
// its library does not have at that thread count, an unknown request) and its protocol on a
// small matmul through OpenBLAS: READY, a timed repetition, and outputs that are the product of
// the operands the bench itself builds (the same generator and seeds).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/bench_shapes.h"
#include "tools/bench/buffers.h"
#include "tools/subprocess.h"

namespace pto::bench {
namespace {

using ::testing::StartsWith;

constexpr char kCase[] = "matmul 23x29x31";

std::unique_ptr<tools::Child> Start(const std::string& flags) {
  return tools::Child::Start(std::string("'") + PTO_BASELINE_PATH + "' " + flags);
}

// The first line it prints and its exit status.
std::pair<std::string, int> FirstLine(const std::string& flags) {
  std::unique_ptr<tools::Child> child = Start(flags);
  EXPECT_NE(child, nullptr);
  if (child == nullptr) return {"", -1};
  std::string line;
  child->ReadLine(line);
  return {line, child->Finish()};
}

TEST(BaselineChild, RefusesAnUnknownCaseAndAColumnWithoutABaseline) {
  EXPECT_EQ(FirstLine("--case 'no such case' --column 0 --threads 1"),
            std::make_pair(std::string("ERROR no case named 'no such case'"), 2));
  // A matmul has no oneDNN post-ops baseline (column 1).
  EXPECT_EQ(FirstLine(std::string("--case '") + kCase + "' --column 1 --threads 1"),
            std::make_pair(std::string("ERROR the case has no baseline in column 1"), 2));
}

TEST(BaselineChild, LibxsmmHasNoTwoThreadMatmul) {
  const auto [line, status] =
      FirstLine(std::string("--case '") + kCase + "' --column 3 --threads 2");
  EXPECT_EQ(status, 0);
  if (PTO_HAS_LIBXSMM) {
    EXPECT_EQ(line, "NONE LIBXSMM runs one kernel call per thread");
  } else {
    EXPECT_EQ(line, "MISSING LIBXSMM missing");
  }
}

TEST(BaselineChild, TimesRepetitionsAndWritesTheProduct) {
  std::unique_ptr<tools::Child> child =
      Start(std::string("--case '") + kCase +
            "' --column 2 --threads 1 --warmup-seconds 0.01 --min-rep-seconds 0.001");
  ASSERT_NE(child, nullptr);
  std::string line;
  ASSERT_TRUE(child->ReadLine(line));
  if (!PTO_HAS_OPENBLAS) {
    EXPECT_EQ(line, "MISSING OpenBLAS missing");
    return;
  }
  int calls = 0;
  long long bytes = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), "READY %d %lld", &calls, &bytes), 2) << line;
  EXPECT_GE(calls, 1);
  ASSERT_TRUE(child->WriteLine("rep"));
  ASSERT_TRUE(child->ReadLine(line));
  ASSERT_THAT(line, StartsWith("REP "));
  const double seconds = std::atof(line.c_str() + 4);
  EXPECT_GT(seconds, 0);
  EXPECT_LT(seconds, 0.1);
  ASSERT_TRUE(child->WriteLine("bogus"));
  ASSERT_TRUE(child->ReadLine(line));
  EXPECT_EQ(line, "ERROR unknown request 'bogus'");

  const std::string path = (std::filesystem::temp_directory_path() /
                            ("baseline_child_test_" + std::to_string(::getpid()) + ".bin"))
                               .string();
  ASSERT_TRUE(child->WriteLine("output " + path));
  ASSERT_TRUE(child->ReadLine(line));
  EXPECT_EQ(line, "OUTPUT");
  EXPECT_EQ(child->Finish(), 0);
  std::vector<float> got(23 * 31);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(std::fread(got.data(), sizeof(float), got.size(), f), got.size());
  EXPECT_EQ(std::fgetc(f), EOF);  // nothing more
  std::fclose(f);
  std::filesystem::remove(path);

  // The same operands as the bench's, multiplied here in double.
  const CaseSpec* spec = nullptr;
  const std::vector<CaseSpec> cases = AllCases();
  for (const CaseSpec& c : cases) {
    if (c.name == kCase) spec = &c;
  }
  ASSERT_NE(spec, nullptr);
  const OperandSets operands(*spec, 1);
  const float* a = operands.sets()[0].inputs[0];
  const float* b = operands.sets()[0].inputs[1];
  double worst = 0;
  for (int i = 0; i < 23; ++i) {
    for (int j = 0; j < 31; ++j) {
      double want = 0;
      for (int k = 0; k < 29; ++k) want += static_cast<double>(a[i * 29 + k]) * b[k * 31 + j];
      worst = std::max(worst, std::abs(got[i * 31 + j] - want));
    }
  }
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
}  // namespace pto::bench
