// Plan records (proto::PlanRecord in the cache): which kernels a shape class of a graph runs,
// so a later process can load them all before its first call.
#ifndef PTO_JIT_PLAN_RECORDS_H_
#define PTO_JIT_PLAN_RECORDS_H_

#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "jit/logger.h"

namespace pto::detail {

// Writes the record of a shape class just built (or rebuilt with a tuned kernel); a failure is
// logged, never fatal.
void WritePlanRecord(cache::CacheStore& store, const jit::Logger& logger,
                     const std::string& function, const std::string& graph_hash,
                     const std::string& shape_class, std::vector<std::string> kernel_keys);

}  // namespace pto::detail

#endif  // PTO_JIT_PLAN_RECORDS_H_
