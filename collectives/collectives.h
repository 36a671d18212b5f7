// Entry points the C API needs from the collectives.
#pragma once

#include <string>

#include "selection.h"

namespace zipper::coll {

/// Loads algorithm selection (environment, tuning file) at MMPI_Init.
/// Returns false and sets *why on invalid settings.
bool init_collectives(std::string* why);

/// The process's algorithm selection (loaded by init_collectives).
Selection& selection();

}  // namespace zipper::coll
