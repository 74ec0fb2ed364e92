#include "device/device_info.h"

#include <cpuid.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace pto::device {
namespace {

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs Cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidRegs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

bool Bit(uint32_t reg, int bit) { return (reg >> bit) & 1u; }

// XCR0: which register states the OS saves on context switch.
uint64_t ReadXcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Raw ISA bits that decide the Isa level (x86-64-v3 and -v4 feature sets).
struct IsaBits {
  bool v3 = false;  // AVX, AVX2, BMI1/2, F16C, FMA, LZCNT, MOVBE, OS YMM state
  bool v4 = false;  // v3 + AVX-512 F/BW/CD/DQ/VL and OS ZMM state
  bool fma = false;
  bool avx512bf16 = false;
};

IsaBits DetectIsaBits(uint32_t max_leaf, uint32_t max_ext_leaf) {
  IsaBits bits;
  if (max_leaf < 1) return bits;
  const CpuidRegs l1 = Cpuid(1);
  const bool osxsave = Bit(l1.ecx, 27);
  const bool avx = Bit(l1.ecx, 28);
  const bool fma = Bit(l1.ecx, 12);
  const bool f16c = Bit(l1.ecx, 29);
  const bool movbe = Bit(l1.ecx, 22);
  uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;    // XMM and YMM state
  const bool os_zmm = (xcr0 & 0xe6) == 0xe6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  CpuidRegs l7;
  CpuidRegs l7s1;
  if (max_leaf >= 7) {
    l7 = Cpuid(7, 0);
    if (l7.eax >= 1) l7s1 = Cpuid(7, 1);
  }
  const bool bmi1 = Bit(l7.ebx, 3), avx2 = Bit(l7.ebx, 5), bmi2 = Bit(l7.ebx, 8);
  const bool avx512f = Bit(l7.ebx, 16), avx512dq = Bit(l7.ebx, 17), avx512cd = Bit(l7.ebx, 28);
  const bool avx512bw = Bit(l7.ebx, 30), avx512vl = Bit(l7.ebx, 31);
  bool lzcnt = false;
  if (max_ext_leaf >= 0x80000001) lzcnt = Bit(Cpuid(0x80000001).ecx, 5);
  bits.v3 = os_ymm && avx && avx2 && fma && f16c && bmi1 && bmi2 && lzcnt && movbe;
  bits.fma = bits.v3;
  bits.v4 = bits.v3 && os_zmm && avx512f && avx512bw && avx512cd && avx512dq && avx512vl;
  bits.avx512bf16 = bits.v4 && Bit(l7s1.eax, 5);
  return bits;
}

std::string Trim(std::string s) {
  const char* ws = " \t\n\r";
  s.erase(0, s.find_first_not_of(ws));
  const size_t end = s.find_last_not_of(ws);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

std::string BrandString(uint32_t max_ext_leaf) {
  if (max_ext_leaf < 0x80000004) return "";
  char brand[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    const CpuidRegs r = Cpuid(0x80000002 + i);
    std::memcpy(brand + 16 * i, &r.eax, 4);
    std::memcpy(brand + 16 * i + 4, &r.ebx, 4);
    std::memcpy(brand + 16 * i + 8, &r.ecx, 4);
    std::memcpy(brand + 16 * i + 12, &r.edx, 4);
  }
  return Trim(brand);
}

bool InRange(int v, int lo, int hi) { return v >= lo && v <= hi; }

// Family/model -> LLVM CPU name, following llvm/lib/TargetParser/Host.cpp for common parts.
// Empty when unknown.
std::string AmdCpuName(int family, int model) {
  switch (family) {
    case 23:  // Zen, Zen+, Zen 2
      if (InRange(model, 0x30, 0x3f) || model == 0x47 || InRange(model, 0x60, 0x7f) ||
          InRange(model, 0x84, 0x87) || InRange(model, 0x90, 0xaf)) {
        return "znver2";
      }
      return "znver1";
    case 25:  // Zen 3, Zen 4
      if (InRange(model, 0x10, 0x1f) || InRange(model, 0x60, 0x7f) || InRange(model, 0xa0, 0xaf)) {
        return "znver4";
      }
      return "znver3";
    case 26:  // Zen 5
      return "znver5";
    default:
      return "";
  }
}

std::string IntelCpuName(int family, int model) {
  if (family != 6) return "";
  switch (model) {
    case 0x2a:
    case 0x2d:
      return "sandybridge";
    case 0x3a:
    case 0x3e:
      return "ivybridge";
    case 0x3c:
    case 0x3f:
    case 0x45:
    case 0x46:
      return "haswell";
    case 0x3d:
    case 0x47:
    case 0x4f:
    case 0x56:
      return "broadwell";
    case 0x4e:
    case 0x5e:
    case 0x8e:
    case 0x9e:
    case 0xa5:
    case 0xa6:
      return "skylake";
    case 0x55:
      return "skylake-avx512";  // also Cascade/Cooper Lake; avx512 subset is common
    case 0x66:
      return "cannonlake";
    case 0x7d:
    case 0x7e:
      return "icelake-client";
    case 0x6a:
    case 0x6c:
      return "icelake-server";
    case 0x8c:
    case 0x8d:
      return "tigerlake";
    case 0xa7:
      return "rocketlake";
    case 0x97:
    case 0x9a:
      return "alderlake";
    case 0xb7:
    case 0xba:
    case 0xbf:
      return "raptorlake";
    case 0xaa:
    case 0xac:
      return "meteorlake";
    case 0x8f:
      return "sapphirerapids";
    case 0xcf:
      return "emeraldrapids";
    case 0xad:
    case 0xae:
      return "graniterapids";
    default:
      return "";
  }
}

// The widest ISA level a CPU name implies in LLVM (so a name never promises more than we have).
Isa IsaImpliedByCpuName(const std::string& name) {
  static const char* const kAvx512Names[] = {
      "skylake-avx512", "cascadelake", "cooperlake", "cannonlake",     "icelake-client",
      "icelake-server", "tigerlake",   "rocketlake", "sapphirerapids", "emeraldrapids",
      "graniterapids",  "znver4",      "znver5",     "x86-64-v4"};
  static const char* const kAvx2Names[] = {"haswell",    "broadwell",  "skylake", "alderlake",
                                           "raptorlake", "meteorlake", "znver1",  "znver2",
                                           "znver3",     "x86-64-v3"};
  for (const char* n : kAvx512Names) {
    if (name == n) return Isa::kAvx512;
  }
  for (const char* n : kAvx2Names) {
    if (name == n) return Isa::kAvx2;
  }
  return Isa::kSse2;
}

const char* GenericCpuName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "x86-64-v4";
    case Isa::kAvx2:
      return "x86-64-v3";
    case Isa::kSse2:
      return "x86-64";
  }
  return "x86-64";
}

