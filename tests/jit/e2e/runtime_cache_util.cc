#include "tests/jit/e2e/runtime_cache_util.h"

#include <mutex>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::testing {

TraceFn CacheTestProgram() {
  return [](std::span<const Value> v) {
    return std::vector<Value>{linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]) + v[0]};
  };
}

FunctionOptions CacheTestOptions() {
  FunctionOptions options;
  options.dynamic = {{0, 0, Dim("batch", 1, 64)}};
  return options;
}

std::vector<ops::HostTensor> CacheTestInputs(int64_t batch) {
  return {ops::HostTensor::Random({batch, 32}, 1 + batch), ops::HostTensor::Random({64, 32}, 2),
          ops::HostTensor::Random({64}, 3), ops::HostTensor::Random({32, 64}, 4),
          ops::HostTensor::Random({32}, 5)};
}

CacheRun RunCacheTestProgram(const std::string& path, const std::vector<int64_t>& batches,
                             RuntimeOptions options) {
  CacheRun run;
  auto mu = std::make_shared<std::mutex>();
  auto warnings = std::make_shared<std::vector<std::string>>();
  options.cache_path = path;
  options.log_sink = [mu, warnings](LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(*mu);
    if (level >= LogLevel::kWarning) warnings->emplace_back(message);
  };
  std::unique_ptr<Runtime> rt = OpenRuntime(std::move(options));
  EXPECT_NE(rt, nullptr);
  if (rt == nullptr) return run;
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt->JitTraced("cache_mlp", 5, CacheTestProgram(), CacheTestOptions());
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return run;
  for (int64_t batch : batches) {
    const std::vector<ops::HostTensor> in = CacheTestInputs(batch);
    absl::StatusOr<std::vector<ops::HostTensor>> out = RunPto(**fn, in);
    EXPECT_TRUE(out.ok()) << out.status();
    run.outputs.push_back(out.ok() ? *std::move(out) : std::vector<ops::HostTensor>{});
    std::vector<std::vector<int64_t>> shapes;
    for (const ops::HostTensor& t : in) shapes.push_back(t.shape);
    absl::StatusOr<std::string> dump = (*fn)->Dump(Stage::kExec, shapes);
    EXPECT_TRUE(dump.ok()) << dump.status();
    run.exec_dumps.push_back(dump.ok() ? *dump : "");
  }
  run.stats = rt->stats();
  run.events = rt->kernel_events();
  fn->reset();
  rt.reset();
  std::lock_guard<std::mutex> lock(*mu);
  run.warnings = *warnings;
  return run;
}

std::string CompareWithReference(const std::vector<ops::HostTensor>& got, int64_t batch) {
  absl::StatusOr<std::vector<ops::HostTensor>> want =
      RunReference(CacheTestProgram(), CacheTestInputs(batch));
  if (!want.ok()) return std::string(want.status().message());
  const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, 64),
                                          ops::OpTolerance(ir::OpKind::kLayerNorm, 64));
  return Compare(got, *want, tol);
}

std::vector<cache::ScannedRecord> ScanRecords(const std::string& path, cache::RecordKind kind) {
  cache::CacheOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<cache::CacheStore>> store = cache::OpenCache(options);
  EXPECT_TRUE(store.ok()) << store.status();
  std::vector<cache::ScannedRecord> records;
  if (!store.ok()) return records;
  EXPECT_TRUE((*store)->persistent()) << (*store)->Describe();
  absl::Status s = (*store)->Scan(kind, [&](const cache::ScannedRecord& r) {
    EXPECT_EQ(r.problem, "") << r.key;
    records.push_back(r);
  });
  EXPECT_TRUE(s.ok()) << s;
  return records;
}

}  // namespace pto::testing
