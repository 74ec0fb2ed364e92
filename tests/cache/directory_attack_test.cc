// Attacks on a cache directory, each as another user (or a careless one) would try it, against
// real RocksDB databases on disk: links planted in the directory (readers/, inbox/, LOCK,
// lost/, RocksDB's temporary files), files and subdirectories other users can write, inbox
// batches of another user, a directory above the cache that others can write, and a umask
// that would make new directories world-writable. What must hold: nothing outside the cache
// is written or deleted, a directory others can change is not used, and object code others
// could have changed is never loaded. docs/cache.md, "Directories and files".
//
// The tests run as root here and in CI. "Another user's file" is made with chown to uid 65534
// (nobody); a test that needs it says so in its output and skips that part if chown fails.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cache/cache_store.h"
#include "cache/envelope.h"
#include "cache/inbox.h"
#include "cache/rocksdb_options.h"
#include "cache/shared_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_writer.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::KernelParts;
using testing::LogCapture;
using testing::MakeKernel;
using testing::MakeTuning;
using testing::TempDir;
using testing::TuningParts;

constexpr uid_t kNobody = 65534;

// Every path under `root` (links not followed) with its type, mode and contents: equal
// snapshots mean nothing there was created, deleted or written.
std::vector<std::string> Snapshot(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st = {};
    ::lstat(it->path().c_str(), &st);
    std::string line = absl::StrFormat("%s %o", fs::relative(it->path(), root).string(),
                                       static_cast<unsigned>(st.st_mode));
    if (S_ISREG(st.st_mode)) absl::StrAppend(&line, " ", testing::ReadFile(it->path()));
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

mode_t ModeOf(const fs::path& p) {
  struct stat st = {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Changes the owner of `p` and everything under it; false if this process may not.
bool ChownTree(const fs::path& p, uid_t uid) {
  if (::lchown(p.c_str(), uid, uid) != 0) return false;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(p, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (::lchown(it->path().c_str(), uid, uid) != 0) return false;
  }
  return true;
}

class DirectoryAttackTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(victim_); }

  std::unique_ptr<CacheStore> Open(const std::string& path, const std::string& base = "") {
    return testing::OpenWithoutMaintenance(path, base, log_);
  }
  // Runs the background chores now, if `store` is a shared database (not a memory stand-in).
  static void Maintain(CacheStore& store) {
    if (auto* shared = dynamic_cast<SharedStore*>(&store)) shared->Maintain();
  }
  // A database with a kernel, a plan and a tuning record, closed.
  void MakeDatabase(const std::string& path) {
    std::unique_ptr<CacheStore> store = Open(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
    ASSERT_TRUE(store->PutTuning(MakeTuning("a")).ok());
  }
  std::vector<std::string> Warnings() const { return log_.AtLeast(kLogWarning); }
  // The one warning logged; fails the test if there is not exactly one.
  std::string OnlyWarning() const {
    const std::vector<std::string> w = Warnings();
    EXPECT_EQ(w.size(), 1u) << log_.All();
    return w.empty() ? "" : w[0];
  }
  std::string MemoryOnlyWarning(const std::string& reason) const {
    return absl::StrCat("pto cache: cannot use the cache database at '", db_path_, "': ", reason,
                        "; continuing with a memory-only cache (nothing compiled in this process "
                        "will persist)");
  }
  std::string LinkReason(const std::string& name) const {
    return absl::StrCat("'", db_path_, "/", name,
                        "' is a symbolic link, and pto never follows links in a cache directory");
  }
  // Opens db_path_ (and runs the chores once, as the background thread would), expecting the
  // memory-only stand-in with one warning giving `reason`, and nothing in the victim changed.
  void ExpectRefused(const std::string& reason) {
    const std::vector<std::string> before = Snapshot(victim_);
    std::unique_ptr<CacheStore> store = Open(db_path_);
    ASSERT_NE(store, nullptr);
    Maintain(*store);
    EXPECT_EQ(Snapshot(victim_), before);
    EXPECT_EQ(store->Describe(), "memory");
    EXPECT_EQ(OnlyWarning(), MemoryOnlyWarning(reason));
  }
  std::string Batch() const {
    const std::vector<inbox::Pending> pending = inbox::List(db_path_);
    EXPECT_EQ(pending.size(), 1u);
    return pending.empty() ? "" : pending[0].dir;
  }

  TempDir dir_;
  std::string db_path_ = dir_.Sub("cache");
  fs::path victim_ = dir_.path() / "victim";
  LogCapture log_;
};

TEST_F(DirectoryAttackTest, PlantedReadersLinkIsRefusedAndItsTargetKept) {
  MakeDatabase(db_path_);
  // What the writer's clean-up of abandoned readers would delete: "<pid>-<n>" of a dead pid.
  fs::create_directories(victim_ / "999999999-0");
  testing::WriteFile(victim_ / "999999999-0" / "LOG", "precious");
  testing::WriteFile(victim_ / "999999998", "precious");
  fs::create_directory_symlink(victim_, db_path_ + "/readers");
  ExpectRefused(LinkReason("readers"));
}

TEST_F(DirectoryAttackTest, ReadersLinkPlantedWhileRunningIsNotFollowed) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  ASSERT_EQ(writer->Role(), "writer");
  fs::create_directories(victim_ / "999999999-0");
  testing::WriteFile(victim_ / "999999999-0" / "LOG", "precious");
  fs::remove_all(db_path_ + "/readers");
  fs::create_directory_symlink(victim_, db_path_ + "/readers");
  const std::vector<std::string> before = Snapshot(victim_);
  Maintain(*writer);
  EXPECT_EQ(Snapshot(victim_), before);
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

TEST_F(DirectoryAttackTest, PlantedInboxLinkIsRefusedAndItsTargetKept) {
  MakeDatabase(db_path_);
  // What the writer would delete: an abandoned temporary and a (here empty) batch.
  fs::create_directories(victim_ / "tmp-999999999-0");
  testing::WriteFile(victim_ / "tmp-999999999-0" / "kernels.sst", "precious");
  fs::create_directories(victim_ / "b-00000000000000001-999999999-0");
  fs::remove_all(db_path_ + "/inbox");
  fs::create_directory_symlink(victim_, db_path_ + "/inbox");
  ExpectRefused(LinkReason("inbox"));
}

TEST_F(DirectoryAttackTest, InboxLinkPlantedWhileRunningIsNeitherWrittenNorIngested) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  std::unique_ptr<CacheStore> reader = Open(db_path_);
  ASSERT_EQ(reader->Role(), "reader");
  fs::create_directories(victim_ / "b-00000000000000001-999999999-0");
  fs::remove_all(db_path_ + "/inbox");
  fs::create_directory_symlink(victim_, db_path_ + "/inbox");
  const std::vector<std::string> before = Snapshot(victim_);

  // The reader cannot hand its record over (it keeps it in memory), and the writer does not
  // look into the link.
  ASSERT_TRUE(reader->PutKernel(MakeKernel("r")).ok());
  EXPECT_TRUE(reader->GetKernel(KernelParts("r"))->has_value());
  Maintain(*writer);
  EXPECT_EQ(Snapshot(victim_), before);
  EXPECT_FALSE(writer->GetKernel(KernelParts("r"))->has_value());
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 2u) << log_.All();
  EXPECT_EQ(warnings[0], absl::StrCat("pto cache: cannot write to the cache database at '",
                                      db_path_, "': ", LinkReason("inbox"),
                                      "; new records are kept in memory only from now on"));
  EXPECT_EQ(warnings[1], absl::StrCat("pto cache: not ingesting the inbox of '", db_path_,
                                      "': ", LinkReason("inbox")));
  Maintain(*writer);  // said once, not every round
  EXPECT_EQ(Warnings().size(), 2u) << log_.All();
}

