#include "tests/tuner/test_spaces.h"

#include "absl/strings/str_cat.h"
#include "tuner/hardware_rules.h"

namespace pto::tuner {

device::DeviceInfo TestDevice(int vector_registers) {
  device::DeviceInfo info;
  info.isa = device::Isa::kAvx2;
  info.vector_bits = 256;
  info.vector_registers = vector_registers;
  info.l1d_bytes = 32 << 10;
  info.l2_bytes = 1 << 20;
  info.cores = 2;
  return info;
}

RegisterRule MatmulLikeRegisters() {
  RegisterRule rule;
  rule.parameters = {"mr", "nr_vectors"};
  rule.holds = "mr*nr_vectors accumulators + nr_vectors B vectors + 1 broadcast of A";
  rule.registers = [](std::span<const int64_t> v) { return v[0] * v[1] + v[1] + 1; };
  return rule;
}

SearchSpaceSpec MatmulLikeSpec(const device::DeviceInfo& info) {
  SearchSpaceSpec spec;
  spec.kind = "matmul";
  spec.search_space_version = 3;
  spec.parameters = {{"tile_rows", {1, 2, 4, 8}},
                     {"unroll", {1, 2, 4}},
                     {"mr", {2, 4, 6, 8}},
                     {"nr_vectors", {1, 2, 3, 4}},
                     {"vector_width", VectorWidthCandidates(info)}};
  spec.constraints.push_back(RegisterCapacity(info, MatmulLikeRegisters()));
  CacheRule rule;
  rule.name = "b_panel_fits_l1d";
  rule.level = CacheLevel::kL1d;
  rule.fraction = 0.5;
  rule.parameters = {"mr", "nr_vectors", "vector_width"};
  rule.working_set_bytes = [](std::span<const int64_t> v) {
    return (v[0] * kTestK + kTestK * v[1] * v[2]) * 4;
  };
  spec.constraints.push_back(CacheCapacity(info, std::move(rule)));
  return spec;
}

SearchSpaceSpec GridSpec(int n, int k) {
  SearchSpaceSpec spec;
  spec.kind = "grid";
  for (int p = 0; p < n; ++p) {
    Parameter param{absl::StrCat("p", p), {}};
    for (int v = 0; v < k; ++v) param.values.push_back(v);
    spec.parameters.push_back(std::move(param));
  }
  return spec;
}

}  // namespace pto::tuner
