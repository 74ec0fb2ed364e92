// The order in which a bench's sides take their turns, round by round. Each side runs right
// after another and pays for what that one left behind (caches full of its data, cores slow to
// wake after its idle threads): with the same order every round, one side would always follow
// the same other and pay the same bill. A balanced Latin square (Williams design) rotates the
// order so that over a cycle of rounds every side follows every other equally often.
#ifndef PTO_TOOLS_BENCH_TURN_ORDER_H_
#define PTO_TOOLS_BENCH_TURN_ORDER_H_

#include <cstddef>
#include <vector>

namespace pto::bench {

// The sides [0, n) in the order of round `round` (>= 0). Over a cycle of n rounds (2n when n is
// odd) each side comes first equally often and follows each other side exactly once (twice
// when n is odd) within the rounds.
std::vector<size_t> TurnOrder(size_t n, int round);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_TURN_ORDER_H_
