// Constraints and candidate lists derived from DeviceInfo, for building search spaces. They
// prune configs that cannot be fast on this machine: a matmul micro-tile that spills vector
// registers, a tile whose working set does not fit the cache level it is meant to live in.
#ifndef PTO_TUNER_HARDWARE_RULES_H_
#define PTO_TUNER_HARDWARE_RULES_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "device/device_info.h"
#include "tuner/search_space.h"

namespace pto::tuner {

// The vector registers a config holds at once, as a function of some of its parameters (e.g. a
// matmul micro-tile's accumulators, B vectors and A broadcast from mr and nr_vectors). The
// space's owner supplies the count; the tuner knows only the register file.
struct RegisterRule {
  std::vector<std::string> parameters;
  // What the registers hold, for the reason ("mr*nr_vectors accumulators + ...").
  std::string holds;
  // Registers in use given the values of `parameters`, in that order.
  std::function<int64_t(std::span<const int64_t> values)> registers;
};

// "register_capacity": rule.registers(values) <= info.vector_registers, so the config does not
// spill. The reason says what the registers hold and how many there are.
Constraint RegisterCapacity(const device::DeviceInfo& info, RegisterRule rule);

enum class CacheLevel : uint8_t { kL1d = 0, kL2 = 1, kL3 = 2 };
const char* CacheLevelName(CacheLevel level);  // "L1d", "L2", "L3"
int64_t CacheBytes(const device::DeviceInfo& info, CacheLevel level);

struct CacheRule {
  std::string name;  // the constraint's name, e.g. "b_panel_fits_l2"
  CacheLevel level = CacheLevel::kL1d;
  // Share of the level the working set may use (the rest holds other data: the output, the
  // stack, the other operand's stream).
  double fraction = 0.5;
  std::vector<std::string> parameters;
  // Bytes touched by one tile given the values of `parameters`, in that order.
  std::function<int64_t(std::span<const int64_t> values)> working_set_bytes;
};

// working_set_bytes(values) <= fraction * CacheBytes(info, level). DeviceInfo::l3_bytes is the
// whole L3 as reported (a VM may report the host's); rules on L3 should say what share they
// assume. The reason names the level and the byte limit.
Constraint CacheCapacity(const device::DeviceInfo& info, CacheRule rule);

// f32 vector widths codegen can emit on this machine: 4, 8, ... up to info.f32_lanes().
std::vector<int64_t> VectorWidthCandidates(const device::DeviceInfo& info);

}  // namespace pto::tuner

#endif  // PTO_TUNER_HARDWARE_RULES_H_
