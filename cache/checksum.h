// Stable hashes for the cache: SipHash-2-4 (Aumasson and Bernstein) with 64- and 128-bit
// output, independent of the host's byte order and of the process (unlike absl::Hash). It
// lives here, in a target of its own (pto_checksum), because cache/ may not use jit/; jit/
// uses it for its hashes too.
#ifndef PTO_CACHE_CHECKSUM_H_
#define PTO_CACHE_CHECKSUM_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace pto::cache {

using SipKey = std::array<uint8_t, 16>;

// The reference `siphash` with outlen = 8: its 8 output bytes read as a little-endian word.
uint64_t SipHash64(const SipKey& key, std::string_view data);
// The reference `siphash` with outlen = 16: [0] is output bytes 0..7, [1] bytes 8..15, each
// read as a little-endian word.
std::array<uint64_t, 2> SipHash128(const SipKey& key, std::string_view data);

// The checksum stored in every cache value's envelope: SipHash64 with a fixed key. Part of
// the on-disk format: changing it needs a new schema version.
uint64_t Checksum64(std::string_view payload);

}  // namespace pto::cache

#endif  // PTO_CACHE_CHECKSUM_H_
