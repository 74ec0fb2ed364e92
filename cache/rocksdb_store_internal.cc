#include "cache/rocksdb_store_internal.h"

#include "absl/strings/str_cat.h"
#include "cache/envelope.h"
#include "cache/rocksdb_options.h"
#include "proto/cache.pb.h"

namespace pto::cache {

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what, const std::string& path) {
  std::string message = absl::StrCat(std::string(what), " (", path, "): ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTimedOut() || s.IsTryAgain() || s.IsInvalidArgument() ||
      s.IsNotSupported() || s.IsIncomplete() || s.IsAborted() || s.IsShutdownInProgress()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

rocksdb::WriteOptions WriteOpts() {
  rocksdb::WriteOptions o;
  o.sync = false;        // acknowledged = in the WAL in the OS page cache (rocksdb_store.h)
  o.disableWAL = false;  // the default; the WAL is what makes an acknowledged write survive
  return o;
}

std::string UsageKey(std::string_view key) { return absl::StrCat(kUsagePrefix, std::string(key)); }

std::string EncodeUsage(const LruIndex::Usage& u) {
  proto::KernelUsage usage;
  usage.set_size_bytes(u.size_bytes);
  usage.set_last_used_unix_ms(u.last_used_unix_ms);
  usage.set_hits(u.hits);
  return WrapPayload(usage.SerializeAsString());
}

std::optional<LruIndex::Usage> DecodeUsage(std::string_view value) {
  std::optional<std::string> payload = UnwrapPayload(value);
  proto::KernelUsage usage;
  if (!payload || !usage.ParseFromString(*payload)) return std::nullopt;
  return LruIndex::Usage{usage.size_bytes(), usage.last_used_unix_ms(), usage.hits()};
}

}  // namespace pto::cache
