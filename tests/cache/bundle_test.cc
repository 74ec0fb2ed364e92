// Bundles (cache/bundle.h): deterministic bytes between real databases, the content hash and
// the signature checked before anything is parsed, code from other hardware or not signed by a
// trusted key never stored, tuning configs validated.
#include "cache/bundle.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/bundle_signature.h"
#include "cache/cache_store.h"
#include "cache/ed25519.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"
#include "tuner/search_space.h"

namespace pto::cache {
namespace {

using ::pto::cache::testing::KernelParts;
using ::pto::cache::testing::MakeKernel;
using ::pto::cache::testing::MakePlan;
using ::pto::cache::testing::MakeTuning;
using ::pto::cache::testing::TempDir;
using ::pto::cache::testing::TuningParts;
using ::testing::HasSubstr;

std::unique_ptr<CacheStore> Open(const std::string& path) {
  CacheOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
  EXPECT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->persistent()) << (*store)->Describe();
  return *std::move(store);
}

void Fill(CacheStore& store) {
  for (const char* name : {"gelu", "matmul", "softmax"}) {
    ASSERT_TRUE(store.PutKernel(MakeKernel(name)).ok());
    ASSERT_TRUE(store.PutTuning(MakeTuning(name)).ok());
  }
  for (const char* name : {"mlp", "block"}) ASSERT_TRUE(store.PutPlan(MakePlan(name)).ok());
}

// A signing key from a fixed seed: the same key, and so the same signed bytes, every run.
SecretKey Key(uint8_t seed_byte) {
  std::array<uint8_t, kEd25519SeedBytes> seed;
  seed.fill(seed_byte);
  return *SecretKey::FromSeed(seed);
}

// Options under which MakeKernel's records are this machine's, trusting code signed by one of
// `trusted_keys`.
ImportOptions Local(std::vector<PublicKey> trusted_keys = {}) {
  ImportOptions options;
  options.trusted_keys = std::move(trusted_keys);
  options.codegen_fingerprint = KernelParts("x").codegen_fingerprint;
  options.compiler_fingerprint = KernelParts("x").compiler_fingerprint;
  return options;
}

TEST(Bundle, RoundTripsBetweenTwoDatabasesByteIdentically) {
  TempDir dir;
  std::unique_ptr<CacheStore> a = Open(dir.Sub("a"));
  Fill(*a);
  const SecretKey key = Key(1);
  // Hits change usage, which a bundle must not carry.
  ASSERT_TRUE(a->GetKernel(KernelParts("gelu")).ok());
  absl::StatusOr<std::string> first = ExportBundle(*a, {.with_code = true, .sign_with = &key});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(a->GetKernel(KernelParts("matmul")).ok());
  absl::StatusOr<std::string> second = ExportBundle(*a, {.with_code = true, .sign_with = &key});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second) << "exporting the same records twice gives other bytes";
  absl::StatusOr<ParsedBundle> parsed = ParseBundle(*first);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->signer.has_value());
  EXPECT_TRUE(parsed->signer->SameKey(key.public_key()));

  std::unique_ptr<CacheStore> b = Open(dir.Sub("b"));
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *first, Local({key.public_key()}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->signer, BundleSigner::kTrustedKey);
  EXPECT_EQ(report->signer_id, key.public_key().Id());
  EXPECT_EQ(report->kernels, 3);
  EXPECT_EQ(report->plans, 2);
  EXPECT_EQ(report->tuning_accepted, 3);
  EXPECT_TRUE(report->rejected.empty());
  absl::StatusOr<std::string> from_b = ExportBundle(*b, {.with_code = true, .sign_with = &key});
  ASSERT_TRUE(from_b.ok()) << from_b.status();
  EXPECT_EQ(*from_b, *first) << "the bundle changed on its way through a second database";

  // And the records themselves are usable in B, after a reopen.
  b.reset();
  b = Open(dir.Sub("b"));
  absl::StatusOr<std::optional<proto::KernelRecord>> kernel = b->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(kernel.ok() && kernel->has_value());
  EXPECT_EQ((*kernel)->object(), MakeKernel("gelu").object());
  EXPECT_EQ((*kernel)->created_unix_ms(), MakeKernel("gelu").created_unix_ms());
  absl::StatusOr<std::optional<proto::TuningRecord>> tuning = b->GetTuning(TuningParts("softmax"));
  ASSERT_TRUE(tuning.ok() && tuning->has_value());
  EXPECT_EQ((*tuning)->config(), MakeTuning("softmax").config());
}

