// Crash safety: "acknowledged" means the store call returned. A child process (crash_child)
// stores records and streams the names of those acknowledged to this process over a pipe; it
// is killed with SIGKILL at a random moment (also while it is still opening or recovering the
// database), 20 times on one database. After each kill the database is reopened and every
// record ever acknowledged must be there, intact and readable.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

using testing::KernelParts;
using testing::MakeKernel;
using testing::MakeTuning;
using testing::TempDir;
using testing::TuningParts;

struct Acked {
  bool kernel = true;
  std::string name;
  size_t bytes = 0;
};

// Runs crash_child for `run_ms` (counted from the fork), kills it with SIGKILL and returns the
// records it acknowledged before that.
std::vector<Acked> RunAndKill(const std::string& db, const std::string& prefix, int seed,
                              int run_ms, bool* was_killed) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    const std::string seed_text = std::to_string(seed);
    ::execl(CRASH_CHILD, CRASH_CHILD, db.c_str(), prefix.c_str(), seed_text.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string received;
  // The run's time counts from the child's first acknowledgement, so the kill lands while it
  // writes however long it takes to start (much longer under a sanitizer).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool writing = false;
  char buf[65536];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd p = {fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;  // the child exited on its own (a failure: it never stops)
    received.append(buf, static_cast<size_t>(n));
    if (!writing) {
      writing = true;
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms);
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  *was_killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  // Lines written before the kill are still in the pipe.
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) received.append(buf, n);
  ::close(fds[0]);

  std::vector<Acked> acked;
  std::istringstream lines(received);
  std::string line;
  while (std::getline(lines, line)) {
    if (lines.eof()) break;  // an incomplete last line (cannot happen: one write per line)
    std::istringstream words(line);
    std::string tag;
    Acked a;
    words >> tag >> a.name;
    if (tag == "k") {
      words >> a.bytes;
      acked.push_back(a);
    } else if (tag == "t") {
      a.kernel = false;
      acked.push_back(a);
    }
  }
  return acked;
}

TEST(CrashTest, EveryAcknowledgedRecordSurvivesSigkill) {
  TempDir dir;
  const std::string db = dir.Sub("cache");
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> run_ms(20, 250);
  std::vector<Acked> all;
  int killed = 0, largest = 0;
  for (int round = 0; round < 20; ++round) {
    bool was_killed = false;
    const int ms = run_ms(rng);
    std::vector<Acked> acked = RunAndKill(db, "r" + std::to_string(round), round, ms, &was_killed);
    killed += was_killed;
    largest = std::max(largest, static_cast<int>(acked.size()));
    all.insert(all.end(), acked.begin(), acked.end());

    CacheOptions options;
    options.path = db;
    absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->persistent()) << "round " << round << ": " << (*store)->Describe();
    ASSERT_EQ((*store)->Role(), "writer");
    int missing = 0;
    for (const Acked& a : all) {
      if (a.kernel) {
        auto k = (*store)->GetKernel(KernelParts(a.name));
        const bool intact =
            k.ok() && k->has_value() && (*k)->object() == MakeKernel(a.name, a.bytes).object();
        missing += !intact;
        EXPECT_TRUE(intact) << "round " << round << " (killed after " << ms << " ms): kernel "
                            << a.name << " acknowledged but "
                            << (k.ok() ? "missing" : "unreadable");
      } else {
        auto t = (*store)->GetTuning(TuningParts(a.name));
        proto::TuningRecord expected = MakeTuning(a.name);
        expected.set_schema_version(kSchemaVersion);
        const bool intact = t.ok() && t->has_value() && testing::SameMessage(**t, expected);
        missing += !intact;
        EXPECT_TRUE(intact) << "round " << round << ": tuning " << a.name;
      }
    }
    EXPECT_EQ((*store)->stats().corrupt, 0) << "round " << round;
    ASSERT_EQ(missing, 0) << "round " << round;
  }
  EXPECT_EQ(killed, 20);
  EXPECT_GT(all.size(), 200u);  // the kills landed while records were being written
  std::printf(
      "[ crash ] 20 SIGKILLs, %zu acknowledged records (at most %d in one run), all "
      "intact after every reopen\n",
      all.size(), largest);
}

}  // namespace
}  // namespace pto::cache