TEST_F(DirectoryAttackTest, LockLinkIsRefusedAndNothingIsCreatedThroughIt) {
  MakeDatabase(db_path_);
  fs::remove(db_path_ + "/LOCK");
  fs::create_symlink(victim_ / "made-through-LOCK", db_path_ + "/LOCK");
  ExpectRefused(LinkReason("LOCK"));
  EXPECT_FALSE(fs::exists(victim_ / "made-through-LOCK"));
}

TEST_F(DirectoryAttackTest, LostLinkIsRefusedAndRepairWritesNothingThroughIt) {
  MakeDatabase(db_path_);
  // An unreadable MANIFEST makes the writer repair the database, which moves files to lost/.
  const std::vector<fs::path> manifests = testing::FilesMatching(db_path_, "MANIFEST-", "");
  ASSERT_EQ(manifests.size(), 1u);
  testing::WriteFile(manifests[0], "");
  fs::create_directory_symlink(victim_, db_path_ + "/lost");
  ExpectRefused(LinkReason("lost"));
  EXPECT_TRUE(fs::is_empty(victim_)) << Snapshot(victim_)[0];
}

TEST_F(DirectoryAttackTest, RocksDbTemporaryFileLinksAreRefused) {
  MakeDatabase(db_path_);
  // RocksDB writes CURRENT and OPTIONS through "<n>.dbtmp" files. It numbers new files past
  // every file it finds, so links planted before it opens are not written through (planted
  // while it runs they would be, which takes a directory others can write: refused above).
  // A link is refused all the same, and nothing is written through it.
  for (int n = 1; n <= 64; ++n) {
    fs::create_symlink(victim_ / absl::StrCat("current-", n),
                       absl::StrFormat("%s/%06d.dbtmp", db_path_, n));
    fs::create_symlink(victim_ / absl::StrCat("options-", n),
                       absl::StrFormat("%s/OPTIONS-%06d.dbtmp", db_path_, n));
  }
  ExpectRefused(LinkReason("000001.dbtmp"));
  EXPECT_TRUE(fs::is_empty(victim_)) << Snapshot(victim_)[0];
}

