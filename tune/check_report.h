// zipper-tune --check: does the tuning file libmmpi loaded give every choice
// a report made?
#pragma once

#include <string>

namespace zipper::tune {

/// Asks libmmpi (MMPIX_Coll_choice, after MMPI_Init with MMPI_TUNING_FILE)
/// for each point of the report at `path`. Returns 0 when every choice
/// matches, 1 when one differs or the report has none (named on rank 0's
/// stderr), 2 when the report cannot be read.
int check_report(const std::string& path, int rank);

}  // namespace zipper::tune
