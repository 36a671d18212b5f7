// zipper-tune --reevaluate: the models of this build on a stored report's
// measured candidates (no MPI).
#pragma once

#include <string>

namespace zipper::tune {

/// Re-predicts every candidate of the report at `path`, with its own link
/// parameters or those of `links_from` (another report; empty: none), prints
/// the errors per algorithm family and the figures, and writes the updated
/// report to `out` (empty: nothing written). Returns 0, or 2 (with a message
/// on stderr) for a report that cannot be read or written.
int reevaluate(const std::string& path, const std::string& links_from, const std::string& out);

}  // namespace zipper::tune
