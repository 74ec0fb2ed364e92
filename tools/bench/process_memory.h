// The process's resident memory from /proc/self/status (VmRSS, VmHWM), and a reset of the
// high-water mark (writing "5" to /proc/self/clear_refs), for the training-step benches' peak
// memory: VmHWM during the timed steps minus VmRSS before them.
#ifndef PTO_TOOLS_BENCH_PROCESS_MEMORY_H_
#define PTO_TOOLS_BENCH_PROCESS_MEMORY_H_

#include <cstdint>
#include <string>

namespace pto::bench {

// The field `name` ("VmRSS", "VmHWM") of /proc/self/status in bytes, or -1 when unreadable.
int64_t ProcStatusBytes(const std::string& name);
// Resets VmHWM to the current VmRSS. Returns an empty string, or why it failed.
std::string ResetPeakResident();

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_PROCESS_MEMORY_H_
