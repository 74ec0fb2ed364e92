// Several real processes on one cache path (docs/cache.md, "Several processes"): four
// shared_cache_worker processes compile overlapping sets of programs at the same time (phase
// 1); the writer among them is then killed with SIGKILL; the three others run all six
// programs in a fresh Runtime (phase 2) and must compile nothing: every kernel comes from the
// cache, including those only the killed writer compiled. One of them takes the writer role
// over. Every result is checked against the ops/ reference in the workers.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/multiprocess/worker_process.h"

namespace {

namespace fs = std::filesystem;
using pto::testing::Fields;
using pto::testing::Worker;

TEST(SharedCacheTest, FourProcessesShareOneCacheAndTheWriterRoleIsHandedOver) {
  char dir_template[] = "/tmp/pto_shared_cache.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string db = std::string(dir_template) + "/cache";

  std::vector<std::unique_ptr<Worker>> workers;
  for (int id = 0; id < 4; ++id) workers.push_back(std::make_unique<Worker>(db, id));
  for (auto& w : workers) w->Send("phase1");  // all four start compiling at once

  int writer = -1;
  int64_t compiled = 0;
  for (int id = 0; id < 4; ++id) {
    const std::string line = workers[id]->ReadLine(std::chrono::seconds(180));
    std::printf("[ worker %d ] %s\n", id, line.c_str());
    std::map<std::string, std::string> f = Fields(line);
    ASSERT_EQ(f[""], "phase1") << "worker " << id << " printed '" << line << "'";
    EXPECT_EQ(f["correct"], "3") << line;
    EXPECT_EQ(f["persistent"], "1") << line;  // nobody fell back to memory-only
    EXPECT_EQ(f["warnings"], "0") << line;
    EXPECT_TRUE(f["role"] == "writer" || f["role"] == "reader") << line;
    EXPECT_GT(std::stoll(f["codegen"]) + std::stoll(f["loaded"]), 0) << line;
    compiled += std::stoll(f["codegen"]);
    if (f["role"] == "writer") {
      EXPECT_EQ(writer, -1) << "two writers";
      writer = id;
    }
  }
  ASSERT_NE(writer, -1) << "no writer";

  // The writer dies mid-run.
  workers[writer]->Kill();
  std::vector<int> alive;
  for (int id = 0; id < 4; ++id) {
    if (id != writer) alive.push_back(id);
  }
  for (int id : alive) workers[id]->Send("phase2");
  std::string loaded;
  for (int id : alive) {
    const std::string line = workers[id]->ReadLine(std::chrono::seconds(180));
    std::printf("[ worker %d ] %s\n", id, line.c_str());
    std::map<std::string, std::string> f = Fields(line);
    ASSERT_EQ(f[""], "phase2") << "worker " << id << " printed '" << line << "'";
    EXPECT_EQ(f["correct"], "6") << line;
    EXPECT_EQ(f["codegen"], "0") << line;  // compiles nothing: every kernel is in the cache
    EXPECT_EQ(f["persistent"], "1") << line;
    EXPECT_EQ(f["warnings"], "0") << line;
    EXPECT_NE(f["loaded"], "0") << line;
    if (loaded.empty()) loaded = f["loaded"];
    EXPECT_EQ(f["loaded"], loaded) << "every process loads the same kernels";
  }

  // One of the survivors holds the writer role (taken over within a few maintenance rounds).
  int writers = 0;
  for (int attempt = 0; attempt < 50 && writers != 1; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    writers = 0;
    std::string roles;
    for (int id : alive) {
      workers[id]->Send("role");
      const std::string reply = workers[id]->ReadLine(std::chrono::seconds(10));
      writers += reply.find("writer") != std::string::npos;
      roles += " " + std::to_string(id) + ":" + reply;
    }
    std::printf("[ roles    ]%s\n", roles.c_str());
  }
  EXPECT_EQ(writers, 1);
  for (int id : alive) {
    workers[id]->Send("exit");
    EXPECT_EQ(workers[id]->Wait(), 0) << "worker " << id;
  }
  std::printf(
      "[ shared  ] 4 processes, phase 1 compiled %lld kernels in all; writer %d killed; "
      "phase 2: 3 processes x %s kernels loaded, 0 compiled; roles handed over\n",
      static_cast<long long>(compiled), writer, loaded.c_str());
  workers.clear();
  fs::remove_all(dir_template);
}

}  // namespace
