// Fuzz target: decoding a value read from the kernel cache, as a Get and a Scan do (the value
// header and checksum of cache/envelope.h, then the checks of cache/record_check.h), and then
// as its user does: a tuning record's config is read back against a real kernel of each kind
// (jit::ConfigFromRecord, the Runtime's use of a hit) and against the kind-wide space (what
// `pto cache import` checks).
//
// The input is a stored value. It is unwrapped as it is (the header and checksum see the
// fuzzer's bytes: an error is DataLoss, and a value that unwraps is exactly its payload
// wrapped again), and its payload (the bytes after the header, or the whole input when it
// does not start with the magic) is wrapped again with its real checksum and decoded, so
// mutations reach the records behind the checksum.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "cache/envelope.h"
#include "cache/record_check.h"
#include "device/device_info.h"
#include "jit/tuning/kernel_space.h"
#include "jit/tuning/tuning_record.h"
#include "proto/cache.pb.h"
#include "pto/pto.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::fuzz {
namespace {

// A kernel of each kind, lowered for this host from a small program.
class Kernels {
 public:
  Kernels() : device_(device::DetectHost()) {
    AddFirst([](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1])}; },
             {{8, 16}, {16, 8}});
    AddFirst([](std::span<const Value> v) { return std::vector<Value>{gelu(v[0]) + v[1]}; },
             {{4, 24}, {4, 24}});
    AddFirst([](std::span<const Value> v) { return std::vector<Value>{reduce_sum(v[0], 0)}; },
             {{16, 8}});
    AddFirst([](std::span<const Value> v) { return std::vector<Value>{softmax(v[0])}; }, {{4, 40}});
    FUZZ_CHECK(kernels_.size() == 4, "a kernel of each of the 4 kinds");
  }
  const std::map<std::string, ir::Kernel>& by_kind() const { return kernels_; }
  const device::DeviceInfo& device() const { return device_; }

 private:
  void AddFirst(const TraceFn& trace, const std::vector<std::vector<int64_t>>& shapes) {
    absl::StatusOr<jit::LoweredProgram> program = testing::LowerStatic(trace, shapes);
    FUZZ_CHECK(program.ok(), "lowering a small program: " + program.status().ToString());
    for (const ir::KernelCall& call : program->tiles.calls) {
      kernels_.try_emplace(jit::SpaceKind(call.kernel.kind), call.kernel);
    }
  }

  device::DeviceInfo device_;
  std::map<std::string, ir::Kernel> kernels_;
};

const Kernels& TheKernels() {
  static const Kernels kernels;
  return kernels;
}

// Decodes `payload` as a record of `Record`'s kind: under a key it cannot have, then under its
// own key. Returns the record when it is sound under its own key.
template <typename Record>
std::optional<Record> Decode(std::string_view payload, std::string (*key_of)(const Record&)) {
  Record record;
  const std::string wrong_key(cache::kKeyLength, '-');
  const std::string problem = cache::RecordProblem(payload, wrong_key, &record);
  FUZZ_CHECK(!problem.empty(), "no record is sound under a key that is not a key");
  if (problem == "the payload does not parse") return std::nullopt;
  const std::string key = key_of(record);
  Record again;
  const std::string own = cache::RecordProblem(payload, key, &again);
  FUZZ_CHECK(own.empty() == (record.schema_version() == cache::kSchemaVersion),
             "a record that parses is sound under its own key iff its schema version is "
             "current; got '" +
                 own + "'");
  if (!own.empty()) return std::nullopt;
  return again;
}

std::string KernelKeyOf(const proto::KernelRecord& r) {
  return cache::KernelKey(cache::KeyPartsOf(r));
}
std::string PlanKeyOf(const proto::PlanRecord& r) { return cache::PlanKey(cache::KeyPartsOf(r)); }
std::string TuningKeyOf(const proto::TuningRecord& r) {
  return cache::TuningKey(cache::KeyPartsOf(r));
}

// What a Runtime and `pto cache import` do with a sound tuning record.
void UseTuning(const proto::TuningRecord& record) {
  const Kernels& kernels = TheKernels();
  const absl::Status kind_wide = jit::ValidateSpaceConfig(
      record.space_kind(), record.search_space_version(), record.config(), kernels.device());
  for (const auto& [kind, kernel] : kernels.by_kind()) {
    absl::StatusOr<ir::TileConfig> config = jit::ConfigFromRecord(record, kernel, kernels.device());
    if (config.ok() && kind == record.space_kind()) {
      FUZZ_CHECK(kind_wide.ok(),
                 "the kind-wide " + kind +
                     " space accepts what a kernel's space accepts: " + kind_wide.ToString());
    }
  }
}

void DecodeRecords(std::string_view payload) {
  (void)Decode<proto::KernelRecord>(payload, &KernelKeyOf);
  (void)Decode<proto::PlanRecord>(payload, &PlanKeyOf);
  if (std::optional<proto::TuningRecord> tuning =
          Decode<proto::TuningRecord>(payload, &TuningKeyOf)) {
    UseTuning(*tuning);
  }
}

// The value as a Get reads it: an error is DataLoss saying why; a value that unwraps is its
// payload wrapped again, bit for bit.
void UnwrapAsStored(std::string_view value) {
  const absl::StatusOr<std::string_view> payload = cache::UnwrapValue(value);
  if (!payload.ok()) {
    FUZZ_CHECK(payload.status().code() == absl::StatusCode::kDataLoss &&
                   !payload.status().message().empty(),
               "a value that does not unwrap is DataLoss saying why: " +
                   payload.status().ToString());
    FUZZ_CHECK(!cache::IsValueFormat1(value) ||
                   payload.status().message().find("older value format 1") != std::string::npos,
               "a value of format 1 is named as such: " + payload.status().ToString());
    return;
  }
  FUZZ_CHECK(cache::WrapPayload(*payload) == value,
             "a value that unwraps is its payload wrapped again");
  DecodeRecords(*payload);
}

// The value's payload wrapped again with its real checksum, read as a Get reads it.
void Rewrapped(std::string_view value) {
  const std::string_view payload =
      value.size() >= cache::kValueHeaderBytes && value.starts_with("PTOV")
          ? value.substr(cache::kValueHeaderBytes)
          : value;
  const std::string wrapped = cache::WrapPayload(payload);
  FUZZ_CHECK(wrapped.size() == cache::kValueHeaderBytes + payload.size(),
             "a wrapped value is the header and the payload");
  const absl::StatusOr<std::string_view> unwrapped = cache::UnwrapValue(wrapped);
  FUZZ_CHECK(unwrapped.ok() && *unwrapped == payload,
             "a wrapped payload unwraps unchanged: " + unwrapped.status().ToString());
  DecodeRecords(*unwrapped);
}

}  // namespace
}  // namespace pto::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view value = pto::fuzz::AsText(data, size);
  pto::fuzz::UnwrapAsStored(value);
  pto::fuzz::Rewrapped(value);
  return 0;
}