TEST(Bundle, ManifestListsFingerprintsAndCounts) {
  TempDir dir;
  std::unique_ptr<CacheStore> a = Open(dir.Sub("a"));
  Fill(*a);
  proto::KernelRecord other = MakeKernel("other");
  other.set_codegen_fingerprint("other-hw");
  ASSERT_TRUE(a->PutKernel(other).ok());
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<ParsedBundle> bundle = ParseBundle(*bytes);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_FALSE(bundle->signer.has_value());
  EXPECT_EQ(bundle->content_hash,
            BundleContentHash(std::string_view(*bytes).substr(kBundleHeaderBytes)));
  const proto::BundleManifest& m = bundle->bundle.manifest();
  EXPECT_EQ(m.pto_version(), PtoVersion());
  EXPECT_TRUE(m.with_code());
  EXPECT_EQ(m.kernel_records(), 4);
  EXPECT_EQ(m.plan_records(), 2);
  EXPECT_EQ(m.tuning_records(), 3);
  EXPECT_THAT(m.codegen_fingerprints(),
              ::testing::ElementsAre("other-hw", KernelParts("x").codegen_fingerprint));
  EXPECT_THAT(m.compiler_fingerprints(),
              ::testing::ElementsAre(KernelParts("x").compiler_fingerprint));
  EXPECT_THAT(m.performance_fingerprints(),
              ::testing::ElementsAre(TuningParts("x").performance_fingerprint));
  EXPECT_EQ(bundle->content_hash.size(), 64u);
  // Sorted by kind (kernel, plan, tuning), then key; usage cleared.
  std::string previous;
  for (const proto::BundleRecord& r : bundle->bundle.records()) {
    const int rank = r.kind() == "kernel" ? 0 : r.kind() == "plan" ? 1 : 2;
    const std::string order = absl::StrCat(rank, r.key());
    EXPECT_LT(previous, order);
    previous = order;
  }

  absl::StatusOr<std::string> tuning_only = ExportBundle(*a, {});
  ASSERT_TRUE(tuning_only.ok());
  bundle = ParseBundle(*tuning_only);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_FALSE(bundle->bundle.manifest().with_code());
  EXPECT_EQ(bundle->bundle.manifest().kernel_records(), 0);
  EXPECT_TRUE(bundle->bundle.manifest().codegen_fingerprints().empty());
  EXPECT_EQ(bundle->bundle.records_size(), 5);
  for (const proto::BundleRecord& r : bundle->bundle.records()) EXPECT_NE(r.kind(), "kernel");
}

// `bytes` (a bundle file) with its payload replaced by `payload` and the header's length and
// content hash made to match, as anyone can; the signature block is kept.
std::string WithPayload(const std::string& bytes, std::string_view payload) {
  std::string out = bytes.substr(0, kBundleHeaderBytes);
  for (size_t i = 0; i < 8; ++i)
    out[kBundleLengthAt + i] = static_cast<char>(payload.size() >> (8 * i));
  const std::array<uint8_t, 32> hash = Blake2b256(payload);
  std::memcpy(out.data() + kBundleHashAt, hash.data(), hash.size());
  return out.append(payload);
}

// `bytes` made an unsigned bundle: algorithm 0, key and signature zeroed.
std::string Unsigned(std::string bytes) {
  bytes[kBundleAlgorithmAt] = 0;
  std::fill(bytes.begin() + kBundleSignerAt, bytes.begin() + kBundleHeaderBytes, '\0');
  return bytes;
}

// Imports `bytes` into an empty store trusting Key(1) and unsigned code; expects nothing
// stored and returns the import's status.
absl::Status ImportStoresNothing(const std::string& bytes) {
  std::unique_ptr<CacheStore> store = *OpenCache({});
  ImportOptions options = Local({Key(1).public_key()});
  options.trust_unsigned_code = true;
  absl::StatusOr<ImportReport> report = ImportBundle(*store, bytes, options);
  EXPECT_EQ(store->stats().entries, 0) << report.status();
  return report.status();
}

