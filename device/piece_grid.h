// A 2-D grid of units cut into at most one piece per thread, as even as whole units allow:
// along the dim with more units first, then along the other while threads remain.
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

inline PieceGrid SplitForThreads(int64_t n0, int64_t n1, int threads) {
  PieceGrid grid;
  grid.units[0] = std::max<int64_t>(n0, 0);
  grid.units[1] = std::max<int64_t>(n1, 0);
  const int d = grid.units[0] >= grid.units[1] ? 0 : 1;
  const int64_t t = std::max(threads, 1);
  grid.splits[d] = std::max<int64_t>(std::min(t, grid.units[d]), 1);
  grid.splits[1 - d] = std::max<int64_t>(std::min(t / grid.splits[d], grid.units[1 - d]), 1);
  return grid;
}

}  // namespace pto::device

#endif  // PTO_DEVICE_PIECE_GRID_H_
