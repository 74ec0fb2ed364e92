#include "tools/bench/pto_runner.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <sstream>

#include "absl/strings/str_format.h"
#include "tools/pto/tuning_report.h"

namespace pto::bench {

int64_t ArenaBytesFromExecDump(const std::string& dump) {
  std::istringstream lines(dump);
  std::string line;
  int64_t total = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("calls:", 0) == 0) break;
    if (line.rfind("slot", 0) != 0) continue;
    int64_t largest = 0;
    for (size_t open = line.find('['); open != std::string::npos; open = line.find('[', open + 1)) {
      const size_t close = line.find(']', open);
      if (close == std::string::npos) return -1;
      int64_t elements = 0;
      const char* first = line.data() + open + 1;
      const char* last = line.data() + close;
      auto [end, error] = std::from_chars(first, last, elements);
      if (error != std::errc() || end != last) return -1;
      largest = std::max(largest, elements);
    }
    total += largest * static_cast<int64_t>(sizeof(float));
  }
  return total;
}

RuntimeOptions PtoRuntimeOptions(int threads, const PtoTuning& tuning) {
  RuntimeOptions options;
  // A user's PTO_PIN_THREADS applies; a value it does not know is reported and left at the
  // default.
  if (absl::StatusOr<RuntimeOptions> env = RuntimeOptions::FromEnvironment(); env.ok()) {
    options.thread_pinning = env->thread_pinning;
  } else {
    std::fprintf(stderr, "pto bench: %s; the Runtime keeps its default options\n",
                 std::string(env.status().message()).c_str());
  }
  options.intra_op_threads = threads;
  if (tuning.trials_per_kernel > 0) {
    options.tuning.mode = TuningMode::kBlocking;
    options.tuning.trials_per_kernel = tuning.trials_per_kernel;
    options.tuning.seconds_per_kernel = tuning.seconds_per_kernel;
  }
  return options;
}

std::string TuningSummary(const std::vector<KernelTuning>& results, const std::string& function) {
  std::string text;
  for (const KernelTuning& k : results) {
    if (k.function != function) continue;
    const std::string speedup = k.default_seconds > 0 && k.best_seconds > 0
                                    ? absl::StrFormat("%.2fx", k.default_seconds / k.best_seconds)
                                    : "-";
    absl::StrAppendFormat(
        &text, "  %-26s %-40s %9s -> %9s %6s  %3d trials (%d failed)  %5.1f s  %s\n", function,
        k.kernel, tools::FormatSeconds(k.default_seconds), tools::FormatSeconds(k.best_seconds),
        speedup, k.trials, k.failed, k.elapsed_seconds, k.finished ? k.ended : "unfinished");
  }
  return text;
}

absl::StatusOr<Prepared> PreparePto(Runtime& runtime, const CaseSpec& spec,
                                    const std::vector<IoSet>& sets) {
  FunctionOptions options;
  options.constant_inputs = spec.constant_inputs;
  options.automatic_dynamic = false;
  absl::StatusOr<std::unique_ptr<Function>> fn = runtime.JitTraced(
      spec.name, static_cast<int>(spec.inputs.size()), spec.trace, std::move(options));
  if (!fn.ok()) return fn.status();
  struct Views {
    std::vector<TensorView> inputs, outputs;
  };
  auto views = std::make_shared<std::vector<Views>>();
  for (const IoSet& set : sets) {
    Views v;
    for (size_t i = 0; i < spec.inputs.size(); ++i)
      v.inputs.push_back(TensorView::Dense(set.inputs[i], spec.inputs[i].shape));
    for (size_t i = 0; i < spec.outputs.size(); ++i)
      v.outputs.push_back(TensorView::Dense(set.outputs[i], spec.outputs[i]));
    views->push_back(std::move(v));
  }
  std::shared_ptr<Function> function(std::move(*fn));
  absl::Status first = (*function)((*views)[0].inputs, (*views)[0].outputs);
  if (!first.ok()) return first;
  // A no-op after a blocking first call; timing must not overlap it.
  if (absl::Status s = runtime.WaitForTuning(); !s.ok()) return s;
  Prepared prepared;
  std::vector<std::vector<int64_t>> shapes;
  for (const InputSpec& in : spec.inputs) shapes.push_back(in.shape);
  absl::StatusOr<std::string> dump = function->Dump(Stage::kExec, shapes);
  if (dump.ok()) prepared.intermediate_bytes = ArenaBytesFromExecDump(*dump);
  // Each set's data pointers, called through a BoundCall of the first set's views: a loop over
  // fixed shapes calls pto that way (Function::Bind), passing pointers alone.
  absl::StatusOr<BoundCall> bound = function->Bind((*views)[0].inputs, (*views)[0].outputs);
  if (!bound.ok()) return bound.status();
  struct Pointers {
    std::vector<const void*> inputs;
    std::vector<void*> outputs;
  };
  auto pointers = std::make_shared<std::vector<Pointers>>();
  for (const Views& v : *views) {
    Pointers p;
    for (const TensorView& t : v.inputs) p.inputs.push_back(t.data);
    for (const TensorView& t : v.outputs) p.outputs.push_back(t.data);
    pointers->push_back(std::move(p));
  }
  prepared.run = [function, call = *std::move(bound), pointers](int set) {
    // Checked at the first call; a failure here would show as a wrong output.
    (void)call((*pointers)[set].inputs, (*pointers)[set].outputs);
  };
  return prepared;
}

}  // namespace pto::bench
