#include "cache/cache_key.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace pto::cache {
namespace {

KernelKeyParts Kernel() {
  return {"f32 add(x,y) [64,128] tile=8x32 u4", "znver5+avx512f",
          "pto=0.1.0;abi=1;llvm=19.1.7;opts=O2"};
}
TuningKeyParts Tuning() { return {"g-123", "batch:[1,64]", "f32", "AMD/26/68 t=2", 3}; }
PlanKeyParts Plan() { return {"graph-abc", "b=[1,64]%8"}; }

TEST(CacheKeyTest, FixedWidthHexWithKindPrefix) {
  const std::string k = KernelKey(Kernel()), p = PlanKey(Plan()), t = TuningKey(Tuning());
  EXPECT_EQ(k.size(), kKeyLength);
  EXPECT_TRUE(k.starts_with("k-")) << k;
  EXPECT_TRUE(p.starts_with("p-")) << p;
  EXPECT_TRUE(t.starts_with("t-")) << t;
  EXPECT_TRUE(IsKey(RecordKind::kKernel, k));
  EXPECT_TRUE(IsKey(RecordKind::kPlan, p));
  EXPECT_TRUE(IsKey(RecordKind::kTuning, t));
  EXPECT_FALSE(IsKey(RecordKind::kPlan, k));
  EXPECT_FALSE(IsKey(RecordKind::kKernel, k.substr(1)));
  EXPECT_FALSE(IsKey(RecordKind::kKernel, "k-" + std::string(32, 'G')));
}

// Keys are stored on disk and shared between processes and machines: they must not change.
TEST(CacheKeyTest, GoldenKeys) {
  EXPECT_EQ(KernelKey(Kernel()), "k-c9318f2955880ff87c3a1f73024927d1");
  EXPECT_EQ(PlanKey(Plan()), "p-1510b42cf14ea87a1799dfb35890d91c");
  EXPECT_EQ(TuningKey(Tuning()), "t-4829655a91f268f9af55ef902170cdb9");
}

TEST(CacheKeyTest, EveryKernelComponentChangesTheKey) {
  const std::string base = KernelKey(Kernel());
  for (int i = 0; i < 3; ++i) {
    KernelKeyParts parts = Kernel();
    std::string* field[] = {&parts.kernel_description, &parts.codegen_fingerprint,
                            &parts.compiler_fingerprint};
    *field[i] += "x";
    EXPECT_NE(KernelKey(parts), base) << "component " << i;
  }
}

TEST(CacheKeyTest, EveryTuningComponentChangesTheKey) {
  std::set<std::string> keys = {TuningKey(Tuning())};
  for (int i = 0; i < 5; ++i) {
    TuningKeyParts parts = Tuning();
    switch (i) {
      case 0:
        parts.fusion_group_hash += "x";
        break;
      case 1:
        parts.bucket += "x";
        break;
      case 2:
        parts.dtype = "bf16";
        break;
      case 3:
        parts.performance_fingerprint += "x";
        break;
      case 4:
        parts.search_space_version += 1;
        break;
    }
    EXPECT_TRUE(keys.insert(TuningKey(parts)).second) << "component " << i;
  }
}

TEST(CacheKeyTest, EveryPlanComponentChangesTheKey) {
  PlanKeyParts a = Plan(), b = Plan();
  a.graph_hash += "x";
  b.shape_class += "x";
  EXPECT_NE(PlanKey(a), PlanKey(Plan()));
  EXPECT_NE(PlanKey(b), PlanKey(Plan()));
}

TEST(CacheKeyTest, PartsAreLengthPrefixedNotConcatenated) {
  KernelKeyParts a = {"ab", "c", "d"}, b = {"a", "bc", "d"}, c = {"abc", "", "d"};
  EXPECT_NE(KernelKey(a), KernelKey(b));
  EXPECT_NE(KernelKey(a), KernelKey(c));
  EXPECT_NE(KernelKey(b), KernelKey(c));
  // The same strings as a plan and as a kernel differ by kind (domain tag), not only prefix.
  EXPECT_NE(KernelKey({"x", "y", ""}).substr(2), PlanKey({"x", "y"}).substr(2));
}

TEST(CacheKeyTest, CompilerFingerprintNamesEveryVersion) {
  const std::string fp = CompilerFingerprint(3, "19.1.7", "O2 fast-math=contract");
  EXPECT_EQ(fp,
            "pto=" + std::string(PtoVersion()) + ";abi=3;llvm=19.1.7;opts=O2 fast-math=contract");
  EXPECT_FALSE(PtoVersion().empty());
  EXPECT_NE(fp, CompilerFingerprint(4, "19.1.7", "O2 fast-math=contract"));
  EXPECT_NE(fp, CompilerFingerprint(3, "19.1.8", "O2 fast-math=contract"));
  EXPECT_NE(fp, CompilerFingerprint(3, "19.1.7", "O3 fast-math=contract"));
}

TEST(CacheKeyTest, RecordsReportTheirOwnKeyParts) {
  proto::KernelRecord k;
  k.set_kernel_description("d");
  k.set_codegen_fingerprint("c");
  k.set_compiler_fingerprint("p");
  EXPECT_EQ(KeyPartsOf(k), (KernelKeyParts{"d", "c", "p"}));
  proto::TuningRecord t;
  t.set_fusion_group_hash("g");
  t.set_bucket("b");
  t.set_dtype("f32");
  t.set_performance_fingerprint("pf");
  t.set_search_space_version(7);
  EXPECT_EQ(KeyPartsOf(t), (TuningKeyParts{"g", "b", "f32", "pf", 7}));
  proto::PlanRecord p;
  p.set_graph_hash("h");
  p.set_shape_class("s");
  EXPECT_EQ(KeyPartsOf(p), (PlanKeyParts{"h", "s"}));
}

}  // namespace
}  // namespace pto::cache
