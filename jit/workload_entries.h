// A Function's entries of the workload file (RuntimeOptions::record_workload, proto::Workload):
// per trace variant, its graph, and per shape class that ran, the first call's input shapes,
// the calls and their time. `pto tune --workload` replays them.
#ifndef PTO_JIT_WORKLOAD_ENTRIES_H_
#define PTO_JIT_WORKLOAD_ENTRIES_H_

#include <memory>
#include <string>
#include <vector>

#include "jit/dispatch_table.h"
#include "jit/trace_variants.h"
#include "proto/workload.pb.h"

namespace pto::detail {

std::vector<proto::WorkloadEntry> WorkloadEntries(
    const std::string& function, const std::vector<std::unique_ptr<TraceVariant>>& variants,
    const std::vector<std::unique_ptr<CompiledClass>>& classes,
    const std::vector<int>& constant_inputs);

}  // namespace pto::detail

#endif  // PTO_JIT_WORKLOAD_ENTRIES_H_
