// Bundles: the kernel cache's shipping format (proto/bundle.proto, docs/cache.md). A bundle file
// is a fixed header (cache/bundle_signature.h: format version, content hash, optional Ed25519
// signature) and a payload of deterministic bytes (records sorted by kind and key, usage fields
// cleared, no time but the records' own creation time) with a manifest of the fingerprints it
// holds. Tuning and plan records are always exported; kernel records (object code: machine
// code) only on request, and they are imported only from a bundle signed by a trusted key (or,
// when the importer says so, from an unsigned one) and when their fingerprints are this
// machine's.
#ifndef PTO_CACHE_BUNDLE_H_
#define PTO_CACHE_BUNDLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/bundle_signature.h"
#include "cache/cache_key.h"
#include "cache/cache_store.h"
#include "cache/ed25519.h"
#include "proto/bundle.pb.h"
#include "proto/cache.pb.h"

namespace pto::cache {

struct ExportOptions {
  bool with_code = false;  // include kernel records (object code)
  // Sign the bundle with this key (not owned; must outlive the call). Null: unsigned.
  const SecretKey* sign_with = nullptr;
};

// The store's sound records as a bundle file's bytes; records that fail the store's checks
// are left out. Exporting the same records twice (with the same key) gives the same bytes.
// FailedPrecondition for with_code from a store whose code is not trusted (code never leaves
// it); otherwise an error only if the store's scan fails.
absl::StatusOr<std::string> ExportBundle(CacheStore& store, const ExportOptions& options);

struct ParsedBundle {
  proto::Bundle bundle;             // manifest and records
  std::string content_hash;         // BLAKE2b-256 of the payload, 64 hex digits
  std::optional<PublicKey> signer;  // whose signature verified; nullopt: unsigned
};

// The bundle file in `bytes`, verified before any of it is parsed (OpenBundleFrame: its
// codes and messages), then parsed: InvalidArgument if the payload is not a proto::Bundle,
// DataLoss if the manifest counts disagree with the records.
absl::StatusOr<ParsedBundle> ParseBundle(std::string_view bytes);

struct ImportOptions {
  // Kernel records (object code) are stored only from a bundle signed by one of these keys,
  // and only those whose fingerprints below match.
  std::vector<PublicKey> trusted_keys;
  // Store kernel records of unsigned bundles too (still only when the fingerprints match).
  // A bundle signed by a key not in `trusted_keys` never has its code stored.
  bool trust_unsigned_code = false;
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
  BundleSigner signer = BundleSigner::kUnsigned;
  std::string signer_id;        // PublicKey::Id() of the signer; empty when unsigned
  int64_t tuning_accepted = 0;  // including records for other hardware (kept, never code)
  int64_t plans = 0;
  int64_t kernels = 0;
  int64_t kernels_untrusted = 0;      // skipped: not signed by a trusted key (see signer)
  int64_t kernels_other_machine = 0;  // skipped: codegen or compiler fingerprint differs
  // Tuning records the validator refused and records of any kind that fail the checks a Get
  // makes (do not parse, another schema version, key parts that do not hash to the key).
  std::vector<RejectedRecord> rejected;
};

// Verifies and parses `bytes` (as ParseBundle, nothing is stored if that fails), re-checks
// every record and stores the ones accepted. An error from the store stops the import.
absl::StatusOr<ImportReport> ImportBundle(CacheStore& store, std::string_view bytes,
                                          const ImportOptions& options);

}  // namespace pto::cache

#endif  // PTO_CACHE_BUNDLE_H_
