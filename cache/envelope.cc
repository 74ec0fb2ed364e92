#include "cache/envelope.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/checksum.h"

namespace pto::cache {
namespace {

constexpr std::string_view kMagic = "PTOV";

void AppendLittleEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t ReadLittleEndian(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

}  // namespace

std::string WrapPayload(std::string_view payload) {
  std::string value;
  value.reserve(kValueHeaderBytes + payload.size());
  value.append(kMagic);
  AppendLittleEndian(&value, kValueFormatVersion, 4);
  AppendLittleEndian(&value, payload.size(), 8);
  AppendLittleEndian(&value, Checksum64(payload), 8);
  value.append(payload);
  return value;
}

absl::StatusOr<std::string_view> UnwrapValue(std::string_view value) {
  if (IsValueFormat1(value)) {
    return absl::DataLossError(
        absl::StrCat("the value is in the older value format 1 (this pto "
                     "reads format ",
                     kValueFormatVersion, ")"));
  }
  if (value.size() < kValueHeaderBytes) {
    return absl::DataLossError(absl::StrCat("the value has ", value.size(),
                                            " bytes, fewer than its ", kValueHeaderBytes,
                                            "-byte header"));
  }
  if (value.substr(0, kMagic.size()) != kMagic) {
    return absl::DataLossError("the value does not start with the magic \"PTOV\"");
  }
  const uint64_t version = ReadLittleEndian(value, 4, 4);
  if (version != kValueFormatVersion) {
    return absl::DataLossError(absl::StrCat("the value is in value format ", version,
                                            " (this pto reads format ", kValueFormatVersion, ")"));
  }
  const uint64_t length = ReadLittleEndian(value, 8, 8);
  const std::string_view payload = value.substr(kValueHeaderBytes);
  if (length != payload.size()) {
    return absl::DataLossError(absl::StrCat("the value's header says ", length,
                                            " payload bytes, but it holds ", payload.size()));
  }
  if (ReadLittleEndian(value, 16, 8) != Checksum64(payload)) {
    return absl::DataLossError("the value's checksum does not match its payload");
  }
  return payload;
}

std::optional<std::string> UnwrapPayload(std::string_view value) {
  absl::StatusOr<std::string_view> payload = UnwrapValue(value);
  if (!payload.ok()) return std::nullopt;
  return std::string(*payload);
}

bool IsValueFormat1(std::string_view value) {
  // Envelope field 1 (schema_version, varint) = 1, then the tag of field 2 (checksum, fixed64):
  // proto3 writes fields in number order, and both were always set.
  return value.starts_with(std::string_view("\x08\x01\x11", 3));
}

}  // namespace pto::cache