// Every modification is caught before protobuf parses the payload, with a code and message of
// its own, and nothing is stored.
TEST(Bundle, ModifiedBundlesAreRejectedAndStoreNothing) {
  std::unique_ptr<CacheStore> a = *OpenCache({});
  Fill(*a);
  const SecretKey key = Key(1);
  absl::StatusOr<std::string> exported = ExportBundle(*a, {.with_code = true, .sign_with = &key});
  ASSERT_TRUE(exported.ok());
  const std::string& bytes = *exported;
  const proto::Bundle original = ParseBundle(bytes)->bundle;
  const std::string signature_fails =
      absl::StrCat("the bundle's signature does not verify with the key it names (",
                   key.public_key().Id(), ") (the bundle was modified or damaged)");

  // One byte of a record: a kernel's object code.
  std::string flipped = bytes;
  size_t at = flipped.find(MakeKernel("matmul").object().substr(100, 16));
  ASSERT_NE(at, std::string::npos);
  flipped[at + 3] ^= 0x40;
  absl::Status s = ImportStoresNothing(flipped);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("bundle content hash mismatch: the bundle says '"));
  EXPECT_THAT(s.message(), HasSubstr("(the bundle was modified or damaged)"));

  // One byte of the manifest: its pto version.
  const std::string manifest = original.manifest().SerializeAsString();
  at = bytes.find(manifest, kBundleHeaderBytes);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.substr(at + 2, PtoVersion().size()), PtoVersion());
  flipped = bytes;
  flipped[at + 3] ^= 0x01;
  s = ImportStoresNothing(flipped);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("bundle content hash mismatch"));

  // The same kinds of edit with the content hash recomputed (it is public): the signature.
  proto::Bundle edited = original;
  proto::TuningRecord tuning;
  proto::BundleRecord* last = edited.mutable_records(edited.records_size() - 1);
  ASSERT_EQ(last->kind(), "tuning");
  ASSERT_TRUE(tuning.ParseFromString(last->payload()));
  tuning.set_best_seconds(1e-9);
  last->set_payload(tuning.SerializeAsString());
  s = ImportStoresNothing(WithPayload(bytes, edited.SerializeAsString()));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_EQ(s.message(), signature_fails);
  edited = original;
  edited.mutable_manifest()->set_pto_version("9.9.9");
  s = ImportStoresNothing(WithPayload(bytes, edited.SerializeAsString()));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_EQ(s.message(), signature_fails);

  // One byte of the signature.
  flipped = bytes;
  flipped[kBundleSignatureAt + 17] ^= 0x08;
  s = ImportStoresNothing(flipped);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_EQ(s.message(), signature_fails);

  // One byte of each header field.
  struct HeaderEdit {
    size_t at;
    absl::StatusCode code;
    std::string message;
  };
  const HeaderEdit header_edits[] = {
      {3, absl::StatusCode::kInvalidArgument,
       absl::StrCat("not a pto cache bundle (", bytes.size(),
                    " bytes without the 'pto-cache-bundle' header)")},
      {kBundleVersionAt, absl::StatusCode::kInvalidArgument,
       "bundle format version 3 is not supported (this pto reads version 2)"},
      {kBundleAlgorithmAt, absl::StatusCode::kDataLoss,
       "the bundle header says unsigned but holds a key or a signature (the bundle was modified "
       "or damaged)"},
      {kBundleAlgorithmAt + 1, absl::StatusCode::kDataLoss,
       "unknown bundle signature algorithm 257 (the bundle was modified or damaged)"},
      {kBundleLengthAt, absl::StatusCode::kDataLoss,
       absl::StrCat("the bundle header says ", (bytes.size() - kBundleHeaderBytes) ^ 1,
                    " payload bytes, the file has ", bytes.size() - kBundleHeaderBytes,
                    " (the bundle was modified or damaged)")},
      {kBundleHashAt + 9, absl::StatusCode::kDataLoss, "bundle content hash mismatch"},
      {kBundleSignerAt + 5, absl::StatusCode::kDataLoss, "the bundle's signature does not verify"},
  };
  for (const HeaderEdit& edit : header_edits) {
    flipped = bytes;
    flipped[edit.at] ^= 0x01;
    s = ImportStoresNothing(flipped);
    EXPECT_EQ(s.code(), edit.code) << "header byte " << edit.at << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(edit.message)) << "header byte " << edit.at;
  }

  // Cut short, or with bytes after the payload.
  s = ImportStoresNothing(bytes.substr(0, bytes.size() - 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("payload bytes, the file has"));
  s = ImportStoresNothing(bytes + "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;

  for (const std::string& junk : {std::string("hello, world"), std::string(), bytes.substr(7)}) {
    s = ImportStoresNothing(junk);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("not a pto cache bundle"));
  }

  // A payload that verifies but is not a Bundle (the framing of anyone's bytes).
  s = ImportStoresNothing(FrameBundle("\xff\xff\xff", &key));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("the bundle's payload (3 bytes) is not a pto.proto.Bundle"));
}

