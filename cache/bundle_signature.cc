#include "cache/bundle_signature.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace pto::cache {
namespace {

constexpr size_t kMagicBytes = kBundleVersionAt;
static_assert(sizeof(kBundleMagic) - 1 == kMagicBytes);
static_assert(kBundleSignerAt + kEd25519PublicKeyBytes == kBundleSignatureAt);
static_assert(kBundleSignatureAt + kEd25519SignatureBytes == kBundleHeaderBytes);

// How a format 1 bundle begins: protobuf field 1 (magic), length 16, then the magic.
constexpr std::string_view kFormat1Prefix = "\x0a\x10pto-cache-bundle";

void PutLe32(std::string& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutLe64(std::string& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetLe32(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}
uint64_t GetLe64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

// What the signature covers: the header before the signature, then the payload.
std::string SignedMessage(std::string_view bytes) {
  std::string message(bytes.substr(0, kBundleSignedHeaderBytes));
  message.append(bytes.substr(kBundleHeaderBytes));
  return message;
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

absl::Status Modified(absl::string_view what) {
  return absl::DataLossError(absl::StrCat(what, " (the bundle was modified or damaged)"));
}

}  // namespace

std::string BundleContentHash(std::string_view payload) {
  const std::array<uint8_t, 32> h = Blake2b256(payload);
  return LowerHex(h.data(), h.size());
}

BundleSigner ClassifySigner(const std::optional<PublicKey>& signer,
                            const std::vector<PublicKey>& trusted_keys) {
  if (!signer.has_value()) return BundleSigner::kUnsigned;
  for (const PublicKey& key : trusted_keys) {
    if (key.SameKey(*signer)) return BundleSigner::kTrustedKey;
  }
  return BundleSigner::kUntrustedKey;
}

std::string FrameBundle(std::string_view payload, const SecretKey* signer) {
  std::string out(kBundleHeaderBytes, '\0');
  std::memcpy(out.data(), kBundleMagic, kMagicBytes);
  PutLe32(out, kBundleVersionAt, kBundleFormatVersion);
  PutLe32(out, kBundleAlgorithmAt,
          static_cast<uint32_t>(signer != nullptr ? BundleSignatureAlgorithm::kEd25519
                                                  : BundleSignatureAlgorithm::kNone));
  PutLe64(out, kBundleLengthAt, payload.size());
  const std::array<uint8_t, 32> hash = Blake2b256(payload);
  std::memcpy(out.data() + kBundleHashAt, hash.data(), hash.size());
  out.append(payload);
  if (signer != nullptr) {
    const PublicKey& key = signer->public_key();
    std::memcpy(out.data() + kBundleSignerAt, key.bytes.data(), key.bytes.size());
    const Ed25519Signature signature = signer->Sign(SignedMessage(out));
    std::memcpy(out.data() + kBundleSignatureAt, signature.data(), signature.size());
  }
  return out;
}

absl::StatusOr<BundleFrame> OpenBundleFrame(std::string_view bytes) {
  if (bytes.starts_with(kFormat1Prefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "this is a format 1 bundle (unsigned, written by an older pto); this pto reads format ",
        kBundleFormatVersion, " bundles only: export it again with this pto"));
  }
  if (bytes.size() < kBundleHeaderBytes || bytes.substr(0, kMagicBytes) != kBundleMagic) {
    return absl::InvalidArgumentError(absl::StrCat("not a pto cache bundle (", bytes.size(),
                                                   " bytes without the '", kBundleMagic,
                                                   "' header)"));
  }
  const uint32_t version = GetLe32(bytes, kBundleVersionAt);
  if (version != kBundleFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("bundle format version ", version,
                                                   " is not supported (this pto reads version ",
                                                   kBundleFormatVersion, ")"));
  }
  const uint32_t algorithm = GetLe32(bytes, kBundleAlgorithmAt);
  if (algorithm != static_cast<uint32_t>(BundleSignatureAlgorithm::kNone) &&
      algorithm != static_cast<uint32_t>(BundleSignatureAlgorithm::kEd25519)) {
    return Modified(absl::StrCat("unknown bundle signature algorithm ", algorithm));
  }
  const uint64_t length = GetLe64(bytes, kBundleLengthAt);
  const size_t actual = bytes.size() - kBundleHeaderBytes;
  if (length != actual) {
    return Modified(
        absl::StrCat("the bundle header says ", length, " payload bytes, the file has ", actual));
  }
  BundleFrame frame;
  frame.payload = bytes.substr(kBundleHeaderBytes);
  frame.content_hash = BundleContentHash(frame.payload);
  const std::string stated =
      LowerHex(reinterpret_cast<const uint8_t*>(bytes.data()) + kBundleHashAt, 32);
  if (stated != frame.content_hash) {
    return Modified(absl::StrCat("bundle content hash mismatch: the bundle says '", stated,
                                 "', its contents hash to '", frame.content_hash, "'"));
  }
  const std::string_view signer = bytes.substr(kBundleSignerAt, kEd25519PublicKeyBytes);
  const std::string_view signature = bytes.substr(kBundleSignatureAt, kEd25519SignatureBytes);
  if (algorithm == static_cast<uint32_t>(BundleSignatureAlgorithm::kNone)) {
    if (!AllZero(signer) || !AllZero(signature)) {
      return Modified("the bundle header says unsigned but holds a key or a signature");
    }
    return frame;
  }
  PublicKey key;
  std::memcpy(key.bytes.data(), signer.data(), key.bytes.size());
  Ed25519Signature sig;
  std::memcpy(sig.data(), signature.data(), sig.size());
  if (!VerifyEd25519(key, sig, SignedMessage(bytes))) {
    return Modified(absl::StrCat("the bundle's signature does not verify with the key it names (",
                                 key.Id(), ")"));
  }
  frame.signer = key;
  return frame;
}

}  // namespace pto::cache
