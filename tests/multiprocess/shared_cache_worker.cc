// shared_cache_worker DB_PATH ID: one of several processes sharing the kernel cache at DB_PATH,
// driven line by line on stdin by tests/multiprocess/shared_cache_test.cc:
//
//   phase1  opens a Runtime on DB_PATH and runs programs ID, ID+1 and ID+2 (mod 6) of the six
//           below; the Runtime stays open (it keeps its cache role) until "exit"
//   phase2  opens a second, fresh Runtime on DB_PATH and runs all six programs
//   role    prints the process's cache role (its phase-1 or phase-2 Runtime's)
//   exit    closes everything and exits 0
//
// Each phase prints one line: "<phase> programs=<n> correct=<n> codegen=<n> loaded=<n>
// role=<role> persistent=<0|1> warnings=<n>", results checked against the ops/ reference.
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"

namespace {

using pto::TraceFn;
using pto::Value;
using pto::ops::HostTensor;

struct Program {
  const char* name;
  int arity;
  TraceFn fn;
  std::vector<HostTensor> inputs;
};

std::vector<Program> Programs() {
  auto one = [](Value v) { return std::vector<Value>{v}; };
  return {
      {"scale_shift_relu",
       1,
       [=](std::span<const Value> v) { return one(pto::relu(v[0] * 2.0f + 1.0f)); },
       {HostTensor::Random({64, 32}, 1)}},
      {"tanh_add",
       2,
       [=](std::span<const Value> v) { return one(pto::tanh(v[0]) + v[1]); },
       {HostTensor::Random({48, 40}, 2), HostTensor::Random({48, 40}, 3)}},
      {"softmax",
       1,
       [=](std::span<const Value> v) { return one(pto::softmax(v[0])); },
       {HostTensor::Random({16, 100}, 4)}},
      {"mlp",
       5,
       [=](std::span<const Value> v) {
         return one(pto::linear(pto::gelu(pto::linear(v[0], v[1], v[2])), v[3], v[4]));
       },
       {HostTensor::Random({8, 32}, 5), HostTensor::Random({64, 32}, 6),
        HostTensor::Random({64}, 7), HostTensor::Random({32, 64}, 8), HostTensor::Random({32}, 9)}},
      {"gelu_mul_sigmoid",
       2,
       [=](std::span<const Value> v) { return one(pto::gelu(v[0]) * pto::sigmoid(v[1])); },
       {HostTensor::Random({40, 24}, 10), HostTensor::Random({40, 24}, 11)}},
      {"layer_norm",
       3,
       [=](std::span<const Value> v) { return one(pto::layer_norm(v[0], v[1], v[2])); },
       {HostTensor::Random({12, 80}, 12), HostTensor::Random({80}, 13),
        HostTensor::Random({80}, 14)}},
  };
}

struct Warnings {
  std::mutex mu;
  int count = 0;
};

std::unique_ptr<pto::Runtime> Open(const std::string& path, Warnings* warnings) {
  pto::RuntimeOptions options;
  options.cache_path = path;
  options.log_level = pto::LogLevel::kWarning;
  options.log_sink = [warnings](pto::LogLevel level, std::string_view message) {
    if (level < pto::LogLevel::kWarning) return;
    std::lock_guard<std::mutex> lock(warnings->mu);
    ++warnings->count;
    std::fprintf(stderr, "worker warning: %.*s\n", static_cast<int>(message.size()),
                 message.data());
  };
  return pto::testing::OpenRuntime(options);
}

// Runs programs[first..first+count) (mod 6) and prints the phase's line.
void RunPhase(const char* phase, pto::Runtime& rt, int first, int count, Warnings& warnings) {
  const std::vector<Program> programs = Programs();
  int correct = 0;
  for (int i = 0; i < count; ++i) {
    const Program& p = programs[(first + i) % programs.size()];
    auto fn = rt.JitTraced(p.name, p.arity, p.fn, {});
    if (!fn.ok()) {
      std::fprintf(stderr, "%s: %s\n", p.name, fn.status().ToString().c_str());
      continue;
    }
    auto got = pto::testing::RunPto(**fn, p.inputs);
    auto want = pto::testing::RunReference(p.fn, p.inputs);
    if (!got.ok() || !want.ok()) {
      std::fprintf(stderr, "%s: run failed\n", p.name);
      continue;
    }
    const std::string mismatch = pto::testing::Compare(*got, *want, {2e-4, 2e-3});
    if (mismatch.empty()) {
      ++correct;
    } else {
      std::fprintf(stderr, "%s: %s\n", p.name, mismatch.c_str());
    }
  }
  const pto::RuntimeStats st = rt.stats();
  int warned;
  {
    std::lock_guard<std::mutex> lock(warnings.mu);
    warned = warnings.count;
  }
  std::printf(
      "%s programs=%d correct=%d codegen=%lld loaded=%lld role=%s persistent=%d "
      "warnings=%d\n",
      phase, count, correct, static_cast<long long>(st.llvm_codegen_runs),
      static_cast<long long>(st.kernels_loaded), st.cache.role.c_str(), st.cache.persistent ? 1 : 0,
      warned);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DB_PATH ID\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const int id = std::atoi(argv[2]);
  Warnings warnings;
  std::unique_ptr<pto::Runtime> first, second;
  for (std::string command; std::getline(std::cin, command);) {
    if (command == "phase1") {
      first = Open(path, &warnings);
      RunPhase("phase1", *first, id, 3, warnings);
    } else if (command == "phase2") {
      second = Open(path, &warnings);
      RunPhase("phase2", *second, 0, 6, warnings);
    } else if (command == "role") {
      // The process's role: its phase-1 Runtime's, or its phase-2 Runtime's if that one opened
      // the path while the role was free.
      std::string role = first ? first->stats().cache.role : "none";
      if (second && second->stats().cache.role == "writer") role = "writer (phase-2 runtime)";
      std::printf("role %s\n", role.c_str());
      std::fflush(stdout);
    } else if (command == "exit") {
      break;
    }
  }
  second.reset();
  first.reset();
  return 0;
}
