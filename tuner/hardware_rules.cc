#include "tuner/hardware_rules.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::tuner {

Constraint RegisterCapacity(const device::DeviceInfo& info, RegisterRule rule) {
  const int64_t registers = info.vector_registers;
  Constraint c;
  c.name = "register_capacity";
  c.reason = absl::StrCat(rule.holds, " must fit in the ", registers, " vector registers");
  c.parameters = std::move(rule.parameters);
  c.satisfied = [registers, used = std::move(rule.registers)](std::span<const int64_t> v) {
    return used && used(v) <= registers;
  };
  return c;
}

const char* CacheLevelName(CacheLevel level) {
  switch (level) {
    case CacheLevel::kL1d:
      return "L1d";
    case CacheLevel::kL2:
      return "L2";
    case CacheLevel::kL3:
      return "L3";
  }
  return "?";
}

int64_t CacheBytes(const device::DeviceInfo& info, CacheLevel level) {
  switch (level) {
    case CacheLevel::kL1d:
      return info.l1d_bytes;
    case CacheLevel::kL2:
      return info.l2_bytes;
    case CacheLevel::kL3:
      return info.l3_bytes;
  }
  return 0;
}

Constraint CacheCapacity(const device::DeviceInfo& info, CacheRule rule) {
  const int64_t limit =
      static_cast<int64_t>(rule.fraction * static_cast<double>(CacheBytes(info, rule.level)));
  Constraint c;
  c.name = std::move(rule.name);
  c.reason =
      absl::StrCat("the working set of (", absl::StrJoin(rule.parameters, ","), ") must fit in ",
                   rule.fraction * 100, "% of ", CacheLevelName(rule.level), ": ", limit, " of ",
                   CacheBytes(info, rule.level), " bytes");
  c.parameters = std::move(rule.parameters);
  c.satisfied = [limit, bytes = std::move(rule.working_set_bytes)](std::span<const int64_t> v) {
    return bytes && bytes(v) <= limit;
  };
  return c;
}

std::vector<int64_t> VectorWidthCandidates(const device::DeviceInfo& info) {
  std::vector<int64_t> out;
  for (int64_t lanes = 4; lanes <= info.f32_lanes(); lanes *= 2) out.push_back(lanes);
  return out;
}

}  // namespace pto::tuner
