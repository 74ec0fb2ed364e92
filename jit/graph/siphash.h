// SipHash-2-4 with 128-bit output (Aumasson and Bernstein's reference `siphash` with
// outlen = 16), independent of the host's byte order.
#ifndef PTO_JIT_GRAPH_SIPHASH_H_
#define PTO_JIT_GRAPH_SIPHASH_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace pto::graph {

// The 16 output bytes of the reference implementation, read as two little-endian words:
// [0] is bytes 0..7, [1] is bytes 8..15.
std::array<uint64_t, 2> SipHash128(const std::array<uint8_t, 16>& key, std::string_view data);

}  // namespace pto::graph

#endif  // PTO_JIT_GRAPH_SIPHASH_H_
