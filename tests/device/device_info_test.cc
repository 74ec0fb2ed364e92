#include "device/device_info.h"

#include <thread>

#include "gtest/gtest.h"

namespace pto::device {
namespace {

bool HasFeature(const std::string& features, const std::string& f) {
  return ("," + features + ",").find("," + f + ",") != std::string::npos;
}

TEST(DeviceInfoTest, IsaMatchesCompilerBuiltins) {
  const DeviceInfo info = DetectHost();
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("x86-64-v3");
  const bool v4 = __builtin_cpu_supports("x86-64-v4");
  Isa expected = v4 ? Isa::kAvx512 : v3 ? Isa::kAvx2 : Isa::kSse2;
  EXPECT_EQ(info.isa, expected) << IsaName(info.isa) << " vs " << IsaName(expected);
  EXPECT_EQ(info.has_fma, v3 && __builtin_cpu_supports("fma"));
  EXPECT_EQ(info.vector_bits, info.isa == Isa::kAvx512 ? 512 : info.isa == Isa::kAvx2 ? 256 : 128);
  EXPECT_EQ(info.f32_lanes(), info.vector_bits / 32);
  EXPECT_EQ(info.vector_registers, info.isa == Isa::kAvx512 ? 32 : 16);
  if (info.isa != Isa::kAvx512) {
    EXPECT_FALSE(info.has_avx512bf16);
  }
}

TEST(DeviceInfoTest, IdentityAndCaches) {
  const DeviceInfo info = DetectHost();
  EXPECT_TRUE(info.vendor == "AuthenticAMD" || info.vendor == "GenuineIntel") << info.vendor;
  EXPECT_GT(info.family, 0);
  EXPECT_FALSE(info.cpu_name.empty());
  __builtin_cpu_init();
  if (info.vendor == "AuthenticAMD" && info.family == 25 && info.model < 0x10 &&
      info.isa == Isa::kAvx2) {
    EXPECT_EQ(info.cpu_name, "znver3");
  }
  EXPECT_GE(info.l1d_bytes, 4 << 10);
  EXPECT_GE(info.l2_bytes, info.l1d_bytes);
  EXPECT_GE(info.l3_bytes, 0);
}

TEST(DeviceInfoTest, CoresWithinHardwareThreads) {
  const DeviceInfo info = DetectHost();
  EXPECT_GE(info.cores, 1);
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw > 0) {
    EXPECT_LE(info.cores, static_cast<int>(hw));
  }
}

TEST(DeviceInfoTest, FeaturesMatchIsa) {
  const DeviceInfo info = DetectHost();
  const std::string f = info.LlvmFeatures();
  EXPECT_TRUE(HasFeature(f, "+sse2")) << f;
  switch (info.isa) {
    case Isa::kAvx512:
      EXPECT_TRUE(HasFeature(f, "+avx512f")) << f;
      EXPECT_TRUE(HasFeature(f, "+avx512vl")) << f;
      EXPECT_TRUE(HasFeature(f, "+avx2")) << f;
      break;
    case Isa::kAvx2:
      EXPECT_TRUE(HasFeature(f, "+avx2")) << f;
      EXPECT_TRUE(HasFeature(f, "+fma")) << f;
      EXPECT_TRUE(HasFeature(f, "-avx512f")) << f;
      break;
    case Isa::kSse2:
      EXPECT_TRUE(HasFeature(f, "-avx")) << f;
      break;
  }
}

TEST(DeviceInfoTest, RestrictIsaNeverWidensAndStripsFeatures) {
  const DeviceInfo host = DetectHost();
  for (Isa target : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    const DeviceInfo r = RestrictIsa(host, target);
    EXPECT_LE(static_cast<int>(r.isa), static_cast<int>(host.isa));
    EXPECT_LE(static_cast<int>(r.isa), static_cast<int>(target));
    EXPECT_EQ(r.cores, host.cores);
    EXPECT_EQ(r.l2_bytes, host.l2_bytes);
    EXPECT_EQ(r.family, host.family);
    if (static_cast<int>(target) >= static_cast<int>(host.isa)) {
      EXPECT_EQ(r.cpu_name, host.cpu_name);
      EXPECT_EQ(r.CodegenFingerprint(), host.CodegenFingerprint());
      continue;
    }
    const std::string f = r.LlvmFeatures();
    EXPECT_TRUE(HasFeature(f, "-avx512f")) << f;
    EXPECT_FALSE(HasFeature(f, "+avx512f")) << f;
    EXPECT_FALSE(r.has_avx512bf16);
    EXPECT_NE(r.CodegenFingerprint(), host.CodegenFingerprint());
    if (target == Isa::kAvx2) {
      EXPECT_EQ(r.cpu_name, "x86-64-v3");
      EXPECT_EQ(r.vector_bits, 256);
      EXPECT_TRUE(HasFeature(f, "+avx2")) << f;
    } else {
      EXPECT_EQ(r.cpu_name, "x86-64");
      EXPECT_EQ(r.vector_bits, 128);
      EXPECT_FALSE(r.has_fma);
      EXPECT_TRUE(HasFeature(f, "-avx")) << f;
      EXPECT_FALSE(HasFeature(f, "+avx2")) << f;
      EXPECT_FALSE(HasFeature(f, "+fma")) << f;
    }
  }
}

TEST(DeviceInfoTest, IsaNames) {
  EXPECT_STREQ(IsaName(Isa::kSse2), "sse2");
  EXPECT_STREQ(IsaName(Isa::kAvx2), "avx2");
  EXPECT_STREQ(IsaName(Isa::kAvx512), "avx512");
}

TEST(DeviceInfoTest, FingerprintNamesCpuAndIsa) {
  const DeviceInfo info = DetectHost();
  const std::string fp = info.CodegenFingerprint();
  EXPECT_NE(fp.find(info.cpu_name), std::string::npos) << fp;
  EXPECT_NE(fp.find(IsaName(info.isa)), std::string::npos) << fp;
  EXPECT_EQ(fp, DetectHost().CodegenFingerprint());  // deterministic
}

}  // namespace
}  // namespace pto::device
