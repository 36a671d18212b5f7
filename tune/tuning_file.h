// Writes the tuning file libmmpi reads (MMPI_TUNING_FILE, TOML, schema in
// docs/collectives.md) from the choices zipper-tune measured: per collective
// an ordered rule table for one layout, consecutive sizes with the same
// choice merged into one size range. Pure (no MPI); the reader is
// coll::Selection::load_tuning, so a written file is checked by reading it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search.h"

namespace zipper::tune {

/// The choice at one measured size of one collective.
struct TunedPoint {
  coll::Collective collective;
  std::uint64_t bytes = 0;  // as the selection sees it (docs/collectives.md)
  Config choice;
};

/// The TOML text: one [[<collective>.rule]] per size range, for layout x+y
/// (np_low/np_high), ranges from 0 to the largest size and beyond. The
/// choice at size b_i covers [b_i, b_{i+1} - 1]; the first range starts at
/// 0, the last one has no max_bytes. `header` lines go first as comments.
std::string tuning_toml(const std::vector<TunedPoint>& points, int x, int y,
                        const std::vector<std::string>& header);

}  // namespace zipper::tune
