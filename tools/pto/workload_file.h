// Workload files (proto/workload.proto) for `pto tune --workload`: reading and validating them,
// writing them atomically, and the concrete shapes a hand-written entry's ranges are tuned at.
#ifndef PTO_TOOLS_PTO_WORKLOAD_FILE_H_
#define PTO_TOOLS_PTO_WORKLOAD_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/workload.pb.h"

namespace pto::tools {

inline constexpr uint32_t kWorkloadSchemaVersion = 1;
// At most this many shape sets (or model param sets) are tuned per shapes entry.
inline constexpr int kMaxRepresentatives = 64;

// Parses the text-format workload at `path` and validates it. NotFound naming the path when it
// does not exist; a syntax error is InvalidArgument "<path>: line L, column C: <message>";
// a validation error is InvalidArgument "<path>: <what ValidateWorkload says>".
absl::StatusOr<proto::Workload> ReadWorkload(const std::string& path);

// Validates, then writes the text format to a temporary file beside `path` and renames it over
// `path`, so readers never see a partial file.
absl::Status WriteWorkload(const std::string& path, const proto::Workload& workload);

// InvalidArgument naming the entry (by name, or index when unnamed) and the field, e.g.
//   "entry 'mlp': shapes[0].inputs[0].dims[0]: range min 64 > max 16".
// Checks: schema_version is kWorkloadSchemaVersion; entry names non-empty and unique; exactly
// one graph source (an embedded graph passes graph::FromGraphDef; a file path is not opened);
// dims positive, each with exactly one of a size or a full range, min <= max, named dims
// consistent; every shapes entry within kMaxRepresentatives; shape counts and ranks match an
// embedded graph's inputs; constant inputs unique and in range; calls, seconds and weights
// non-negative and finite; models have a name and named, unique params, and no shapes.
absl::Status ValidateWorkload(const proto::Workload& workload);

// Where an entry's graph_file is: relative paths are relative to the workload file's directory.
std::string ResolveGraphFile(const std::string& workload_path, const std::string& graph_file);

// Each entry's share of the run time (summing to 1), by WorkloadEntry.weight's rule; equal
// shares when every weight is 0. Empty for a workload without entries.
std::vector<double> EntryShares(const proto::Workload& workload);

// The sizes a dim range [min, max] (1 <= min <= max) is tuned at, ascending: one per
// power-of-two bucket [2^k, 2^(k+1) - 1] it touches (the buckets of jit/shape_class.h), that
// bucket's geometric middle round(2^k * sqrt(2)) clipped to the range. E.g. [3, 40] ->
// {3, 6, 11, 23, 40}; [70, 100] -> {91}.
std::vector<int64_t> DimRepresentatives(int64_t min, int64_t max);

// One concrete shape per input (by input index).
using ShapeSet = std::vector<std::vector<int64_t>>;

// The concrete shape sets to tune for `shapes`: every combination of the representatives of its
// ranges (DimRepresentatives), a named dim counting once. Ordered like nested loops over the
// ranges in input-then-dim order, the last range innermost. InvalidArgument if `shapes` is
// invalid or the combinations number more than `max_sets`.
absl::StatusOr<std::vector<ShapeSet>> BucketRepresentatives(const proto::WorkloadShapes& shapes,
                                                            int max_sets = kMaxRepresentatives);

// The same for a model's params: each combination as param name -> value.
absl::StatusOr<std::vector<std::map<std::string, int64_t>>> ModelParamRepresentatives(
    const proto::WorkloadModel& model, int max_sets = kMaxRepresentatives);

// Reads a whole file. NotFound (naming the path) when it does not exist.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);
// Writes `contents` to a new temporary file beside `path`, then renames it over `path`
// (cache::fs_safety::WriteFileAtomically: a planted file or link is never written through).
absl::Status WriteTextFile(const std::string& path, std::string_view contents);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_WORKLOAD_FILE_H_
