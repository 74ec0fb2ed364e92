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

namespace {

namespace fs = std::filesystem;

class Worker {
 public:
  Worker(const std::string& db, int id) {
    int in[2], out[2];
    EXPECT_EQ(::pipe(in), 0);
    EXPECT_EQ(::pipe(out), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
      const std::string id_text = std::to_string(id);
      ::execl(SHARED_CACHE_WORKER, SHARED_CACHE_WORKER, db.c_str(), id_text.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Worker() {
    if (to_ >= 0) ::close(to_);
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void Send(const std::string& line) {
    const std::string out = line + "\n";
    ASSERT_EQ(::write(to_, out.data(), out.size()), static_cast<ssize_t>(out.size()));
  }
  // The next line the worker prints, or "" after `timeout`.
  std::string ReadLine(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (buffer_.find('\n') == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return "";
      pollfd p = {from_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(from_, buf, sizeof(buf));
      if (n <= 0) return "";
      buffer_.append(buf, static_cast<size_t>(n));
    }
    const size_t end = buffer_.find('\n');
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 1);
    return line;
  }
  void Kill() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    waited_ = true;
  }
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool waited_ = false;
  std::string buffer_;
};

// "phase1 programs=3 correct=3 ..." -> {"programs": "3", ...}; the first word under "".
std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream words(line);
  std::string word;
  words >> fields[""];
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return fields;
}

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
  std::printf("[ shared  ] 4 processes, phase 1 compiled %lld kernels in all; writer %d killed; "
              "phase 2: 3 processes x %s kernels loaded, 0 compiled; roles handed over\n",
              static_cast<long long>(compiled), writer, loaded.c_str());
  workers.clear();
  fs::remove_all(dir_template);
}

}  // namespace
