// Fuzz target: `pto cache import` of a bundle into a real cache database, then what
// `pto cache verify` and `pto cache export` do with it. Any bytes are imported or give
// InvalidArgument/DataLoss with nothing stored; an import accounts for every record; everything
// stored is sound, found by a Get, and exports as a bundle that parses.
//
// The input is a bundle. When it parses, it is also imported with its content hash recomputed,
// so the fuzzer gets past the hash to the records.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cache/bundle.h"
#include "cache/kernel_store.h"
#include "device/device_info.h"
#include "jit/kernel_compiler.h"
#include "proto/bundle.pb.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/pto/tuning_spaces.h"

namespace pto::fuzz {
namespace {

// The database and the options `pto cache import --trust-code` uses on this machine.
class Importer {
 public:
  Importer() : device_(device::DetectHost()) {
    absl::StatusOr<std::unique_ptr<cache::CacheStore>> store =
        cache::OpenCache({.path = ScratchDir() + "/cache"});
    FUZZ_CHECK(store.ok() && (*store)->persistent(), "a RocksDB cache opens");
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
        jit::KernelCompiler::Create(device_);
    FUZZ_CHECK(compiler.ok(), "a compiler: " + compiler.status().ToString());
    options_.trust_code = true;
    options_.codegen_fingerprint = device_.CodegenFingerprint();
    options_.compiler_fingerprint = (*compiler)->compiler_fingerprint();
    options_.validate_tuning = [this](const proto::TuningRecord& record) {
      return tools::ValidateTuningRecord(record, device_);
    };
  }

  // Imports `bytes`, checks the store, and empties it again.
  void ImportAndVerify(const std::string& bytes) {
    const absl::StatusOr<cache::ImportReport> report =
        cache::ImportBundle(*store_, bytes, options_);
    if (!report.ok()) {
      const absl::StatusCode code = report.status().code();
      FUZZ_CHECK(
          code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kDataLoss,
          "a bundle that is refused is InvalidArgument or DataLoss: " + report.status().ToString());
    } else {
      CheckReport(bytes, *report);
    }
    VerifyAndEmpty(report.ok() ? Accepted(*report) : 0);
  }

 private:
  static int64_t Accepted(const cache::ImportReport& r) {
    return r.tuning_accepted + r.plans + r.kernels;
  }

  static void CheckReport(const std::string& bytes, const cache::ImportReport& report) {
    proto::Bundle bundle;
    FUZZ_CHECK(bundle.ParseFromString(bytes), "an imported bundle parses");
    FUZZ_CHECK(Accepted(report) + report.kernels_untrusted + report.kernels_other_machine +
                       static_cast<int64_t>(report.rejected.size()) ==
                   bundle.records_size(),
               "the import report accounts for every record");
  }

  // What `pto cache verify` checks, then what export does; removes every record.
  void VerifyAndEmpty(int64_t accepted) {
    int64_t stored = 0;
    std::vector<std::pair<cache::RecordKind, std::string>> keys;
    for (const cache::RecordKind kind :
         {cache::RecordKind::kKernel, cache::RecordKind::kPlan, cache::RecordKind::kTuning}) {
      const absl::Status scanned = store_->Scan(kind, [&](const cache::ScannedRecord& r) {
        FUZZ_CHECK(r.problem.empty(), "an imported record is sound: " + r.problem);
        keys.emplace_back(kind, r.key);
        ++stored;
        FindByGet(kind, r.payload);
      });
      FUZZ_CHECK(scanned.ok(), "the store scans: " + scanned.ToString());
    }
    FUZZ_CHECK(stored <= accepted, "no more records are stored than were accepted");
    if (stored > 0) {
      const absl::StatusOr<std::string> exported =
          cache::ExportBundle(*store_, {.with_code = true});
      FUZZ_CHECK(exported.ok(), "the store exports: " + exported.status().ToString());
      const absl::StatusOr<proto::Bundle> parsed = cache::ParseBundle(*exported);
      FUZZ_CHECK(parsed.ok(), "an exported bundle parses: " + parsed.status().ToString());
      FUZZ_CHECK(parsed->records_size() == stored, "the export holds every stored record");
    }
    for (const auto& [kind, key] : keys) {
      const absl::Status removed = store_->Remove(kind, key);
      FUZZ_CHECK(removed.ok(), "a record is removed: " + removed.ToString());
    }
  }

  // A Get by the record's own key parts finds it.
  void FindByGet(cache::RecordKind kind, const std::string& payload) {
    bool found = false;
    switch (kind) {
      case cache::RecordKind::kKernel:
        found = Found<proto::KernelRecord>(
            payload, [&](const cache::KernelKeyParts& p) { return store_->GetKernel(p); });
        break;
      case cache::RecordKind::kPlan:
        found = Found<proto::PlanRecord>(
            payload, [&](const cache::PlanKeyParts& p) { return store_->GetPlan(p); });
        break;
      case cache::RecordKind::kTuning:
        found = Found<proto::TuningRecord>(
            payload, [&](const cache::TuningKeyParts& p) { return store_->GetTuning(p); });
        break;
    }
    FUZZ_CHECK(found, std::string("a stored ") + cache::RecordKindName(kind) +
                          " record is found by a Get of its key parts");
  }

  template <typename Record, typename GetFn>
  static bool Found(const std::string& payload, const GetFn& get) {
    Record record;
    FUZZ_CHECK(record.ParseFromString(payload), "a sound record parses");
    const auto got = get(cache::KeyPartsOf(record));
    return got.ok() && got->has_value();
  }

  device::DeviceInfo device_;
  std::unique_ptr<cache::CacheStore> store_;
  cache::ImportOptions options_;
};

Importer& TheImporter() {
  static Importer importer;  // closed at exit, before its scratch directory is removed
  return importer;
}

}  // namespace
}  // namespace pto::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(pto::fuzz::AsText(data, size));
  pto::fuzz::TheImporter().ImportAndVerify(bytes);
  pto::proto::Bundle bundle;
  if (bundle.ParseFromString(bytes)) {
    bundle.set_content_hash(pto::cache::BundleContentHash(bundle));
    pto::fuzz::TheImporter().ImportAndVerify(bundle.SerializeAsString());
  }
  return 0;
}
