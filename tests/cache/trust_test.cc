// CheckCacheDirectory (cache/trust.h) on real directories: what makes a cache directory
// unusable, usable as data only, or trusted for code, and the reason it gives.
#include "cache/trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr uid_t kNobody = 65534;

class TrustTest : public ::testing::Test {
 protected:
  DirectoryTrust Check(const std::string& path) {
    absl::StatusOr<DirectoryTrust> trust = CheckCacheDirectory(path);
    EXPECT_TRUE(trust.ok()) << trust.status();
    return trust.ok() ? *trust : DirectoryTrust{false, false, "error", "error"};
  }
  std::string Sub(const std::string& name) { return dir_.Sub(name); }

  TempDir dir_;
};

TEST_F(TrustTest, AFreshDirectoryOfThisUserIsTrusted) {
  fs::create_directories(Sub("cache/inbox"));
  fs::create_directories(Sub("cache/readers"));
  testing::WriteFile(Sub("cache/000001.sst"), "x");
  ASSERT_EQ(::chmod(Sub("cache/000001.sst").c_str(), 0644), 0);
  const DirectoryTrust trust = Check(Sub("cache"));
  EXPECT_TRUE(trust.writable);
  EXPECT_TRUE(trust.code);
  EXPECT_EQ(trust.why_not_writable, "");
  EXPECT_EQ(trust.why_not_code, "");
  // Not there yet: the directories on the way decide.
  EXPECT_TRUE(Check(Sub("new/deeper/cache")).writable);
  // Not a directory: opening it says what is wrong.
  testing::WriteFile(Sub("file"), "x");
  EXPECT_TRUE(Check(Sub("file")).writable);
}

TEST_F(TrustTest, ADirectoryOnTheWayOthersCanWriteNeedsTheStickyBit) {
  fs::create_directories(Sub("shared/cache"));
  ASSERT_EQ(::chmod(Sub("shared").c_str(), 0777), 0);
  for (const std::string& path : {Sub("shared/cache"), Sub("shared/new/cache")}) {
    const DirectoryTrust trust = Check(path);
    EXPECT_FALSE(trust.writable) << path;
    EXPECT_FALSE(trust.code) << path;
    EXPECT_EQ(trust.why_not_writable, "'" + Sub("shared") +
                                          "' can be written by other users (mode 0777) and has no "
                                          "sticky bit");
    EXPECT_EQ(trust.why_not_code, trust.why_not_writable);
    EXPECT_EQ(RefuseToWrite(trust).code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(RefuseToWrite(trust).message(),
              trust.why_not_writable +
                  ", and pto writes only to a cache directory that no other user can change");
  }
  ASSERT_EQ(::chmod(Sub("shared").c_str(), 01777), 0);
  EXPECT_TRUE(Check(Sub("shared/cache")).code);
}

TEST_F(TrustTest, ALinkOnTheWayIsCheckedWhereItLives) {
  // shared/c -> safe/cache: the target's directories are fine, but anyone can repoint the
  // link in `shared`.
  fs::create_directories(Sub("safe/cache"));
  fs::create_directories(Sub("shared"));
  fs::create_directory_symlink(Sub("safe/cache"), Sub("shared/c"));
  EXPECT_TRUE(Check(Sub("shared/c")).code);
  ASSERT_EQ(::chmod(Sub("shared").c_str(), 0777), 0);
  const DirectoryTrust trust = Check(Sub("shared/c"));
  EXPECT_FALSE(trust.writable);
  EXPECT_EQ(trust.why_not_writable, "'" + Sub("shared") +
                                        "' can be written by other users (mode 0777) and has no "
                                        "sticky bit");
}

TEST_F(TrustTest, SubdirectoriesPtoWritesIntoMustBeItsOwnersAlone) {
  for (const char* sub : {"inbox", "readers", "lost"}) {
    fs::create_directories(Sub(std::string("cache/") + sub));
    ASSERT_EQ(::chmod(Sub(std::string("cache/") + sub).c_str(), 0775), 0);
    const DirectoryTrust trust = Check(Sub("cache"));
    EXPECT_FALSE(trust.writable) << sub;
    EXPECT_EQ(trust.why_not_writable, "'" + Sub(std::string("cache/") + sub) +
                                          "' can be written by other users (mode 0775)");
    ASSERT_EQ(::chmod(Sub(std::string("cache/") + sub).c_str(), 0755), 0);
  }
  // Other subdirectories are not pto's business.
  fs::create_directories(Sub("cache/notes"));
  ASSERT_EQ(::chmod(Sub("cache/notes").c_str(), 0777), 0);
  EXPECT_TRUE(Check(Sub("cache")).code);
}

TEST_F(TrustTest, FilesOthersCouldChangeCostTheCodeNotTheDirectory) {
  fs::create_directories(Sub("cache"));
  for (const char* f : {"000007.sst", "CURRENT", "MANIFEST-000005"}) {
    testing::WriteFile(Sub(std::string("cache/") + f), "x");
    ASSERT_EQ(::chmod(Sub(std::string("cache/") + f).c_str(), 0644), 0);
  }
  ASSERT_EQ(::chmod(Sub("cache/CURRENT").c_str(), 0664), 0);
  DirectoryTrust trust = Check(Sub("cache"));
  EXPECT_TRUE(trust.writable);
  EXPECT_FALSE(trust.code);
  EXPECT_EQ(trust.why_not_code,
            "'" + Sub("cache/CURRENT") + "' can be written by other users (mode 0664)");
  ASSERT_EQ(::chmod(Sub("cache/MANIFEST-000005").c_str(), 0646), 0);
  EXPECT_EQ(Check(Sub("cache")).why_not_code,
            "'" + Sub("cache/CURRENT") +
                "' can be written by other users (mode 0664) (and 1 more files)");

  ASSERT_EQ(::chmod(Sub("cache/CURRENT").c_str(), 0644), 0);
  ASSERT_EQ(::chmod(Sub("cache/MANIFEST-000005").c_str(), 0644), 0);
  if (::lchown(Sub("cache/000007.sst").c_str(), kNobody, kNobody) != 0) {
    std::cout << "[ note     ] chown to uid " << kNobody
              << " is not permitted (not root): the owner check is not exercised\n";
    return;
  }
  trust = Check(Sub("cache"));
  EXPECT_TRUE(trust.writable);
  EXPECT_FALSE(trust.code);
  EXPECT_EQ(trust.why_not_code,
            "'" + Sub("cache/000007.sst") + "' is owned by another user (uid 65534)");
}

TEST_F(TrustTest, ALinkAmongTheEntriesRefusesEveryUse) {
  fs::create_directories(Sub("cache"));
  fs::create_directories(Sub("elsewhere"));
  fs::create_directory_symlink(Sub("elsewhere"), Sub("cache/notes"));
  absl::StatusOr<DirectoryTrust> trust = CheckCacheDirectory(Sub("cache"));
  EXPECT_EQ(trust.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(trust.status().message(),
            "'" + Sub("cache/notes") +
                "' is a symbolic link, and pto never follows links in a cache directory");
}

}  // namespace
}  // namespace pto::cache
