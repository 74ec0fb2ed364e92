#include "tools/bench/asm_dump.h"

#include <cstdio>
#include <memory>
#include <string>

#include "tools/bench/pto_runner.h"

namespace pto::bench {

int DumpAssembly(const std::vector<CaseSpec>& cases, int threads) {
  absl::StatusOr<std::unique_ptr<Runtime>> runtime =
      Runtime::Open(PtoRuntimeOptions(threads, PtoTuning{}));
  if (!runtime.ok()) {
    std::fprintf(stderr, "pto_bench_kernels: %s\n", runtime.status().ToString().c_str());
    return 1;
  }
  int failures = 0;
  for (const CaseSpec& c : cases) {
    FunctionOptions options;
    options.constant_inputs = c.constant_inputs;
    options.automatic_dynamic = false;
    std::vector<std::vector<int64_t>> shapes;
    for (const InputSpec& in : c.inputs) shapes.push_back(in.shape);
    absl::StatusOr<std::unique_ptr<Function>> fn =
        (*runtime)->JitTraced(c.name, static_cast<int>(shapes.size()), c.trace, options);
    absl::StatusOr<std::string> text = fn.ok() ? (*fn)->Dump(Stage::kAsm, shapes) : fn.status();
    if (!text.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), text.status().ToString().c_str());
      ++failures;
      continue;
    }
    std::printf("== %s\n%s", c.name.c_str(), text->c_str());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace pto::bench
