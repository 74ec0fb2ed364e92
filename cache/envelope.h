// The checksummed envelope every value in the database is stored in (proto::Envelope).
#ifndef PTO_CACHE_ENVELOPE_H_
#define PTO_CACHE_ENVELOPE_H_

#include <optional>
#include <string>
#include <string_view>

namespace pto::cache {

// An Envelope {kSchemaVersion, Checksum64(payload), payload}, serialized.
std::string WrapPayload(std::string_view payload);
// The payload, or nullopt when `value` does not parse as an Envelope (e.g. truncated), its
// schema version is not kSchemaVersion or its checksum does not match.
std::optional<std::string> UnwrapPayload(std::string_view value);

}  // namespace pto::cache

#endif  // PTO_CACHE_ENVELOPE_H_
