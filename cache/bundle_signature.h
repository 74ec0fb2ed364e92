// The outer frame of a bundle file (docs/cache.md, "Bundle files"): a fixed binary header
// that is not protobuf, then the payload (a serialized proto::Bundle). The header carries the
// format version, the payload's length and content hash, and an optional Ed25519 signature.
// Every check here runs before protobuf parses a byte of the payload.
//
//   offset  bytes
//        0     16  magic "pto-cache-bundle"
//       16      4  format version, little-endian (kBundleFormatVersion)
//       20      4  signature algorithm, little-endian: 0 unsigned, 1 Ed25519
//       24      8  payload length, little-endian
//       32     32  content hash: BLAKE2b-256 of the payload
//       64     32  the signer's Ed25519 public key (zeros when unsigned)
//       96     64  Ed25519 signature of bytes [0, 96) followed by the payload (zeros when
//                  unsigned)
//      160      …  payload
#ifndef PTO_CACHE_BUNDLE_SIGNATURE_H_
#define PTO_CACHE_BUNDLE_SIGNATURE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/ed25519.h"

namespace pto::cache {

// Format 1 was a bare protobuf Bundle with a SipHash content hash and no signature.
inline constexpr uint32_t kBundleFormatVersion = 2;
inline constexpr char kBundleMagic[] = "pto-cache-bundle";
inline constexpr size_t kBundleHeaderBytes = 160;
// Where the header's fields start (the table above).
inline constexpr size_t kBundleVersionAt = 16;
inline constexpr size_t kBundleAlgorithmAt = 20;
inline constexpr size_t kBundleLengthAt = 24;
inline constexpr size_t kBundleHashAt = 32;
inline constexpr size_t kBundleSignerAt = 64;
inline constexpr size_t kBundleSignatureAt = 96;
// The header's bytes the signature covers (with the payload): everything before the signature.
inline constexpr size_t kBundleSignedHeaderBytes = kBundleSignatureAt;

enum class BundleSignatureAlgorithm : uint32_t { kNone = 0, kEd25519 = 1 };

// A bundle file whose frame, content hash and signature (if any) verified.
struct BundleFrame {
  std::string_view payload;         // into the bytes given to OpenBundleFrame
  std::string content_hash;         // 64 lowercase hex digits
  std::optional<PublicKey> signer;  // the key whose signature verified; nullopt: unsigned
};

// The bundle file of `payload`: signed by `signer` unless it is null. Deterministic: Ed25519
// signatures are (RFC 8032), so the same payload and key give the same bytes.
std::string FrameBundle(std::string_view payload, const SecretKey* signer);

// Checks `bytes` in this order, stopping at the first failure:
//   InvalidArgument  too short for the header or no magic ("not a pto cache bundle"); a
//                    format 1 bundle ("export it again"); another format version. These are
//                    files this pto does not read, not damaged ones.
//   DataLoss         an unknown signature algorithm; a payload length that is not the rest of
//                    the file; a content hash that does not match; an unsigned header whose
//                    key or signature is not zero; a signature that does not verify with the
//                    key in the header. The bytes were modified or damaged.
// Whether the signer is trusted is the caller's decision.
absl::StatusOr<BundleFrame> OpenBundleFrame(std::string_view bytes);

enum class BundleSigner {
  kUnsigned,
  kTrustedKey,    // signed by one of the trusted keys
  kUntrustedKey,  // signed (the signature verified) by another key
};

// Where a verified frame's `signer` stands against `trusted_keys`.
BundleSigner ClassifySigner(const std::optional<PublicKey>& signer,
                            const std::vector<PublicKey>& trusted_keys);

// The content hash of a payload, as OpenBundleFrame compares it (64 lowercase hex digits).
std::string BundleContentHash(std::string_view payload);

}  // namespace pto::cache

#endif  // PTO_CACHE_BUNDLE_SIGNATURE_H_
