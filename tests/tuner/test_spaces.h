// Search spaces and devices shared by the tuner tests.
#ifndef PTO_TESTS_TUNER_TEST_SPACES_H_
#define PTO_TESTS_TUNER_TEST_SPACES_H_

#include <cstdint>

#include "device/device_info.h"
#include "tuner/hardware_rules.h"
#include "tuner/search_space.h"

namespace pto::tuner {

// The contraction length the cache rule of MatmulLikeSpec assumes.
inline constexpr int64_t kTestK = 128;

// An AVX2-width machine with the given register file and a 32 KiB L1d.
device::DeviceInfo TestDevice(int vector_registers);

// A matmul-like micro-tile's registers over (mr, nr_vectors): mr*nr_vectors accumulators +
// nr_vectors B vectors + 1 broadcast of A (pto's own count is ir::MatMulMicroTileRegisters; the
// tuner's tests keep to a synthetic one).
RegisterRule MatmulLikeRegisters();

// tile_rows {1,2,4,8}, unroll {1,2,4}, mr {2,4,6,8}, nr_vectors {1,2,3,4}, vector_width
// {4,8}; constraints: register_capacity (MatmulLikeRegisters), then b_panel_fits_l1d
// ((mr*K + K*nr_vectors*vector_width) * 4 bytes <= half of L1d). Version 3.
SearchSpaceSpec MatmulLikeSpec(const device::DeviceInfo& info);

// Parameters p0..p{n-1}, each with candidates 0..k-1, no constraints.
SearchSpaceSpec GridSpec(int n, int k);

}  // namespace pto::tuner

#endif  // PTO_TESTS_TUNER_TEST_SPACES_H_
