// What a Runtime owns: the device description, the thread arena, the kernel cache and compiler,
// the log, the epoch domain retired Plans wait in, and the tuner service with its results.
// Shared by the Runtime and each of its Functions (std::shared_ptr): a Function may outlive its
// Runtime and keeps all of this alive. Destroying the Runtime closes tuning (Close).
#ifndef PTO_JIT_RUNTIME_IMPL_H_
#define PTO_JIT_RUNTIME_IMPL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "device/device_info.h"
#include "device/epoch.h"
#include "device/thread_arena.h"
#include "jit/kernel_compiler.h"
#include "jit/logger.h"
#include "jit/timeline.h"
#include "proto/workload.pb.h"
#include "pto/options.h"
#include "pto/runtime.h"
#include "tuner/service.h"

namespace pto::detail {

class FunctionImpl;

class RuntimeImpl {
 public:
  RuntimeImpl(RuntimeOptions options, device::DeviceInfo device,
              std::unique_ptr<cache::CacheStore> store,
              std::unique_ptr<jit::KernelCompiler> compiler);
  // Shuts the tuner down first (its jobs write their results while the store is alive).
  ~RuntimeImpl();

  const RuntimeOptions& options() const { return options_; }
  const device::DeviceInfo& device() const { return device_; }
  device::ThreadArena* threads() { return threads_.get(); }
  jit::KernelCompiler& compiler() { return *compiler_; }
  cache::CacheStore& store() { return *store_; }
  const jit::Logger& logger() const { return logger_; }
  RuntimeStats stats() const;

  // Replaced Plans are retired here; calls hold a guard while they run one.
  device::EpochDomain& plan_epochs() { return plan_epochs_; }
  // The calls background tuning waits for (jit/tuning/yield_to_calls.h): the plan epochs when
  // calls use every core, else null (a core is left for the tuner).
  const device::EpochDomain* calls_to_yield_to() const {
    return options_.tuning.mode == TuningMode::kBackground && intra_op_threads_ >= device_.cores
               ? &plan_epochs_
               : nullptr;
  }
  // Null when tuning is off or frozen (deterministic mode), or once the Runtime was destroyed.
  tuner::TuningService* tuning_service() {
    return tuning_closed_.load(std::memory_order_acquire) ? nullptr : tuning_service_.get();
  }
  // Runtime::StopTuning: waits for running searches to stop, except from inside a pto callback
  // (the progress callback runs inside a tuning job), where it only asks them to stop.
  void StopTuning();
  // The Runtime is being destroyed: tuning stops (and waits, as StopTuning), and nothing is
  // tuned afterwards; its Functions keep compiling and running.
  void Close();
  // The arena candidates are timed on: as many threads as calls use.
  device::ThreadArena* tuning_threads() { return tuning_threads_.get(); }
  // Threads a kernel launch uses (the performance fingerprint's thread count).
  int intra_op_threads() const { return intra_op_threads_; }
  const std::string& performance_fingerprint() const { return performance_fingerprint_; }

  // Tuning results, one per kernel queued: AddTuning numbers a new kernel, UpdateTuning
  // replaces its state (and calls the progress callback).
  int AddTuning(const KernelTuning& initial);
  void UpdateTuning(int index, KernelTuning state);
  std::vector<KernelTuning> tuning_results() const;
  absl::Status WaitForTuning();

  // Live Functions, for the workload file; a Function removed keeps its workload entries here.
  void AddFunction(FunctionImpl* fn);
  void RemoveFunction(FunctionImpl* fn);
  absl::Status WriteWorkload(const std::string& path) const;

  // The timeline being recorded (Runtime::StartTrace), or null: one atomic load.
  jit::Timeline* timeline() const { return timeline_.load(std::memory_order_acquire); }
  absl::Status StartTrace(const std::string& path);  // jit/runtime_trace.cc
  absl::StatusOr<TraceSummary> StopTrace();

 private:
  RuntimeOptions options_;
  device::DeviceInfo device_;
  std::unique_ptr<cache::CacheStore> store_;  // outlives the compiler that uses it
  std::unique_ptr<jit::KernelCompiler> compiler_;
  // The process's arena of intra_op_threads (ThreadArena::Shared); null when that is 1.
  std::shared_ptr<device::ThreadArena> threads_;
  jit::Logger logger_;
  int intra_op_threads_ = 1;
  std::string performance_fingerprint_;
  device::EpochDomain plan_epochs_;
  std::unique_ptr<device::ThreadArena> tuning_threads_;  // blocking tuning only
  // Background tuning: one more oneTBB worker per tuner thread, so tuning never holds a worker
  // the callers' arena needs (the tuner's run at idle priority).
  std::shared_ptr<void> tuner_workers_;
  mutable std::mutex tuning_mu_;
  std::vector<KernelTuning> tuning_;
  mutable std::mutex functions_mu_;
  std::vector<FunctionImpl*> functions_;
  std::vector<proto::WorkloadEntry> removed_workload_;
  std::mutex trace_mu_;  // guards trace_path_, timelines_ and the starting and stopping
  std::string trace_path_;
  std::atomic<jit::Timeline*> timeline_{nullptr};
  // Every trace's timeline, kept until the Runtime's internals go: a call that loaded one
  // before StopTrace may still append to it.
  std::vector<std::unique_ptr<jit::Timeline>> timelines_;
  std::unique_ptr<tuner::TuningService> tuning_service_;  // last: shut down first
  std::atomic<bool> tuning_closed_{false};
};

}  // namespace pto::detail

#endif  // PTO_JIT_RUNTIME_IMPL_H_
