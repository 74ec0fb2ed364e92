// Cache keys: a fixed-width text key per record, from a stable 128-bit hash (SipHash-2-4-128,
// fixed key) of the key's parts, each length-prefixed, behind a domain tag naming the record
// kind and the key format version. Keys are the same in every process and on every machine.
//
//   kernel  "k-" + 32 hex   kernel description, codegen fingerprint, compiler fingerprint
//   plan    "p-" + 32 hex   graph hash, shape class (its kernel keys carry the fingerprints)
//   tuning  "t-" + 32 hex   fusion group hash, bucket, dtype, performance fingerprint,
//                           search-space version (no compiler version: tuning survives upgrades)
#ifndef PTO_CACHE_CACHE_KEY_H_
#define PTO_CACHE_CACHE_KEY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/cache.pb.h"

namespace pto::cache {

enum class RecordKind : uint8_t { kKernel = 0, kPlan = 1, kTuning = 2 };
const char* RecordKindName(RecordKind kind);  // "kernel", "plan", "tuning"

struct KernelKeyParts {
  // The canonical kernel text: fusion group graph, shape class, dtypes and tile config.
  std::string kernel_description;
  std::string codegen_fingerprint;   // device::DeviceInfo::CodegenFingerprint()
  std::string compiler_fingerprint;  // CompilerFingerprint(...)
  bool operator==(const KernelKeyParts&) const = default;
};

struct PlanKeyParts {
  std::string graph_hash;   // the canonical graph hash
  std::string shape_class;  // the shape class's canonical text
  bool operator==(const PlanKeyParts&) const = default;
};

struct TuningKeyParts {
  std::string fusion_group_hash;
  std::string bucket;
  std::string dtype;
  std::string performance_fingerprint;
  uint32_t search_space_version = 0;
  bool operator==(const TuningKeyParts&) const = default;
};

// Keys: a prefix ("k-", "p-", "t-") and 32 lowercase hex digits.
std::string KernelKey(const KernelKeyParts& parts);
std::string PlanKey(const PlanKeyParts& parts);
std::string TuningKey(const TuningKeyParts& parts);
inline constexpr size_t kKeyLength = 34;
// Whether `key` has the form of a key of `kind`.
bool IsKey(RecordKind kind, std::string_view key);

// The parts a stored record claims for itself (so a hit can be checked against its key).
KernelKeyParts KeyPartsOf(const proto::KernelRecord& record);
PlanKeyParts KeyPartsOf(const proto::PlanRecord& record);
TuningKeyParts KeyPartsOf(const proto::TuningRecord& record);

// pto's version ("0.1.0"), from the top-level project() in CMake.
std::string_view PtoVersion();

// Everything about the compiler that changes generated code: pto's version, the kernel ABI
// version, LLVM's version and the codegen options (optimization level, fast-math flags...).
// "pto=0.1.0;abi=3;llvm=19.1.7;opts=<codegen_options>".
std::string CompilerFingerprint(int kernel_abi_version, std::string_view llvm_version,
                                std::string_view codegen_options);

}  // namespace pto::cache

#endif  // PTO_CACHE_CACHE_KEY_H_
