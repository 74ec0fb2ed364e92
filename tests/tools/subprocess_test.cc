// tools/subprocess.h on real processes through /bin/sh: a command's output and exit status, and
// a child talked to line by line (what benches use to take turns with their baselines).
#include "tools/subprocess.h"

#include <unistd.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace pto::tools {
namespace {

TEST(Subprocess, RunCommandJoinsStderrAndReturnsTheExitStatus) {
  std::string out = "before ";
  EXPECT_EQ(RunCommand("echo out; echo err >&2; exit 3", out), 3);
  EXPECT_EQ(out, "before out\nerr\n");
}

// The child answers each line it reads; the parent reads the answer before writing again.
TEST(Subprocess, AChildTakesTurnsLineByLine) {
  std::unique_ptr<Child> child = Child::Start(
      "echo READY; while read line; do echo \"noise\"; echo \"STEP $line\"; done; echo bye >&2");
  ASSERT_NE(child, nullptr);
  std::string line;
  ASSERT_TRUE(child->ReadUntil("READY", line));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(child->WriteLine(std::to_string(i)));
    ASSERT_TRUE(child->ReadUntil("STEP ", line));
    EXPECT_EQ(line, "STEP " + std::to_string(i));
  }
  EXPECT_EQ(child->Finish(), 0);
  EXPECT_EQ(child->output(), "READY\nnoise\nSTEP 0\nnoise\nSTEP 1\nnoise\nSTEP 2\nbye\n");
  EXPECT_FALSE(child->ReadLine(line));
  EXPECT_FALSE(child->WriteLine("late"));
}

// A child that ends early: reads find the end, writes fail (no SIGPIPE), Finish has its status.
TEST(Subprocess, AChildThatExitsEarlyIsSeenToEnd) {
  std::unique_ptr<Child> child = Child::Start("echo partial; exit 7");
  ASSERT_NE(child, nullptr);
  std::string line;
  EXPECT_FALSE(child->ReadUntil("STEP ", line));
  bool wrote = true;
  for (int i = 0; i < 100 && wrote; ++i) wrote = child->WriteLine(std::string(4096, 'x'));
  EXPECT_FALSE(wrote);
  EXPECT_EQ(child->Finish(), 7);
  EXPECT_EQ(child->output(), "partial\n");
}

// CPU time counts the command the shell runs (a loop busy for 0.3 s of its own CPU time, so a
// loaded machine only makes it longer) and stops growing once it sleeps: what the bench's wait
// for quiet between turns reads.
TEST(Subprocess, CpuSecondsCountsTheCommandsThreadsWhileTheyRun) {
  std::unique_ptr<Child> child = Child::Start(
      "/usr/bin/python3 -c 'import time, sys\nt = time.process_time()\nwhile time.process_time() "
      "- t < 0.3: pass\nprint(\"BUSY DONE\", flush=True)\nsys.stdin.readline()'");
  ASSERT_NE(child, nullptr);
  std::string line;
  ASSERT_TRUE(child->ReadUntil("BUSY DONE", line)) << child->output();
  const double busy = child->CpuSeconds();
  EXPECT_GE(busy, 0.25);
  usleep(100000);  // the child waits on its stdin
  EXPECT_LT(child->CpuSeconds() - busy, 0.02);
  EXPECT_EQ(child->Finish(), 0);
  EXPECT_EQ(child->CpuSeconds(), -1);
}

TEST(Subprocess, AMissingProgramExitsWith127) {
  std::unique_ptr<Child> child = Child::Start("/nonexistent/program --flag");
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->Finish(), 127);
  EXPECT_NE(child->output().find("/nonexistent/program"), std::string::npos) << child->output();
}

}  // namespace
}  // namespace pto::tools
