// pto: the command-line program. `pto demo`, `pto dump`, `pto run`, `pto cache`, `pto tune`.
#include <cstdio>
#include <string>
#include <vector>

#include "tools/pto/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: pto <command> [options]\n"
    "  demo [--iterations N] [--threads N] [--cache DIR] [--cache-base DIR] [--kernel-times]\n"
    "       [--record-workload FILE] [--profile BATCHxSEQ] [--checked-kernels]\n"
    "                                          a transformer block over varying shapes;\n"
    "                                          --kernel-times: each kernel's compile or load;\n"
    "                                          --record-workload: its shapes, for pto tune;\n"
    "                                          --profile: each kernel's time at that shape;\n"
    "                                          --checked-kernels: bounds-checked kernels\n"
    "  dump --stage=tensor|tile|block|exec|llvm|asm (GRAPH.pbtxt --input NAME=FILE.npy... |\n"
    "       --example matmul|mlp|attention|demo) [--checked-kernels]\n"
    "                                          print one level of the pipeline\n"
    "  run GRAPH.pbtxt --input NAME=FILE.npy ... --output NAME=FILE.npy ...\n"
    "                                          run a GraphDef on .npy inputs\n"
    "  cache ls|stats|verify|gc|export|import|merge|keygen [--cache DIR]\n"
    "                                          inspect and ship the kernel cache\n"
    "                                          (pto cache help)\n"
    "  tune --workload FILE [--cache DIR] [--budget SECONDS] [--trials-per-kernel N] ...\n"
    "                                          tune a workload's kernels into the cache\n"
    "                                          (pto tune --help)\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "demo") return pto::tools::DemoCommand(args);
  if (command == "dump") return pto::tools::DumpCommand(args);
  if (command == "run") return pto::tools::RunCommand(args);
  if (command == "cache") return pto::tools::CacheCommand(args);
  if (command == "tune") return pto::tools::TuneCommand(args);
  if (command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "pto: unknown command '%s'\n%s", command.c_str(), kUsage);
  return 2;
}
