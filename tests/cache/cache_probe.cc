// cache_probe DB_PATH NAME: opens the cache at DB_PATH (as OpenCache does for an embedder)
// and looks up the test kernel NAME (tests/cache/cache_test_util.h). Prints one line:
// "hit <symbol>", or "miss"; then "store <describe>" and each warning as "warning <text>".
// Exit code 0 unless OpenCache itself failed.
//
// cache_probe DB_PATH --fill-past-file-size-limit: opens the cache, then limits the size of
// any file this process writes (RLIMIT_FSIZE, as a full disk would: writes fail) and stores 64
// kernels of 16 KiB. Prints how many Puts succeeded, how many are hits afterwards, whether the
// store still calls itself persistent, and the warnings.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <string>

#include "cache/cache_store.h"
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
  if (std::string(argv[2]) == "--fill-past-file-size-limit") {
    signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead
    const rlimit limit = {256 << 10, 256 << 10};
    setrlimit(RLIMIT_FSIZE, &limit);
    int ok = 0, hits = 0;
    for (int i = 0; i < 64; ++i) {
      ok +=
          (*store)->PutKernel(pto::cache::testing::MakeKernel("f" + std::to_string(i), 16384)).ok();
    }
    for (int i = 0; i < 64; ++i) {
      auto r = (*store)->GetKernel(pto::cache::testing::KernelParts("f" + std::to_string(i)));
      hits += r.ok() && r->has_value() &&
              (*r)->object() ==
                  pto::cache::testing::MakeKernel("f" + std::to_string(i), 16384).object();
    }
    std::printf("puts ok %d\nhits %d\npersistent %d\n", ok, hits, (*store)->persistent());
    for (const std::string& w : log.AtLeast(pto::cache::kLogWarning)) {
      std::printf("warning %s\n", w.c_str());
    }
    return 0;
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
