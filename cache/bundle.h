// Bundles: the kernel cache's shipping format (proto/bundle.proto, docs/cache.md). A bundle is
// schema-versioned, deterministic bytes (records sorted by kind and key, usage fields cleared,
// no time but the records' own creation time) with a content hash and a manifest of the
// fingerprints it holds. Tuning and plan records are always exported; kernel records (object
// code: machine code) only on request, and they are imported only when the importer trusts
// them and their fingerprints are this machine's.
#ifndef PTO_CACHE_BUNDLE_H_
#define PTO_CACHE_BUNDLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "cache/kernel_store.h"
#include "proto/bundle.pb.h"
#include "proto/cache.pb.h"

namespace pto::cache {

// The version of the bundle format (Bundle.schema_version).
inline constexpr uint32_t kBundleSchemaVersion = 1;
// Bundle.magic.
inline constexpr char kBundleMagic[] = "pto-cache-bundle";

struct ExportOptions {
  bool with_code = false;  // include kernel records (object code)
};

// The store's sound records as a bundle's bytes; records that fail the store's checks are
// left out. Exporting the same records twice gives the same bytes. FailedPrecondition for
// with_code from a store whose code is not trusted (code never leaves it); otherwise an error
// only if the store's scan fails.
absl::StatusOr<std::string> ExportBundle(CacheStore& store, const ExportOptions& options);

// The bundle in `bytes`, verified: InvalidArgument for bytes that are not a bundle;
// DataLoss for a bundle of another schema version, whose content hash does not match, or
// whose manifest counts disagree with its records.
absl::StatusOr<proto::Bundle> ParseBundle(const std::string& bytes);

struct ImportOptions {
  // Store kernel records (object code). Even then, only those whose fingerprints below match.
  bool trust_code = false;
  // This machine's fingerprints (DeviceInfo::CodegenFingerprint(), the compiler's).
  std::string codegen_fingerprint;
  std::string compiler_fingerprint;
  // Decides whether a tuning record's config may be used (e.g. it is in its search space);
  // an error's message is the reason it is rejected. Empty: every sound record is accepted.
  std::function<absl::Status(const proto::TuningRecord&)> validate_tuning;
};

struct RejectedRecord {
  std::string kind;  // as the bundle names it: "kernel", "plan", "tuning" or another word
  std::string key;
  std::string reason;
};

struct ImportReport {
  int64_t tuning_accepted = 0;  // including records for other hardware (kept, never code)
  int64_t plans = 0;
  int64_t kernels = 0;
  int64_t kernels_untrusted = 0;      // skipped: trust_code was false
  int64_t kernels_other_machine = 0;  // skipped: codegen or compiler fingerprint differs
  // Tuning records the validator refused and records of any kind that fail the checks a Get
  // makes (do not parse, another schema version, key parts that do not hash to the key).
  std::vector<RejectedRecord> rejected;
};

// Parses and verifies `bytes` (as ParseBundle, nothing is stored if that fails), re-checks
// every record and stores the ones accepted. An error from the store stops the import.
absl::StatusOr<ImportReport> ImportBundle(CacheStore& store, const std::string& bytes,
                                          const ImportOptions& options);

}  // namespace pto::cache

#endif  // PTO_CACHE_BUNDLE_H_
