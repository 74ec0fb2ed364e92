// The Runtime on a cache it cannot fully use: SST files with flipped bytes or truncated on
// disk (every result still correct, the damage counted, never a crash); a directory other
// users can write to (not used: memory only, one warning naming it); files other users can
// write to (no object code loaded from them, one warning naming one).
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "cache/rocksdb_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"
#include "tests/jit/e2e/runtime_cache_util.h"

namespace pto {
namespace {

namespace fs = std::filesystem;
using cache::RecordKind;
using ::testing::HasSubstr;

class CacheDamageTest : public ::testing::Test {
 protected:
  // A cold run; then every record flushed and compacted into SST files.
  void SetUp() override {
    cold_ = testing::RunCacheTestProgram(path_, batches_);
    ASSERT_EQ(cold_.outputs.size(), batches_.size());
    ASSERT_GT(cold_.stats.llvm_codegen_runs, 1);
    for (size_t b = 0; b < batches_.size(); ++b) {
      ASSERT_EQ(testing::CompareWithReference(cold_.outputs[b], batches_[b]), "");
    }
    cache::CacheOptions options;
    options.path = path_;
    auto store = cache::RocksDbStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Flush().ok());
    ASSERT_TRUE((*store)->CompactAll().ok());
  }

  // The SST file holding the kernel records (the kernels family's largest; kernel objects
  // are compressed, so their bytes cannot be found by content), and a position in its data
  // blocks, which come first in the file.
  fs::path KernelSst(size_t* at) {
    const fs::path sst = cache::testing::LargestSstOf(path_, "kernels");
    EXPECT_FALSE(sst.empty()) << "the kernels family has no SST file";
    if (!sst.empty()) *at = static_cast<size_t>(fs::file_size(sst) / 4);
    return sst;
  }

  // A warm run whose every result is bitwise the cold run's.
  testing::CacheRun WarmRun() {
    testing::CacheRun warm = testing::RunCacheTestProgram(path_, batches_);
    EXPECT_EQ(warm.outputs.size(), batches_.size());
    for (size_t b = 0; b < warm.outputs.size(); ++b) {
      EXPECT_EQ(testing::CompareWithReference(warm.outputs[b], batches_[b]), "");
      if (warm.outputs[b].size() != 1u) {
        ADD_FAILURE() << "batch " << batches_[b] << " has no output";
        continue;
      }
      EXPECT_EQ(warm.outputs[b][0].data, cold_.outputs[b][0].data) << "batch " << batches_[b];
    }
    // Every kernel is either compiled or loaded.
    EXPECT_EQ(warm.stats.llvm_codegen_runs + warm.stats.kernels_loaded,
              cold_.stats.llvm_codegen_runs);
    return warm;
  }

