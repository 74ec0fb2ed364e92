// The log: warnings to stderr unless a sink replaces that, each pass's output at kDebug when
// log_passes is set; RuntimeOptions::FromEnvironment.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
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

// A cache path that is a regular file: the Runtime opens with the cache in memory and warns.
class UnusableCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::path(::testing::TempDir()) /
             ("not_a_dir_" + std::to_string(::getpid())))
                .string();
    std::ofstream(path_) << "a file, not a cache directory";
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(UnusableCacheTest, WarnsOnStderrWithoutASink) {
  RuntimeOptions options;
  options.cache_path = path_;
  ::testing::internal::CaptureStderr();
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_THAT(err, ::testing::StartsWith("warning: "));
  EXPECT_THAT(err, HasSubstr(path_));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST_F(UnusableCacheTest, ASinkReplacesStderr) {
  Captured c;
  RuntimeOptions options;
  options.cache_path = path_;
  options.log_sink = [&c](LogLevel level, std::string_view m) {
    c.messages.emplace_back(level, std::string(m));
  };
  ::testing::internal::CaptureStderr();
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(err, "");
  ASSERT_EQ(c.messages.size(), 1u) << c.All();
  EXPECT_EQ(c.messages[0].first, LogLevel::kWarning);
  EXPECT_THAT(c.messages[0].second, HasSubstr(path_));
}

TEST_F(UnusableCacheTest, LevelOffIsSilent) {
  RuntimeOptions options;
  options.cache_path = path_;
  options.log_level = LogLevel::kOff;
  ::testing::internal::CaptureStderr();
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(err, "");
}

// Sets (or, with nullptr, unsets) an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(FromEnvironment, UnsetLeavesTheDefaults) {
  ScopedEnv dir("PTO_CACHE_DIR", nullptr), log("PTO_LOG", nullptr);
  absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->cache_path, "");
  EXPECT_EQ(o->log_level, RuntimeOptions().log_level);
}

TEST(FromEnvironment, ReadsTheCacheDirAndTheLogLevel) {
  ScopedEnv dir("PTO_CACHE_DIR", "/var/cache/pto-test"), log("PTO_LOG", "Info");
  absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->cache_path, "/var/cache/pto-test");
  EXPECT_EQ(o->log_level, LogLevel::kInfo);
  for (const auto& [text, level] : std::vector<std::pair<const char*, LogLevel>>{
           {"debug", LogLevel::kDebug},
           {"warning", LogLevel::kWarning},
           {"ERROR", LogLevel::kError},
           {"off", LogLevel::kOff}}) {
    ScopedEnv again("PTO_LOG", text);
    absl::StatusOr<RuntimeOptions> parsed = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(parsed->log_level, level) << text;
  }
}

TEST(FromEnvironment, AnUnknownLogLevelIsInvalidArgument) {
  ScopedEnv log("PTO_LOG", "loud");
  absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(),
            "PTO_LOG must be one of debug, info, warning, error or off; got 'loud'");
}

TEST(FromEnvironment, ReadsPtoCheckNumerics) {
  {
    ScopedEnv unset("PTO_CHECK_NUMERICS", nullptr);
    absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_FALSE(o->check_numerics);
  }
  for (const auto& [text, on] : std::vector<std::pair<const char*, bool>>{
           {"1", true}, {"true", true}, {"TRUE", true}, {"0", false}, {"false", false}}) {
    ScopedEnv set("PTO_CHECK_NUMERICS", text);
    absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(o.ok()) << text;
    EXPECT_EQ(o->check_numerics, on) << text;
  }
  ScopedEnv bad("PTO_CHECK_NUMERICS", "yes");
  absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(),
            "PTO_CHECK_NUMERICS must be one of 1, 0, true or false; got 'yes'");
}

TEST(FromEnvironment, ReadsPtoPinThreads) {
  {
    ScopedEnv unset("PTO_PIN_THREADS", nullptr);
    absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->thread_pinning, ThreadPinning::kAuto);
  }
  for (const auto& [text, pinning] : std::vector<std::pair<const char*, ThreadPinning>>{
           {"auto", ThreadPinning::kAuto},
           {"always", ThreadPinning::kAlways},
           {"NEVER", ThreadPinning::kNever}}) {
    ScopedEnv set("PTO_PIN_THREADS", text);
    absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(o.ok()) << text;
    EXPECT_EQ(o->thread_pinning, pinning) << text;
  }
  ScopedEnv bad("PTO_PIN_THREADS", "cores");
  absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(),
            "PTO_PIN_THREADS must be one of auto, always or never; got 'cores'");
}

}  // namespace
}  // namespace pto
