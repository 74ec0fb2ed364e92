#include "cache/envelope.h"

#include <utility>

#include "cache/checksum.h"
#include "cache/kernel_store.h"
#include "proto/cache.pb.h"

namespace pto::cache {

std::string WrapPayload(std::string_view payload) {
  proto::Envelope envelope;
  envelope.set_schema_version(kSchemaVersion);
  envelope.set_checksum(Checksum64(payload));
  envelope.set_payload(std::string(payload));
  return envelope.SerializeAsString();
}

std::optional<std::string> UnwrapPayload(std::string_view value) {
  proto::Envelope envelope;
  // A truncated message usually fails to parse; one cut at a field boundary parses but then
  // lacks its payload bytes and fails the checksum.
  if (!envelope.ParseFromArray(value.data(), static_cast<int>(value.size()))) return std::nullopt;
  if (envelope.schema_version() != kSchemaVersion) return std::nullopt;
  if (envelope.checksum() != Checksum64(envelope.payload())) return std::nullopt;
  return std::move(*envelope.mutable_payload());
}

}  // namespace pto::cache
