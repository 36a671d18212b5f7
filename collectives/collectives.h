// Entry points the C API needs from the collectives.
#pragma once

#include <string>

#include "selection.h"

namespace zipper::coll {

/// Loads algorithm selection (the settings read at MMPI_Init, the tuning
/// file). Returns false and sets *why on invalid settings.
bool init_collectives(const client::Environment& env, std::string* why);

/// The process's algorithm selection (loaded by init_collectives).
Selection& selection();

}  // namespace zipper::coll
