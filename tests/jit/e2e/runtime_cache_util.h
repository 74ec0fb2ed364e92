// Helpers of the tests of the Runtime's persistent kernel cache: one program with a dynamic
// batch (so several shape classes), run on a cache directory, with what the Runtime reported.
#ifndef PTO_TESTS_JIT_E2E_RUNTIME_CACHE_UTIL_H_
#define PTO_TESTS_JIT_E2E_RUNTIME_CACHE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "ops/host_tensor.h"
#include "pto/pto.h"

namespace pto::testing {

// linear -> gelu -> linear + residual over x [batch, 32]; batch is dynamic in [1, 64].
TraceFn CacheTestProgram();
FunctionOptions CacheTestOptions();
std::vector<ops::HostTensor> CacheTestInputs(int64_t batch);

struct CacheRun {
  std::vector<std::vector<ops::HostTensor>> outputs;  // per batch
  RuntimeStats stats;
  std::vector<KernelEvent> events;
  std::vector<std::string> warnings;    // log messages at kWarning and above
  std::vector<std::string> exec_dumps;  // Dump(kExec) per batch
};

// Opens a Runtime on `path` (with `options`' other fields), runs the program once per batch
// (one shape class each when the batches fall in different buckets) and closes the Runtime.
CacheRun RunCacheTestProgram(const std::string& path, const std::vector<int64_t>& batches,
                             RuntimeOptions options = {});

// Empty when `got` matches the ops/ reference of the program at this batch, else the mismatch.
std::string CompareWithReference(const std::vector<ops::HostTensor>& got, int64_t batch);

// Every record of `kind` in the database at `path` (opened after the Runtime is gone), as
// serialized payloads by key; problems fail the test.
std::vector<cache::ScannedRecord> ScanRecords(const std::string& path, cache::RecordKind kind);

}  // namespace pto::testing

#endif  // PTO_TESTS_JIT_E2E_RUNTIME_CACHE_UTIL_H_