TEST_F(DirectoryAttackTest, NewDirectoriesAndFilesHaveFixedModesWhateverTheUmask) {
  const mode_t old_umask = ::umask(0);
  {
    std::unique_ptr<CacheStore> writer = Open(db_path_);
    std::unique_ptr<CacheStore> reader = Open(db_path_);
    ASSERT_EQ(reader->Role(), "reader");
    ASSERT_TRUE(reader->PutKernel(MakeKernel("r")).ok());
    EXPECT_EQ(ModeOf(db_path_), 0755u);
    EXPECT_EQ(ModeOf(db_path_ + "/inbox"), 0755u);
    EXPECT_EQ(ModeOf(db_path_ + "/readers"), 0755u);
    const fs::path batch = Batch();
    ASSERT_FALSE(batch.empty());
    EXPECT_EQ(ModeOf(batch), 0755u);
    for (const fs::directory_entry& e : fs::directory_iterator(batch)) {
      EXPECT_EQ(ModeOf(e.path()) & 022, 0u) << e.path();
    }
    for (const fs::directory_entry& e : fs::directory_iterator(db_path_ + "/readers")) {
      EXPECT_EQ(ModeOf(e.path()), 0755u) << e.path();
    }
  }
  ::umask(old_umask);
  // The reader removed its directory (its info log files) as it closed.
  EXPECT_TRUE(fs::is_empty(db_path_ + "/readers")) << Snapshot(db_path_ + "/readers")[0];
  // The directory it made is one pto trusts: the next open uses it, code included.
  std::unique_ptr<CacheStore> again = Open(db_path_);
  EXPECT_EQ(again->Role(), "writer");
  EXPECT_TRUE(again->code_trusted());
  EXPECT_TRUE(again->GetKernel(KernelParts("r"))->has_value());
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

TEST_F(DirectoryAttackTest, InboxOthersCanWriteIsRefusedAtOpen) {
  MakeDatabase(db_path_);
  fs::create_directories(db_path_ + "/inbox");
  ASSERT_EQ(::chmod((db_path_ + "/inbox").c_str(), 0777), 0);
  ExpectRefused(absl::StrCat("'", db_path_,
                             "/inbox' can be written by other users (mode 0777), and pto writes "
                             "only to a cache directory that no other user can change"));
}

TEST_F(DirectoryAttackTest, InboxMadeWritableByOthersWhileRunningIsNotIngested) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  std::unique_ptr<CacheStore> reader = Open(db_path_);
  ASSERT_EQ(reader->Role(), "reader");
  ASSERT_TRUE(reader->PutKernel(MakeKernel("r")).ok());
  ASSERT_EQ(::chmod((db_path_ + "/inbox").c_str(), 0777), 0);
  Maintain(*writer);
  Maintain(*writer);
  EXPECT_FALSE(writer->GetKernel(KernelParts("r"))->has_value());
  EXPECT_EQ(OnlyWarning(),
            absl::StrCat("pto cache: not ingesting the inbox of '", db_path_, "': '", db_path_,
                         "/inbox' can be written by other users (mode 0777)"));
  // Once only its owner can write it again, the batch is ingested.
  ASSERT_EQ(::chmod((db_path_ + "/inbox").c_str(), 0755), 0);
  Maintain(*writer);
  EXPECT_TRUE(writer->GetKernel(KernelParts("r"))->has_value());
}

