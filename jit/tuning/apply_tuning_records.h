// Pipeline step apply_tuning_records (jit/pipeline.h): each kernel whose tuning record the
// cache holds, for this shape class on a machine of this performance fingerprint, takes the
// record's config instead of its default; a record that no longer fits the kernel (another
// search-space version, a config outside the space here) is ignored with a warning.
#ifndef PTO_JIT_TUNING_APPLY_TUNING_RECORDS_H_
#define PTO_JIT_TUNING_APPLY_TUNING_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "device/device_info.h"
#include "jit/ir/tile_graph.h"
#include "jit/logger.h"
#include "proto/cache.pb.h"

namespace pto::jit {

struct TuningRecordSource {
  cache::CacheStore* store = nullptr;  // null: no records are applied (retuning)
  std::string shape_class;             // the shape class's canonical text
  std::string performance_fingerprint;
  const device::DeviceInfo* device = nullptr;
  const Logger* logger = nullptr;  // warnings about records ignored (may be null)
  std::string function_name;       // for those warnings
};

struct AppliedTuning {
  std::vector<std::optional<proto::TuningRecord>> records;  // per kernel: the record applied
  int64_t applied = 0;                                      // records applied
  int64_t complete = 0;  // of them, records of searches that ended by themselves
};

AppliedTuning ApplyTuningRecords(ir::TileGraph& tiles, const TuningRecordSource& source);

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_APPLY_TUNING_RECORDS_H_
