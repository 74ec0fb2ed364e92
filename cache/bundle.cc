#include "cache/bundle.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cache/record_check.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace pto::cache {
namespace {

// Protobuf's deterministic serialization (stable field order; the messages have no maps, but
// the flag makes the intent explicit).
std::string Serialize(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}


std::vector<std::string> Sorted(const std::set<std::string>& values) {
  return std::vector<std::string>(values.begin(), values.end());
}

// A Put's InvalidArgument (a record missing a required field) rejects the record; any other
// error is the store failing.
absl::Status StoreOrReject(absl::Status put, const proto::BundleRecord& record,
                           ImportReport* report, int64_t* count) {
  if (put.ok()) {
    ++*count;
    return absl::OkStatus();
  }
  if (put.code() != absl::StatusCode::kInvalidArgument) return put;
  report->rejected.push_back({record.kind(), record.key(), std::string(put.message())});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ExportBundle(CacheStore& store, const ExportOptions& options) {
  if (options.with_code && !store.code_trusted()) {
    return absl::FailedPreconditionError(
        absl::StrCat("object code is never exported from a cache that is not trusted for code: ",
                     store.WhyCodeUntrusted()));
  }
  proto::Bundle bundle;
  proto::BundleManifest& manifest = *bundle.mutable_manifest();
  manifest.set_pto_version(std::string(PtoVersion()));
  manifest.set_with_code(options.with_code);
  std::set<std::string> codegen, compiler, performance;
  std::vector<RecordKind> kinds = {RecordKind::kPlan, RecordKind::kTuning};
  if (options.with_code) kinds.insert(kinds.begin(), RecordKind::kKernel);
  for (const RecordKind kind : kinds) {
    std::vector<proto::BundleRecord> records;
    absl::Status scanned = store.Scan(kind, [&](const ScannedRecord& scanned) {
      if (!scanned.problem.empty()) return;
      proto::BundleRecord record;
      record.set_kind(RecordKindName(kind));
      record.set_key(scanned.key);
      if (kind == RecordKind::kKernel) {
        proto::KernelRecord kernel;
        if (!kernel.ParseFromString(scanned.payload)) return;
        kernel.clear_hits();  // usage belongs to a machine, not to the record
        kernel.clear_last_used_unix_ms();
        codegen.insert(kernel.codegen_fingerprint());
        compiler.insert(kernel.compiler_fingerprint());
        record.set_payload(Serialize(kernel));
      } else if (kind == RecordKind::kTuning) {
        proto::TuningRecord tuning;
        if (!tuning.ParseFromString(scanned.payload)) return;
        performance.insert(tuning.performance_fingerprint());
        record.set_payload(Serialize(tuning));
      } else {
        proto::PlanRecord plan;
        if (!plan.ParseFromString(scanned.payload)) return;
        record.set_payload(Serialize(plan));
      }
      records.push_back(std::move(record));
    });
    if (!scanned.ok()) return scanned;
    // Scan lists the writable layer, then the base: sort the kind as a whole.
    std::sort(records.begin(), records.end(),
              [](const proto::BundleRecord& a, const proto::BundleRecord& b) {
                return a.key() < b.key();
              });
    const auto count = static_cast<int64_t>(records.size());
    if (kind == RecordKind::kKernel) manifest.set_kernel_records(count);
    if (kind == RecordKind::kPlan) manifest.set_plan_records(count);
    if (kind == RecordKind::kTuning) manifest.set_tuning_records(count);
    for (proto::BundleRecord& record : records) *bundle.add_records() = std::move(record);
  }
  for (const std::string& f : Sorted(codegen)) manifest.add_codegen_fingerprints(f);
  for (const std::string& f : Sorted(compiler)) manifest.add_compiler_fingerprints(f);
  for (const std::string& f : Sorted(performance)) manifest.add_performance_fingerprints(f);
  return FrameBundle(Serialize(bundle), options.sign_with);
}

absl::StatusOr<ParsedBundle> ParseBundle(std::string_view bytes) {
  absl::StatusOr<BundleFrame> frame = OpenBundleFrame(bytes);
  if (!frame.ok()) return frame.status();
  ParsedBundle parsed;
  parsed.content_hash = std::move(frame->content_hash);
  parsed.signer = std::move(frame->signer);
  proto::Bundle& bundle = parsed.bundle;
  if (frame->payload.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !bundle.ParseFromArray(frame->payload.data(), static_cast<int>(frame->payload.size()))) {
    return absl::InvalidArgumentError(absl::StrCat("the bundle's payload (", frame->payload.size(),
                                                   " bytes) is not a pto.proto.Bundle"));
  }
  int64_t counts[3] = {0, 0, 0};
  for (const proto::BundleRecord& record : bundle.records()) {
    for (const RecordKind kind : {RecordKind::kKernel, RecordKind::kPlan, RecordKind::kTuning}) {
      if (record.kind() == RecordKindName(kind)) ++counts[static_cast<int>(kind)];
    }
  }
  const proto::BundleManifest& m = bundle.manifest();
  if (counts[0] != m.kernel_records() || counts[1] != m.plan_records() ||
      counts[2] != m.tuning_records()) {
    return absl::DataLossError(
        absl::StrCat("bundle manifest counts (", m.kernel_records(), " kernel, ", m.plan_records(),
                     " plan, ", m.tuning_records(), " tuning) do not match its records (",
                     counts[0], ", ", counts[1], ", ", counts[2], ")"));
  }
  return parsed;
}

absl::StatusOr<ImportReport> ImportBundle(CacheStore& store, std::string_view bytes,
                                          const ImportOptions& options) {
  absl::StatusOr<ParsedBundle> parsed = ParseBundle(bytes);
  if (!parsed.ok()) return parsed.status();
  ImportReport report;
  report.signer = ClassifySigner(parsed->signer, options.trusted_keys);
  if (parsed->signer.has_value()) report.signer_id = parsed->signer->Id();
  const bool code_trusted =
      report.signer == BundleSigner::kTrustedKey ||
      (report.signer == BundleSigner::kUnsigned && options.trust_unsigned_code);
  auto reject = [&](const proto::BundleRecord& record, std::string reason) {
    report.rejected.push_back({record.kind(), record.key(), std::move(reason)});
  };
  for (const proto::BundleRecord& record : parsed->bundle.records()) {
    absl::Status stored = absl::OkStatus();
    if (record.kind() == RecordKindName(RecordKind::kKernel)) {
      proto::KernelRecord kernel;
      if (std::string p = RecordProblem(record.payload(), record.key(), &kernel); !p.empty()) {
        reject(record, std::move(p));
      } else if (!code_trusted) {
        ++report.kernels_untrusted;
      } else if (kernel.codegen_fingerprint() != options.codegen_fingerprint ||
                 kernel.compiler_fingerprint() != options.compiler_fingerprint) {
        ++report.kernels_other_machine;
      } else {
        stored = StoreOrReject(store.PutKernel(kernel), record, &report, &report.kernels);
      }
    } else if (record.kind() == RecordKindName(RecordKind::kPlan)) {
      proto::PlanRecord plan;
      if (std::string p = RecordProblem(record.payload(), record.key(), &plan); !p.empty()) {
        reject(record, std::move(p));
      } else {
        stored = StoreOrReject(store.PutPlan(plan), record, &report, &report.plans);
      }
    } else if (record.kind() == RecordKindName(RecordKind::kTuning)) {
      proto::TuningRecord tuning;
      if (std::string p = RecordProblem(record.payload(), record.key(), &tuning); !p.empty()) {
        reject(record, std::move(p));
      } else if (absl::Status valid =
                     options.validate_tuning ? options.validate_tuning(tuning) : absl::OkStatus();
                 !valid.ok()) {
        reject(record, std::string(valid.message()));
      } else {
        stored = StoreOrReject(store.PutTuning(tuning), record, &report, &report.tuning_accepted);
      }
    } else {
      reject(record, absl::StrCat("unknown record kind '", record.kind(), "'"));
    }
    if (!stored.ok()) return stored;
  }
  return report;
}

}  // namespace pto::cache
