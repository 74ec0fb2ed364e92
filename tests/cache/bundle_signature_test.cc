// The bundle file's frame (cache/bundle_signature.h): its layout, signing, and that no byte of
// the header, the signature or the payload can change without OpenBundleFrame refusing it.
#include "cache/bundle_signature.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::cache {
namespace {

using ::testing::HasSubstr;

SecretKey Key(uint8_t seed_byte) {
  std::array<uint8_t, kEd25519SeedBytes> seed;
  seed.fill(seed_byte);
  return *SecretKey::FromSeed(seed);
}

uint64_t Le(const std::string& bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

TEST(BundleFrame, LayoutAsDocumented) {
  const SecretKey key = Key(5);
  const std::string payload = "the payload";
  const std::string bytes = FrameBundle(payload, &key);
  ASSERT_EQ(bytes.size(), kBundleHeaderBytes + payload.size());
  EXPECT_EQ(bytes.substr(0, 16), "pto-cache-bundle");
  EXPECT_EQ(Le(bytes, 16, 4), 2u);
  EXPECT_EQ(Le(bytes, 20, 4), 1u);
  EXPECT_EQ(Le(bytes, 24, 8), payload.size());
  const std::array<uint8_t, 32> hash = Blake2b256(payload);
  EXPECT_EQ(bytes.substr(32, 32), std::string(hash.begin(), hash.end()));
  EXPECT_EQ(bytes.substr(64, 32),
            std::string(key.public_key().bytes.begin(), key.public_key().bytes.end()));
  const Ed25519Signature signature = key.Sign(bytes.substr(0, 96) + payload);
  EXPECT_EQ(bytes.substr(96, 64), std::string(signature.begin(), signature.end()));
  EXPECT_EQ(bytes.substr(kBundleHeaderBytes), payload);
  EXPECT_EQ(FrameBundle(payload, &key), bytes) << "signing is deterministic";

  absl::StatusOr<BundleFrame> frame = OpenBundleFrame(bytes);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->payload, payload);
  EXPECT_EQ(frame->content_hash, LowerHex(hash.data(), hash.size()));
  ASSERT_TRUE(frame->signer.has_value());
  EXPECT_TRUE(frame->signer->SameKey(key.public_key()));

  const std::string plain = FrameBundle(payload, nullptr);
  EXPECT_EQ(Le(plain, 20, 4), 0u);
  EXPECT_EQ(plain.substr(64), std::string(96, '\0') + payload);
  frame = OpenBundleFrame(plain);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_FALSE(frame->signer.has_value());
  EXPECT_EQ(frame->payload, payload);

  frame = OpenBundleFrame(FrameBundle("", &key));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->payload, "");
}

// Every bit of every header byte and of the signature, and bytes of the payload.
TEST(BundleFrame, NoByteChangesUnnoticed) {
  const SecretKey key = Key(5);
  for (const SecretKey* signer : {&key, static_cast<const SecretKey*>(nullptr)}) {
    const std::string bytes = FrameBundle(std::string(300, 'p'), signer);
    for (size_t at = 0; at < bytes.size(); at += at < kBundleHeaderBytes ? 1 : 37) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string flipped = bytes;
        flipped[at] ^= static_cast<char>(1 << bit);
        absl::StatusOr<BundleFrame> frame = OpenBundleFrame(flipped);
        EXPECT_FALSE(frame.ok()) << "byte " << at << " bit " << bit
                                 << (signer ? " (signed)" : " (unsigned)");
        if (at < 16) {
          EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
        } else if (at >= 20) {
          EXPECT_EQ(frame.status().code(), absl::StatusCode::kDataLoss)
              << "byte " << at << ": " << frame.status();
        }
      }
    }
  }
}

TEST(BundleFrame, EditsWithARecomputedHashFailTheSignature) {
  const SecretKey key = Key(5);
  std::string bytes = FrameBundle("original payload", &key);
  const std::string edited = "modified payload";
  bytes.replace(kBundleHeaderBytes, std::string::npos, edited);
  const std::array<uint8_t, 32> hash = Blake2b256(edited);
  std::copy(hash.begin(), hash.end(), bytes.begin() + 32);
  absl::StatusOr<BundleFrame> frame = OpenBundleFrame(bytes);
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDataLoss) << frame.status();
  EXPECT_EQ(frame.status().message(),
            "the bundle's signature does not verify with the key it names (" +
                key.public_key().Id() + ") (the bundle was modified or damaged)");

  // Signed again by another key that replaces the signer: it verifies, as that key's bundle
  // (trust is the importer's decision).
  const SecretKey other = Key(6);
  frame = OpenBundleFrame(FrameBundle(edited, &other));
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(ClassifySigner(frame->signer, {key.public_key()}), BundleSigner::kUntrustedKey);
  EXPECT_EQ(ClassifySigner(frame->signer, {key.public_key(), other.public_key()}),
            BundleSigner::kTrustedKey);
  EXPECT_EQ(ClassifySigner(std::nullopt, {key.public_key()}), BundleSigner::kUnsigned);
}

TEST(BundleFrame, VersionsAndForeignBytes) {
  std::string bytes = FrameBundle("p", nullptr);
  bytes[16] = 7;
  absl::StatusOr<BundleFrame> frame = OpenBundleFrame(bytes);
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frame.status().message(),
            "bundle format version 7 is not supported (this pto reads version 2)");
  frame = OpenBundleFrame(std::string("\x0a\x10pto-cache-bundle\x10\x01", 20));
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(frame.status().message(), HasSubstr("this is a format 1 bundle"));
  frame = OpenBundleFrame(bytes.substr(0, kBundleHeaderBytes - 1));
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frame.status().message(),
            "not a pto cache bundle (159 bytes without the 'pto-cache-bundle' header)");
}

}  // namespace
}  // namespace pto::cache
