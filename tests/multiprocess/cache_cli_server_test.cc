// Every `pto cache` subcommand while a server process is using the cache: a
// shared_cache_worker holds the writer role (it compiled three programs and keeps its Runtime
// open); the CLI opens the same path as a reader, and what it writes (gc's evictions, import,
// merge) reaches the server through the inbox. A second worker then runs the same programs and
// compiles nothing: the code the CLI imported while the server ran is used.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/multiprocess/worker_process.h"
#include "tests/tools/run_pto.h"

namespace {

namespace fs = std::filesystem;
using pto::testing::Fields;
using pto::testing::Worker;
using ::testing::HasSubstr;
using Result = pto::testing::PtoResult;

Result Pto(const std::string& args) { return pto::testing::RunPtoBinary(PTO_CLI_PATH, args); }

// Kernel records `pto cache ls` lists ("N kernel records" in its summary line), or -1.
int KernelRecords(const std::string& cache) {
  const Result ls = Pto("cache ls --cache " + cache);
  std::smatch m;
  if (ls.exit_code != 0 ||
      !std::regex_search(ls.output, m, std::regex(R"((\d+) kernel records)"))) {
    return -1;
  }
  return std::stoi(m[1]);
}

// Polls until `pto cache ls` shows `want` kernel records (the server ingests the CLI's batches
// within a few maintenance rounds).
bool WaitForKernelRecords(const std::string& cache, int want) {
  for (int i = 0; i < 50; ++i) {
    if (KernelRecords(cache) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(CacheCliWhileServing, EverySubcommandWorksWhileAServerUsesTheCache) {
  char dir_template[] = "/tmp/pto_cli_server.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string root = dir_template;
  const std::string db = root + "/cache";

  Worker server(db, 0);
  server.Send("phase1");
  const std::string first = server.ReadLine(std::chrono::seconds(180));
  std::map<std::string, std::string> f = Fields(first);
  ASSERT_EQ(f[""], "phase1") << first;
  ASSERT_EQ(f["role"], "writer") << first;
  ASSERT_EQ(f["correct"], "3") << first;
  const int kernels = std::stoi(f["codegen"]);
  ASSERT_GT(kernels, 0);

  Result ls = Pto("cache ls --cache " + db);
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_THAT(ls.output, HasSubstr("scale_shift_relu"));
  EXPECT_EQ(KernelRecords(db), kernels) << ls.output;

  // The server adds its counters every maintenance round (200 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Result stats = Pto("cache stats --json --cache " + db);
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_THAT(stats.output, HasSubstr("\"compiles\":" + std::to_string(kernels) + ","));

  Result verify = Pto("cache verify --cache " + db);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;

  const std::string bundle = root + "/bundle.ptob";
  const std::string key = root + "/signing-key";
  ASSERT_EQ(Pto("cache keygen --out " + key).exit_code, 0);
  Result exported =
      Pto("cache export --with-code --sign " + key + " --out " + bundle + " --cache " + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;

  Result gc = Pto("cache gc --max-bytes 0 --cache " + db);
  ASSERT_EQ(gc.exit_code, 0) << gc.output;
  EXPECT_THAT(gc.output, HasSubstr("evicted " + std::to_string(kernels) + " kernel records"));
  EXPECT_TRUE(WaitForKernelRecords(db, 0)) << "the server never applied the evictions";

  Result imported = Pto("cache import --trust-key " + key + ".pub " + bundle + " --cache " + db);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_THAT(imported.output, HasSubstr(std::to_string(kernels) + " stored"));
  EXPECT_TRUE(WaitForKernelRecords(db, kernels)) << "the server never ingested the import";

  const std::string other = root + "/other";
  ASSERT_EQ(Pto("cache import " + bundle + " --cache " + other).exit_code, 0);
  Result merged = Pto("cache merge " + other + " --cache " + db);
  EXPECT_EQ(merged.exit_code, 0) << merged.output;

  // A new process finds every kernel the CLI imported and compiles nothing.
  Worker client(db, 0);
  client.Send("phase1");
  const std::string second = client.ReadLine(std::chrono::seconds(180));
  f = Fields(second);
  ASSERT_EQ(f[""], "phase1") << second;
  EXPECT_EQ(f["role"], "reader") << second;
  EXPECT_EQ(f["codegen"], "0") << second;
  EXPECT_EQ(f["loaded"], std::to_string(kernels)) << second;
  EXPECT_EQ(f["correct"], "3") << second;

  server.Send("role");
  EXPECT_EQ(server.ReadLine(std::chrono::seconds(10)), "role writer");
  for (Worker* w : {&client, &server}) {
    w->Send("exit");
    EXPECT_EQ(w->Wait(), 0);
  }
  std::printf(
      "[ cli     ] ls, stats, verify, export, gc, import, merge while a server held the "
      "writer role: %d kernels evicted and re-imported; a new process compiled 0\n",
      kernels);
  fs::remove_all(root);
}

}  // namespace
