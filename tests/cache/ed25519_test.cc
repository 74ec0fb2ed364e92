// cache/ed25519.h against published vectors: RFC 8032's first Ed25519 test and BLAKE2b-256 as
// `b2sum -l 256` computes it.
#include "cache/ed25519.h"

#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::cache {
namespace {

std::array<uint8_t, 32> Bytes32(const std::string& hex) {
  std::array<uint8_t, 32> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::stoi(hex.substr(2 * i, 2), nullptr, 16);
  return out;
}

TEST(Ed25519, MatchesRfc8032TestOne) {
  absl::StatusOr<SecretKey> key = SecretKey::FromSeed(
      Bytes32("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
  ASSERT_TRUE(key.ok()) << key.status();
  const PublicKey& pk = key->public_key();
  EXPECT_EQ(LowerHex(pk.bytes.data(), pk.bytes.size()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const Ed25519Signature signature = key->Sign("");
  EXPECT_EQ(LowerHex(signature.data(), signature.size()),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e"
            "39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  EXPECT_TRUE(VerifyEd25519(pk, signature, ""));
  EXPECT_FALSE(VerifyEd25519(pk, signature, "x"));
  Ed25519Signature flipped = signature;
  flipped[40] ^= 1;
  EXPECT_FALSE(VerifyEd25519(pk, flipped, ""));
  EXPECT_EQ(key->seed(),
            Bytes32("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
}

TEST(Ed25519, GeneratedKeysDifferAndSignForThemselvesOnly) {
  absl::StatusOr<SecretKey> a = SecretKey::Generate();
  absl::StatusOr<SecretKey> b = SecretKey::Generate();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a->public_key().SameKey(b->public_key()));
  EXPECT_TRUE(IsValidEd25519PublicKey(a->public_key().bytes));
  const Ed25519Signature signature = a->Sign("bundle bytes");
  EXPECT_TRUE(VerifyEd25519(a->public_key(), signature, "bundle bytes"));
  EXPECT_FALSE(VerifyEd25519(b->public_key(), signature, "bundle bytes"));
  EXPECT_TRUE(std::regex_match(a->public_key().Id(), std::regex("ed25519:[0-9a-f]{16}")))
      << a->public_key().Id();
  EXPECT_NE(a->public_key().Id(), b->public_key().Id());
}

TEST(Ed25519, SmallOrderKeysAreNotValid) {
  EXPECT_FALSE(IsValidEd25519PublicKey({}));
  std::array<uint8_t, 32> identity{};
  identity[0] = 1;
  EXPECT_FALSE(IsValidEd25519PublicKey(identity));
  PublicKey zero;
  EXPECT_FALSE(VerifyEd25519(zero, Ed25519Signature{}, ""));
}

TEST(Ed25519, Blake2b256IsB2sumDashL256) {
  const std::array<uint8_t, 32> h = Blake2b256("abc");
  EXPECT_EQ(LowerHex(h.data(), h.size()),
            "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
}

}  // namespace
}  // namespace pto::cache
