// `pto run` is strict about its inputs (their rank and dims are the graph's) and `pto run
// --check` compares every node with the ops/ reference.
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "tests/tools/run_pto.h"
#include "tools/npy.h"

namespace pto {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

// A checked-in graph of tests/tools/data.
std::string Data(const std::string& name) {
  return std::string(PTO_SOURCE_DIR) + "/tests/tools/data/" + name;
}

class RunCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pto_run_check_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  // Writes `t` as NAME.npy; returns its --input flag.
  std::string Input(const std::string& name, const ops::HostTensor& t) {
    EXPECT_TRUE(tools::WriteNpy(Path(name + ".npy"), {t.shape, t.data}).ok());
    return " --input " + name + "=" + Path(name + ".npy");
  }
  testing::PtoStreams Run(const std::string& args) {
    return testing::RunPtoStreams(PTO_CLI_PATH, "run " + args);
  }
  std::filesystem::path dir_;
};

// A 24×29 x where 23×29 is declared: refused before anything runs, no output written.
TEST_F(RunCheck, AnInputWithAnotherDimIsRefused) {
  const std::string graph = Data("matmul_23x29.pbtxt");
  const testing::PtoStreams r =
      Run(graph + Input("x", ops::HostTensor::Random({24, 29}, 1)) +
          Input("w", ops::HostTensor::Random({29, 31}, 2)) + " --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "pto run: input 0 (x): shape [24, 29] does not match the declared shape [23, 29]: "
            "dim 0 is 24, declared 23\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(Path("y.npy")));
}

// A (17,) x where [3, 1, 17] is declared: refused, though it would broadcast.
TEST_F(RunCheck, AnInputOfAnotherRankIsRefused) {
  const std::string graph = Data("add_3x1x17.pbtxt");
  const testing::PtoStreams r =
      Run(graph + Input("x", ops::HostTensor::Random({17}, 1)) +
          Input("z", ops::HostTensor::Random({3, 4, 17}, 2)) + " --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "pto run: input 0 (x): shape [17] does not match the declared shape [3, 1, 17]: "
            "rank 1, declared 3\n");
  EXPECT_FALSE(std::filesystem::exists(Path("y.npy")));
  // The declared shapes run.
  const testing::PtoStreams ok =
      Run(graph + Input("x", ops::HostTensor::Random({3, 1, 17}, 1)) +
          Input("z", ops::HostTensor::Random({3, 4, 17}, 2)) + " --output y=" + Path("y.npy"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(Path("y.npy")));
}

// The row of node `id` in the --check table: its cells.
std::vector<std::string> Row(const std::string& table, int id) {
  const std::regex row("(^|\n) *" + std::to_string(id) + "  ([^\n]*)");
  std::smatch m;
  if (!std::regex_search(table, m, row)) return {};
  std::vector<std::string> cells = {std::to_string(id)};
  std::istringstream in(m[2].str());
  for (std::string cell; in >> cell;) cells.push_back(cell);
  return cells;
}

std::string Number(double v) { return absl::StrFormat("%.2e", v); }

double Largest(const ops::HostTensor& t) {
  double m = 0;
  for (float v : t.data) m = std::max(m, static_cast<double>(std::abs(v)));
  return m;
}

TEST_F(RunCheck, CheckPrintsEveryNodeOfSmallMlpWithinTolerance) {
  const std::string graph = Data("small_mlp.pbtxt");
  const std::vector<ops::HostTensor> in = {
      ops::HostTensor::Random({3, 12}, 1), ops::HostTensor::Random({12, 20}, 2),
      ops::HostTensor::Random({20}, 3), ops::HostTensor::Random({20, 12}, 4)};
  const std::string inputs =
      Input("x", in[0]) + Input("w1", in[1]) + Input("b1", in[2]) + Input("w2", in[3]);
  const testing::PtoStreams r = Run(graph + inputs + " --check --output y=" + Path("y.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, ::testing::StartsWith("pto run --check: every node computed by a debug "
                                           "plan that materializes each one in a\nbuffer of its "
                                           "own (slower than the real plan;"));
  EXPECT_THAT(r.out, HasSubstr("rel = max |pto - ref| / max(|ref|, FLT_MIN)"));
  EXPECT_THAT(r.out, ContainsRegex("\nnode  name  op +shape +local_abs  local_rel  total_abs  "
                                   "total_rel  tol_abs +tol_rel +verdict\n"));
  // One row per node but the inputs: id, name, op, shape, 6 numbers, the verdict.
  const std::vector<std::vector<std::string>> want = {{"4", "h", "matmul", "[3,20]"},
                                                      {"5", "hb", "add", "[3,20]"},
                                                      {"6", "act", "gelu_tanh", "[3,20]"},
                                                      {"7", "o", "matmul", "[3,12]"},
                                                      {"8", "y", "add", "[3,12]"}};
  for (const auto& w : want) {
    const std::vector<std::string> row = Row(r.out, std::stoi(w[0]));
    ASSERT_EQ(row.size(), 11u) << r.out;
    EXPECT_EQ(std::vector<std::string>(row.begin(), row.begin() + 4), w);
    EXPECT_EQ(row[10], "ok") << r.out;
    // The local difference is the op's own: far below the tolerance's scale here.
    EXPECT_LE(std::stod(row[4]), std::stod(row[8])) << r.out;
  }
  // The first matmul's tolerance: ops::OpTolerance(matmul, K = 12), its absolute term scaled
  // by max|x| * max|w1|.
  const ops::Tolerance h = ops::OpTolerance(ir::OpKind::kMatMul, 12);
  EXPECT_EQ(Row(r.out, 4)[8], Number(h.abs * std::max(1.0, Largest(in[0]) * Largest(in[1]))));
  EXPECT_EQ(Row(r.out, 4)[9], Number(h.rel));
  // The bias add is exact against its op's reference on pto's own inputs.
  EXPECT_EQ(Row(r.out, 5)[4], "0");
  EXPECT_THAT(r.out, HasSubstr("\n5 of 5 nodes within tolerance\n"));
  // The real plan's output is written as without --check.
  absl::StatusOr<tools::NpyArray> with = tools::ReadNpy(Path("y.npy"));
  ASSERT_TRUE(with.ok()) << with.status();
  const testing::PtoStreams plain = Run(graph + inputs + " --output y=" + Path("y2.npy"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  absl::StatusOr<tools::NpyArray> without = tools::ReadNpy(Path("y2.npy"));
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(with->data, without->data);
}

// Rows of magnitude 1e20: x*x overflows the f32 sum of squares in rms_norm (the reference sums
// in double), so pto's n is 0 where the reference's is w. The node that did it exceeds its
// tolerance; the mul after it, given pto's n, is exact (its total error shows the drift).
TEST_F(RunCheck, CheckFlagsTheNodeOutsideItsTolerance) {
  const std::string graph = Data("rms_norm_mul.pbtxt");
  ops::HostTensor x = ops::HostTensor::Random({2, 8}, 1);
  for (float& v : x.data) v = v < 0 ? -1e20f : 1e20f;
  const ops::HostTensor w = ops::HostTensor::Filled({8}, 0.5f);
  const testing::PtoStreams r =
      Run(graph + Input("x", x) + Input("w", w) + " --check --output y=" + Path("y.npy"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "pto run: --check: 1 of 2 nodes exceed their tolerance\n");
  const std::vector<std::string> n = Row(r.out, 2);
  ASSERT_EQ(n.size(), 11u) << r.out;
  EXPECT_EQ(n[1], "n");
  EXPECT_EQ(n[2], "rms_norm");
  EXPECT_EQ(n[4], Number(0.5));  // |0 - 0.5|
  EXPECT_EQ(n[5], Number(1.0));  // relative to |0.5|
  EXPECT_EQ(n[10], "EXCEEDS");
  const std::vector<std::string> y = Row(r.out, 3);
  ASSERT_EQ(y.size(), 11u) << r.out;
  EXPECT_EQ(y[4], "0");
  EXPECT_EQ(y[6], Number(0.25));  // 0 * 0.5 against 0.5 * 0.5
  EXPECT_EQ(y[10], "ok");
  EXPECT_THAT(r.out, HasSubstr("\n1 of 2 nodes within tolerance\n"));
  EXPECT_TRUE(std::filesystem::exists(Path("y.npy")));
}

}  // namespace
}  // namespace pto
