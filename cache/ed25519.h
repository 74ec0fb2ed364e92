// Ed25519 keys, signatures and key ids for signed cache bundles (docs/cache.md, "Signed
// bundles"), over libsodium. Keys reach files through cache/key_file.h; bundles are framed
// and signed in cache/bundle_signature.h.
#ifndef PTO_CACHE_ED25519_H_
#define PTO_CACHE_ED25519_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace pto::cache {

inline constexpr size_t kEd25519PublicKeyBytes = 32;
inline constexpr size_t kEd25519SeedBytes = 32;  // RFC 8032's private key
inline constexpr size_t kEd25519SignatureBytes = 64;

using Ed25519Signature = std::array<uint8_t, kEd25519SignatureBytes>;

struct PublicKey {
  std::array<uint8_t, kEd25519PublicKeyBytes> bytes{};
  std::string comment;  // free text from the key file; not part of the key

  // "ed25519:" and 16 lowercase hex digits: the first 8 bytes of BLAKE2b-256 of the key. For
  // people and messages; the full key is what is compared.
  std::string Id() const;
  bool SameKey(const PublicKey& other) const { return bytes == other.bytes; }
};

// A signing key: the 32-byte seed and what libsodium derives from it. Wiped on destruction.
class SecretKey {
 public:
  // A fresh key from the operating system's random source.
  static absl::StatusOr<SecretKey> Generate();
  static absl::StatusOr<SecretKey> FromSeed(const std::array<uint8_t, kEd25519SeedBytes>& seed);

  SecretKey(const SecretKey& other) = default;
  SecretKey& operator=(const SecretKey& other) = default;
  ~SecretKey();

  const PublicKey& public_key() const { return public_key_; }
  std::array<uint8_t, kEd25519SeedBytes> seed() const;
  // Ed25519 (RFC 8032, deterministic) over `message`.
  Ed25519Signature Sign(std::string_view message) const;

 private:
  SecretKey() = default;
  std::array<uint8_t, 64> expanded_{};  // libsodium's secret key: the seed, then the public key
  PublicKey public_key_;
};

// Whether `signature` is `key`'s signature of `message`. False for a key that is not a valid
// curve point or has small order (libsodium's checks).
bool VerifyEd25519(const PublicKey& key, const Ed25519Signature& signature,
                   std::string_view message);

// Whether `bytes` are a usable Ed25519 public key: a point on the curve, not of small order.
bool IsValidEd25519PublicKey(const std::array<uint8_t, kEd25519PublicKeyBytes>& bytes);

// BLAKE2b-256 of `data` (libsodium's crypto_generichash with 32 output bytes, no key; the same
// digest as `b2sum -l 256`).
std::array<uint8_t, 32> Blake2b256(std::string_view data);

// Lowercase hex of `bytes`.
std::string LowerHex(const uint8_t* bytes, size_t size);

}  // namespace pto::cache

#endif  // PTO_CACHE_ED25519_H_
