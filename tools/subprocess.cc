#include "tools/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

extern char** environ;

namespace pto::tools {

int RunCommand(const std::string& command, std::string& output) {
  // Braces: the whole command's stderr, not its last simple command's.
  std::FILE* pipe = popen(("{ " + command + "\n} 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::unique_ptr<Child> Child::Start(const std::string& command) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) return nullptr;
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDERR_FILENO);
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, const_cast<char*>(command.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  std::FILE* in = rc == 0 ? ::fdopen(to_child[1], "w") : nullptr;
  std::FILE* out = rc == 0 ? ::fdopen(from_child[0], "r") : nullptr;
  if (in == nullptr || out == nullptr) {
    if (in != nullptr)
      std::fclose(in);
    else
      ::close(to_child[1]);
    if (out != nullptr)
      std::fclose(out);
    else
      ::close(from_child[0]);
    if (rc == 0) ::waitpid(pid, nullptr, 0);
    return nullptr;
  }
  return std::unique_ptr<Child>(new Child(pid, in, out));
}

Child::~Child() { Finish(); }

bool Child::WriteLine(const std::string& line) {
  if (in_ == nullptr) return false;
  // A child that exited makes the write fail with EPIPE: ignore the signal for it.
  struct sigaction ignore = {}, previous;
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  const bool ok = std::fputs((line + "\n").c_str(), in_) >= 0 && std::fflush(in_) == 0;
  ::sigaction(SIGPIPE, &previous, nullptr);
  return ok;
}

bool Child::ReadLine(std::string& line) {
  line.clear();
  if (out_ == nullptr) return false;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, out_) != nullptr) {
    line += buf;
    if (!line.empty() && line.back() == '\n') break;
  }
  if (line.empty()) return false;
  output_ += line;
  if (line.back() == '\n') line.pop_back();
  return true;
}

bool Child::ReadUntil(const std::string& prefix, std::string& line) {
  while (ReadLine(line)) {
    if (line.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

namespace {

// The CPU seconds of process `pid`'s threads (but thread `skip`), and with `descend` of its
// descendants' too (the shell's command runs as its child): /proc/PID/task/TID/schedstat starts
// with the nanoseconds the thread ran, and /proc/PID/task/TID/children lists the processes it
// started.
double TasksCpuSeconds(pid_t pid, pid_t skip, bool descend, int depth = 0) {
  std::error_code error;
  double total = 0;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    if (task.path().filename() == std::to_string(skip)) continue;
    std::ifstream stat(task.path() / "schedstat");
    long long ns = 0;
    if (stat >> ns) total += static_cast<double>(ns) * 1e-9;
    if (!descend || depth >= 8) continue;
    std::ifstream children(task.path() / "children");
    pid_t child = 0;
    while (children >> child) total += TasksCpuSeconds(child, skip, descend, depth + 1);
  }
  return total;
}

}  // namespace

double Child::CpuSeconds() const {
  if (finished_) return -1;
  return TasksCpuSeconds(pid_, /*skip=*/0, /*descend=*/true);
}

int Child::Finish() {
  if (finished_) return status_;
  finished_ = true;
  if (in_ != nullptr) std::fclose(in_);
  in_ = nullptr;
  std::string line;
  while (ReadLine(line)) {
  }
  if (out_ != nullptr) std::fclose(out_);
  out_ = nullptr;
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status)) status_ = WEXITSTATUS(status);
  return status_;
}

double WaitForQuiet(const std::vector<Child*>& children) {
  using Clock = std::chrono::steady_clock;
  const pid_t self = ::getpid();
  const pid_t caller = static_cast<pid_t>(::gettid());
  const auto cpu = [&] {
    double total = 0;
    for (const Child* c : children) {
      if (c != nullptr) total += std::max(0.0, c->CpuSeconds());
    }
    // This process's other threads too (a thread pool spinning after its work), not the caller.
    return total + TasksCpuSeconds(self, caller, /*descend=*/false);
  };
  const Clock::time_point start = Clock::now();
  double before = cpu();
  while (Clock::now() - start < std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double now = cpu();
    if (now - before < 0.25e-3) break;
    before = now;
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string ProgramDirectory() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  path[n] = 0;
  const std::string self(path);
  return self.substr(0, self.rfind('/'));
}

}  // namespace pto::tools
