// Merging one cache into another (`pto cache merge`): kernel and plan records the destination
// lacks are copied (kernel records only from a source trusted for code: object code never
// leaves a cache another user could have changed); for tuning records under the same key the one
// with the larger speed-up over its default config wins (default_seconds / best_seconds, both
// measured in the same run, so the ratio is comparable across runs and machines where absolute
// times are not).
#ifndef PTO_CACHE_MERGE_H_
#define PTO_CACHE_MERGE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "cache/cache_store.h"
#include "proto/cache.pb.h"

namespace pto::cache {

struct MergeReport {
  int64_t kernels_copied = 0, kernels_present = 0;
  // Sound kernel records of `src` not copied because `src` is not trusted for code, and why.
  int64_t kernels_refused = 0;
  std::string kernels_refused_why;
  int64_t plans_copied = 0, plans_present = 0;
  int64_t tuning_copied = 0;    // keys `dst` did not have (or had only an unsound record)
  int64_t tuning_replaced = 0;  // `src`'s record had the larger speed-up
  int64_t tuning_kept = 0;      // `dst`'s record had a speed-up at least as large
  int64_t skipped_unsound = 0;  // records of `src` that fail the checks a Get makes
};

// default_seconds / best_seconds; 0 when either is not positive (not a usable measurement).
double SpeedUp(const proto::TuningRecord& record);

// Copies `src` into `dst` as described above; `src` is only read (Scan: its hit counts are not
// touched). An error if a scan or a write fails; what was merged before it stays.
absl::StatusOr<MergeReport> MergeInto(CacheStore& dst, CacheStore& src);

}  // namespace pto::cache

#endif  // PTO_CACHE_MERGE_H_
