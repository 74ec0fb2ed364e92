// What pto knows about the host CPU. Passed explicitly everywhere (tests force other ISAs).
#ifndef PTO_DEVICE_DEVICE_INFO_H_
#define PTO_DEVICE_DEVICE_INFO_H_

#include <cstdint>
#include <string>

namespace pto::device {

enum class Isa : uint8_t { kSse2 = 0, kAvx2 = 1, kAvx512 = 2 };

struct DeviceInfo {
  std::string vendor;    // "AuthenticAMD", "GenuineIntel"
  std::string cpu_name;  // LLVM CPU name ("znver4", "skylake-avx512", "x86-64-v3")
  std::string brand;     // marketing string from cpuid
  int family = 0, model = 0;
  Isa isa = Isa::kSse2;  // widest vector ISA codegen targets
  bool has_fma = false;
  bool has_avx512bf16 = false;
  int vector_bits = 128;  // 128, 256 or 512, from isa
  int vector_registers = 16;
  int64_t l1d_bytes = 32 << 10;
  int64_t l2_bytes = 1 << 20;
  int64_t l3_bytes = 8 << 20;  // whole L3 as reported
  int cores = 1;               // usable by this process (affinity and cgroup quota)

  int f32_lanes() const { return vector_bits / 32; }
  // LLVM target feature string ("+avx2,+fma,...,-avx512f") matching `isa`.
  std::string LlvmFeatures() const;
  // Codegen fingerprint: CPU name plus the ISA features that change generated code.
  std::string CodegenFingerprint() const;
  // Performance fingerprint (tuning keys): what makes one config faster than another here, the
  // CPU family/model, the ISA, the caches this process really has and the threads a kernel
  // runs on; not the compiler (an upgrade recompiles and keeps the tuning).
  // "vendor=AuthenticAMD;family=25;model=1;isa=avx2;l1d=32K;l2=512K;l3=32768K;threads=2".
  std::string PerformanceFingerprint(int threads) const;
};

// Reads cpuid, sysfs caches, sched affinity and the cgroup cpu quota.
DeviceInfo DetectHost();
// The same machine restricted to a narrower ISA (e.g. AVX2 on an AVX-512 host). Never widens.
DeviceInfo RestrictIsa(const DeviceInfo& info, Isa isa);
const char* IsaName(Isa isa);

}  // namespace pto::device

#endif  // PTO_DEVICE_DEVICE_INFO_H_
