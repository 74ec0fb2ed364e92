// OpenBLAS baselines (Debian's libopenblas-dev, pthreads build): sgemm, completed by plain
// loops (plain_loops.h) for the chains. Threads are set with openblas_set_num_threads. When
// the bench was built without OpenBLAS every factory returns Unavailable
// (baselines_openblas_missing.cc).
#ifndef PTO_TOOLS_BENCH_BASELINES_OPENBLAS_H_
#define PTO_TOOLS_BENCH_BASELINES_OPENBLAS_H_

#include <cstdint>
#include <string>

#include "device/device_info.h"
#include "tools/bench/baselines_onednn.h"
#include "tools/bench/bench_case.h"

namespace pto::bench {

// "OpenBLAS 0.3.21 ..." (its config string) or why it is missing.
std::string OpenblasDescription();
bool OpenblasAvailable();
// The OPENBLAS_CORETYPE to re-run with when OpenBLAS picked its generic Prescott kernels on a
// CPU it does not know (0.3.21 predates Emerald Rapids: model 207 falls back to SSE3 code, a
// quarter of its speed) although the CPU has `isa`; empty when its choice stands.
std::string OpenblasCoreOverride(device::Isa isa);

// Inputs a, b; output c (a loop of sgemm over the batch).
BackendFactory OpenblasMatmul(MatmulShape shape);
// Inputs x, w [K,N], bias [N]; output gelu(x w + bias): sgemm then one plain loop.
BackendFactory OpenblasLinearBiasGelu(int64_t m, int64_t k, int64_t n);
// Inputs q, k, v [batch,seq,dh]: sgemm (scale as alpha), a plain softmax loop, sgemm.
BackendFactory OpenblasAttention(int64_t batch, int64_t seq, int64_t dh);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BASELINES_OPENBLAS_H_