int VectorBits(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return 512;
    case Isa::kAvx2:
      return 256;
    case Isa::kSse2:
      return 128;
  }
  return 128;
}

// Parses sysfs cache sizes such as "32K", "1024K", "32M".
int64_t ParseCacheSize(const std::string& text) {
  int64_t value = 0;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    value = value * 10 + (text[i] - '0');
    ++i;
  }
  if (i < text.size()) {
    if (text[i] == 'K') value <<= 10;
    if (text[i] == 'M') value <<= 20;
    if (text[i] == 'G') value <<= 30;
  }
  return value;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = Trim(ss.str());
  return true;
}

void ReadCacheSizes(DeviceInfo* info) {
  for (int index = 0; index < 16; ++index) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::string level, type, size;
    if (!ReadFile(dir + "level", &level)) break;
    if (!ReadFile(dir + "type", &type) || !ReadFile(dir + "size", &size)) continue;
    const int64_t bytes = ParseCacheSize(size);
    if (bytes <= 0) continue;
    if (level == "1" && type == "Data") info->l1d_bytes = bytes;
    if (level == "2" && type != "Instruction") info->l2_bytes = bytes;
    if (level == "3" && type != "Instruction") info->l3_bytes = bytes;
  }
}

// cgroup v2 quota ("max 100000" or "<quota> <period>") -> cores, 0 when unlimited/unknown.
int CgroupQuotaCores(const std::string& cpu_max) {
  std::istringstream in(cpu_max);
  std::string quota;
  int64_t period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  const int64_t q = std::strtoll(quota.c_str(), nullptr, 10);
  if (q <= 0) return 0;
  return static_cast<int>(std::max<int64_t>(1, (q + period - 1) / period));
}

int CgroupCores() {
  // The process's own cgroup ("0::/path"), then the root of the mounted hierarchy.
  std::string self;
  std::string path = "/sys/fs/cgroup/cpu.max";
  if (ReadFile("/proc/self/cgroup", &self)) {
    std::istringstream lines(self);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("0::", 0) == 0) {
        std::string rel = line.substr(3);
        if (!rel.empty() && rel != "/") path = "/sys/fs/cgroup" + rel + "/cpu.max";
      }
    }
  }
  int best = 0;
  for (const std::string& p : {path, std::string("/sys/fs/cgroup/cpu.max")}) {
    std::string text;
    if (!ReadFile(p, &text)) continue;
    const int cores = CgroupQuotaCores(text);
    if (cores > 0) best = best == 0 ? cores : std::min(best, cores);
  }
  return best;
}

int UsableCores() {
  int cores = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  const int quota = CgroupCores();
  if (quota > 0) cores = std::min(cores, quota);
  return std::max(cores, 1);
}

}  // namespace

