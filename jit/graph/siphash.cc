#include "jit/graph/siphash.h"

#include <bit>

namespace pto::graph {
namespace {

uint64_t Load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct State {
  uint64_t v0, v1, v2, v3;

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

  uint64_t Finish(uint8_t marker) {
    v2 ^= marker;
    for (int i = 0; i < 4; ++i) Round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

}  // namespace

std::array<uint64_t, 2> SipHash128(const std::array<uint8_t, 16>& key, std::string_view data) {
  const uint64_t k0 = Load64(key.data());
  const uint64_t k1 = Load64(key.data() + 8);
  State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
          k1 ^ 0x7465646279746573ull};
  s.v1 ^= 0xee;  // 128-bit output variant

  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) s.Compress(Load64(p + i));
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t j = 0; i + j < n; ++j) last |= static_cast<uint64_t>(p[i + j]) << (8 * j);
  s.Compress(last);

  const uint64_t h0 = s.Finish(0xee);
  s.v1 ^= 0xdd;
  const uint64_t h1 = s.Finish(0);
  return {h0, h1};
}

}  // namespace pto::graph
