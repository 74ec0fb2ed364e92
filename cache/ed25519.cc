#include "cache/ed25519.h"

#include <sodium.h>

#include "absl/status/status.h"

namespace pto::cache {
namespace {

static_assert(crypto_sign_PUBLICKEYBYTES == kEd25519PublicKeyBytes);
static_assert(crypto_sign_SEEDBYTES == kEd25519SeedBytes);
static_assert(crypto_sign_BYTES == kEd25519SignatureBytes);
static_assert(crypto_sign_SECRETKEYBYTES == 64);

// libsodium must be initialized before use (it picks implementations for this CPU and opens
// its random source); the call is thread-safe and cheap once done.
bool SodiumReady() { return sodium_init() >= 0; }

}  // namespace

std::string LowerHex(const uint8_t* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

std::array<uint8_t, 32> Blake2b256(std::string_view data) {
  SodiumReady();  // only selects an implementation: the digest is the same either way
  std::array<uint8_t, 32> out;
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(data.data()),
                     data.size(), nullptr, 0);
  return out;
}

std::string PublicKey::Id() const {
  const std::array<uint8_t, 32> h =
      Blake2b256(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return "ed25519:" + LowerHex(h.data(), 8);
}

absl::StatusOr<SecretKey> SecretKey::Generate() {
  if (!SodiumReady()) return absl::InternalError("libsodium could not be initialized");
  std::array<uint8_t, kEd25519SeedBytes> seed;
  randombytes_buf(seed.data(), seed.size());
  absl::StatusOr<SecretKey> key = FromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  return key;
}

absl::StatusOr<SecretKey> SecretKey::FromSeed(const std::array<uint8_t, kEd25519SeedBytes>& seed) {
  if (!SodiumReady()) return absl::InternalError("libsodium could not be initialized");
  SecretKey key;
  if (crypto_sign_seed_keypair(key.public_key_.bytes.data(), key.expanded_.data(), seed.data()) !=
      0) {
    return absl::InternalError("libsodium could not derive an Ed25519 key pair");
  }
  return key;
}

SecretKey::~SecretKey() { sodium_memzero(expanded_.data(), expanded_.size()); }

std::array<uint8_t, kEd25519SeedBytes> SecretKey::seed() const {
  std::array<uint8_t, kEd25519SeedBytes> out;
  crypto_sign_ed25519_sk_to_seed(out.data(), expanded_.data());
  return out;
}

Ed25519Signature SecretKey::Sign(std::string_view message) const {
  Ed25519Signature signature;
  crypto_sign_detached(signature.data(), nullptr,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
                       expanded_.data());
  return signature;
}

bool VerifyEd25519(const PublicKey& key, const Ed25519Signature& signature,
                   std::string_view message) {
  if (!SodiumReady()) return false;
  return crypto_sign_verify_detached(signature.data(),
                                     reinterpret_cast<const unsigned char*>(message.data()),
                                     message.size(), key.bytes.data()) == 0;
}

bool IsValidEd25519PublicKey(const std::array<uint8_t, kEd25519PublicKeyBytes>& bytes) {
  if (!SodiumReady()) return false;
  return crypto_core_ed25519_is_valid_point(bytes.data()) == 1;
}

}  // namespace pto::cache
