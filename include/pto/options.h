// Options structs with defaults (RocksDB style): every knob of a Runtime and a Function.
#ifndef PTO_OPTIONS_H_
#define PTO_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pto {

enum class LogLevel : uint8_t { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };
// pto prints nothing unless the embedder installs a sink.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// The vector ISA kernels are generated for. kHost uses everything the CPU has; the others
// narrow it (e.g. to test AVX2 code on an AVX-512 machine). Never wider than the host.
enum class TargetIsa : uint8_t { kHost = 0, kAvx512 = 1, kAvx2 = 2, kSse2 = 3 };

struct RuntimeOptions {
  // Directory of the persistent kernel cache (a RocksDB database, created if missing); empty
  // keeps compiled kernels in memory only. A cache that cannot be opened (locked, read-only,
  // damaged beyond repair) degrades to memory-only with one warning to the log sink.
  std::string cache_path;
  // A read-only cache database (e.g. shipped in an image) layered under cache_path: kernels
  // and tuning records missing from cache_path are looked up here; nothing is written here.
  // Empty: none. One that cannot be opened is left out with one warning.
  std::string cache_base_path;
  // Least-recently-used kernels are evicted past this many bytes of object code.
  int64_t cache_capacity_bytes = int64_t{1} << 30;
  // Threads a parallel kernel launch may use: 0 = every core this process may run on
  // (affinity and cgroup quota), 1 = the caller's thread only.
  int intra_op_threads = 0;
  TargetIsa isa = TargetIsa::kHost;
  LogSink log_sink;
  LogLevel log_level = LogLevel::kWarning;
  // Logs each pass's output (at kDebug) while compiling.
  bool log_passes = false;
};

// A named symbolic dim with its range. Dims with the same name are one symbol: the `batch` of
// x and of the mask must agree at every call.
class Dim {
 public:
  Dim(std::string name, int64_t min, int64_t max) : name_(std::move(name)), min_(min), max_(max) {}
  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }

 private:
  std::string name_;
  int64_t min_;
  int64_t max_;
};

struct DynamicDim {
  int input = 0;
  int axis = 0;
  Dim dim;
};

struct FunctionOptions {
  std::vector<DynamicDim> dynamic;
  // Inputs whose contents are fixed (weights): read once at the first call and kept by the
  // Function until InvalidateConstants(); their shapes are static.
  std::vector<int> constant_inputs;
  // A dim not declared dynamic is specialized on its first value and made symbolic when a
  // second value is seen (torch.compile's "automatic dynamic shapes").
  bool automatic_dynamic = true;
  // At most this many shape classes are compiled; a call needing another one fails with
  // ResourceExhausted (like torch.compile's cache size limit, minus the silent fallback).
  int max_shape_classes = 32;
};

}  // namespace pto

#endif  // PTO_OPTIONS_H_