  cache::testing::TempDir dir_;
  const std::string path_ = dir_.Sub("cache");
  const std::vector<int64_t> batches_ = {1, 7};
  testing::CacheRun cold_;
};

TEST_F(CacheDamageTest, FlippedBytesInTheKernelsSstFile) {
  size_t at = 0;
  const fs::path sst = KernelSst(&at);
  ASSERT_FALSE(sst.empty());
  std::string bytes = cache::testing::ReadFile(sst);
  ASSERT_LT(at + 16, bytes.size());
  for (size_t i = 0; i < 16; ++i) bytes[at + i] ^= 0x5a;
  cache::testing::WriteFile(sst, bytes);

  const testing::CacheRun warm = WarmRun();
  std::cerr << "[ warm     ] codegen " << warm.stats.llvm_codegen_runs << ", loaded "
            << warm.stats.kernels_loaded << ", corrupt " << warm.stats.cache.corrupt << ", misses "
            << warm.stats.cache.misses << "\n";
  for (const std::string& w : warm.warnings) std::cerr << "[ warning  ] " << w << "\n";
  EXPECT_GE(warm.stats.cache.corrupt, 1);
  EXPECT_GE(warm.stats.llvm_codegen_runs, 1);
  EXPECT_FALSE(warm.warnings.empty());

  // The recompiled kernels were written back: the next run loads every one.
  const testing::CacheRun again = WarmRun();
  EXPECT_EQ(again.stats.llvm_codegen_runs, 0);
  EXPECT_EQ(again.stats.cache.corrupt, 0);
}

TEST_F(CacheDamageTest, TruncatedKernelsSstFile) {
  size_t at = 0;
  const fs::path sst = KernelSst(&at);
  ASSERT_FALSE(sst.empty());
  fs::resize_file(sst, fs::file_size(sst) / 2);

  const testing::CacheRun warm = WarmRun();
  std::cerr << "[ warm     ] codegen " << warm.stats.llvm_codegen_runs << ", loaded "
            << warm.stats.kernels_loaded << ", corrupt " << warm.stats.cache.corrupt << ", misses "
            << warm.stats.cache.misses << "\n";
  for (const std::string& w : warm.warnings) std::cerr << "[ warning  ] " << w << "\n";
  EXPECT_GE(warm.stats.cache.misses, 1);
  EXPECT_GE(warm.stats.llvm_codegen_runs, 1);
  // Repaired, not abandoned: the rewritten kernels persist.
  EXPECT_TRUE(warm.stats.cache.persistent);
  ASSERT_FALSE(warm.warnings.empty());
  EXPECT_NE(warm.warnings[0].find(path_), std::string::npos) << warm.warnings[0];
  const testing::CacheRun again = WarmRun();
  EXPECT_EQ(again.stats.llvm_codegen_runs, 0);
}

TEST_F(CacheDamageTest, DirectoryOthersCanWriteIsNotUsed) {
  ASSERT_EQ(::chmod(path_.c_str(), 0777), 0);
  const testing::CacheRun warm = WarmRun();
  EXPECT_FALSE(warm.stats.cache.persistent);
  EXPECT_EQ(warm.stats.kernels_loaded, 0);
  EXPECT_EQ(warm.stats.llvm_codegen_runs, cold_.stats.llvm_codegen_runs);
  for (const KernelEvent& e : warm.events) EXPECT_FALSE(e.loaded_from_cache) << e.kernel;
  ASSERT_EQ(warm.warnings.size(), 1u);
  EXPECT_THAT(warm.warnings[0],
              HasSubstr("pto cache: cannot use the cache database at '" + path_ + "': '" + path_ +
                        "' can be written by other users (mode 0777), and pto writes only to a "
                        "cache directory that no other user can change; continuing with a "
                        "memory-only cache"));
  // Restored permissions: the cache is used and its code loaded again.
  ASSERT_EQ(::chmod(path_.c_str(), 0700), 0);
  const testing::CacheRun trusted = WarmRun();
  EXPECT_TRUE(trusted.stats.cache.code_trusted);
  EXPECT_EQ(trusted.stats.llvm_codegen_runs, 0);
  EXPECT_TRUE(trusted.warnings.empty());
}

TEST_F(CacheDamageTest, FilesOthersCanWriteAreNotTrustedForCode) {
  // The directory is 0755, but its files could have been patched by anyone.
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path_)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  for (const fs::path& f : files) ASSERT_EQ(::chmod(f.c_str(), 0666), 0);
  const testing::CacheRun warm = WarmRun();
  EXPECT_FALSE(warm.stats.cache.code_trusted);
  EXPECT_TRUE(warm.stats.cache.persistent);
  EXPECT_EQ(warm.stats.kernels_loaded, 0);
  EXPECT_EQ(warm.stats.llvm_codegen_runs, cold_.stats.llvm_codegen_runs);
  for (const KernelEvent& e : warm.events) EXPECT_FALSE(e.loaded_from_cache) << e.kernel;
  ASSERT_EQ(warm.warnings.size(), 1u);
  EXPECT_THAT(warm.warnings[0], HasSubstr("pto cache: object code from '" + path_ +
                                          "' will not be loaded: '" + path_ + "/"));
  EXPECT_THAT(warm.warnings[0], HasSubstr("' can be written by other users (mode 0666)"));
  // Only its owner can write them again (those still there): the code is trusted and loaded.
  for (const fs::directory_entry& e : fs::directory_iterator(path_)) {
    if (e.is_regular_file()) {
      ASSERT_EQ(::chmod(e.path().c_str(), 0644), 0);
    }
  }
  const testing::CacheRun trusted = WarmRun();
  EXPECT_TRUE(trusted.stats.cache.code_trusted);
  EXPECT_EQ(trusted.stats.llvm_codegen_runs, 0);
  EXPECT_TRUE(trusted.warnings.empty());
}

}  // namespace
}  // namespace pto