TEST_F(DirectoryAttackTest, InboxBatchOfAnotherUserIsSetAsideNotIngested) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  std::unique_ptr<CacheStore> reader = Open(db_path_);
  ASSERT_EQ(reader->Role(), "reader");
  ASSERT_TRUE(reader->PutKernel(MakeKernel("r")).ok());
  const fs::path batch = Batch();
  ASSERT_FALSE(batch.empty());
  if (!ChownTree(batch, kNobody)) {
    std::cout << "[ note     ] chown to uid " << kNobody
              << " is not permitted (not root): the batch-owner check is not exercised\n";
    GTEST_SKIP();
  }
  Maintain(*writer);
  EXPECT_FALSE(writer->GetKernel(KernelParts("r"))->has_value());
  const fs::path set_aside = batch.parent_path() / ("refused-" + batch.filename().string());
  EXPECT_TRUE(fs::is_directory(set_aside));
  EXPECT_FALSE(fs::exists(batch));
  EXPECT_EQ(OnlyWarning(),
            absl::StrCat("pto cache: not ingesting '", batch.string(), "' (set aside as '",
                         set_aside.string(), "'): '", batch.string(),
                         "' is owned by another user (uid ", kNobody, ")"));
  Maintain(*writer);  // set aside: not looked at again
  EXPECT_EQ(Warnings().size(), 1u) << log_.All();
}

TEST_F(DirectoryAttackTest, InboxBatchFileOthersCanWriteIsSetAsideNotIngested) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  std::unique_ptr<CacheStore> reader = Open(db_path_);
  ASSERT_TRUE(reader->PutKernel(MakeKernel("r")).ok());
  const fs::path batch = Batch();
  ASSERT_FALSE(batch.empty());
  ASSERT_EQ(::chmod((batch / "kernels.sst").c_str(), 0666), 0);
  Maintain(*writer);
  EXPECT_FALSE(writer->GetKernel(KernelParts("r"))->has_value());
  const fs::path set_aside = batch.parent_path() / ("refused-" + batch.filename().string());
  EXPECT_TRUE(fs::is_directory(set_aside));
  EXPECT_EQ(OnlyWarning(),
            absl::StrCat("pto cache: not ingesting '", batch.string(), "' (set aside as '",
                         set_aside.string(), "'): '", batch.string(),
                         "/kernels.sst' can be written by other users (mode 0666)"));
}

TEST_F(DirectoryAttackTest, FilesOthersCanWriteAreNotTrustedForCode) {
  MakeDatabase(db_path_);
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(db_path_)) {
    if (e.is_regular_file()) files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) ASSERT_EQ(::chmod((db_path_ + "/" + f).c_str(), 0666), 0);
  std::unique_ptr<CacheStore> store = Open(db_path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Role(), "writer");
  EXPECT_FALSE(store->code_trusted());
  EXPECT_TRUE(store->GetTuning(TuningParts("a"))->has_value());  // data is still used
  EXPECT_EQ(OnlyWarning(),
            absl::StrCat("pto cache: object code from '", db_path_, "' will not be loaded: '",
                         db_path_, "/", files[0],
                         "' can be written by other users (mode 0666) (and ", files.size() - 1,
                         " more files); kernels are compiled instead, tuning and plan records "
                         "are still used"));
}

