// Entry points the rest of libmmpi needs from the collectives.
#pragma once

#include <string>

namespace zipper::coll {

class Selection;

/// Loads algorithm selection (environment, tuning file) at MMPI_Init.
/// Returns false and sets *why on invalid settings.
bool init_collectives(std::string* why);

/// The process's selection (MMPIX_Coll_set and its siblings change it).
Selection& selection();

}  // namespace zipper::coll
