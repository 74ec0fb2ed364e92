// LIBXSMM baseline (Debian's libxsmm-dev 1.17) for small matmuls: a JIT-generated kernel per
// shape (libxsmm_smmdispatch), called on the whole matrix by one thread, as LIBXSMM's users call
// it. At more threads the factory returns Unimplemented (its dispatch model is one kernel call
// per thread). When the bench was built without LIBXSMM every factory returns Unavailable
// (baselines_libxsmm_missing.cc).
#ifndef PTO_TOOLS_BENCH_BASELINES_LIBXSMM_H_
#define PTO_TOOLS_BENCH_BASELINES_LIBXSMM_H_

#include <string>

#include "tools/bench/baselines_onednn.h"
#include "tools/bench/bench_case.h"

namespace pto::bench {

// "LIBXSMM 1.17-..." or why it is missing.
std::string LibxsmmDescription();

// Inputs a [m,k], b [k,n] (row-major); output c = a b. Unbatched shapes only.
BackendFactory LibxsmmMatmul(MatmulShape shape);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BASELINES_LIBXSMM_H_