TEST_F(DirectoryAttackTest, DirectoryOfAnotherUserIsRefused) {
  MakeDatabase(db_path_);
  if (!ChownTree(db_path_, kNobody)) {
    std::cout << "[ note     ] chown to uid " << kNobody
              << " is not permitted (not root): the owner check is not exercised\n";
    GTEST_SKIP();
  }
  ExpectRefused(absl::StrCat("'", db_path_, "' is owned by another user (uid ", kNobody,
                             "), and pto writes only to a cache directory that no other user "
                             "can change"));
}

TEST_F(DirectoryAttackTest, DirectoryAboveOthersCanWriteIsRefusedUnlessSticky) {
  const std::string shared = dir_.Sub("shared");
  db_path_ = shared + "/cache";
  fs::create_directories(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ExpectRefused(absl::StrCat("'", shared,
                             "' can be written by other users (mode 0777) and has no sticky "
                             "bit, and pto writes only to a cache directory that no other user "
                             "can change"));
  // With the sticky bit (as /tmp has), others cannot rename or delete what is in it.
  log_.Clear();
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  std::unique_ptr<CacheStore> store = Open(db_path_);
  EXPECT_EQ(store->Role(), "writer");
  EXPECT_TRUE(store->code_trusted());
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

TEST_F(DirectoryAttackTest, BaseWithFilesOthersCanWriteGivesDataNotCode) {
  const std::string base = dir_.Sub("base");
  MakeDatabase(base);
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(base)) {
    if (!e.is_regular_file()) continue;
    names.push_back(e.path().filename().string());
    ASSERT_EQ(::chmod(e.path().c_str(), 0666), 0);
  }
  std::sort(names.begin(), names.end());
  std::unique_ptr<CacheStore> store = Open(db_path_, base);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Role(), "writer");
  EXPECT_FALSE(store->code_trusted());
  EXPECT_TRUE(store->GetTuning(TuningParts("a"))->has_value());
  EXPECT_EQ(
      OnlyWarning(),
      absl::StrCat("pto cache: object code from '", base, "' will not be loaded: '", base, "/",
                   names[0], "' can be written by other users (mode 0666) (and ", names.size() - 1,
                   " more files); kernels are compiled instead, tuning and plan records "
                   "are still used"));
}

// A rebuild killed midway leaves <db>/rebuild/<family>.sst, which the next writer ingests. A
// file there that another user could have written is not ingested (it would be their code).
TEST_F(DirectoryAttackTest, RebuildFileOthersCanWriteIsNotIngested) {
  MakeDatabase(db_path_);
  proto::KernelRecord planted = MakeKernel("planted");
  planted.set_schema_version(kSchemaVersion);
  for (const mode_t mode : {mode_t{0666}, mode_t{0644}}) {
    fs::create_directories(db_path_ + "/rebuild");
    const std::string file = db_path_ + "/rebuild/kernels.sst";
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(),
                                  rocksdb::Options(DbOptions(), FamilyOptions(kKernelsFamily)));
    ASSERT_TRUE(writer.Open(file).ok());
    ASSERT_TRUE(
        writer.Put(KernelKey(KernelParts("planted")), WrapPayload(planted.SerializeAsString()))
            .ok());
    ASSERT_TRUE(writer.Finish().ok());
    ASSERT_EQ(::chmod(file.c_str(), mode), 0);
    std::unique_ptr<CacheStore> store = Open(db_path_);
    ASSERT_EQ(store->Role(), "writer");
    // Only its owner could write the 0644 file: that one is what a rebuild left, and is taken.
    EXPECT_EQ(store->GetKernel(KernelParts("planted"))->has_value(), mode == 0644)
        << std::oct << mode;
    EXPECT_FALSE(fs::exists(db_path_ + "/rebuild"));
  }
}

}  // namespace
}  // namespace pto::cache
