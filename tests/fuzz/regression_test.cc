// Runs a fuzz target's entry point over every file of the folders named on the command line
// (its regression inputs and its starting corpus), one gtest case per file, without libFuzzer:
// inputs that once crashed a target keep being checked in every build, with any compiler.
//   fuzz_<target>_regression [gtest flags] FOLDER...
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_target.h"

namespace pto::fuzz {
namespace {

namespace fs = std::filesystem;

// libFuzzer stops a target whose process grows past -rss_limit_mb (2048 MB by default); so does
// this runner, after the input.
constexpr long kRssLimitMb = 2048;

long PeakRssMb() {
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_maxrss / 1024;
}

// Letters and digits, anything else as '_' (gtest names).
std::string TestName(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

class RunInput : public ::testing::Test {
 public:
  explicit RunInput(fs::path file) : file_(std::move(file)) {}

  void TestBody() override {
    std::ifstream in(file_, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read " << file_;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
              0)
        << file_;
    EXPECT_LE(PeakRssMb(), kRssLimitMb) << file_ << ": the process's peak RSS (MB)";
  }

 private:
  fs::path file_;
};

class NoInputs : public ::testing::Test {
 public:
  void TestBody() override { FAIL() << "none of the folders named holds an input"; }
};

// One test per regular file of `folder` (none when it does not exist: a target may have no
// regressions yet), in the suite "<parent>_<folder>" (e.g. regressions_npy), named after the
// file. Returns the number of files.
size_t RegisterFolder(const fs::path& folder) {
  const std::string suite =
      TestName(folder.parent_path().filename().string() + "_" + folder.filename().string());
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return 0;
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    ::testing::RegisterTest(suite.c_str(), TestName(file.filename().string()).c_str(), nullptr,
                            file.string().c_str(), __FILE__, __LINE__,
                            [file]() -> ::testing::Test* { return new RunInput(file); });
  }
  return files.size();
}

}  // namespace
}  // namespace pto::fuzz

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) inputs += pto::fuzz::RegisterFolder(argv[i]);
  if (inputs == 0) {
    ::testing::RegisterTest("Inputs", "Exist", nullptr, nullptr, __FILE__, __LINE__,
                            []() -> ::testing::Test* { return new pto::fuzz::NoInputs(); });
  }
  return RUN_ALL_TESTS();
}