// A bundle written by pto before bundles were signed (format 1, checked in): the file is
// intact, this pto just does not read its format, so InvalidArgument (DataLoss would call it
// damaged), with what to do; nothing is stored.
TEST(Bundle, Format1BundleIsRejectedWithAClearMessage) {
  const std::string old =
      ::pto::cache::testing::ReadFile(PTO_SOURCE_DIR "/tests/cache/data/format1.bundle");
  ASSERT_GT(old.size(), 100u);
  const absl::Status s = ImportStoresNothing(old);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(),
            "this is a format 1 bundle (unsigned, written by an older pto); this pto reads format "
            "2 bundles only: export it again with this pto");
}

// An attacker who can edit a bundle replaces a kernel's object code and recomputes the public
// content hash. Format 1 stored that code under the importer's --trust-code; now the signature
// no longer verifies and nothing is stored. Stripping the signature instead makes it an
// unsigned bundle, whose code an import trusting only a key skips.
TEST(Bundle, EditedCodeWithRecomputedContentHashIsNotStored) {
  std::unique_ptr<CacheStore> a = *OpenCache({});
  ASSERT_TRUE(a->PutKernel(MakeKernel("gelu")).ok());
  const SecretKey key = Key(1);
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true, .sign_with = &key});
  ASSERT_TRUE(bytes.ok());
  proto::Bundle bundle = ParseBundle(*bytes)->bundle;
  proto::KernelRecord kernel;
  ASSERT_TRUE(kernel.ParseFromString(bundle.records(0).payload()));
  kernel.mutable_object()->replace(0, 4, "\xcc\xcc\xcc\xcc");
  bundle.mutable_records(0)->set_payload(kernel.SerializeAsString());
  const std::string edited = WithPayload(*bytes, bundle.SerializeAsString());

  std::unique_ptr<CacheStore> b = *OpenCache({});
  absl::StatusOr<ImportReport> report = ImportBundle(*b, edited, Local({key.public_key()}));
  EXPECT_EQ(report.status().code(), absl::StatusCode::kDataLoss) << report.status();
  EXPECT_THAT(report.status().message(),
              HasSubstr("the bundle's signature does not verify with the key it names (" +
                        key.public_key().Id() + ")"));
  absl::StatusOr<std::optional<proto::KernelRecord>> stored = b->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE(stored->has_value()) << "the edited code was stored";

  report = ImportBundle(*b, Unsigned(edited), Local({key.public_key()}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->signer, BundleSigner::kUnsigned);
  EXPECT_EQ(report->kernels, 0);
  EXPECT_EQ(report->kernels_untrusted, 1);
  stored = b->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE(stored->has_value()) << "the edited code was stored";
  EXPECT_EQ(b->stats().entries, 0);
}

