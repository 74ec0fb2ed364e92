#include "jit/plan_records.h"

#include "absl/strings/str_cat.h"
#include "proto/cache.pb.h"

namespace pto::detail {

void WritePlanRecord(cache::CacheStore& store, const jit::Logger& logger,
                     const std::string& function, const std::string& graph_hash,
                     const std::string& shape_class, std::vector<std::string> kernel_keys) {
  proto::PlanRecord record;
  record.set_graph_hash(graph_hash);
  record.set_shape_class(shape_class);
  for (std::string& key : kernel_keys) record.add_kernel_keys(std::move(key));
  record.set_graph_name(function);
  if (absl::Status s = store.PutPlan(record); !s.ok()) {
    logger.Log(LogLevel::kWarning,
               absl::StrCat("pto: cannot write the plan record of '", function, "' for ",
                            shape_class, " to the kernel cache: ", s.ToString()));
  }
}

}  // namespace pto::detail
