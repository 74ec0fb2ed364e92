// cache_probe DB_PATH NAME: opens the cache at DB_PATH (as OpenCache does for an embedder)
// and looks up the test kernel NAME (tests/cache/cache_test_util.h). Prints one line:
// "hit <symbol>", or "miss"; then "store <describe>" and each warning as "warning <text>".
// Exit code 0 unless OpenCache itself failed.
#include <cstdio>
#include <string>

#include "cache/kernel_store.h"
#include "tests/cache/cache_test_util.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DB_PATH KERNEL_NAME\n", argv[0]);
    return 2;
  }
  pto::cache::testing::LogCapture log;
  pto::cache::CacheOptions options;
  options.path = argv[1];
  options.log = log.Sink();
  auto store = pto::cache::OpenCache(options);
  if (!store.ok()) {
    std::fprintf(stderr, "OpenCache: %s\n", store.status().ToString().c_str());
    return 1;
  }
  auto record = (*store)->GetKernel(pto::cache::testing::KernelParts(argv[2]));
  if (record.ok() && record->has_value()) {
    std::printf("hit %s\n", (*record)->symbol().c_str());
  } else {
    std::printf("miss\n");
  }
  std::printf("store %s\n", (*store)->Describe().c_str());
  for (const std::string& w : log.AtLeast(pto::cache::kLogWarning)) {
    std::printf("warning %s\n", w.c_str());
  }
  return 0;
}
