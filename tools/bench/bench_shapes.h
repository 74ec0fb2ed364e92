// The cases the bench runs, each with pto's program and its baselines.
#ifndef PTO_TOOLS_BENCH_BENCH_SHAPES_H_
#define PTO_TOOLS_BENCH_BENCH_SHAPES_H_

#include <vector>

#include "tools/bench/bench_case.h"

namespace pto::bench {

// Every case, in table order; those with `quick` set form the --quick subset.
std::vector<CaseSpec> AllCases();

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BENCH_SHAPES_H_
