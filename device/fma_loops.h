// Register-resident FMA loops: 12 independent vector accumulators, no memory traffic. Each
// returns the FLOPs it did (an FMA counts 2 per lane). Each lives in a file of its own compiled
// with the ISA flags it needs; call one only when the CPU has that ISA.
#ifndef PTO_DEVICE_FMA_LOOPS_H_
#define PTO_DEVICE_FMA_LOOPS_H_

#include <cstdint>

namespace pto::device {

double FmaLoopAvx512(int64_t iterations, float* sink);
double FmaLoopAvx2(int64_t iterations, float* sink);
double MulAddLoopSse2(int64_t iterations, float* sink);

}  // namespace pto::device

#endif  // PTO_DEVICE_FMA_LOOPS_H_
