// The value format: how every value in the cache's database (and in the inbox's SST files) is
// stored. A fixed binary header, then the payload (a serialized record):
//
//   bytes 0..3    magic "PTOV"
//   bytes 4..7    value format version, little-endian uint32 (kValueFormatVersion)
//   bytes 8..15   payload length in bytes, little-endian uint64
//   bytes 16..23  Checksum64(payload), little-endian uint64
//   bytes 24..    the payload, exactly `length` bytes
//
// The header is checked field by field and the checksum over the payload before anything is
// parsed: protobuf (and, for a kernel record, the JIT linker) only ever sees payload bytes
// whose checksum held. Version 1 of the value format was a protobuf `Envelope` message, which
// had to be parsed before its checksum could be checked; its values are not read any more.
#ifndef PTO_CACHE_ENVELOPE_H_
#define PTO_CACHE_ENVELOPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace pto::cache {

inline constexpr uint32_t kValueFormatVersion = 2;
inline constexpr size_t kValueHeaderBytes = 24;

// The header (version kValueFormatVersion) followed by `payload`.
std::string WrapPayload(std::string_view payload);

// The payload of `value` (a view into it) once the magic, the version, the length and the
// checksum have been checked; otherwise DataLoss saying which check failed ("older value
// format 1" for values an older pto wrote).
absl::StatusOr<std::string_view> UnwrapValue(std::string_view value);
// UnwrapValue's payload as a copy, or nullopt.
std::optional<std::string> UnwrapPayload(std::string_view value);

// Whether `value` was written in value format 1 (a serialized protobuf Envelope with schema
// version 1), recognised by its first three bytes alone: nothing is parsed.
bool IsValueFormat1(std::string_view value);

}  // namespace pto::cache

#endif  // PTO_CACHE_ENVELOPE_H_