std::string DeviceInfo::LlvmFeatures() const {
  // Each level lists its whole feature set and explicitly disables the wider ones, so the
  // string alone decides the ISA whatever cpu_name implies.
  std::string f = "+sse,+sse2,+cx8,+cmov,+fxsr,+mmx";
  if (isa == Isa::kSse2) {
    f += ",-avx,-avx2,-fma,-fma4,-xop,-f16c,-avx512f,-evex512";
    return f;
  }
  // prfchw: prefetchw (the matmul's output prefetch). Intel cores before Broadwell run it as a
  // no-op rather than fault; every AVX2 core from AMD has it.
  f += ",+sse3,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16,+sahf,+xsave,+avx,+avx2,+f16c,+bmi,+bmi2,"
       "+lzcnt,+movbe,+prfchw";
  f += has_fma ? ",+fma" : ",-fma";
  if (isa == Isa::kAvx2) {
    f += ",-avx512f,-avx512bw,-avx512dq,-avx512vl,-avx512cd,-avx512bf16,-avx512fp16,"
         "-avx512vnni,-evex512";
    return f;
  }
  f += ",+avx512f,+avx512bw,+avx512dq,+avx512vl,+avx512cd,+evex512";
  f += has_avx512bf16 ? ",+avx512bf16" : ",-avx512bf16";
  return f;
}

std::string DeviceInfo::CodegenFingerprint() const {
  return "cpu=" + cpu_name + ";isa=" + IsaName(isa) + ";vbits=" + std::to_string(vector_bits) +
         ";features=" + LlvmFeatures();
}

std::string DeviceInfo::PerformanceFingerprint(int threads) const {
  return "vendor=" + vendor + ";family=" + std::to_string(family) +
         ";model=" + std::to_string(model) + ";isa=" + IsaName(isa) +
         ";l1d=" + std::to_string(l1d_bytes >> 10) + "K;l2=" + std::to_string(l2_bytes >> 10) +
         "K;l3=" + std::to_string(l3_bytes >> 10) + "K;threads=" + std::to_string(threads);
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kSse2:
      return "sse2";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

DeviceInfo DetectHost() {
  DeviceInfo info;
  const CpuidRegs l0 = Cpuid(0);
  const uint32_t max_leaf = l0.eax;
  char vendor[13] = {};
  std::memcpy(vendor, &l0.ebx, 4);
  std::memcpy(vendor + 4, &l0.edx, 4);
  std::memcpy(vendor + 8, &l0.ecx, 4);
  info.vendor = vendor;
  const uint32_t max_ext_leaf = Cpuid(0x80000000).eax;
  info.brand = BrandString(max_ext_leaf);
  if (max_leaf >= 1) {
    const uint32_t eax = Cpuid(1).eax;
    const int base_family = (eax >> 8) & 0xf;
    const int base_model = (eax >> 4) & 0xf;
    info.family = base_family;
    info.model = base_model;
    if (base_family == 0xf) info.family += (eax >> 20) & 0xff;
    if (base_family == 0x6 || base_family == 0xf) info.model |= ((eax >> 16) & 0xf) << 4;
  }
  const IsaBits bits = DetectIsaBits(max_leaf, max_ext_leaf);
  info.isa = bits.v4 ? Isa::kAvx512 : bits.v3 ? Isa::kAvx2 : Isa::kSse2;
  info.has_fma = bits.fma;
  info.has_avx512bf16 = bits.avx512bf16;
  info.vector_bits = VectorBits(info.isa);
  info.vector_registers = info.isa == Isa::kAvx512 ? 32 : 16;

  std::string name;
  if (info.vendor == "AuthenticAMD") name = AmdCpuName(info.family, info.model);
  if (info.vendor == "GenuineIntel") name = IntelCpuName(info.family, info.model);
  // A VM may hide features the model has (or the OS may not save ZMM state): never keep a
  // name that implies more than was detected, nor one that gives less than the detected ISA.
  if (name.empty() || IsaImpliedByCpuName(name) != info.isa) name = GenericCpuName(info.isa);
  info.cpu_name = name;

  ReadCacheSizes(&info);
  info.cores = UsableCores();
  return info;
}

DeviceInfo RestrictIsa(const DeviceInfo& info, Isa isa) {
  if (static_cast<int>(isa) >= static_cast<int>(info.isa)) return info;
  DeviceInfo out = info;
  out.isa = isa;
  out.cpu_name = GenericCpuName(isa);
  out.vector_bits = VectorBits(isa);
  out.vector_registers = isa == Isa::kAvx512 ? 32 : 16;
  out.has_avx512bf16 = false;
  if (isa == Isa::kSse2) out.has_fma = false;
  return out;
}

}  // namespace pto::device