// A bundle made on other hardware: its code must never be stored here, its tuning is kept.
TEST(Bundle, CodeFromOtherHardwareIsNeverStored) {
  TempDir dir;
  std::unique_ptr<CacheStore> a = Open(dir.Sub("a"));
  for (const char* name : {"gelu", "matmul"}) {
    proto::KernelRecord kernel = MakeKernel(name);
    kernel.set_codegen_fingerprint("other-hw");
    ASSERT_TRUE(a->PutKernel(kernel).ok());
    proto::TuningRecord tuning = MakeTuning(name);
    tuning.set_performance_fingerprint("other-perf");
    ASSERT_TRUE(a->PutTuning(tuning).ok());
  }
  const SecretKey key = Key(1);
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true, .sign_with = &key});
  ASSERT_TRUE(bytes.ok());

  std::unique_ptr<CacheStore> b = Open(dir.Sub("b"));
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *bytes, Local({key.public_key()}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels, 0);
  EXPECT_EQ(report->kernels_other_machine, 2);
  EXPECT_EQ(report->tuning_accepted, 2);
  EXPECT_EQ(b->stats().entries, 2) << "only the two tuning records";
  for (const char* name : {"gelu", "matmul"}) {
    absl::StatusOr<std::optional<proto::KernelRecord>> local = b->GetKernel(KernelParts(name));
    ASSERT_TRUE(local.ok());
    EXPECT_FALSE(local->has_value()) << name;
    KernelKeyParts theirs = KernelParts(name);
    theirs.codegen_fingerprint = "other-hw";
    absl::StatusOr<std::optional<proto::KernelRecord>> other = b->GetKernel(theirs);
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(other->has_value()) << name;
    // Tuning for other hardware is kept (it can seed a tuner) under its own fingerprint.
    TuningKeyParts tuning = TuningParts(name);
    tuning.performance_fingerprint = "other-perf";
    absl::StatusOr<std::optional<proto::TuningRecord>> kept = b->GetTuning(tuning);
    ASSERT_TRUE(kept.ok() && kept->has_value()) << name;
    absl::StatusOr<std::optional<proto::TuningRecord>> here = b->GetTuning(TuningParts(name));
    ASSERT_TRUE(here.ok());
    EXPECT_FALSE(here->has_value()) << name;
  }

  // A compiler fingerprint that differs is the same refusal.
  std::unique_ptr<CacheStore> c = *OpenCache({});
  ASSERT_TRUE(c->PutKernel(MakeKernel("softmax")).ok());
  ImportOptions newer = Local({key.public_key()});
  newer.compiler_fingerprint = CompilerFingerprint(2, "19.1.7", "O2");
  std::unique_ptr<CacheStore> d = *OpenCache({});
  report = ImportBundle(*d, *ExportBundle(*c, {.with_code = true, .sign_with = &key}), newer);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->kernels, 0);
  EXPECT_EQ(report->kernels_other_machine, 1);
  EXPECT_EQ(d->stats().entries, 0);
}

TEST(Bundle, UnsignedCodeIsStoredOnlyWithTrustUnsignedCode) {
  std::unique_ptr<CacheStore> a = *OpenCache({});
  Fill(*a);
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(bytes.ok());
  std::unique_ptr<CacheStore> b = *OpenCache({});
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *bytes, Local({Key(1).public_key()}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->signer, BundleSigner::kUnsigned);
  EXPECT_EQ(report->signer_id, "");
  EXPECT_EQ(report->kernels, 0);
  EXPECT_EQ(report->kernels_untrusted, 3);
  EXPECT_EQ(report->tuning_accepted, 3);
  EXPECT_EQ(report->plans, 2);
  absl::StatusOr<std::optional<proto::KernelRecord>> kernel = b->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(kernel.ok());
  EXPECT_FALSE(kernel->has_value());
  EXPECT_EQ(b->stats().entries, 5);

  ImportOptions options = Local();
  options.trust_unsigned_code = true;
  std::unique_ptr<CacheStore> c = *OpenCache({});
  report = ImportBundle(*c, *bytes, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels, 3);
  EXPECT_EQ(report->kernels_untrusted, 0);
  kernel = c->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(kernel.ok() && kernel->has_value());
  EXPECT_EQ((*kernel)->object(), MakeKernel("gelu").object());
}

