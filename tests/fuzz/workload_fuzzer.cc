// Fuzz target: workload files (tools/pto/workload_file.h), as `pto tune --workload` reads them.
// Any text parses and validates or gives InvalidArgument; a valid workload's representatives
// are within the documented bounds, its entry shares sum to 1, and it is written and read back
// unchanged.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "jit/graph/graph_text.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/pto/workload_file.h"

namespace pto::fuzz {
namespace {

// Every dim of every set is positive and each set has one shape per input, of its rank.
void CheckShapeSets(const proto::WorkloadShapes& shapes, const std::vector<tools::ShapeSet>& sets) {
  FUZZ_CHECK(!sets.empty() && sets.size() <= static_cast<size_t>(tools::kMaxRepresentatives),
             "a valid shapes entry has 1 to kMaxRepresentatives shape sets");
  for (const tools::ShapeSet& set : sets) {
    FUZZ_CHECK(set.size() == static_cast<size_t>(shapes.inputs_size()),
               "a shape set has one shape per input");
    for (int i = 0; i < shapes.inputs_size(); ++i) {
      const proto::WorkloadInput& input = shapes.inputs(i);
      FUZZ_CHECK(set[i].size() == static_cast<size_t>(input.dims_size()),
                 "a shape has its input's rank");
      for (int j = 0; j < input.dims_size(); ++j) {
        const proto::WorkloadDim& dim = input.dims(j);
        const int64_t v = set[i][j];
        FUZZ_CHECK(v > 0, "representative sizes are positive");
        if (dim.has_size()) FUZZ_CHECK(v == dim.size(), "a fixed size is kept");
        if (dim.has_min()) FUZZ_CHECK(v >= dim.min() && v <= dim.max(), "within the range");
      }
    }
  }
}

void CheckValid(const proto::Workload& workload) {
  const std::vector<double> shares = tools::EntryShares(workload);
  FUZZ_CHECK(shares.size() == static_cast<size_t>(workload.entries_size()), "one share per entry");
  double sum = 0;
  for (double share : shares) {
    FUZZ_CHECK(std::isfinite(share) && share >= 0, "shares are finite and non-negative");
    sum += share;
  }
  FUZZ_CHECK(shares.empty() || std::abs(sum - 1) < 1e-9, "shares sum to 1");
  for (const proto::WorkloadEntry& entry : workload.entries()) {
    for (const proto::WorkloadShapes& shapes : entry.shapes()) {
      absl::StatusOr<std::vector<tools::ShapeSet>> sets = tools::BucketRepresentatives(shapes);
      FUZZ_CHECK(sets.ok(),
                 "a valid entry's shapes have representatives: " + sets.status().ToString());
      CheckShapeSets(shapes, *sets);
    }
    if (entry.has_model()) {
      absl::StatusOr<std::vector<std::map<std::string, int64_t>>> params =
          tools::ModelParamRepresentatives(entry.model());
      FUZZ_CHECK(params.ok(),
                 "a valid model has param representatives: " + params.status().ToString());
      FUZZ_CHECK(!params->empty() && params->size() <= tools::kMaxRepresentatives,
                 "a valid model has 1 to kMaxRepresentatives param sets");
    }
  }
  const std::string path = ScratchDir() + "/workload.pbtxt";
  const absl::Status written = tools::WriteWorkload(path, workload);
  FUZZ_CHECK(written.ok(), "a valid workload is written: " + written.ToString());
  const absl::StatusOr<proto::Workload> back = tools::ReadWorkload(path);
  FUZZ_CHECK(back.ok(), "a written workload reads back: " + back.status().ToString());
  // A NaN (an embedded graph's eps may be one) reads back as a NaN.
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  std::string difference;
  differencer.ReportDifferencesToString(&difference);
  FUZZ_CHECK(differencer.Compare(workload, *back),
             "a written workload reads back unchanged: " + difference);
}

}  // namespace
}  // namespace pto::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pto::proto::Workload workload;
  const absl::Status parsed =
      pto::graph::ParseTextProto(pto::fuzz::AsText(data, size), "workload", &workload);
  if (!parsed.ok()) return 0;
  const absl::Status valid = pto::tools::ValidateWorkload(workload);
  if (!valid.ok()) {
    FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument,
               "an invalid workload is InvalidArgument: " + valid.ToString());
    return 0;
  }
  pto::fuzz::CheckValid(workload);
  return 0;
}
