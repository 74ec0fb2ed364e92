#include "tools/bench/turn_order.h"

#include <algorithm>

namespace pto::bench {

std::vector<size_t> TurnOrder(size_t n, int round) {
  std::vector<size_t> order(n);
  if (n == 0) return order;
  // The first row 0, 1, n-1, 2, n-2, ...; row r adds r to each entry (mod n). For odd n the
  // rows are followed by their mirror images, which supply the pairs the rows miss.
  const size_t cycle = n % 2 == 0 ? n : 2 * n;
  const size_t r = static_cast<size_t>(round) % cycle;
  for (size_t j = 0; j < n; ++j) {
    const size_t base = j == 0 ? 0 : j % 2 == 1 ? (j + 1) / 2 : n - j / 2;
    order[j] = (base + r) % n;
  }
  if (r >= n) std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace pto::bench
