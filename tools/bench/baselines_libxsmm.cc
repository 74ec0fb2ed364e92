#include "tools/bench/baselines_libxsmm.h"

#include <libxsmm.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pto::bench {

std::string LibxsmmDescription() { return absl::StrCat("LIBXSMM ", LIBXSMM_VERSION); }

BackendFactory LibxsmmMatmul(MatmulShape s) {
  return [s](const std::vector<IoSet>& sets, int threads) -> absl::StatusOr<Prepared> {
    if (threads != 1) return absl::UnimplementedError("LIBXSMM runs one kernel call per thread");
    if (s.batch != 1) return absl::UnimplementedError("LIBXSMM: batched matmul");
    libxsmm_init();
    // LIBXSMM is column-major: row-major c = a b is column-major c^T = b^T a^T, so the kernel
    // is m' = n, n' = m, k' = k with its A the row-major b and its B the row-major a.
    const libxsmm_blasint m = static_cast<libxsmm_blasint>(s.n);
    const libxsmm_blasint n = static_cast<libxsmm_blasint>(s.m);
    const libxsmm_blasint k = static_cast<libxsmm_blasint>(s.k);
    const float alpha = 1.0f, beta = 0.0f;
    const int flags = LIBXSMM_GEMM_FLAG_NONE;
    const int prefetch = LIBXSMM_PREFETCH_NONE;
    const libxsmm_smmfunction kernel =
        libxsmm_smmdispatch(m, n, k, &m, &k, &m, &alpha, &beta, &flags, &prefetch);
    if (kernel == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("LIBXSMM has no kernel for ", s.m, "x", s.k, "x", s.n));
    }
    Prepared prepared;
    prepared.run = [kernel, sets, s](int set) {
      const IoSet& io = sets[set];
      const float* b = s.constant_b ? sets[0].inputs[1] : io.inputs[1];
      kernel(b, io.inputs[0], io.outputs[0]);
    };
    return prepared;
  };
}

}  // namespace pto::bench
