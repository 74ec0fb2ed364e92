// A 2-D grid of units cut into at most one piece per thread, as even as whole units allow.
#ifndef PTO_DEVICE_PIECE_GRID_H_
#define PTO_DEVICE_PIECE_GRID_H_

#include <algorithm>
#include <cstdint>

namespace pto::device {

struct PieceGrid {
  int64_t units[2] = {0, 0};   // the grid, in units
  int64_t splits[2] = {1, 1};  // pieces along each dim

  int pieces() const { return static_cast<int>(splits[0] * splits[1]); }

  // The units piece p covers: [lo, hi) in each dim.
  void Piece(int p, int64_t lo[2], int64_t hi[2]) const {
    const int64_t at[2] = {p / splits[1], p % splits[1]};
    for (int d = 0; d < 2; ++d) {
      lo[d] = at[d] * units[d] / splits[d];
      hi[d] = (at[d] + 1) * units[d] / splits[d];
    }
  }
};

// A split along one dim first whose largest piece is at most this much larger than the other
// order's still takes dim 0 (the rows) first: a kernel over the same rows after it then finds
// each of its rows on the thread that wrote it.
inline constexpr double kRowsFirstSlack = 1.0 / 16;

// The grid of `extent` elements in units of `grain` (a grid's last unit along a dim may be
// short) cut into at most `threads` pieces: along one dim, then along the other while threads
// remain, in the order whose largest piece has the fewest elements (dim 0 first within
// kRowsFirstSlack), so that no thread waits long for the one with the largest piece.
inline PieceGrid SplitForThreads(const int64_t extent[2], const int64_t grain[2], int threads) {
  PieceGrid grid;
  int64_t g[2], e[2];
  for (int d = 0; d < 2; ++d) {
    e[d] = std::max<int64_t>(extent[d], 0);
    g[d] = grain[d] > 0 ? grain[d] : std::max<int64_t>(e[d], 1);
    grid.units[d] = (e[d] + g[d] - 1) / g[d];
  }
  // The most elements a piece spans along dim d cut in s.
  auto longest = [&](int d, int64_t s) {
    int64_t most = 0;
    for (int64_t p = 0; p < s; ++p) {
      const int64_t lo = p * grid.units[d] / s * g[d];
      const int64_t hi = std::min((p + 1) * grid.units[d] / s * g[d], e[d]);
      most = std::max(most, hi - lo);
    }
    return most;
  };
  const int64_t t = std::max(threads, 1);
  int64_t best_splits[2][2];
  double largest[2];
  for (int first = 0; first < 2; ++first) {
    int64_t* s = best_splits[first];
    s[first] = std::max<int64_t>(std::min(t, grid.units[first]), 1);
    s[1 - first] = std::max<int64_t>(std::min(t / s[first], grid.units[1 - first]), 1);
    largest[first] = static_cast<double>(longest(0, s[0])) * static_cast<double>(longest(1, s[1]));
  }
  const int first = largest[0] <= largest[1] * (1 + kRowsFirstSlack) ? 0 : 1;
  grid.splits[0] = best_splits[first][0];
  grid.splits[1] = best_splits[first][1];
  return grid;
}

}  // namespace pto::device

#endif  // PTO_DEVICE_PIECE_GRID_H_