// A valid signature by a key the importer did not name: the data is imported, the code is not
// (not even with trust_unsigned_code: the bundle is signed, by someone not trusted).
TEST(Bundle, CodeSignedByAnUntrustedKeyIsNotStoredButTuningIs) {
  std::unique_ptr<CacheStore> a = *OpenCache({});
  Fill(*a);
  const SecretKey stranger = Key(2);
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true, .sign_with = &stranger});
  ASSERT_TRUE(bytes.ok());
  for (const bool trust_unsigned_code : {false, true}) {
    ImportOptions options = Local({Key(1).public_key(), Key(3).public_key()});
    options.trust_unsigned_code = trust_unsigned_code;
    std::unique_ptr<CacheStore> b = *OpenCache({});
    absl::StatusOr<ImportReport> report = ImportBundle(*b, *bytes, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->signer, BundleSigner::kUntrustedKey);
    EXPECT_EQ(report->signer_id, stranger.public_key().Id());
    EXPECT_EQ(report->kernels, 0);
    EXPECT_EQ(report->kernels_untrusted, 3);
    EXPECT_EQ(report->tuning_accepted, 3);
    EXPECT_EQ(report->plans, 2);
    EXPECT_EQ(b->stats().entries, 5) << "the tuning and plan records, no code";
    absl::StatusOr<std::optional<proto::TuningRecord>> tuning = b->GetTuning(TuningParts("gelu"));
    ASSERT_TRUE(tuning.ok() && tuning->has_value());
  }
  // Among several trusted keys, the signer's.
  std::unique_ptr<CacheStore> c = *OpenCache({});
  absl::StatusOr<ImportReport> report =
      ImportBundle(*c, *bytes, Local({Key(1).public_key(), stranger.public_key()}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->signer, BundleSigner::kTrustedKey);
  EXPECT_EQ(report->kernels, 3);
}

TEST(Bundle, TuningConfigsOutsideTheSpaceAreRejectedWithTheirReason) {
  tuner::SearchSpaceSpec spec;
  spec.kind = "matmul";
  spec.search_space_version = 3;  // TuningParts' version
  spec.parameters = {{"mr", {2, 4, 8}}, {"nr_vectors", {1, 2}}};
  spec.constraints.push_back({"register_capacity",
                              "accumulators must fit in 8 registers",
                              {"mr", "nr_vectors"},
                              [](std::span<const int64_t> v) { return v[0] * v[1] <= 8; }});
  absl::StatusOr<tuner::SearchSpace> space = tuner::SearchSpace::Create(spec);
  ASSERT_TRUE(space.ok()) << space.status();
  ImportOptions options = Local();
  options.validate_tuning = [&](const proto::TuningRecord& record) -> absl::Status {
    absl::StatusOr<tuner::Config> config = space->Parse(record.config());
    if (!config.ok()) return config.status();
    return space->Contains(*config);
  };

  std::unique_ptr<CacheStore> a = *OpenCache({});
  const std::pair<const char*, const char*> configs[] = {{"inside", "mr=4,nr_vectors=2"},
                                                         {"spills", "mr=8,nr_vectors=2"},
                                                         {"odd", "mr=3,nr_vectors=1"}};
  for (const auto& [name, config] : configs) {
    proto::TuningRecord record = MakeTuning(name);
    record.set_space_kind("matmul");
    record.set_config(config);
    ASSERT_TRUE(a->PutTuning(record).ok());
  }
  std::unique_ptr<CacheStore> b = *OpenCache({});
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *ExportBundle(*a, {}), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tuning_accepted, 1);
  ASSERT_EQ(report->rejected.size(), 2u);
  std::map<std::string, std::string> reasons;
  for (const RejectedRecord& r : report->rejected) {
    EXPECT_EQ(r.kind, "tuning");
    reasons[r.key] = r.reason;
  }
  EXPECT_THAT(reasons[TuningKey(TuningParts("spills"))],
              HasSubstr("accumulators must fit in 8 registers"));
  EXPECT_THAT(reasons[TuningKey(TuningParts("odd"))], HasSubstr("mr"));
  absl::StatusOr<std::optional<proto::TuningRecord>> kept = b->GetTuning(TuningParts("inside"));
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->space_kind(), "matmul");
  absl::StatusOr<std::optional<proto::TuningRecord>> spills = b->GetTuning(TuningParts("spills"));
  ASSERT_TRUE(spills.ok());
  EXPECT_FALSE(spills->has_value());
}

}  // namespace
}  // namespace pto::cache
