#include "cache/checksum.h"

#include <bit>
#include <cstddef>

namespace pto::cache {
namespace {

uint64_t Load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct SipState {
  uint64_t v0, v1, v2, v3;

  SipState(const SipKey& key, bool wide) {
    const uint64_t k0 = Load64(key.data());
    const uint64_t k1 = Load64(key.data() + 8);
    v0 = k0 ^ 0x736f6d6570736575ull;
    v1 = k1 ^ 0x646f72616e646f6dull;
    v2 = k0 ^ 0x6c7967656e657261ull;
    v3 = k1 ^ 0x7465646279746573ull;
    if (wide) v1 ^= 0xee;
  }

  void Round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }

  void Compress(uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }

  void Absorb(std::string_view data) {
    const auto* p = reinterpret_cast<const uint8_t*>(data.data());
    const size_t n = data.size();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) Compress(Load64(p + i));
    uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
    for (size_t j = 0; i + j < n; ++j) last |= static_cast<uint64_t>(p[i + j]) << (8 * j);
    Compress(last);
  }

  uint64_t Finish(uint8_t marker) {
    v2 ^= marker;
    for (int i = 0; i < 4; ++i) Round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

// "pto.cache.v1 sum" in ASCII: arbitrary but fixed forever for schema version 1.
constexpr SipKey kChecksumKey = {'p', 't', 'o', '.', 'c', 'a', 'c', 'h',
                                 'e', '.', 'v', '1', ' ', 's', 'u', 'm'};

}  // namespace

uint64_t SipHash64(const SipKey& key, std::string_view data) {
  SipState s(key, /*wide=*/false);
  s.Absorb(data);
  return s.Finish(0xff);
}

std::array<uint64_t, 2> SipHash128(const SipKey& key, std::string_view data) {
  SipState s(key, /*wide=*/true);
  s.Absorb(data);
  const uint64_t h0 = s.Finish(0xee);
  s.v1 ^= 0xdd;
  const uint64_t h1 = s.Finish(0);
  return {h0, h1};
}

uint64_t Checksum64(std::string_view payload) { return SipHash64(kChecksumKey, payload); }

}  // namespace pto::cache
