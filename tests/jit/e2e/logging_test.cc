// The log sink: silent unless asked, each pass's output at kDebug when log_passes is set.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

struct Captured {
  std::vector<std::pair<LogLevel, std::string>> messages;
  std::string All() const {
    std::string all;
    for (const auto& [level, m] : messages) all += m + "\n";
    return all;
  }
};

absl::Status RunOnce(Runtime& rt) {
  auto fn = rt.Jit("logged", [](Value x) { return pto::exp(x * 1.0f) + 0.0f; });
  if (!fn.ok()) return fn.status();
  std::vector<float> a(5, 1.0f), out(5);
  return (**fn)({TensorView::Dense(a.data(), {5})}, {TensorView::Dense(out.data(), {5})});
}

TEST(Logging, PassesAreLoggedWhenAsked) {
  Captured c;
  RuntimeOptions options;
  options.log_sink = [&c](LogLevel level, std::string_view m) { c.messages.emplace_back(level, std::string(m)); };
  options.log_level = LogLevel::kDebug;
  options.log_passes = true;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  ASSERT_TRUE(RunOnce(*rt).ok());
  const std::string all = c.All();
  for (const char* pass : {"after specialize_shapes", "after canonicalize", "after cse", "after dce",
                           "after build_tile_graph", "after plan_buffers"}) {
    EXPECT_THAT(all, HasSubstr(pass));
  }
  // Canonicalization bypassed x*1 and +0, and DCE removed them: the graph after dce has no mul
  // or add.
  const size_t dce = all.find("after dce");
  const size_t tiles = all.find("after build_tile_graph");
  ASSERT_NE(dce, std::string::npos);
  const std::string canonical = all.substr(dce, tiles - dce);
  EXPECT_THAT(canonical, HasSubstr("exp("));
  EXPECT_THAT(canonical, ::testing::Not(HasSubstr("= mul(")));
  EXPECT_THAT(canonical, ::testing::Not(HasSubstr("= add(")));
  EXPECT_THAT(all, HasSubstr("pto: compiled 'logged'"));
}

TEST(Logging, WarningLevelHidesCompileMessages) {
  Captured c;
  RuntimeOptions options;
  options.log_sink = [&c](LogLevel level, std::string_view m) { c.messages.emplace_back(level, std::string(m)); };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  ASSERT_TRUE(RunOnce(*rt).ok());
  EXPECT_TRUE(c.messages.empty()) << c.All();
}

}  // namespace
}  // namespace pto
