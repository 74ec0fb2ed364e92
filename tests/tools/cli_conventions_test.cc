// The conventions every command of the `pto` program follows (tools/pto/command_line.h):
// `--help` and `-h` print the usage on stdout and exit 0; an unknown flag exits 2 with the usage
// on stderr; `pto --version` names pto's, the kernel ABI's and LLVM's versions and the host's ISA.
#include <map>
#include <string>
#include <vector>

#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/kernel_abi.h"
#include "tests/tools/run_pto.h"

namespace pto {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

testing::PtoStreams RunPto(const std::string& args) {
  return testing::RunPtoStreams(PTO_CLI_PATH, args);
}

// Every command ("" is the program itself) and the flags its usage must list.
const std::map<std::string, std::vector<std::string>>& Commands() {
  static const auto* commands = new std::map<std::string, std::vector<std::string>>{
      {"", {"--help", "--version", "demo", "dump", "run", "cache", "tune", "train"}},
      {"demo",
       {"--iterations N", "--threads N", "--cache DIR", "--cache-base DIR", "--kernel-times",
        "--record-workload FILE", "--profile BxS", "--checked-kernels", "--check-numerics",
        "--trace FILE"}},
      {"dump",
       {"GRAPH.pbtxt", "--stage STAGE", "--example NAME", "--input NAME=FILE.npy",
        "--checked-kernels"}},
      {"run",
       {"GRAPH.pbtxt", "--input NAME=FILE.npy", "--output NAME=FILE.npy", "--threads N", "--check",
        "--check-numerics", "--trace FILE"}},
      {"cache", {"ls", "stats", "verify", "gc", "export", "import", "merge", "keygen"}},
      {"cache ls", {"--cache DIR"}},
      {"cache stats", {"--cache DIR", "--json"}},
      {"cache verify", {"--cache DIR", "--repair"}},
      {"cache gc", {"--cache DIR", "--max-bytes N"}},
      {"cache export", {"--cache DIR", "--out FILE", "--with-code", "--sign KEYFILE"}},
      {"cache import", {"FILE", "--cache DIR", "--trust-key PUBFILE", "--trust-unsigned-code"}},
      {"cache merge", {"OTHER_DIR", "--cache DIR"}},
      {"cache keygen", {"--out NAME", "--comment TEXT"}},
      {"train",
       {"--steps N", "--seq N", "--classes N", "--noise X", "--lr X", "--target X",
        "--torch-steps N", "--threads N", "--cache DIR", "--record-workload FILE"}},
      {"tune",
       {"--workload FILE", "--cache DIR", "--budget SECONDS", "--trials-per-kernel N",
        "--strategy S", "--seed S", "--retune", "--svg FILE", "--threads N"}},
  };
  return *commands;
}

std::string Path(const std::string& command) { return command.empty() ? "pto" : "pto " + command; }

TEST(PtoCliConventions, HelpAndDashHPrintTheUsageOnStdout) {
  for (const auto& [command, flags] : Commands()) {
    for (const char* help : {"--help", "-h"}) {
      const testing::PtoStreams r = RunPto(command + " " + help);
      EXPECT_EQ(r.exit_code, 0) << Path(command) << " " << help << ": " << r.err;
      EXPECT_THAT(r.out, HasSubstr("Usage: " + Path(command) + " [OPTIONS]")) << help;
      for (const std::string& flag : flags) {
        EXPECT_THAT(r.out, HasSubstr(flag)) << Path(command) << " " << help;
      }
      EXPECT_EQ(r.err, "") << Path(command) << " " << help;
    }
  }
}

TEST(PtoCliConventions, UnknownFlagExitsTwoWithTheUsageOnStderr) {
  for (const auto& [command, flags] : Commands()) {
    const testing::PtoStreams r = RunPto(command + " --no-such-flag");
    EXPECT_EQ(r.exit_code, 2) << Path(command) << ": " << r.out << r.err;
    EXPECT_THAT(r.err, StartsWith(Path(command) + ": unknown flag --no-such-flag\n"));
    EXPECT_THAT(r.err, HasSubstr("Usage: " + Path(command) + " [OPTIONS]"));
    EXPECT_EQ(r.out, "") << Path(command);
  }
}

TEST(PtoCliConventions, HelpWordPrintsTheUsageOfItsGroup) {
  for (const std::string group : {"", "cache"}) {
    const testing::PtoStreams r = RunPto(group + " help");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Usage: " + Path(group) + " [OPTIONS]"));
    EXPECT_EQ(r.err, "");
  }
}

TEST(PtoCliConventions, AnUnknownFlagIsNamedWithoutItsValue) {
  const testing::PtoStreams r = RunPto("cache ls --colour=red");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("pto cache ls: unknown flag --colour\n"));
}

TEST(PtoCliConventions, CommandMissingOrUnknownExitsTwoWithTheUsage) {
  testing::PtoStreams r = RunPto("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("pto: missing command\n"));
  EXPECT_THAT(r.err, HasSubstr("Usage: pto [OPTIONS]"));
  r = RunPto("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("pto: unknown command 'frobnicate'\n"));
  EXPECT_THAT(r.err, HasSubstr("Usage: pto [OPTIONS]"));
  EXPECT_EQ(r.out, "");
  r = RunPto("cache");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("pto cache: missing subcommand\n"));
  EXPECT_THAT(r.err, HasSubstr("Usage: pto cache [OPTIONS] [COMMAND]"));
  r = RunPto("cache frob");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("pto cache: unknown subcommand 'frob'\n"));
  EXPECT_THAT(r.err, HasSubstr("Usage: pto cache [OPTIONS] [COMMAND]"));
}

// After a command, a word that names another command is the command's argument.
TEST(PtoCliConventions, AWordNamingAnotherCommandIsAnArgument) {
  testing::PtoStreams r = RunPto("run demo");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("pto run: cannot open graph file demo"));
  r = RunPto("cache merge ls --cache /nonexistent/pto_cache");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("pto cache merge: no cache directory at 'ls'"));
}

TEST(PtoCliConventions, VersionNamesPtoTheKernelAbiLlvmAndTheHostIsa) {
  const testing::PtoStreams r = RunPto("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith(std::string("pto ") + PTO_EXPECTED_VERSION + "\n"));
  EXPECT_THAT(r.out, HasSubstr("\nkernel ABI " + std::to_string(jit::kKernelAbiVersion) + "\n"));
  EXPECT_THAT(r.out, HasSubstr(std::string("\nLLVM ") + PTO_EXPECTED_LLVM_VERSION + "\n"));
  const device::DeviceInfo host = device::DetectHost();
  EXPECT_THAT(r.out, HasSubstr("\nhost ISA " + std::string(device::IsaName(host.isa)) + " (" +
                               host.cpu_name + ", " + std::to_string(host.vector_bits) +
                               "-bit vectors)\n"));
}

}  // namespace
}  // namespace pto
