// cache/fs_safety.h on real directories: links are never followed, checks read the open
// descriptor, temporaries are exclusive, modes are fixed whatever the umask, and only this
// user's regular files with the expected names are deleted.
#include "cache/fs_safety.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache::fs_safety {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

constexpr uid_t kNobody = 65534;

mode_t ModeOf(const fs::path& p) {
  struct stat st = {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

bool IsSst(std::string_view name) { return name.ends_with(".sst"); }

class FsSafetyTest : public ::testing::Test {
 protected:
  Fd Root() {
    absl::StatusOr<Fd> fd = OpenDirectory(dir_.path().string());
    EXPECT_TRUE(fd.ok()) << fd.status();
    return fd.ok() ? std::move(*fd) : Fd();
  }
  std::string Sub(const std::string& name) { return dir_.Sub(name); }

  TempDir dir_;
};

TEST_F(FsSafetyTest, OpenSubdirectoryRefusesLinksAndDirectoriesOthersCanChange) {
  fs::create_directories(Sub("target"));
  fs::create_directory_symlink(Sub("target"), Sub("link"));
  testing::WriteFile(Sub("file"), "x");
  fs::create_directories(Sub("open"));
  ASSERT_EQ(::chmod(Sub("open").c_str(), 0777), 0);
  fs::create_directories(Sub("fine"));
  Fd root = Root();

  absl::StatusOr<Fd> link = OpenSubdirectory(root.get(), "link", "D/link");
  EXPECT_EQ(link.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(link.status().message(),
            "'D/link' is a symbolic link, and pto never follows links in a cache directory");
  absl::StatusOr<Fd> file = OpenSubdirectory(root.get(), "file", "D/file");
  EXPECT_EQ(file.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(file.status().message(), "'D/file' is not a directory");
  absl::StatusOr<Fd> open = OpenSubdirectory(root.get(), "open", "D/open");
  EXPECT_EQ(open.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(open.status().message(), "'D/open' can be written by other users (mode 0777)");
  absl::StatusOr<Fd> missing = OpenSubdirectory(root.get(), "missing", "D/missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "'D/missing' does not exist");
  EXPECT_TRUE(OpenSubdirectory(root.get(), "fine", "D/fine").ok());
}

TEST_F(FsSafetyTest, OthersCanChangeNamesTheReason) {
  struct stat st = {};
  st.st_uid = ::geteuid();
  st.st_mode = S_IFDIR | 0755;
  EXPECT_EQ(OthersCanChange(st, "d"), "");
  st.st_mode = S_IFDIR | 0775;
  EXPECT_EQ(OthersCanChange(st, "d"), "'d' can be written by other users (mode 0775)");
  st.st_mode = S_IFDIR | 01777;
  EXPECT_EQ(OthersCanChange(st, "d", /*sticky_suffices=*/true), "");
  EXPECT_EQ(OthersCanChange(st, "d"), "'d' can be written by other users (mode 1777)");
  st.st_mode = S_IFDIR | 0777;
  EXPECT_EQ(OthersCanChange(st, "d", /*sticky_suffices=*/true),
            "'d' can be written by other users (mode 0777) and has no sticky bit");
  st.st_mode = S_IFREG | 0644;
  st.st_uid = 0;
  EXPECT_EQ(OthersCanChange(st, "f"), "") << "root may change anything anyway";
  st.st_uid = kNobody == ::geteuid() ? kNobody + 1 : kNobody;
  EXPECT_EQ(OthersCanChange(st, "f"),
            "'f' is owned by another user (uid " + std::to_string(st.st_uid) + ")");
  EXPECT_EQ(NotOwnedByThisUser(st, "f"),
            "'f' is owned by another user (uid " + std::to_string(st.st_uid) + ")");
  st.st_uid = ::geteuid();
  EXPECT_EQ(NotOwnedByThisUser(st, "f"), "");
}

TEST_F(FsSafetyTest, CreatedDirectoriesHaveTheirModeWhateverTheUmask) {
  Fd root = Root();
  for (const mode_t mask : {mode_t{0}, mode_t{077}}) {
    const mode_t old = ::umask(mask);
    const std::string name = "made-" + std::to_string(mask);
    absl::StatusOr<Fd> made = MakeSubdirectory(root.get(), name, name);
    const absl::Status deep = MakeDirectories(Sub(name + "/a/b"));
    ::umask(old);
    ASSERT_TRUE(made.ok()) << made.status();
    ASSERT_TRUE(deep.ok()) << deep;
    EXPECT_EQ(ModeOf(Sub(name)), kDirectoryMode) << "umask " << mask;
    EXPECT_EQ(ModeOf(Sub(name + "/a")), kDirectoryMode) << "umask " << mask;
    EXPECT_EQ(ModeOf(Sub(name + "/a/b")), kDirectoryMode) << "umask " << mask;
  }
  // An existing directory is opened; with must_be_new it is an error.
  EXPECT_TRUE(MakeSubdirectory(root.get(), "made-0", "made-0").ok());
  absl::StatusOr<Fd> again = MakeSubdirectory(root.get(), "made-0", "D/made-0", true);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(), "'D/made-0' exists already");
  // A link in the way is not followed, and nothing is created through it.
  fs::create_directories(Sub("target"));
  fs::create_directory_symlink(Sub("target"), Sub("link"));
  absl::StatusOr<Fd> link = MakeSubdirectory(root.get(), "link", "D/link");
  EXPECT_EQ(link.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(fs::is_empty(Sub("target")));
}

TEST_F(FsSafetyTest, WriteFileAtomicallyNeverWritesThroughALink) {
  testing::WriteFile(Sub("victim"), "precious");
  // A link at the target is replaced, not followed; a planted OUT.tmp is never opened.
  fs::create_symlink(Sub("victim"), Sub("out"));
  fs::create_symlink(Sub("victim"), Sub("out.tmp"));
  const mode_t old = ::umask(0);
  const absl::Status s = WriteFileAtomically(Sub("out"), "bundle bytes");
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(testing::ReadFile(Sub("victim")), "precious");
  EXPECT_FALSE(fs::is_symlink(Sub("out")));
  EXPECT_EQ(testing::ReadFile(Sub("out")), "bundle bytes");
  EXPECT_EQ(ModeOf(Sub("out")), kFileMode);
  EXPECT_TRUE(fs::is_symlink(Sub("out.tmp")));
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names.size(), 3u) << "no temporary file is left";

  const absl::Status missing = WriteFileAtomically(Sub("no-such-dir/out"), "x");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("cannot write '" + Sub("no-such-dir/out") + "'"));
}

TEST_F(FsSafetyTest, RemoveOwnDirectoryDeletesOnlyOwnRegularFilesWithExpectedNames) {
  Fd root = Root();
  fs::create_directories(Sub("ours"));
  testing::WriteFile(Sub("ours/kernels.sst"), "x");
  testing::WriteFile(Sub("ours/meta.sst"), "x");
  EXPECT_TRUE(RemoveOwnDirectory(root.get(), "ours", IsSst));
  EXPECT_FALSE(fs::exists(Sub("ours")));

  // An unexpected name, or a link among the files: the directory is left whole.
  fs::create_directories(Sub("odd"));
  testing::WriteFile(Sub("odd/kernels.sst"), "x");
  testing::WriteFile(Sub("odd/notes.txt"), "x");
  EXPECT_FALSE(RemoveOwnDirectory(root.get(), "odd", IsSst));
  EXPECT_TRUE(fs::exists(Sub("odd/kernels.sst")));
  testing::WriteFile(Sub("victim.sst"), "precious");
  fs::create_directories(Sub("linked"));
  fs::create_symlink(Sub("victim.sst"), Sub("linked/kernels.sst"));
  EXPECT_FALSE(RemoveOwnDirectory(root.get(), "linked", IsSst));
  EXPECT_TRUE(fs::is_symlink(Sub("linked/kernels.sst")));

  // A link to a directory: nothing in its target is touched.
  fs::create_directories(Sub("target"));
  testing::WriteFile(Sub("target/kernels.sst"), "precious");
  fs::create_directory_symlink(Sub("target"), Sub("tmp-1"));
  EXPECT_FALSE(RemoveOwnDirectory(root.get(), "tmp-1", IsSst));
  EXPECT_EQ(testing::ReadFile(Sub("target/kernels.sst")), "precious");

  // Another user's directory or file.
  fs::create_directories(Sub("theirs"));
  testing::WriteFile(Sub("theirs/kernels.sst"), "x");
  if (::lchown(Sub("theirs/kernels.sst").c_str(), kNobody, kNobody) != 0) {
    std::cout << "[ note     ] chown to uid " << kNobody
              << " is not permitted (not root): the owner check is not exercised\n";
    return;
  }
  EXPECT_FALSE(RemoveOwnDirectory(root.get(), "theirs", IsSst));
  EXPECT_TRUE(fs::exists(Sub("theirs/kernels.sst")));
  ASSERT_EQ(::lchown(Sub("theirs/kernels.sst").c_str(), ::geteuid(), ::getegid()), 0);
  ASSERT_EQ(::lchown(Sub("theirs").c_str(), kNobody, kNobody), 0);
  EXPECT_FALSE(RemoveOwnDirectory(root.get(), "theirs", IsSst));
  EXPECT_TRUE(fs::exists(Sub("theirs/kernels.sst")));
}

TEST_F(FsSafetyTest, EntryNamesAreSortedWithoutDots) {
  for (const char* name : {"b", "a", "c"}) testing::WriteFile(Sub(name), "");
  Fd root = Root();
  EXPECT_EQ(EntryNames(root.get()), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(EntryNames(root.get()), (std::vector<std::string>{"a", "b", "c"})) << "read again";
}

}  // namespace
}  // namespace pto::cache::fs_safety
