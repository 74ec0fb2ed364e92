// Fuzz target: `pto cache import` of a bundle file into a real cache database, then what
// `pto cache verify`, `pto cache export` and a cache hit do with what was stored. Any bytes are
// imported or give InvalidArgument/DataLoss with nothing stored; an import accounts for every
// record; code is stored only from a bundle signed by a trusted key, or an unsigned one when
// unsigned code is trusted; everything stored is sound, found by a Get, exports as a bundle
// that verifies, and its object code is loaded by the JIT or refused with a status.
//
// Each input is imported three times:
//  - as it is, trusting a key generated when the target starts (`import --trust-key`): the
//    header, content hash and signature checks see the fuzzer's bytes; no input can carry that
//    key's signature, so no code may be stored;
//  - its payload (the bytes after the header, or the whole input when it has no bundle header)
//    framed again unsigned (FrameBundle) and imported with trust_unsigned_code, so mutations
//    reach the records behind the hash;
//  - that payload signed with the start-up key and imported trusting it: the same report, with
//    the key as the signer.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/bundle.h"
#include "cache/bundle_signature.h"
#include "cache/cache_store.h"
#include "cache/ed25519.h"
#include "device/device_info.h"
#include "jit/codegen/codegen_target.h"
#include "jit/kernel_compiler.h"
#include "jit/orc/orc_engine.h"
#include "proto/bundle.pb.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/pto/tuning_spaces.h"

namespace pto::fuzz {
namespace {

// The import report without its signer, as text: two imports of the same payload give the same.
std::string Outcome(const cache::ImportReport& r) {
  std::string out =
      absl::StrCat("tuning ", r.tuning_accepted, " plans ", r.plans, " kernels ", r.kernels,
                   " untrusted ", r.kernels_untrusted, " other machine ", r.kernels_other_machine);
  for (const cache::RejectedRecord& rejected : r.rejected) {
    absl::StrAppend(&out, "; rejected ", rejected.kind, " ", rejected.key, ": ", rejected.reason);
  }
  return out;
}

int64_t Accepted(const cache::ImportReport& r) { return r.tuning_accepted + r.plans + r.kernels; }

// The database, the JIT engine and the options `pto cache import` uses on this machine.
class Importer {
 public:
  Importer() : device_(device::DetectHost()) {
    absl::StatusOr<std::unique_ptr<cache::CacheStore>> store =
        cache::OpenCache({.path = ScratchDir() + "/cache"});
    FUZZ_CHECK(store.ok() && (*store)->persistent() && (*store)->code_trusted(),
               "a RocksDB cache trusted for code opens");
    store_ = *std::move(store);
    absl::StatusOr<cache::SecretKey> key = cache::SecretKey::Generate();
    FUZZ_CHECK(key.ok(), "a signing key: " + key.status().ToString());
    key_.emplace(*std::move(key));
    absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
        jit::KernelCompiler::Create(device_);
    FUZZ_CHECK(compiler.ok(), "a compiler: " + compiler.status().ToString());
    absl::StatusOr<std::unique_ptr<jit::OrcEngine>> engine =
        jit::OrcEngine::Create(jit::CodegenTarget::FromDevice(device_));
    FUZZ_CHECK(engine.ok(), "a JIT engine: " + engine.status().ToString());
    engine_ = *std::move(engine);
    options_.codegen_fingerprint = device_.CodegenFingerprint();
    options_.compiler_fingerprint = (*compiler)->compiler_fingerprint();
    options_.validate_tuning = [this](const proto::TuningRecord& record) {
      return tools::ValidateTuningRecord(record, device_);
    };
  }

  void FuzzOne(std::string_view bytes) {
    cache::ImportOptions trusting_key = options_;
    trusting_key.trusted_keys = {key_->public_key()};
    if (const std::optional<cache::ImportReport> report = ImportAndVerify(bytes, trusting_key)) {
      FUZZ_CHECK(report->signer != cache::BundleSigner::kTrustedKey,
                 "no input carries the signature of a key made after it");
      FUZZ_CHECK(report->kernels == 0, "no code is stored from a bundle not signed by a "
                                       "trusted key without trust_unsigned_code");
    }

    const std::string_view payload =
        bytes.size() >= cache::kBundleHeaderBytes && bytes.starts_with(cache::kBundleMagic)
            ? bytes.substr(cache::kBundleHeaderBytes)
            : bytes;
    cache::ImportOptions trusting_unsigned = options_;
    trusting_unsigned.trust_unsigned_code = true;
    const std::string unsigned_bundle = Framed(payload, nullptr);
    const std::optional<cache::ImportReport> as_unsigned =
        ImportAndVerify(unsigned_bundle, trusting_unsigned);
    const std::optional<cache::ImportReport> as_signed =
        ImportAndVerify(Framed(payload, &*key_), trusting_key);
    FUZZ_CHECK(as_unsigned.has_value() == as_signed.has_value(),
               "signing a payload does not change whether it imports");
    if (!as_unsigned) return;
    FUZZ_CHECK(as_unsigned->signer == cache::BundleSigner::kUnsigned &&
                   as_unsigned->signer_id.empty(),
               "a bundle framed unsigned imports as unsigned");
    FUZZ_CHECK(as_signed->signer == cache::BundleSigner::kTrustedKey &&
                   as_signed->signer_id == key_->public_key().Id(),
               "a bundle signed by the trusted key imports as signed by it");
    FUZZ_CHECK(Outcome(*as_unsigned) == Outcome(*as_signed),
               "unsigned code trusted and code signed by a trusted key import the same: '" +
                   Outcome(*as_unsigned) + "' and '" + Outcome(*as_signed) + "'");
  }

