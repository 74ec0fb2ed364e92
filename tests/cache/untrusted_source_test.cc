// Code never leaves a cache that is not trusted for code: MergeInto copies no kernel record
// from it (plans and tuning still merge, the refused kernels counted with the reason), and
// ExportBundle with code fails. The source is a real database in a directory others can
// write, opened as data only.
#include <sys/stat.h>

#include <memory>
#include <string>

#include "cache/bundle.h"
#include "cache/cache_store.h"
#include "cache/merge.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

using testing::KernelParts;
using testing::MakeKernel;
using testing::MakePlan;
using testing::MakeTuning;
using testing::PlanParts;
using testing::TempDir;
using testing::TuningParts;

class UntrustedSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      CacheOptions options;
      options.path = src_path_;
      absl::StatusOr<std::unique_ptr<CacheStore>> src = OpenCache(options);
      ASSERT_TRUE(src.ok() && (*src)->persistent());
      for (const char* name : {"k1", "k2"}) ASSERT_TRUE((*src)->PutKernel(MakeKernel(name)).ok());
      ASSERT_TRUE((*src)->PutPlan(MakePlan("p")).ok());
      ASSERT_TRUE((*src)->PutTuning(MakeTuning("t")).ok());
    }
    ASSERT_EQ(::chmod(src_path_.c_str(), 0777), 0);
    CacheOptions options;
    options.path = src_path_;
    absl::StatusOr<std::unique_ptr<CacheStore>> src =
        OpenPersistentCache(options, UnsafeDirectory::kReadDataOnly);
    ASSERT_TRUE(src.ok()) << src.status();
    src_ = std::move(*src);
    ASSERT_FALSE(src_->code_trusted());
  }
  std::string Why() const {
    return "'" + src_path_ + "' can be written by other users (mode 0777)";
  }

  TempDir dir_;
  std::string src_path_ = dir_.Sub("src");
  std::unique_ptr<CacheStore> src_;
};

TEST_F(UntrustedSourceTest, MergeTakesPlansAndTuningButNoKernels) {
  std::unique_ptr<CacheStore> dst = *OpenCache({});
  absl::StatusOr<MergeReport> report = MergeInto(*dst, *src_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels_copied, 0);
  EXPECT_EQ(report->kernels_refused, 2);
  EXPECT_EQ(report->kernels_refused_why, Why());
  EXPECT_EQ(report->plans_copied, 1);
  EXPECT_EQ(report->tuning_copied, 1);
  EXPECT_FALSE(dst->GetKernel(KernelParts("k1"))->has_value());
  EXPECT_TRUE(dst->GetPlan(PlanParts("p"))->has_value());
  EXPECT_TRUE(dst->GetTuning(TuningParts("t"))->has_value());
}

TEST_F(UntrustedSourceTest, ExportWithCodeFailsAndWithoutCodeShipsTheData) {
  absl::StatusOr<std::string> with_code = ExportBundle(*src_, {.with_code = true});
  EXPECT_EQ(with_code.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(with_code.status().message(),
            "object code is never exported from a cache that is not trusted for code: " + Why());
  absl::StatusOr<std::string> data = ExportBundle(*src_, {.with_code = false});
  ASSERT_TRUE(data.ok()) << data.status();
  absl::StatusOr<ParsedBundle> bundle = ParseBundle(*data);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->bundle.manifest().kernel_records(), 0);
  EXPECT_EQ(bundle->bundle.manifest().plan_records(), 1);
  EXPECT_EQ(bundle->bundle.manifest().tuning_records(), 1);
}

}  // namespace
}  // namespace pto::cache
