// Bundles (cache/bundle.h): deterministic bytes between real databases, the content hash,
// code from other hardware or without trust never stored, tuning configs validated.
#include "cache/bundle.h"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/kernel_store.h"
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

// Options under which MakeKernel's records are this machine's.
ImportOptions Local(bool trust_code) {
  ImportOptions options;
  options.trust_code = trust_code;
  options.codegen_fingerprint = KernelParts("x").codegen_fingerprint;
  options.compiler_fingerprint = KernelParts("x").compiler_fingerprint;
  return options;
}

TEST(Bundle, RoundTripsBetweenTwoDatabasesByteIdentically) {
  TempDir dir;
  std::unique_ptr<CacheStore> a = Open(dir.Sub("a"));
  Fill(*a);
  // Hits change usage, which a bundle must not carry.
  ASSERT_TRUE(a->GetKernel(KernelParts("gelu")).ok());
  absl::StatusOr<std::string> first = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(a->GetKernel(KernelParts("matmul")).ok());
  absl::StatusOr<std::string> second = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second) << "exporting the same records twice gives other bytes";

  std::unique_ptr<CacheStore> b = Open(dir.Sub("b"));
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *first, Local(/*trust_code=*/true));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels, 3);
  EXPECT_EQ(report->plans, 2);
  EXPECT_EQ(report->tuning_accepted, 3);
  EXPECT_TRUE(report->rejected.empty());
  absl::StatusOr<std::string> from_b = ExportBundle(*b, {.with_code = true});
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
  absl::StatusOr<proto::Bundle> bundle = ParseBundle(*bytes);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->schema_version(), kBundleSchemaVersion);
  const proto::BundleManifest& m = bundle->manifest();
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
  EXPECT_EQ(bundle->content_hash().size(), 32u);
  // Sorted by kind (kernel, plan, tuning), then key; usage cleared.
  std::string previous;
  for (const proto::BundleRecord& r : bundle->records()) {
    const int rank = r.kind() == "kernel" ? 0 : r.kind() == "plan" ? 1 : 2;
    const std::string order = absl::StrCat(rank, r.key());
    EXPECT_LT(previous, order);
    previous = order;
  }

  absl::StatusOr<std::string> tuning_only = ExportBundle(*a, {});
  ASSERT_TRUE(tuning_only.ok());
  bundle = ParseBundle(*tuning_only);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_FALSE(bundle->manifest().with_code());
  EXPECT_EQ(bundle->manifest().kernel_records(), 0);
  EXPECT_TRUE(bundle->manifest().codegen_fingerprints().empty());
  EXPECT_EQ(bundle->records_size(), 5);
  for (const proto::BundleRecord& r : bundle->records()) EXPECT_NE(r.kind(), "kernel");
}

TEST(Bundle, TamperedContentIsDataLossAndStoresNothing) {
  std::unique_ptr<CacheStore> a = *OpenCache({});
  Fill(*a);
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(bytes.ok());

  // One byte of a kernel's object code.
  std::string flipped = *bytes;
  const size_t at = flipped.find(MakeKernel("matmul").object().substr(100, 16));
  ASSERT_NE(at, std::string::npos);
  flipped[at + 3] ^= 0x40;
  absl::Status s = ParseBundle(flipped).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("content hash mismatch"));

  // A record changed and the bundle re-serialized (still a well-formed bundle).
  proto::Bundle bundle = *ParseBundle(*bytes);
  proto::TuningRecord tuning;
  proto::BundleRecord* last = bundle.mutable_records(bundle.records_size() - 1);
  ASSERT_EQ(last->kind(), "tuning");
  ASSERT_TRUE(tuning.ParseFromString(last->payload()));
  tuning.set_best_seconds(1e-9);
  last->set_payload(tuning.SerializeAsString());
  std::unique_ptr<CacheStore> b = *OpenCache({});
  absl::StatusOr<ImportReport> report =
      ImportBundle(*b, bundle.SerializeAsString(), Local(/*trust_code=*/true));
  EXPECT_EQ(report.status().code(), absl::StatusCode::kDataLoss) << report.status();
  EXPECT_THAT(report.status().message(), HasSubstr("the bundle was modified or damaged"));
  EXPECT_EQ(b->stats().entries, 0);

  bundle = *ParseBundle(*bytes);
  bundle.set_schema_version(kBundleSchemaVersion + 1);
  s = ParseBundle(bundle.SerializeAsString()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("bundle schema version 2 is not supported"));

  for (const std::string& junk : {std::string("hello, world"), std::string(), bytes->substr(7)}) {
    s = ParseBundle(junk).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("not a pto cache bundle"));
  }
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
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(bytes.ok());

  std::unique_ptr<CacheStore> b = Open(dir.Sub("b"));
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *bytes, Local(/*trust_code=*/true));
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
  ImportOptions newer = Local(/*trust_code=*/true);
  newer.compiler_fingerprint = CompilerFingerprint(2, "19.1.7", "O2");
  std::unique_ptr<CacheStore> d = *OpenCache({});
  report = ImportBundle(*d, *ExportBundle(*c, {.with_code = true}), newer);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->kernels, 0);
  EXPECT_EQ(report->kernels_other_machine, 1);
  EXPECT_EQ(d->stats().entries, 0);
}

TEST(Bundle, WithoutTrustNoCodeIsStored) {
  std::unique_ptr<CacheStore> a = *OpenCache({});
  Fill(*a);
  absl::StatusOr<std::string> bytes = ExportBundle(*a, {.with_code = true});
  ASSERT_TRUE(bytes.ok());
  std::unique_ptr<CacheStore> b = *OpenCache({});
  absl::StatusOr<ImportReport> report = ImportBundle(*b, *bytes, Local(/*trust_code=*/false));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels, 0);
  EXPECT_EQ(report->kernels_untrusted, 3);
  EXPECT_EQ(report->tuning_accepted, 3);
  EXPECT_EQ(report->plans, 2);
  absl::StatusOr<std::optional<proto::KernelRecord>> kernel = b->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(kernel.ok());
  EXPECT_FALSE(kernel->has_value());
  EXPECT_EQ(b->stats().entries, 5);
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
  ImportOptions options = Local(/*trust_code=*/false);
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
