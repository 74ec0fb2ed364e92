#include "cache/checksum.h"

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "cache/envelope.h"
#include "gtest/gtest.h"
#include "proto/cache.pb.h"

namespace pto::cache {
namespace {

SipKey ReferenceKey() {
  SipKey key;
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  return key;
}

std::string ReferenceMessage(int len) {
  std::string message;
  for (int i = 0; i < len; ++i) message.push_back(static_cast<char>(i));
  return message;
}

template <size_t N>
std::array<uint8_t, N> LittleEndianBytes(const uint64_t* words) {
  std::array<uint8_t, N> out;
  for (size_t i = 0; i < N; ++i) out[i] = static_cast<uint8_t>(words[i / 8] >> (8 * (i % 8)));
  return out;
}

// vectors_sip64 of the reference implementation (github.com/veorq/SipHash, vectors.h): key
// 00 01 .. 0f, message 00 01 .. (len - 1). Length 15 is the paper's worked example.
TEST(ChecksumTest, SipHash64ReferenceVectors) {
  const std::pair<int, std::array<uint8_t, 8>> vectors[] = {
      {0, {0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72}},
      {1, {0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74}},
      {7, {0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab}},
      {8, {0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93}},
      {15, {0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1}},
  };
  for (const auto& [len, expected] : vectors) {
    const uint64_t h = SipHash64(ReferenceKey(), ReferenceMessage(len));
    EXPECT_EQ(LittleEndianBytes<8>(&h), expected) << "length " << len;
  }
  EXPECT_EQ(SipHash64(ReferenceKey(), ReferenceMessage(15)), 0xa129ca6149be45e5ull);
}

// vectors_sip128 of the same reference.
TEST(ChecksumTest, SipHash128ReferenceVectors) {
  const std::pair<int, std::array<uint8_t, 16>> vectors[] = {
      {0,
       {0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02,
        0x93}},
      {1,
       {0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc,
        0x45}},
      {7,
       {0xa1, 0xf1, 0xeb, 0xbe, 0xd8, 0xdb, 0xc1, 0x53, 0xc0, 0xb8, 0x4a, 0xa6, 0x1f, 0xf0, 0x82,
        0x39}},
      {8,
       {0x3b, 0x62, 0xa9, 0xba, 0x62, 0x58, 0xf5, 0x61, 0x0f, 0x83, 0xe2, 0x64, 0xf3, 0x14, 0x97,
        0xb4}},
      {15,
       {0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97, 0xcf, 0xc3,
        0xd9}},
      {16,
       {0x6e, 0xe2, 0xa4, 0xca, 0x67, 0xb0, 0x54, 0xbb, 0xfd, 0x33, 0x15, 0xbf, 0x85, 0x23, 0x05,
        0x77}},
      {63,
       {0x51, 0x50, 0xd1, 0x77, 0x2f, 0x50, 0x83, 0x4a, 0x50, 0x3e, 0x06, 0x9a, 0x97, 0x3f, 0xbd,
        0x7c}},
  };
  for (const auto& [len, expected] : vectors) {
    const std::array<uint64_t, 2> h = SipHash128(ReferenceKey(), ReferenceMessage(len));
    EXPECT_EQ(LittleEndianBytes<16>(h.data()), expected) << "length " << len;
  }
}

// The checksum is part of the on-disk format: these values must never change.
TEST(ChecksumTest, Checksum64IsStable) {
  EXPECT_EQ(Checksum64(""), 0x613f433f268e13efull);
  EXPECT_EQ(Checksum64("pto"), 0x901659c7cc9fbabcull);
  EXPECT_NE(Checksum64(""), 0u);  // a value cut before its checksum field cannot pass
  EXPECT_NE(Checksum64("a"), Checksum64("b"));
}

// The value format is on disk: these bytes must never change for value format 2.
TEST(EnvelopeTest, ValueBytesAreStable) {
  const std::string expected = std::string("PTOV") +                 // magic
                               std::string("\x02\x00\x00\x00", 4) +  // format version 2
                               std::string("\x03\x00\x00\x00\x00\x00\x00\x00", 8) +  // length 3
                               std::string("\xbc\xba\x9f\xcc\xc7\x59\x16\x90", 8) +  // checksum
                               "pto";
  EXPECT_EQ(WrapPayload("pto"), expected);
  EXPECT_EQ(WrapPayload("").size(), kValueHeaderBytes);
}

TEST(EnvelopeTest, RoundTripAndEveryDamageIsRejected) {
  const std::string payload = "some serialized record \x01\x02\x03 with bytes";
  const std::string value = WrapPayload(payload);
  ASSERT_EQ(UnwrapPayload(value), payload);
  absl::StatusOr<std::string_view> view = UnwrapValue(value);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), value.data() + kValueHeaderBytes);  // a view, not a copy
  EXPECT_EQ(UnwrapPayload(WrapPayload("")), "");

  // Every truncation and every single flipped bit is rejected, with the reason.
  for (size_t n = 0; n < value.size(); ++n) {
    absl::StatusOr<std::string_view> out = UnwrapValue(value.substr(0, n));
    ASSERT_FALSE(out.ok()) << "truncated to " << n;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
    if (n < kValueHeaderBytes) {
      EXPECT_EQ(out.status().message(),
                absl::StrCat("the value has ", n, " bytes, fewer than its 24-byte header"));
    } else {
      EXPECT_EQ(out.status().message(),
                absl::StrCat("the value's header says ", payload.size(),
                             " payload bytes, but it holds ", n - kValueHeaderBytes));
    }
  }
  for (size_t i = 0; i < value.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = value;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      absl::StatusOr<std::string_view> out = UnwrapValue(damaged);
      ASSERT_FALSE(out.ok()) << "byte " << i << " bit " << bit;
      EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
      if (i >= 16) {
        EXPECT_EQ(out.status().message(), "the value's checksum does not match its payload");
      }
    }
  }
  EXPECT_EQ(UnwrapValue(value + "x").status().message(),
            absl::StrCat("the value's header says ", payload.size(),
                         " payload bytes, but it holds ", payload.size() + 1));

  std::string bad_magic = value;
  bad_magic[0] = 'Q';
  EXPECT_EQ(UnwrapValue(bad_magic).status().message(),
            "the value does not start with the magic \"PTOV\"");
  std::string future = value;
  future[4] = 3;
  EXPECT_EQ(UnwrapValue(future).status().message(),
            "the value is in value format 3 (this pto reads format 2)");
  std::string huge = value;
  huge[15] = '\x80';  // a length near 2^63
  EXPECT_EQ(UnwrapValue(huge).status().message(),
            absl::StrCat("the value's header says ", (uint64_t{1} << 63) + payload.size(),
                         " payload bytes, but it holds ", payload.size()));
}

// Values an older pto wrote (value format 1, a protobuf Envelope) are recognised by their first
// bytes and never parsed.
TEST(EnvelopeTest, OlderValueFormatIsRecognisedAndRejected) {
  proto::Envelope older;
  older.set_schema_version(1);
  older.set_checksum(Checksum64("pto"));
  older.set_payload("pto");
  const std::string value = older.SerializeAsString();
  EXPECT_TRUE(IsValueFormat1(value));
  EXPECT_FALSE(IsValueFormat1(WrapPayload("pto")));
  absl::StatusOr<std::string_view> out = UnwrapValue(value);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(out.status().message(),
            "the value is in the older value format 1 (this pto reads format 2)");
  EXPECT_EQ(UnwrapPayload(value), std::nullopt);
}

}  // namespace
}  // namespace pto::cache
