#pragma once
// OPS's tiled hybrid scheme (its Algorithm 3, for any number of participants): the tile of a
// participant that owns outermost indices [own_begin, own_end) runs each loop of the chain over
// its own rows extended by whatever later loops of the tile read of what it writes, so the tile
// needs nothing from its neighbours once it starts: only the values from before the chain of
// the rows it reads (its inputs), exchanged once.

#include "tessera/loops/detail/loop_record.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tessera::loops::detail {

struct OverlappedTile {
  struct Rows {
    int begin = 0, end = 0;  // outermost indices; empty when begin >= end
  };
  std::vector<Rows> loops;  // per loop of the chain
  struct Input {
    const void* buffer;  // Buffer::key()
    RowRange rows;       // buffer rows whose values from before the chain the tile reads
  };
  std::vector<Input> inputs;
};

/// The tile of the participant owning [own_begin, own_end), walking the chain backwards; none
/// when a loop that reduces would have to run past the participant's own rows (its sites would
/// then count twice).
std::optional<OverlappedTile> overlapped_tile(const std::vector<std::unique_ptr<LoopRecord>>& loops, int own_begin,
                                              int own_end);

}  // namespace tessera::loops::detail
