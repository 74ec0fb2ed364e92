#include "cache/cache_key.h"

#include <array>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cache/checksum.h"

#ifndef PTO_VERSION_STRING
#error "PTO_VERSION_STRING must be defined by the build (cache/CMakeLists.txt)"
#endif

namespace pto::cache {
namespace {

// "pto.cache.key.v1": fixed forever for key format 1.
constexpr SipKey kKeyHashKey = {'p', 't', 'o', '.', 'c', 'a', 'c', 'h',
                                'e', '.', 'k', 'e', 'y', '.', 'v', '1'};

// Serializes parts unambiguously: each as an 8-byte little-endian length and its bytes.
class KeyBuilder {
 public:
  explicit KeyBuilder(std::string_view domain) { Add(domain); }
  KeyBuilder& Add(std::string_view part) {
    uint64_t n = part.size();
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    buf_.append(part.data(), part.size());
    return *this;
  }
  std::string Finish(char prefix) const {
    const std::array<uint64_t, 2> h = SipHash128(kKeyHashKey, buf_);
    char hex[33];
    std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(h[0]),
                  static_cast<unsigned long long>(h[1]));
    return absl::StrCat(std::string(1, prefix), "-", hex);
  }

 private:
  std::string buf_;
};

char PrefixOf(RecordKind kind) {
  switch (kind) {
    case RecordKind::kKernel:
      return 'k';
    case RecordKind::kPlan:
      return 'p';
    case RecordKind::kTuning:
      return 't';
  }
  return '?';
}

}  // namespace

const char* RecordKindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kKernel:
      return "kernel";
    case RecordKind::kPlan:
      return "plan";
    case RecordKind::kTuning:
      return "tuning";
  }
  return "unknown";
}

std::string KernelKey(const KernelKeyParts& parts) {
  return KeyBuilder("pto.kernel.v1")
      .Add(parts.kernel_description)
      .Add(parts.codegen_fingerprint)
      .Add(parts.compiler_fingerprint)
      .Finish(PrefixOf(RecordKind::kKernel));
}

std::string PlanKey(const PlanKeyParts& parts) {
  return KeyBuilder("pto.plan.v1")
      .Add(parts.graph_hash)
      .Add(parts.shape_class)
      .Finish(PrefixOf(RecordKind::kPlan));
}

std::string TuningKey(const TuningKeyParts& parts) {
  return KeyBuilder("pto.tuning.v1")
      .Add(parts.fusion_group_hash)
      .Add(parts.bucket)
      .Add(parts.dtype)
      .Add(parts.performance_fingerprint)
      .Add(absl::StrCat(parts.search_space_version))
      .Finish(PrefixOf(RecordKind::kTuning));
}

bool IsKey(RecordKind kind, std::string_view key) {
  if (key.size() != kKeyLength || key[0] != PrefixOf(kind) || key[1] != '-') return false;
  for (char c : key.substr(2)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

KernelKeyParts KeyPartsOf(const proto::KernelRecord& record) {
  return {record.kernel_description(), record.codegen_fingerprint(), record.compiler_fingerprint()};
}

PlanKeyParts KeyPartsOf(const proto::PlanRecord& record) {
  return {record.graph_hash(), record.shape_class()};
}

TuningKeyParts KeyPartsOf(const proto::TuningRecord& record) {
  return {record.fusion_group_hash(), record.bucket(), record.dtype(),
          record.performance_fingerprint(), record.search_space_version()};
}

std::string_view PtoVersion() { return PTO_VERSION_STRING; }

std::string CompilerFingerprint(int kernel_abi_version, std::string_view llvm_version,
                                std::string_view codegen_options) {
  return absl::StrCat("pto=", std::string(PtoVersion()), ";abi=", kernel_abi_version,
                      ";llvm=", std::string(llvm_version), ";opts=", std::string(codegen_options));
}

}  // namespace pto::cache
