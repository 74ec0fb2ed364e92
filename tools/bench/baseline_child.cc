// pto_bench_baseline: one baseline of one pto_bench_kernels case in a process of its own, as
// its users run it: the library's default threading (OpenMP's default wait policy, OpenBLAS's
// default thread timeout), the same operands as the bench's (the same generator and seeds,
// rotated through as many copies). The bench starts it and asks for one repetition at a time,
// taking turns with pto's repetitions.
//
//   pto_bench_baseline --case NAME --column C --threads N [--rotate-bytes B] [--max-copies M]
//                      [--warmup-seconds S] [--min-rep-seconds S]
//
// Protocol on stdout (one line each, flushed): after set-up and warm-up `READY <calls per
// repetition> <intermediate bytes>`, or `MISSING <reason>` when the library is not there,
// `NONE <reason>` when it has no such operation (LIBXSMM at 2 threads), or `ERROR <reason>`; then
// for each `rep` line on stdin one untimed call and a repetition, `REP <seconds per call>`; for
// `output PATH`, copy 0's outputs (after a call on zeroed outputs) written to PATH as raw floats,
// `OUTPUT`. The end of stdin ends it.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tools/bench/bench_case.h"
#include "tools/bench/bench_shapes.h"
#include "tools/bench/buffers.h"
#include "tools/bench/timing.h"

namespace pto::bench {
namespace {

struct Flags {
  std::string name;
  int column = -1;
  int threads = 1;
  int64_t rotate_bytes = 64 << 20;
  int max_copies = 256;
  TimingOptions timing;
};

void Say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

int Run(const Flags& flags) {
  const CaseSpec* spec = nullptr;
  const std::vector<CaseSpec> cases = AllCases();
  for (const CaseSpec& c : cases) {
    if (c.name == flags.name) spec = &c;
  }
  if (spec == nullptr) {
    Say("ERROR no case named '" + flags.name + "'");
    return 2;
  }
  if (flags.column < 0 || flags.column >= kNumColumns || !spec->baselines[flags.column]) {
    Say("ERROR the case has no baseline in column " + std::to_string(flags.column));
    return 2;
  }
  OperandSets operands(*spec, CopiesFor(*spec, flags.rotate_bytes, flags.max_copies));
  const int num_sets = static_cast<int>(operands.sets().size());
  absl::StatusOr<Prepared> prepared = spec->baselines[flags.column](operands.sets(), flags.threads);
  if (!prepared.ok()) {
    const absl::StatusCode code = prepared.status().code();
    const char* word = code == absl::StatusCode::kUnavailable     ? "MISSING "
                       : code == absl::StatusCode::kUnimplemented ? "NONE "
                                                                  : "ERROR ";
    Say(word + std::string(prepared.status().message()));
    return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kUnimplemented ? 0
                                                                                              : 1;
  }
  int set = 0;
  const Contender contender = CallsContender(
      [&] {
        prepared->run(set);
        set = (set + 1) % num_sets;
      },
      flags.timing);
  const int calls = contender.calibrate();
  Say("READY " + std::to_string(calls) + " " + std::to_string(prepared->intermediate_bytes));
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "rep") {
      // Its threads were idle while the others ran: an untimed call first.
      const double seconds = contender.repetition(/*before_others=*/true);
      char text[64];
      std::snprintf(text, sizeof text, "REP %.9e", seconds);
      Say(text);
    } else if (line.rfind("output ", 0) == 0) {
      std::FILE* f = std::fopen(line.substr(7).c_str(), "wb");
      bool ok = f != nullptr;
      for (const std::vector<float>& out : operands.OutputsOf(prepared->run)) {
        ok = ok && std::fwrite(out.data(), sizeof(float), out.size(), f) == out.size();
      }
      if (f != nullptr) ok = std::fclose(f) == 0 && ok;
      Say(ok ? "OUTPUT" : "ERROR cannot write " + line.substr(7));
    } else {
      Say("ERROR unknown request '" + line + "'");
    }
  }
  return 0;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) {
  pto::bench::Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr) {
      std::fprintf(stderr, "pto_bench_baseline: %s needs a value\n", a.c_str());
      return 2;
    }
    ++i;
    if (a == "--case") {
      flags.name = v;
    } else if (a == "--column") {
      flags.column = std::atoi(v);
    } else if (a == "--threads") {
      flags.threads = std::atoi(v);
    } else if (a == "--rotate-bytes") {
      flags.rotate_bytes = std::atoll(v);
    } else if (a == "--max-copies") {
      flags.max_copies = std::atoi(v);
    } else if (a == "--warmup-seconds") {
      flags.timing.warmup_seconds = std::atof(v);
    } else if (a == "--min-rep-seconds") {
      flags.timing.min_rep_seconds = std::atof(v);
    } else {
      std::fprintf(stderr, "pto_bench_baseline: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  if (flags.threads < 1) {
    std::fprintf(stderr, "pto_bench_baseline: --threads must be >= 1\n");
    return 2;
  }
  return pto::bench::Run(flags);
}