 private:
  // `payload` as a bundle file; its frame opens as FrameBundle made it.
  static std::string Framed(std::string_view payload, const cache::SecretKey* key) {
    std::string bundle = cache::FrameBundle(payload, key);
    const absl::StatusOr<cache::BundleFrame> frame = cache::OpenBundleFrame(bundle);
    FUZZ_CHECK(frame.ok(), "a framed payload opens: " + frame.status().ToString());
    FUZZ_CHECK(frame->payload == payload && frame->content_hash == cache::BundleContentHash(payload),
               "a framed payload opens with its payload and content hash");
    FUZZ_CHECK(frame->signer.has_value() == (key != nullptr) &&
                   (key == nullptr || frame->signer->SameKey(key->public_key())),
               "a framed payload names its signer");
    return bundle;
  }

  // Imports `bytes`, checks the store and empties it again. The report when it imported.
  std::optional<cache::ImportReport> ImportAndVerify(std::string_view bytes,
                                                     const cache::ImportOptions& options) {
    absl::StatusOr<cache::ImportReport> report = cache::ImportBundle(*store_, bytes, options);
    if (!report.ok()) {
      const absl::StatusCode code = report.status().code();
      FUZZ_CHECK(
          code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kDataLoss,
          "a bundle that is refused is InvalidArgument or DataLoss: " + report.status().ToString());
      VerifyAndEmpty(0);
      return std::nullopt;
    }
    const absl::StatusOr<cache::ParsedBundle> parsed = cache::ParseBundle(bytes);
    FUZZ_CHECK(parsed.ok(), "an imported bundle parses: " + parsed.status().ToString());
    FUZZ_CHECK(Accepted(*report) + report->kernels_untrusted + report->kernels_other_machine +
                       static_cast<int64_t>(report->rejected.size()) ==
                   parsed->bundle.records_size(),
               "the import report accounts for every record");
    FUZZ_CHECK(report->signer == cache::ClassifySigner(parsed->signer, options.trusted_keys),
               "the report names the signer the frame verified");
    VerifyAndEmpty(Accepted(*report));
    return *std::move(report);
  }

  // What `pto cache verify` checks, then what export and a cache hit do; removes every record.
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
          cache::ExportBundle(*store_, {.with_code = true, .sign_with = &*key_});
      FUZZ_CHECK(exported.ok(), "the store exports: " + exported.status().ToString());
      const absl::StatusOr<cache::ParsedBundle> parsed = cache::ParseBundle(*exported);
      FUZZ_CHECK(parsed.ok(), "an exported bundle parses: " + parsed.status().ToString());
      FUZZ_CHECK(parsed->signer.has_value() && parsed->signer->SameKey(key_->public_key()),
                 "an exported bundle is signed by the key it was signed with");
      FUZZ_CHECK(parsed->bundle.records_size() == stored, "the export holds every stored record");
    }
    for (const auto& [kind, key] : keys) {
      const absl::Status removed = store_->Remove(kind, key);
      FUZZ_CHECK(removed.ok(), "a record is removed: " + removed.ToString());
    }
  }

  // A Get by the record's own key parts finds it; a kernel's code is loaded as a cache hit
  // loads it.
  void FindByGet(cache::RecordKind kind, const std::string& payload) {
    bool found = false;
    switch (kind) {
      case cache::RecordKind::kKernel:
        found = Found<proto::KernelRecord>(payload, [&](const cache::KernelKeyParts& p) {
          absl::StatusOr<std::optional<proto::KernelRecord>> got = store_->GetKernel(p);
          if (got.ok() && got->has_value()) Load(**got);
          return got;
        });
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

  // The object check and the JIT linker on the record's code; the code is freed again, never
  // run. A refusal is a status (the Runtime then compiles the kernel itself).
  void Load(const proto::KernelRecord& record) {
    absl::StatusOr<jit::CompiledObject> loaded = engine_->Load(record.object(), record.symbol());
    if (loaded.ok()) {
      FUZZ_CHECK(loaded->entry != nullptr && loaded->symbol == record.symbol(),
                 "loaded code has the record's symbol");
      return;
    }
    FUZZ_CHECK(loaded.status().code() != absl::StatusCode::kAlreadyExists,
               "a kernel's code is loaded while no other copy is: " + loaded.status().ToString());
  }

  device::DeviceInfo device_;
  std::unique_ptr<cache::CacheStore> store_;
  std::optional<cache::SecretKey> key_;
  std::unique_ptr<jit::OrcEngine> engine_;
  cache::ImportOptions options_;
};

Importer& TheImporter() {
  static Importer importer;  // closed at exit, before its scratch directory is removed
  return importer;
}

}  // namespace
}  // namespace pto::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pto::fuzz::TheImporter().FuzzOne(pto::fuzz::AsText(data, size));
  return 0;
}
