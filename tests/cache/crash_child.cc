// crash_child DB_PATH PREFIX SEED: opens the cache at DB_PATH as an embedder would (OpenCache)
// and stores kernel records (and every eighth time a tuning record) named PREFIX-<i> with
// objects of pseudo-random sizes, forever. After each store call returns OK it writes
// "k PREFIX-<i> <size>" or "t PREFIX-<i>" to stdout with one write(2), so the parent knows
// which records were acknowledged when it kills this process. Prints "ready" once the store is
// open; exits 1 if OpenCache fails or the store is not persistent.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "cache/cache_store.h"
#include "tests/cache/cache_test_util.h"

namespace {

void Say(const std::string& line) {
  const std::string out = line + "\n";
  if (::write(STDOUT_FILENO, out.data(), out.size()) != static_cast<ssize_t>(out.size())) {
    std::_Exit(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DB_PATH PREFIX SEED\n", argv[0]);
    return 2;
  }
  pto::cache::CacheOptions options;
  options.path = argv[1];
  auto store = pto::cache::OpenCache(options);
  if (!store.ok() || !(*store)->persistent()) return 1;
  Say("ready");
  std::mt19937 rng(static_cast<uint32_t>(std::atoi(argv[3])));
  std::uniform_int_distribution<size_t> size(64, 8192);
  for (int i = 0;; ++i) {
    const std::string name = std::string(argv[2]) + "-" + std::to_string(i);
    if (i % 8 == 7) {
      if ((*store)->PutTuning(pto::cache::testing::MakeTuning(name)).ok()) Say("t " + name);
      continue;
    }
    const size_t bytes = size(rng);
    if ((*store)->PutKernel(pto::cache::testing::MakeKernel(name, bytes)).ok()) {
      Say("k " + name + " " + std::to_string(bytes));
    }
  }
}
